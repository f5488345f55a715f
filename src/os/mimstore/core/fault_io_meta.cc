// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: FaultIoEnv's metadata log (meta=xfs): namespace and xattr
 * changes durable only at the next fsync or syncfs, undone at a crash. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/fault_io_env.h"
#include "core/fault_io_internal.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace mim {

using namespace fault_io_detail;

// ---- the metadata log (meta=xfs) -------------------------------------------

void FaultIoEnv::note_home_locked(dev_t dev, const std::string& dir)
{
  trash_home_.emplace(dev, dir);  // the first one seen stays
}

std::string FaultIoEnv::trash_link_locked(const std::string& path, dev_t dev,
                                          uint64_t seq)
{
  // The trash goes under the first directory seen on this filesystem (a
  // store's top directory, normally), else next to the file: a hard link
  // needs the same filesystem.
  std::vector<std::string> homes;
  auto h = trash_home_.find(dev);
  if (h != trash_home_.end()) {
    homes.push_back(h->second);
  }
  std::string next_to = dirname_of(path);
  if (homes.empty() || homes[0] != next_to) {
    homes.push_back(next_to);
  }
  // pid: a forked child's links never collide with its parent's.
  std::string name = std::to_string(::getpid()) + "." + std::to_string(seq);
  for (const auto& home : homes) {
    std::string dir = home + "/" + TRASH_DIR;
    int r = base_->mkdir(dir, 0700);
    if (r < 0 && r != -EEXIST) {
      continue;
    }
    std::string link = dir + "/" + name;
    r = base_->link(path, link);
    if (r == 0) {
      ++trash_dirs_[dir];
      return link;
    }
    if (trash_dirs_.find(dir) == trash_dirs_.end()) {
      base_->rmdir(dir);  // ours and empty, or not ours and not empty
    }
  }
  return "";
}

void FaultIoEnv::trash_release_locked(const std::string& link, bool remove)
{
  if (remove) {
    base_->unlink(link);
  }
  std::string dir = dirname_of(link);
  auto it = trash_dirs_.find(dir);
  if (it != trash_dirs_.end() && --it->second <= 0) {
    base_->rmdir(dir);
    trash_dirs_.erase(it);
  }
}

int FaultIoEnv::capture_dir_locked(const std::string& path, dir_attrs_t* out)
{
  struct stat st;
  if (::lstat(path.c_str(), &st) < 0) {
    return -errno;
  }
  out->mode = st.st_mode & 07777;
  int fd;
  int r = base_->open(path, O_RDONLY | O_DIRECTORY, 0, &fd);
  if (r < 0) {
    return r;
  }
  // IoEnv cannot list xattrs: flistxattr(2) on our own fd.
  std::string names;
  for (;;) {
    ssize_t n = ::flistxattr(fd, nullptr, 0);
    if (n >= 0) {
      names.resize(n);
      n = ::flistxattr(fd, names.data(), names.size());
    }
    if (n < 0 && errno == ERANGE) {
      continue;  // grew between the two calls
    }
    if (n < 0) {
      r = errno == ENOTSUP ? 0 : -errno;
      names.clear();
    } else {
      names.resize(n);
    }
    break;
  }
  for (size_t b = 0; r == 0 && b < names.size();) {
    size_t e = names.find('\0', b);
    if (e == std::string::npos) {
      e = names.size();
    }
    std::string name = names.substr(b, e - b);
    std::string val;
    int g = base_->fgetxattr(fd, name, &val);
    if (g == 0) {
      out->xattrs.emplace_back(name, std::move(val));
    } else if (g != -ENODATA) {
      r = g;
    }
    b = e + 1;
  }
  base_->close(fd);
  return r;
}

int FaultIoEnv::restore_dir_locked(const std::string& path,
                                   const dir_attrs_t& a, inode_key_t old_key)
{
  int r = base_->mkdir(path, a.mode);
  if (r < 0) {
    return r;
  }
  ::chmod(path.c_str(), a.mode);  // the umask applied to mkdir
  // A new inode: older records that name the old one (mkdir, a rename of
  // it) now mean this one.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    inode_key_t now = std::make_pair(st.st_dev, st.st_ino);
    for (auto& [seq, m] : meta_ops_) {
      if (m.key == old_key) {
        m.key = now;
      }
      if (m.dir_key == old_key) {
        m.dir_key = now;
      }
    }
  }
  auto old = files_.find(old_key);
  if (a.xattrs.empty() && old == files_.end()) {
    return 0;
  }
  int fd;
  r = base_->open(path, O_RDONLY | O_DIRECTORY, 0, &fd);
  if (r < 0) {
    return r;
  }
  for (const auto& [name, val] : a.xattrs) {
    int e = base_->fsetxattr(fd, name, val.data(), val.size(), 0);
    if (e < 0 && r == 0) {
      r = e;
    }
  }
  // Older xattr ops still to be undone on the removed directory now apply
  // to the one that replaces it.
  if (old != files_.end() && old->second->shadow_fd < 0) {
    if (old->second->meta_fd >= 0) {
      base_->close(old->second->meta_fd);
    }
    old->second->meta_fd = fd;
  } else {
    base_->close(fd);
  }
  return r;
}

std::shared_ptr<FaultIoEnv::file_t> FaultIoEnv::inode_handle_locked(int fd)
{
  std::shared_ptr<file_t> file;
  auto fit = fds_.find(fd);
  if (fit != fds_.end()) {
    file = fit->second.file;
  } else {
    // Not opened through us: track the inode from here on.
    struct stat st;
    if (base_->fstat(fd, &st) < 0) {
      return nullptr;
    }
    auto& f = files_[std::make_pair(st.st_dev, st.st_ino)];
    if (!f) {
      f = std::make_shared<file_t>();
      f->is_blk = S_ISBLK(st.st_mode);
    }
    file = f;
  }
  if (file->shadow_fd < 0 && file->meta_fd < 0) {
    // A dup: the caller's fd may be closed before the crash. Works for
    // read-only fds and directories, where no shadow_fd exists.
    int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) {
      maybe_release_locked(file);
      return nullptr;
    }
    file->meta_fd = d;
  }
  return file;
}

void FaultIoEnv::add_meta_locked(meta_rec_t&& m)
{
  if (m.file) {
    ++m.file->pending;
  }
  uint64_t seq = m.seq;
  meta_ops_.emplace(seq, std::move(m));
}

void FaultIoEnv::force_meta_log_locked(uint64_t below_seq)
{
  for (auto it = meta_ops_.begin();
       it != meta_ops_.end() && it->first < below_seq;) {
    finish_meta_locked(it->second);
    it = meta_ops_.erase(it);
  }
}

void FaultIoEnv::finish_meta_locked(meta_rec_t& m)
{
  if (!m.trash.empty()) {
    trash_release_locked(m.trash, true);
    m.trash.clear();
  }
  if (m.file) {
    auto f = std::move(m.file);
    --f->pending;
    maybe_release_locked(f);
  }
}

int FaultIoEnv::undo_meta_locked(meta_rec_t& m)
{
  // The reverse-order undo means each name is where its op left it; the
  // checks only guard against changes made behind our back.
  auto is_ours = [&](const std::string& p) {
    struct stat st;
    if (::lstat(p.c_str(), &st) < 0) {
      return -errno;
    }
    if (m.key != inode_key_t{} &&
        (st.st_dev != m.key.first || st.st_ino != m.key.second)) {
      return -ESTALE;
    }
    return 0;
  };
  auto is_free = [](const std::string& p) {
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0) {
      return -EEXIST;
    }
    return errno == ENOENT ? 0 : -errno;
  };
  int r;
  switch (m.kind) {
  case meta_kind_t::CREATE:
    r = is_ours(m.path);
    return r < 0 ? r : base_->unlink(m.path);
  case meta_kind_t::MKDIR:
    r = is_ours(m.path);
    return r < 0 ? r : base_->rmdir(m.path);
  case meta_kind_t::LINK:
    r = is_ours(m.path2);
    return r < 0 ? r : base_->unlink(m.path2);
  case meta_kind_t::RMDIR:
    r = is_free(m.path);
    return r < 0 ? r : restore_dir_locked(m.path, m.dir, m.dir_key);
  case meta_kind_t::UNLINK:
    r = is_free(m.path);
    if (r == 0) {
      r = base_->rename(m.trash, m.path);
    }
    if (r == 0) {
      trash_release_locked(m.trash, false);
      m.trash.clear();
    }
    return r;
  case meta_kind_t::RENAME:
    r = is_ours(m.path2);
    if (r == 0) {
      r = is_free(m.path);
    }
    if (r == 0) {
      r = base_->rename(m.path2, m.path);
    }
    if (r < 0) {
      return r;
    }
    if (!m.trash.empty()) {
      r = base_->rename(m.trash, m.path2);
      if (r == 0) {
        trash_release_locked(m.trash, false);
        m.trash.clear();
      }
      return r;
    }
    if (m.restore_dir) {
      return restore_dir_locked(m.path2, m.dir, m.dir_key);
    }
    return 0;
  case meta_kind_t::SETXATTR:
  case meta_kind_t::REMOVEXATTR: {
    int fd = m.file->shadow_fd >= 0 ? m.file->shadow_fd : m.file->meta_fd;
    if (m.had_value) {
      return base_->fsetxattr(fd, m.path2, m.value.data(), m.value.size(),
                              0);
    }
    r = base_->fremovexattr(fd, m.path2);
    return r == -ENODATA ? 0 : r;
  }
  case meta_kind_t::CLONE: {
    int fd = m.file->shadow_fd;
    if (!m.value.empty()) {
      ssize_t w = base_->pwrite(fd, m.value.data(), m.value.size(), m.off);
      if (w < 0) {
        return static_cast<int>(w);
      }
    }
    return base_->ftruncate(fd, m.old_size);
  }
  }
  return -EINVAL;
}

}  // namespace mim
