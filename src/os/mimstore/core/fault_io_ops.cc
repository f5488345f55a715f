// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: FaultIoEnv's IoEnv methods: each passes the gate, records what a
 * crash must roll back, then calls the base env. Ceph-free.
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
#include <thread>

namespace mim {

using namespace fault_io_detail;

// ---- IoEnv methods ---------------------------------------------------------

int FaultIoEnv::open(const std::string& path, int flags, mode_t mode, int* fd)
{
  std::unique_lock l(lock_);
  const bool meta = meta_on_locked();
  bool creating = false;  // a metadata op under meta=xfs, and counted
  if (meta && (flags & O_CREAT)) {
    struct stat st;
    creating = ::lstat(path.c_str(), &st) < 0 && errno == ENOENT;
  }
  int err;
  if (gate_locked(FAULT_OP_OPEN, path, creating, &err) != Gate::GO) {
    return -err;
  }
  int ufd;
  int r = base_->open(path, flags, mode, &ufd);
  if (r < 0) {
    return r;
  }
  struct stat st;
  r = base_->fstat(ufd, &st);
  if (r < 0) {
    base_->close(ufd);
    return r;
  }
  auto key = std::make_pair(st.st_dev, st.st_ino);
  if (meta) {
    note_home_locked(st.st_dev, S_ISDIR(st.st_mode) ? path : dirname_of(path));
    if (creating) {
      meta_rec_t m;
      m.seq = next_seq_++;
      m.kind = meta_kind_t::CREATE;
      m.path = path;
      m.key = key;
      add_meta_locked(std::move(m));
    }
  }
  auto& file = files_[key];
  if (!file) {
    file = std::make_shared<file_t>();
    file->path = path;
    file->is_blk = S_ISBLK(st.st_mode);
  }
  if ((flags & O_ACCMODE) != O_RDONLY && file->shadow_fd < 0) {
    int sfd;
    r = base_->open(path, O_RDWR, 0, &sfd);
    if (r < 0) {
      base_->close(ufd);
      auto keep = file;
      maybe_release_locked(keep);
      return r;
    }
    file->shadow_fd = sfd;
  }
  ++file->user_fds;
  fd_t f;
  f.file = file;
  f.path = path;
  f.sync_writes = (flags & O_DSYNC) != 0;  // O_SYNC includes O_DSYNC
  fds_[ufd] = std::move(f);
  *fd = ufd;
  return 0;
}

int FaultIoEnv::close(int fd)
{
  std::lock_guard l(lock_);
  auto it = fds_.find(fd);
  if (it != fds_.end()) {
    auto file = it->second.file;
    fds_.erase(it);
    --file->user_fds;
    maybe_release_locked(file);
  }
  int r = base_->close(fd);
  return crashed_ ? 0 : r;
}

int FaultIoEnv::read_gate(int fd, uint32_t* delay_ms)
{
  std::lock_guard l(lock_);
  int err;
  std::string path = path_of_locked(fd);
  if (gate_locked(FAULT_OP_READ, path, false, &err) != Gate::GO) {
    return -err;
  }
  *delay_ms = delay_locked(delay_op_t::READ, path);
  return 0;
}

ssize_t FaultIoEnv::pread(int fd, void* buf, size_t len, uint64_t off)
{
  uint32_t delay_ms;
  int r = read_gate(fd, &delay_ms);
  if (r < 0) {
    return r;
  }
  if (delay_ms) {
    // (outside the lock: only this thread waits)
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  return after_read(fd, buf, base_->pread(fd, buf, len, off), off);
}

ssize_t FaultIoEnv::pread_cached(int fd, void* buf, size_t len,
                                 uint64_t off)
{
  uint32_t delay_ms;
  int r = read_gate(fd, &delay_ms);
  if (r < 0) {
    return r;
  }
  if (delay_ms) {
    return -EAGAIN;  // a slow device's bytes are not in memory
  }
  return after_read(fd, buf, base_->pread_cached(fd, buf, len, off), off);
}

ssize_t FaultIoEnv::pwritev(int fd, const struct iovec* iov, int iovcnt,
                            uint64_t off)
{
  std::unique_lock l(lock_);
  if (!spec_.delays.empty() && !crashed_) {
    uint32_t delay_ms = delay_locked(delay_op_t::WRITE, path_of_locked(fd));
    if (delay_ms) {
      // (outside the lock: only this thread waits, as on a page under
      // writeback)
      l.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      l.lock();
    }
  }
  int err;
  Gate g = gate_locked(FAULT_OP_WRITE, path_of_locked(fd), true, &err);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    return -err;
  }
  uint64_t len = 0;
  for (int i = 0; i < iovcnt; ++i) {
    len += iov[i].iov_len;
  }
  record_t rec;
  auto fit = fds_.find(fd);
  if (fit != fds_.end()) {
    int r = capture_locked(fit->second, off, len, &rec);
    if (r < 0) {
      return r;
    }
  }
  ssize_t r = base_->pwritev(fd, iov, iovcnt, off);
  if (r >= 0 && fit != fds_.end() && fit->second.sync_writes &&
      meta_on_locked()) {
    force_meta_log_locked(UINT64_MAX);  // O_DSYNC: an fsync of the file
  }
  if (r < 0 || !rec.file || fit->second.sync_writes) {
    return r;
  }
  rec.seq = next_seq_++;
  rec.completed = true;
  ++rec.file->pending;
  records_.emplace(rec.seq, std::move(rec));
  return r;
}

int FaultIoEnv::fsync(int fd)
{
  std::unique_lock l(lock_);
  int err;
  Gate g = gate_locked(FAULT_OP_SYNC, path_of_locked(fd), true, &err);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    return -err;
  }
  int r = base_->fsync(fd);
  auto it = fds_.find(fd);
  if (r == 0 && it != fds_.end()) {
    mark_durable_locked(it->second.file.get());
  }
  if (r == 0 && meta_on_locked()) {
    force_meta_log_locked(UINT64_MAX);  // any fsync forces the XFS log
  }
  return r;
}

int FaultIoEnv::fdatasync(int fd)
{
  std::unique_lock l(lock_);
  int err;
  Gate g = gate_locked(FAULT_OP_SYNC, path_of_locked(fd), true, &err);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    return -err;
  }
  int r = base_->fdatasync(fd);
  auto it = fds_.find(fd);
  if (r == 0 && it != fds_.end()) {
    mark_durable_locked(it->second.file.get());
  }
  if (r == 0 && meta_on_locked()) {
    // Real XFS forces the log here only if the inode's size or other
    // metadata fdatasync needs changed; the model always does.
    force_meta_log_locked(UINT64_MAX);
  }
  return r;
}

int FaultIoEnv::syncfs(int fd)
{
  std::unique_lock l(lock_);
  int err;
  Gate g = gate_locked(FAULT_OP_SYNC, path_of_locked(fd), true, &err);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    return -err;
  }
  int r = base_->syncfs(fd);
  if (r == 0) {
    mark_durable_locked(nullptr);
    force_meta_log_locked(UINT64_MAX);
  }
  return r;
}

int FaultIoEnv::writeback(int fd, uint64_t off, uint64_t len, bool wait)
{
  uint32_t delay_ms = 0;
  {
    std::lock_guard l(lock_);
    if (crashed_) {
      return -EIO;
    }
    if (!wait) {
      delay_ms = delay_locked(delay_op_t::WRITEBACK, path_of_locked(fd));
    }
  }
  if (delay_ms) {
    // (outside the lock: only this thread waits, as behind a full queue)
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
  // Outside the lock: with `wait` this blocks on the device.
  return base_->writeback(fd, off, len, wait);
}

int FaultIoEnv::drop_cache(int fd, uint64_t off, uint64_t len)
{
  {
    std::lock_guard l(lock_);
    if (crashed_) {
      return -EIO;
    }
  }
  return base_->drop_cache(fd, off, len);
}

int FaultIoEnv::ftruncate(int fd, uint64_t size)
{
  std::lock_guard l(lock_);
  int err;
  if (gate_locked(FAULT_OP_TRUNC, path_of_locked(fd), false, &err) !=
      Gate::GO) {
    return -err;
  }
  record_t rec;
  auto fit = fds_.find(fd);
  if (fit != fds_.end() && fit->second.file &&
      fit->second.file->shadow_fd >= 0 && !fit->second.file->is_blk) {
    struct stat st;
    int r = base_->fstat(fit->second.file->shadow_fd, &st);
    if (r < 0) {
      return r;
    }
    uint64_t old_size = st.st_size;
    uint64_t lo = std::min<uint64_t>(size, old_size);
    r = capture_locked(fit->second, lo, std::max(size, old_size) - lo, &rec);
    if (r < 0) {
      return r;
    }
    rec.new_size = size;
    rec.size_op = true;
  }
  int r = base_->ftruncate(fd, size);
  if (r < 0 || !rec.file) {
    return r;
  }
  rec.seq = next_seq_++;
  rec.completed = true;
  ++rec.file->pending;
  records_.emplace(rec.seq, std::move(rec));
  return r;
}

int FaultIoEnv::fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
  std::lock_guard l(lock_);
  int err;
  if (gate_locked(FAULT_OP_TRUNC, path_of_locked(fd), false, &err) !=
      Gate::GO) {
    return -err;
  }
  record_t rec;
  auto fit = fds_.find(fd);
  if (fit != fds_.end()) {
    int r = capture_locked(fit->second, off, len, &rec);
    if (r < 0) {
      return r;
    }
  }
  int r = base_->fallocate(fd, mode, off, len);
  if (r < 0 || !rec.file) {
    return r;
  }
  if (!rec.file->is_blk) {
    struct stat st;
    if (base_->fstat(rec.file->shadow_fd, &st) == 0) {
      rec.new_size = st.st_size;
    }
  }
  rec.seq = next_seq_++;
  rec.completed = true;
  rec.size_op = true;
  ++rec.file->pending;
  records_.emplace(rec.seq, std::move(rec));
  return r;
}

int FaultIoEnv::fstat(int fd, struct stat* st)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->fstat(fd, st);
}

int FaultIoEnv::stat(const std::string& path, struct stat* st)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->stat(path, st);
}

int FaultIoEnv::get_size(int fd, uint64_t* size)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->get_size(fd, size);
}

int FaultIoEnv::physical_offset(int fd, uint64_t off, uint64_t* phys)
{
  // A read of metadata that changes nothing durable: passed through, like
  // fstat.
  if (crashed()) {
    return -EIO;
  }
  return base_->physical_offset(fd, off, phys);
}

int FaultIoEnv::get_logical_block_size(int fd, uint32_t* bs)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->get_logical_block_size(fd, bs);
}

int FaultIoEnv::get_physical_block_size(int fd, uint32_t* bs)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->get_physical_block_size(fd, bs);
}

int FaultIoEnv::list_dir(const std::string& path,
                         std::vector<std::string>* names)
{
  bool meta;
  {
    std::lock_guard l(lock_);
    int err;
    if (gate_locked(FAULT_OP_READ, path, false, &err) != Gate::GO) {
      return -err;
    }
    meta = meta_on_locked();
  }
  int r = base_->list_dir(path, names);
  if (r == 0 && meta) {
    names->erase(std::remove(names->begin(), names->end(),
                             std::string(TRASH_DIR)),
                 names->end());
  }
  return r;
}

// Metadata ops: with meta=off passed through (durable at once, not
// counted); with meta=xfs counted, and recorded with what undoes them.

int FaultIoEnv::rename(const std::string& from, const std::string& to)
{
  std::lock_guard l(lock_);
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_META, from + "\n" + to, meta, &err) != Gate::GO) {
    return -err;
  }
  struct stat sf, st;
  if (!meta || ::lstat(from.c_str(), &sf) < 0) {
    return base_->rename(from, to);
  }
  note_home_locked(sf.st_dev, dirname_of(from));
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::RENAME;
  m.path = from;
  m.path2 = to;
  m.key = std::make_pair(sf.st_dev, sf.st_ino);
  if (::lstat(to.c_str(), &st) == 0) {
    if (st.st_dev == sf.st_dev && st.st_ino == sf.st_ino) {
      return base_->rename(from, to);  // links of one inode: does nothing
    }
    if (S_ISDIR(st.st_mode)) {
      m.restore_dir = true;
      m.dir_key = std::make_pair(st.st_dev, st.st_ino);
      if (capture_dir_locked(to, &m.dir) < 0) {
        m.undoable = false;
      }
    } else {
      // The replaced file must outlive the rename until it is durable.
      m.trash = trash_link_locked(to, st.st_dev, m.seq);
      m.undoable = !m.trash.empty();
    }
  }
  int r = base_->rename(from, to);
  if (r < 0) {
    if (!m.trash.empty()) {
      trash_release_locked(m.trash, true);
    }
    return r;
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::unlink(const std::string& path)
{
  std::lock_guard l(lock_);
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_META, path, meta, &err) != Gate::GO) {
    return -err;
  }
  struct stat st;
  if (!meta || ::lstat(path.c_str(), &st) < 0 || S_ISDIR(st.st_mode)) {
    return base_->unlink(path);  // with meta=xfs: fails
  }
  note_home_locked(st.st_dev, dirname_of(path));
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::UNLINK;
  m.path = path;
  // The inode must outlive the unlink until it is durable.
  m.trash = trash_link_locked(path, st.st_dev, m.seq);
  m.undoable = !m.trash.empty();
  int r = base_->unlink(path);
  if (r < 0) {
    if (!m.trash.empty()) {
      trash_release_locked(m.trash, true);
    }
    return r;
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::link(const std::string& from, const std::string& to)
{
  std::lock_guard l(lock_);
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_META, from + "\n" + to, meta, &err) != Gate::GO) {
    return -err;
  }
  int r = base_->link(from, to);
  if (r < 0 || !meta) {
    return r;
  }
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::LINK;
  m.path = from;
  m.path2 = to;
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) {
    m.key = std::make_pair(st.st_dev, st.st_ino);
    note_home_locked(st.st_dev, dirname_of(to));
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::mkdir(const std::string& path, mode_t mode)
{
  std::lock_guard l(lock_);
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_META, path, meta, &err) != Gate::GO) {
    return -err;
  }
  int r = base_->mkdir(path, mode);
  if (r < 0 || !meta) {
    return r;
  }
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::MKDIR;
  m.path = path;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    m.key = std::make_pair(st.st_dev, st.st_ino);
    note_home_locked(st.st_dev, dirname_of(path));
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::rmdir(const std::string& path)
{
  std::lock_guard l(lock_);
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_META, path, meta, &err) != Gate::GO) {
    return -err;
  }
  struct stat st;
  if (!meta || ::lstat(path.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) {
    return base_->rmdir(path);  // with meta=xfs: fails
  }
  note_home_locked(st.st_dev, dirname_of(path));
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::RMDIR;
  m.path = path;
  m.restore_dir = true;
  m.dir_key = std::make_pair(st.st_dev, st.st_ino);
  if (capture_dir_locked(path, &m.dir) < 0) {
    m.undoable = false;
  }
  int r = base_->rmdir(path);
  if (r < 0) {
    return r;
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::clone_op_locked(int src_fd, uint64_t src_off, uint64_t len,
                                int dst_fd, uint64_t dst_off, bool whole)
{
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_CLONE, path_of_locked(dst_fd), meta, &err) !=
      Gate::GO) {
    return -err;
  }
  auto call = [&] {
    return whole ? base_->clone_file(src_fd, dst_fd)
                 : base_->clone_range(src_fd, src_off, len, dst_fd, dst_off);
  };
  if (!meta) {
    return call();
  }
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = meta_kind_t::CLONE;
  m.path = path_of_locked(dst_fd);
  m.undoable = false;
  auto fit = fds_.find(dst_fd);
  if (fit != fds_.end() && fit->second.file &&
      fit->second.file->shadow_fd >= 0 && !fit->second.file->is_blk) {
    // The destination's pre-image, like a write's: the whole file for
    // clone_file, whose length is the source's.
    uint64_t off = whole ? 0 : dst_off;
    uint64_t n = len;
    struct stat st;
    int r = 0;
    if (whole) {
      r = base_->fstat(fit->second.file->shadow_fd, &st);
      n = r == 0 ? st.st_size : 0;
    }
    record_t tmp;
    if (r == 0 && capture_locked(fit->second, off, n, &tmp) == 0) {
      m.file = tmp.file;
      m.value = std::move(tmp.pre);
      m.off = off;
      m.old_size = tmp.old_size;
      m.undoable = true;
    }
  }
  int r = call();
  if (r < 0) {
    return r;
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::clone_file(int src_fd, int dst_fd)
{
  std::lock_guard l(lock_);
  return clone_op_locked(src_fd, 0, 0, dst_fd, 0, true);
}

int FaultIoEnv::clone_range(int src_fd, uint64_t src_off, uint64_t len,
                            int dst_fd, uint64_t dst_off)
{
  std::lock_guard l(lock_);
  return clone_op_locked(src_fd, src_off, len, dst_fd, dst_off, false);
}

int FaultIoEnv::xattr_op_locked(int fd, const std::string& name,
                                const void* val, size_t len, int flags,
                                bool remove)
{
  const bool meta = meta_on_locked();
  int err;
  if (gate_locked(FAULT_OP_XATTR, path_of_locked(fd), meta, &err) !=
      Gate::GO) {
    return -err;
  }
  auto call = [&] {
    return remove ? base_->fremovexattr(fd, name)
                  : base_->fsetxattr(fd, name, val, len, flags);
  };
  if (!meta) {
    return call();
  }
  meta_rec_t m;
  m.seq = next_seq_++;
  m.kind = remove ? meta_kind_t::REMOVEXATTR : meta_kind_t::SETXATTR;
  m.path = path_of_locked(fd);
  m.path2 = name;
  int r = base_->fgetxattr(fd, name, &m.value);
  if (r == 0) {
    m.had_value = true;
  } else if (r != -ENODATA) {
    m.undoable = false;  // the old value is unknown
  }
  m.file = inode_handle_locked(fd);
  if (!m.file) {
    m.undoable = false;
  }
  r = call();
  if (r < 0) {
    if (m.file) {
      auto f = std::move(m.file);
      maybe_release_locked(f);
    }
    return r;
  }
  add_meta_locked(std::move(m));
  return 0;
}

int FaultIoEnv::fsetxattr(int fd, const std::string& name, const void* val,
                          size_t len, int flags)
{
  std::lock_guard l(lock_);
  return xattr_op_locked(fd, name, val, len, flags, false);
}

int FaultIoEnv::fgetxattr(int fd, const std::string& name, std::string* val)
{
  {
    std::lock_guard l(lock_);
    int err;
    if (gate_locked(FAULT_OP_XATTR, path_of_locked(fd), false, &err) !=
        Gate::GO) {
      return -err;
    }
  }
  return base_->fgetxattr(fd, name, val);
}

int FaultIoEnv::fremovexattr(int fd, const std::string& name)
{
  std::lock_guard l(lock_);
  return xattr_op_locked(fd, name, nullptr, 0, 0, true);
}

int FaultIoEnv::aio_setup(int max_inflight)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->aio_setup(max_inflight);
}

int FaultIoEnv::aio_submit_write(int fd, const struct iovec* iov, int iovcnt,
                                 uint64_t off, void* cookie)
{
  std::unique_lock l(lock_);
  int err;
  uint32_t rule_ops = 0;
  Gate g = gate_locked(FAULT_OP_AIO, path_of_locked(fd), true, &err,
                       &rule_ops);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    if (crashed_ || !(rule_ops & FAULT_OP_AIO)) {
      return -err;  // after a crash, or a "submit" rule: nothing queued
    }
    // An injected device error shows up as the completion's result.
    fake_completions_.emplace_back(cookie, -err);
    return 0;
  }
  uint64_t len = 0;
  for (int i = 0; i < iovcnt; ++i) {
    len += iov[i].iov_len;
  }
  record_t rec;
  auto fit = fds_.find(fd);
  if (fit != fds_.end()) {
    int r = capture_locked(fit->second, off, len, &rec);
    if (r < 0) {
      return r;
    }
  }
  auto* op = new aio_op_t;
  op->cookie = cookie;
  if (rec.file) {
    op->seq = next_seq_++;
  }
  int r = base_->aio_submit_write(fd, iov, iovcnt, off, op);
  if (r < 0) {
    delete op;
    return r;
  }
  ++base_inflight_;
  if (rec.file) {
    rec.seq = op->seq;
    rec.durable_on_completion = fit->second.sync_writes;
    ++rec.file->pending;
    records_.emplace(rec.seq, std::move(rec));
  }
  return 0;
}

int FaultIoEnv::aio_reap(int min_events, int max_events,
                         std::vector<std::pair<void*, ssize_t>>* done,
                         int timeout_ms)
{
  int n = 0;
  {
    std::lock_guard l(lock_);
    if (crashed_) {
      return -EIO;
    }
    while (!fake_completions_.empty() && n < max_events) {
      done->push_back(fake_completions_.front());
      fake_completions_.erase(fake_completions_.begin());
      ++n;
    }
  }
  if (n >= max_events || base_inflight_.load() == 0) {
    return n;
  }
  std::vector<std::pair<void*, ssize_t>> got;
  int r = base_->aio_reap(std::max(0, min_events - n), max_events - n, &got,
                          n >= min_events ? 0 : timeout_ms);
  base_inflight_ -= static_cast<int>(got.size());
  std::lock_guard l(lock_);
  if (crashed_) {
    for (auto& g : got) {
      delete static_cast<aio_op_t*>(g.first);
    }
    return -EIO;
  }
  for (auto& [p, res] : got) {
    auto* op = static_cast<aio_op_t*>(p);
    auto it = op->seq ? records_.find(op->seq) : records_.end();
    if (it != records_.end()) {
      it->second.completed = true;
      if (it->second.durable_on_completion && res >= 0) {
        drop_record_locked(it);
        if (meta_on_locked()) {
          // O_DSYNC: the log was forced after the write was submitted.
          force_meta_log_locked(op->seq);
        }
      }
    }
    done->emplace_back(op->cookie, res);
    delete op;
    ++n;
  }
  if (r < 0 && n == 0) {
    return r;
  }
  return n;
}

int FaultIoEnv::aio_inflight()
{
  int fake;
  {
    std::lock_guard l(lock_);
    fake = static_cast<int>(fake_completions_.size());
  }
  return base_->aio_inflight() + fake;
}

}  // namespace mim
