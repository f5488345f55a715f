// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: an IoEnv that injects faults and crashes. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/fault_io_env.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace mim {

namespace {

constexpr uint64_t SECTOR = 512;
constexpr uint64_t NO_SIZE = UINT64_MAX;  ///< block device: size is fixed

bool parse_u64(const std::string& s, uint64_t* v)
{
  if (s.empty() || s.size() > 20) {
    return false;
  }
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    uint64_t d = c - '0';
    if (r > (UINT64_MAX - d) / 10) {
      return false;
    }
    r = r * 10 + d;
  }
  *v = r;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep)
{
  std::vector<std::string> out;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? e : e - b));
    if (e == std::string::npos) {
      return out;
    }
    b = e + 1;
  }
}

/// The directory part of a path: "a/b/c" -> "a/b", "c" -> ".", "/c" -> "/".
std::string dirname_of(const std::string& path)
{
  size_t e = path.find_last_not_of('/');
  if (e == std::string::npos) {
    return "/";
  }
  size_t slash = path.rfind('/', e);
  if (slash == std::string::npos) {
    return ".";
  }
  size_t end = path.find_last_not_of('/', slash);
  return end == std::string::npos ? "/" : path.substr(0, end + 1);
}

std::string trim(const std::string& s)
{
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) {
    return "";
  }
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

int parse_ops(const std::string& s, uint32_t* ops)
{
  static const std::pair<const char*, uint32_t> names[] = {
    {"read", FAULT_OP_READ}, {"write", FAULT_OP_WRITE},
    {"aio", FAULT_OP_AIO}, {"sync", FAULT_OP_SYNC},
    {"fsync", FAULT_OP_SYNC}, {"trunc", FAULT_OP_TRUNC},
    {"open", FAULT_OP_OPEN}, {"meta", FAULT_OP_META},
    {"xattr", FAULT_OP_XATTR}, {"clone", FAULT_OP_CLONE},
    {"any", FAULT_OP_ANY},
  };
  uint32_t r = 0;
  for (const auto& one : split(s, '|')) {
    bool found = false;
    for (const auto& [n, bit] : names) {
      if (one == n) {
        r |= bit;
        found = true;
      }
    }
    if (!found) {
      return -EINVAL;
    }
  }
  *ops = r;
  return 0;
}

int parse_errno(const std::string& s, int* err)
{
  static const std::pair<const char*, int> names[] = {
    {"eio", EIO}, {"enospc", ENOSPC}, {"edquot", EDQUOT},
    {"erofs", EROFS}, {"efbig", EFBIG},
  };
  for (const auto& [n, e] : names) {
    if (s == n) {
      *err = e;
      return 0;
    }
  }
  uint64_t v;
  if (parse_u64(s, &v) && v > 0 && v < 4096) {
    *err = static_cast<int>(v);
    return 0;
  }
  return -EINVAL;
}

int parse_rule(const std::string& s, fail_rule_t* r)
{
  size_t at = s.rfind('@');
  if (at == std::string::npos) {
    return -EINVAL;
  }
  auto parts = split(s.substr(0, at), ':');
  if (parts.size() != 3) {
    return -EINVAL;
  }
  std::string n = s.substr(at + 1);
  r->and_after = !n.empty() && n.back() == '+';
  if (r->and_after) {
    n.pop_back();
  }
  if (parse_ops(parts[0], &r->ops) < 0 || parse_errno(parts[2], &r->err) < 0 ||
      !parse_u64(n, &r->nth) || r->nth == 0) {
    return -EINVAL;
  }
  r->path = parts[1];
  return 0;
}

}  // anonymous namespace

int parse_fault_spec(const std::string& spec, fault_spec_t* out,
                     std::string* err)
{
  fault_spec_t s;
  for (const auto& raw : split(spec, ',')) {
    std::string item = trim(raw);
    if (item.empty()) {
      continue;
    }
    size_t eq = item.find('=');
    std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
    bool ok = false;
    if (key == "crash_at") {
      ok = parse_u64(val, &s.crash_at);
    } else if (key == "seed") {
      ok = parse_u64(val, &s.seed);
    } else if (key == "mode") {
      ok = true;
      if (val == "random") {
        s.mode = crash_mode_t::RANDOM;
      } else if (val == "drop") {
        s.mode = crash_mode_t::DROP;
      } else if (val == "keep") {
        s.mode = crash_mode_t::KEEP;
      } else if (val == "tear") {
        s.mode = crash_mode_t::TEAR;
      } else {
        ok = false;
      }
    } else if (key == "meta") {
      ok = true;
      if (val == "xfs") {
        s.meta = meta_model_t::XFS;
      } else if (val == "off") {
        s.meta = meta_model_t::OFF;
      } else {
        ok = false;
      }
    } else if (key == "fail") {
      fail_rule_t r;
      ok = parse_rule(val, &r) == 0;
      if (ok) {
        s.fails.push_back(r);
      }
    }
    if (!ok) {
      if (err) {
        *err = "bad fault injection item '" + item + "' (expected crash_at=N, "
               "seed=N, mode=random|drop|keep|tear, meta=xfs|off or "
               "fail=OPS:[PATH]:ERR@N[+])";
      }
      return -EINVAL;
    }
  }
  *out = std::move(s);
  return 0;
}

const char* meta_kind_name(meta_kind_t k)
{
  switch (k) {
  case meta_kind_t::CREATE:
    return "create";
  case meta_kind_t::MKDIR:
    return "mkdir";
  case meta_kind_t::RMDIR:
    return "rmdir";
  case meta_kind_t::UNLINK:
    return "unlink";
  case meta_kind_t::RENAME:
    return "rename";
  case meta_kind_t::LINK:
    return "link";
  case meta_kind_t::SETXATTR:
    return "setxattr";
  case meta_kind_t::REMOVEXATTR:
    return "removexattr";
  case meta_kind_t::CLONE:
    return "clone";
  }
  return "?";
}

// ---- FaultIoEnv ------------------------------------------------------------

FaultIoEnv::FaultIoEnv(IoEnv* base)
  : base_(base), rng_(0)
{
}

FaultIoEnv::~FaultIoEnv()
{
  std::lock_guard l(lock_);
  // No crash came: the pending metadata ops stay (as a clean unmount would
  // make them durable), and their trash links go.
  force_meta_log_locked(UINT64_MAX);
  for (auto& [key, f] : files_) {
    if (f->shadow_fd >= 0) {
      base_->close(f->shadow_fd);
      f->shadow_fd = -1;
    }
    if (f->meta_fd >= 0) {
      base_->close(f->meta_fd);
      f->meta_fd = -1;
    }
  }
}

void FaultIoEnv::set_spec(const fault_spec_t& s)
{
  std::lock_guard l(lock_);
  spec_ = s;
  rule_seen_.assign(spec_.fails.size(), 0);
  rng_.seed(spec_.seed);
  if (!meta_on_locked()) {
    force_meta_log_locked(UINT64_MAX);
  }
}

int FaultIoEnv::set_spec(const std::string& s, std::string* err)
{
  fault_spec_t spec;
  int r = parse_fault_spec(s, &spec, err);
  if (r < 0) {
    return r;
  }
  set_spec(spec);
  return 0;
}

void FaultIoEnv::add_fail_rule(const fail_rule_t& r)
{
  std::lock_guard l(lock_);
  spec_.fails.push_back(r);
  rule_seen_.push_back(0);
}

void FaultIoEnv::clear_fail_rules()
{
  std::lock_guard l(lock_);
  spec_.fails.clear();
  rule_seen_.clear();
}

void FaultIoEnv::set_crash_at(uint64_t n)
{
  std::lock_guard l(lock_);
  spec_.crash_at = n;
}

void FaultIoEnv::set_crash_callback(std::function<void()> cb)
{
  std::lock_guard l(lock_);
  crash_cb_ = std::move(cb);
}

void FaultIoEnv::set_seed(uint64_t seed)
{
  std::lock_guard l(lock_);
  spec_.seed = seed;
  rng_.seed(seed);
}

void FaultIoEnv::set_crash_mode(crash_mode_t m)
{
  std::lock_guard l(lock_);
  spec_.mode = m;
}

void FaultIoEnv::set_meta_model(meta_model_t m)
{
  std::lock_guard l(lock_);
  spec_.meta = m;
  if (!meta_on_locked()) {
    force_meta_log_locked(UINT64_MAX);
  }
}

bool FaultIoEnv::crashed() const
{
  std::lock_guard l(lock_);
  return crashed_;
}

uint64_t FaultIoEnv::io_count() const
{
  std::lock_guard l(lock_);
  return io_count_;
}

size_t FaultIoEnv::unsynced_writes() const
{
  std::lock_guard l(lock_);
  return records_.size();
}

size_t FaultIoEnv::unsynced_meta_ops() const
{
  std::lock_guard l(lock_);
  return meta_ops_.size();
}

std::vector<FaultIoEnv::rollback_t> FaultIoEnv::last_crash_report() const
{
  std::lock_guard l(lock_);
  return last_report_;
}

std::vector<FaultIoEnv::meta_rollback_t> FaultIoEnv::last_meta_report() const
{
  std::lock_guard l(lock_);
  return last_meta_report_;
}

void FaultIoEnv::crash()
{
  std::lock_guard l(lock_);
  if (!crashed_) {
    crash_locked();
  }
}

FaultIoEnv::Gate FaultIoEnv::gate_locked(uint32_t op, const std::string& path,
                                         bool counted, int* err)
{
  if (crashed_) {
    *err = EIO;
    return Gate::FAIL;
  }
  if (counted) {
    ++io_count_;
    if (spec_.crash_at && io_count_ == spec_.crash_at) {
      crash_locked();
      // The callback runs under the lock: no other thread gets past the
      // gate (and sees an EIO it would react to) before the process dies.
      if (crash_cb_) {
        crash_cb_();
      }
      *err = EIO;
      return Gate::CRASH;
    }
  }
  for (size_t i = 0; i < spec_.fails.size(); ++i) {
    const fail_rule_t& r = spec_.fails[i];
    if (!(r.ops & op) ||
        (!r.path.empty() && path.find(r.path) == std::string::npos)) {
      continue;
    }
    uint64_t seen = ++rule_seen_[i];
    if (seen == r.nth || (r.and_after && seen > r.nth)) {
      *err = r.err;
      return Gate::FAIL;
    }
  }
  return Gate::GO;
}

int FaultIoEnv::after_crash()
{
  // the crash callback already ran, in gate_locked()
  return -EIO;
}

std::string FaultIoEnv::path_of_locked(int fd) const
{
  auto it = fds_.find(fd);
  return it == fds_.end() ? std::string() : it->second.path;
}

int FaultIoEnv::capture_locked(const fd_t& f, uint64_t off, uint64_t len,
                               record_t* rec)
{
  const auto& file = f.file;
  if (!file || file->shadow_fd < 0) {
    return 0;  // not tracked: opened read-only, or not through us
  }
  uint64_t old_size = NO_SIZE;
  if (!file->is_blk) {
    struct stat st;
    int r = base_->fstat(file->shadow_fd, &st);
    if (r < 0) {
      return r;
    }
    old_size = st.st_size;
  }
  uint64_t pre_len = off >= old_size ? 0 : std::min(len, old_size - off);
  rec->pre.resize(pre_len);
  if (pre_len) {
    ssize_t r = base_->pread(file->shadow_fd, rec->pre.data(), pre_len, off);
    if (r < 0) {
      return static_cast<int>(r);
    }
    rec->pre.resize(r);
  }
  rec->file = file;
  rec->off = off;
  rec->len = len;
  rec->old_size = old_size;
  rec->new_size = file->is_blk ? NO_SIZE : std::max(old_size, off + len);
  return 0;
}

void FaultIoEnv::drop_record_locked(std::map<uint64_t, record_t>::iterator it)
{
  auto file = it->second.file;
  records_.erase(it);
  --file->pending;
  maybe_release_locked(file);
}

void FaultIoEnv::mark_durable_locked(const file_t* file)
{
  for (auto it = records_.begin(); it != records_.end();) {
    auto cur = it++;
    if ((!file || cur->second.file.get() == file) && cur->second.completed) {
      drop_record_locked(cur);
    }
  }
}

void FaultIoEnv::maybe_release_locked(const std::shared_ptr<file_t>& file)
{
  if (file->user_fds > 0 || file->pending > 0) {
    return;
  }
  if (file->shadow_fd >= 0) {
    base_->close(file->shadow_fd);
    file->shadow_fd = -1;
  }
  if (file->meta_fd >= 0) {
    base_->close(file->meta_fd);
    file->meta_fd = -1;
  }
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->second == file) {
      files_.erase(it);
      break;
    }
  }
}

void FaultIoEnv::crash_locked()
{
  // Writes in flight in the base env must land (or fail) before they are
  // rolled back; a concurrent reaper may take some of the completions, it
  // decrements base_inflight_ too.
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::seconds(10);
  while (base_inflight_.load() > 0 && clock::now() < deadline) {
    std::vector<std::pair<void*, ssize_t>> done;
    int r = base_->aio_reap(1, 64, &done, 100);
    if (r < 0) {
      break;
    }
    base_inflight_ -= static_cast<int>(done.size());
    for (auto& d : done) {
      delete static_cast<aio_op_t*>(d.first);
    }
  }

  // meta=xfs: how many of the metadata ops since the last log force
  // survive (a prefix: XFS writes log buffers in order, some may have gone
  // out on their own). An op that cannot be undone pins the cut: it and
  // every earlier op stay.
  const size_t n_meta = meta_ops_.size();
  size_t pin = 0;
  size_t i = 0;
  for (const auto& [seq, m] : meta_ops_) {
    ++i;
    if (!m.undoable) {
      pin = i;
    }
  }
  size_t keep = n_meta;
  if (n_meta > 0) {
    switch (spec_.mode) {
    case crash_mode_t::KEEP:
      keep = n_meta;
      break;
    case crash_mode_t::DROP:
      keep = pin;
      break;
    case crash_mode_t::RANDOM:
    case crash_mode_t::TEAR:
      keep = pin + rng_() % (n_meta - pin + 1);
      break;
    }
  }
  uint64_t first_undone = UINT64_MAX;  // seq of the first op not kept
  i = 0;
  for (const auto& [seq, m] : meta_ops_) {
    if (i++ == keep) {
      first_undone = seq;
      break;
    }
  }

  // Undo newest first, writes and metadata ops interleaved in issue order,
  // so each undo finds the state its own op left behind (a clone undone
  // after the later writes to its destination, a created file removed
  // after the names made from it).
  last_report_.clear();
  last_meta_report_.clear();
  auto wit = records_.rbegin();
  auto mit = meta_ops_.rbegin();
  while (wit != records_.rend() || mit != meta_ops_.rend()) {
    if (mit == meta_ops_.rend() ||
        (wit != records_.rend() && wit->first > mit->first)) {
      rollback_t rep;
      rollback_write_locked(wit->second, &rep);
      last_report_.push_back(std::move(rep));
      ++wit;
      continue;
    }
    meta_rec_t& m = mit->second;
    meta_rollback_t rep;
    rep.kind = m.kind;
    rep.path = m.path;
    rep.path2 = m.path2;
    rep.undoable = m.undoable;
    rep.kept = m.seq < first_undone;
    if (!rep.kept) {
      rep.err = undo_meta_locked(m);
    }
    finish_meta_locked(m);
    last_meta_report_.push_back(std::move(rep));
    ++mit;
  }
  meta_ops_.clear();

  std::vector<std::shared_ptr<file_t>> touched;
  for (auto& [seq, rec] : records_) {
    touched.push_back(rec.file);
    rec.file->pending = 0;
  }
  records_.clear();
  for (auto& f : touched) {
    maybe_release_locked(f);
  }
  crashed_ = true;
}

void FaultIoEnv::rollback_write_locked(record_t& rec, rollback_t* rep)
{
  rep->path = rec.file->path;
  rep->off = rec.off;
  rep->len = rec.len;
  switch (spec_.mode) {
  case crash_mode_t::KEEP:
    rep->outcome = rollback_t::KEPT;
    break;
  case crash_mode_t::DROP:
    rep->outcome = rollback_t::DROPPED;
    break;
  case crash_mode_t::TEAR:
    rep->outcome = rollback_t::TORN;
    break;
  case crash_mode_t::RANDOM:
    rep->outcome = static_cast<rollback_t::Outcome>(rng_() % 3);
    break;
  }
  if (rep->outcome == rollback_t::TORN && rec.size_op) {
    // A size change is all or nothing.
    rep->outcome = (rng_() & 1) ? rollback_t::KEPT : rollback_t::DROPPED;
  }
  const int sfd = rec.file->shadow_fd;
  if (rep->outcome == rollback_t::DROPPED) {
    if (!rec.pre.empty()) {
      base_->pwrite(sfd, rec.pre.data(), rec.pre.size(), rec.off);
    }
    if (rec.old_size != NO_SIZE && rec.new_size != rec.old_size) {
      base_->ftruncate(sfd, rec.old_size);
    }
  } else if (rep->outcome == rollback_t::TORN) {
    uint64_t end = rec.off + rec.len;
    std::string buf;
    for (uint64_t s = rec.off; s < end;) {
      uint64_t e = std::min(end, (s / SECTOR + 1) * SECTOR);
      bool revert = rng_() & 1;
      rep->reverted.push_back(revert);
      if (revert) {
        // Old bytes where the file had them, zeros past the old end.
        buf.assign(e - s, '\0');
        uint64_t have = rec.pre.size();
        if (s - rec.off < have) {
          uint64_t n = std::min(e - s, have - (s - rec.off));
          memcpy(buf.data(), rec.pre.data() + (s - rec.off), n);
        }
        base_->pwrite(sfd, buf.data(), buf.size(), s);
      }
      s = e;
    }
  }
}

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

ssize_t FaultIoEnv::pread(int fd, void* buf, size_t len, uint64_t off)
{
  {
    std::lock_guard l(lock_);
    int err;
    if (gate_locked(FAULT_OP_READ, path_of_locked(fd), false, &err) !=
        Gate::GO) {
      return -err;
    }
  }
  return base_->pread(fd, buf, len, off);
}

ssize_t FaultIoEnv::pwritev(int fd, const struct iovec* iov, int iovcnt,
                            uint64_t off)
{
  std::unique_lock l(lock_);
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
  {
    std::lock_guard l(lock_);
    if (crashed_) {
      return -EIO;
    }
  }
  // Outside the lock: with `wait` this blocks on the device.
  return base_->writeback(fd, off, len, wait);
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

int FaultIoEnv::get_logical_block_size(int fd, uint32_t* bs)
{
  if (crashed()) {
    return -EIO;
  }
  return base_->get_logical_block_size(fd, bs);
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
  Gate g = gate_locked(FAULT_OP_AIO, path_of_locked(fd), true, &err);
  if (g == Gate::CRASH) {
    l.unlock();
    return after_crash();
  }
  if (g == Gate::FAIL) {
    if (crashed_) {
      return -err;
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
