// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: an IoEnv that injects faults and crashes: set-up, the gate every I/O
 * passes, and the crash with its rollback of unsynced writes. The metadata
 * log is in fault_io_meta.cc, the IoEnv methods in fault_io_ops.cc. Ceph-free.
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
#include <sstream>

namespace mim {

using namespace fault_io_detail;

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
  delay_seen_.assign(spec_.delays.size(), 0);
  corrupt_seen_.assign(spec_.corrupts.size(), 0);
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

void FaultIoEnv::set_crash_callback(
  std::function<void(const std::string&)> cb)
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

uint64_t FaultIoEnv::delayed_reads() const
{
  std::lock_guard l(lock_);
  return delayed_reads_;
}

uint64_t FaultIoEnv::delayed_writes() const
{
  std::lock_guard l(lock_);
  return delayed_writes_;
}

uint64_t FaultIoEnv::delayed_writebacks() const
{
  std::lock_guard l(lock_);
  return delayed_writebacks_;
}

uint64_t FaultIoEnv::corrupted_reads() const
{
  std::lock_guard l(lock_);
  return corrupted_reads_;
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

std::string FaultIoEnv::crash_summary() const
{
  std::lock_guard l(lock_);
  return crash_summary_;
}

void FaultIoEnv::crash()
{
  std::lock_guard l(lock_);
  if (!crashed_) {
    crash_locked();
  }
}

void FaultIoEnv::crash_here(const std::string& where)
{
  std::lock_guard l(lock_);
  if (crashed_) {
    return;
  }
  crash_locked(where);
  if (crash_cb_) {
    crash_cb_(crash_summary_);
  }
}

FaultIoEnv::Gate FaultIoEnv::gate_locked(uint32_t op, const std::string& path,
                                         bool counted, int* err,
                                         uint32_t* rule_ops)
{
  if (crashed_) {
    *err = EIO;
    return Gate::FAIL;
  }
  if (counted) {
    ++io_count_;
    if (spec_.crash_at && io_count_ == spec_.crash_at) {
      crash_locked("I/O " + std::to_string(io_count_) + " (" +
                   fault_op_name(op) + " " + path + ")");
      // The callback runs under the lock: no other thread gets past the
      // gate (and sees an EIO it would react to) before the process dies.
      if (crash_cb_) {
        crash_cb_(crash_summary_);
      }
      *err = EIO;
      return Gate::CRASH;
    }
  }
  const uint32_t matches =
    op == FAULT_OP_AIO ? FAULT_OP_AIO | FAULT_OP_SUBMIT : op;
  for (size_t i = 0; i < spec_.fails.size(); ++i) {
    const fail_rule_t& r = spec_.fails[i];
    if (!(r.ops & matches) ||
        (!r.path.empty() && path.find(r.path) == std::string::npos)) {
      continue;
    }
    uint64_t seen = ++rule_seen_[i];
    if (seen == r.nth || (r.and_after && seen > r.nth)) {
      *err = r.err;
      if (rule_ops) {
        *rule_ops = r.ops;
      }
      return Gate::FAIL;
    }
  }
  return Gate::GO;
}

uint32_t FaultIoEnv::delay_locked(delay_op_t op, const std::string& path)
{
  uint32_t ms = 0;
  for (size_t i = 0; i < spec_.delays.size(); ++i) {
    const delay_rule_t& r = spec_.delays[i];
    if (r.op != op ||
        (!r.path.empty() && path.find(r.path) == std::string::npos)) {
      continue;
    }
    uint64_t seen = ++delay_seen_[i];
    if (seen == r.nth || (r.and_after && seen > r.nth)) {
      ms = std::max(ms, r.ms);
    }
  }
  uint64_t* held = op == delay_op_t::READ ? &delayed_reads_
    : op == delay_op_t::WRITE ? &delayed_writes_ : &delayed_writebacks_;
  *held += ms > 0;
  return ms;
}

void FaultIoEnv::corrupt_locked(int fd, char* buf, ssize_t n, uint64_t off)
{
  const std::string path = path_of_locked(fd);
  bool changed = false;
  for (size_t i = 0; i < spec_.corrupts.size(); ++i) {
    const corrupt_rule_t& r = spec_.corrupts[i];
    if (r.off < off || r.off >= off + n ||
        (!r.path.empty() && path.find(r.path) == std::string::npos)) {
      continue;
    }
    uint64_t seen = ++corrupt_seen_[i];
    if (seen == r.nth || (r.and_after && seen > r.nth)) {
      buf[r.off - off] ^= 0x01;
      changed = true;
    }
  }
  corrupted_reads_ += changed;
}

ssize_t FaultIoEnv::after_read(int fd, void* buf, ssize_t r, uint64_t off)
{
  if (r > 0) {
    std::lock_guard l(lock_);
    if (!spec_.corrupts.empty()) {
      corrupt_locked(fd, static_cast<char*>(buf), r, off);
    }
  }
  return r;
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

void FaultIoEnv::crash_locked(const std::string& cause)
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
  crash_summary_ = summarize_crash_locked(cause);

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

std::string FaultIoEnv::summarize_crash_locked(const std::string& cause) const
{
  // Which writes and metadata ops a cut kept is what decides a failing
  // crash point; the store logs this before it exits.
  static const char* const outcome[] = {"kept", "dropped", "torn"};
  std::ostringstream ss;
  ss << "power cut at " << cause << ": " << last_report_.size()
     << " unsynced writes, " << last_meta_report_.size()
     << " metadata ops since the last log force (newest first)";
  // Both reports are newest first; their interleaving is not recorded, so
  // the writes come first, then the metadata ops.
  const size_t nw = std::min(last_report_.size(), MAX_SUMMARY_LINES);
  for (size_t i = 0; i < nw; ++i) {
    const rollback_t& w = last_report_[i];
    ss << "\n  write " << w.path << " " << w.off << "~" << w.len << " "
       << outcome[w.outcome];
  }
  if (nw < last_report_.size()) {
    ss << "\n  ... " << (last_report_.size() - nw) << " more writes";
  }
  const size_t nm = std::min(last_meta_report_.size(), MAX_SUMMARY_LINES);
  for (size_t i = 0; i < nm; ++i) {
    const meta_rollback_t& m = last_meta_report_[i];
    ss << "\n  " << meta_kind_name(m.kind) << " " << m.path;
    if (!m.path2.empty()) {
      ss << " " << m.path2;
    }
    ss << (m.kept ? " kept" : " undone");
    if (!m.undoable) {
      ss << " (cannot be undone)";
    }
    if (m.err) {
      ss << " (undo failed: " << -m.err << ")";
    }
  }
  if (nm < last_meta_report_.size()) {
    ss << "\n  ... " << (last_meta_report_.size() - nm)
       << " more metadata ops";
  }
  return ss.str();
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

}  // namespace mim
