// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "drive.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>

namespace diskemu {

/// Staging stops above this share of the band, and its destages then
/// compete with host commands (below it they run only when the drive has
/// nothing else to do).
static constexpr double STAGE_HIGH = 0.9;

Drive::Drive(const DiskSpec& spec, uint64_t disk_bytes, const DriveOptions& opts)
    : model_(spec, disk_bytes, opts.capacity_bytes, opts.seq_window),
      opts_(opts),
      cache_(opts.write_cache ? (opts.cache_bytes ? opts.cache_bytes : spec.cache_bytes) : 0),
      stage_(spec.rotational ? spec.stage_bytes : 0),
      stage_time_(static_cast<ns_t>(spec.stage_ms * NS_PER_MS)),
      stage_idle_(static_cast<ns_t>(spec.stage_idle_ms * NS_PER_MS)) {
  // The band: a cylinder at stage_pos of the stroke (outside the emulated
  // disk when it is short-stroked; only its position matters).
  band_off_ = static_cast<uint64_t>(spec.stage_pos *
                                    static_cast<double>(model_.capacity_bytes()));
  band_off_ -= band_off_ % SECTOR;
  if (opts_.queue_depth == 0) {
    opts_.queue_depth = 1;
  }
  if (opts_.destage_window == 0) {
    opts_.destage_window = 1;
  }
}

bool Drive::write_through(uint64_t len) const {
  return !opts_.write_cache || len > cache_.capacity();
}

bool Drive::idle() const {
  return queue_.empty() && overflow_.empty() && inflight_host_ == 0 &&
         !act_busy_ && !iface_busy_ && cache_.empty() && stage_.empty();
}

ns_t Drive::wake_at() const {
  if (failed_ || stage_.empty() || act_busy_ || !idle_destage_ ||
      !queue_.empty() || !overflow_.empty()) {
    return std::numeric_limits<ns_t>::max();
  }
  return std::max(act_free_, last_host_ + stage_idle_);
}

bool Drive::can_stage(uint64_t len) const {
  return stage_.capacity() > 0 && len <= model_.spec().stage_max_bytes &&
         stage_.fits(len) &&
         static_cast<double>(stage_.bytes() + len) <=
           STAGE_HIGH * static_cast<double>(stage_.capacity());
}

double Drive::seek_scale() {
  if (opts_.policy != Policy::FW || opts_.seek_err <= 0) {
    return 1.0;
  }
  // splitmix64 of (seed, media op number): deterministic, any platform.
  uint64_t z = opts_.seed * 0x9e3779b97f4a7c15ull + stats_.media_ops + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0,1)
  return 1.0 + opts_.seek_err * (2.0 * u - 1.0);
}

void Drive::submit(HostReq* r) {
  r->err = 0;
  r->completion = 0;
  r->cached = false;
  r->staged = false;
  last_host_ = std::max(last_host_, r->arrival);
  size_t n = outstanding() + 1;
  stats_.qd_hist[std::min<size_t>(n, DriveStats::QD_BUCKETS - 1)]++;
  overflow_.push_back(r);
  admit_overflow(r->arrival);
}

void Drive::admit_overflow(ns_t t) {
  while (!overflow_.empty() && queue_.size() + inflight_host_ < opts_.queue_depth) {
    HostReq* r = overflow_.front();
    overflow_.pop_front();
    r->queued = std::max(r->arrival, t);
    if (r->op == OpKind::FLUSH) {
      r->flush_target = cache_.last_seq();   // acknowledged by now
    }
    queue_.push_back(r);
  }
}

void Drive::take(HostReq* r) {
  queue_.erase(std::find(queue_.begin(), queue_.end(), r));
  inflight_host_++;
}

uint64_t Drive::pending_flush_target() const {
  uint64_t t = 0;
  for (HostReq* r : queue_) {
    if (r->op == OpKind::FLUSH && cache_.has_through(r->flush_target) &&
        (t == 0 || r->flush_target < t)) {
      t = r->flush_target;
    }
  }
  return t;
}

bool Drive::needs_media(const HostReq* r) const {
  switch (r->op) {
  case OpKind::FLUSH: return false;
  case OpKind::WRITE: return write_through(r->len);
  case OpKind::READ:
    return !opts_.write_cache || cache_.covered(r->off, r->len) < r->len;
  }
  return false;
}

bool Drive::plan(Action* a, ns_t now) {
  if (failed_) {
    return false;
  }
  if (plan_flush_done(a) || (!iface_busy_ && plan_interface(a)) ||
      (!act_busy_ && plan_actuator(a, now))) {
    a->gen = gen_;
    inflight_.push_back(*a);
    return true;
  }
  return false;
}

bool Drive::plan_flush_done(Action* a) {
  for (HostReq* r : queue_) {
    if (r->op != OpKind::FLUSH || cache_.has_through(r->flush_target)) {
      continue;
    }
    // Everything it covers is on the platter: done when the last of it got
    // there, or at once.
    *a = Action();
    a->kind = Action::FLUSH_DONE;
    a->req = r;
    a->start = a->end = std::max(r->queued, last_finish_);
    take(r);
    return true;
  }
  return false;
}

bool Drive::plan_interface(Action* a) {
  if (!opts_.write_cache) {
    return false;
  }
  // The interface serves in arrival order what needs no media.
  HostReq* best = nullptr;
  for (HostReq* r : queue_) {
    bool fits = (r->op == OpKind::WRITE && !write_through(r->len)) ||
                (r->op == OpKind::READ && cache_.covered(r->off, r->len) == r->len);
    if (fits && (!best || r->queued < best->queued)) {
      best = r;
    }
  }
  if (!best) {
    write_blocked_ = false;
    return false;
  }
  if (best->op == OpKind::WRITE && !cache_.fits(best->len)) {
    if (!write_blocked_) {
      stats_.cache_full_waits++;
    }
    write_blocked_ = true;   // the actuator destages first
    return false;
  }
  *a = Action();
  a->kind = Action::HOST;
  a->resource = Action::INTERFACE;
  a->req = best;
  a->start = std::max(iface_free_, best->queued);
  if (write_blocked_) {
    // It waited for space: that came with the latest destage.
    a->start = std::max(a->start, last_finish_);
    write_blocked_ = false;
  }
  a->cost.transfer = model_.interface_time(best->len);
  a->end = a->start + a->cost.total();
  best->cached = true;
  take(best);
  iface_busy_ = true;
  stats_.busy_interface += a->end - a->start;
  return true;
}

bool Drive::plan_actuator(Action* a, ns_t now) {
  uint64_t ft = pending_flush_target();
  // A pending flush or a write waiting for cache space: destage only.
  bool destage_only = ft != 0 || write_blocked_;
  std::vector<HostReq*> hosts;
  ns_t min_queued = std::numeric_limits<ns_t>::max();
  if (!destage_only) {
    for (HostReq* r : queue_) {
      if (needs_media(r)) {
        hosts.push_back(r);
        min_queued = std::min(min_queued, r->queued);
      }
    }
  }
  std::vector<const Segment*> segs;
  if (opts_.write_cache && (idle_destage_ || destage_only)) {
    segs = cache_.oldest(opts_.destage_window,
                         ft ? ft : std::numeric_limits<uint64_t>::max());
  }
  // Media-cache destages: when nothing else needs the arm, or when the
  // band is above STAGE_HIGH (then beside the host commands). Not while a
  // flush or a full volatile cache waits: they do not help either.
  // Idle: once the drive has had no host command for stage_idle (real
  // drives wait before background work), and not before `now` (a command
  // may still arrive before then).
  std::vector<Staged> staged;
  ns_t stage_start = act_free_;
  if (!stage_.empty() && !destage_only && idle_destage_) {
    const bool high = static_cast<double>(stage_.bytes()) >
                      STAGE_HIGH * static_cast<double>(stage_.capacity());
    if (hosts.empty() && queue_.empty() && overflow_.empty() && !high) {
      stage_start = std::max(act_free_, last_host_ + stage_idle_);
    }
    if ((high || (queue_.empty() && overflow_.empty())) && stage_start <= now) {
      staged = stage_.near(model_.head_known() ? model_.head_offset() : 0,
                           opts_.stage_window);
    }
  }
  if (hosts.empty() && segs.empty() && staged.empty()) {
    return false;
  }
  // The arm starts on whatever is there when it frees (dirty data included:
  // it never idles with dirty data), or waits for the first to arrive.
  ns_t first = min_queued;
  for (const Segment* s : segs) {
    first = std::min<ns_t>(first, s->acked);
  }
  if (!staged.empty()) {
    first = std::min(first, stage_start);
  }
  ns_t t0 = std::max(act_free_, first);
  std::vector<Candidate> cands;
  std::vector<HostReq*> cand_req;
  std::vector<const Segment*> cand_seg;
  std::vector<int> cand_staged;     ///< index into staged, or -1
  std::vector<bool> cand_stage;     ///< a host write that would be staged
  // Staging's cost from where the arm is: the same for every write.
  ns_t stage_cost = -1;
  for (HostReq* r : hosts) {
    if (r->queued > t0) {
      continue;
    }
    Candidate c{r->op, r->off, r->len, r->queued, -1};
    bool stage = false;
    if (r->op == OpKind::READ && stage_.covered(r->off, r->len) > 0) {
      c.off = band_off_;      // (read where the newest copy is)
    } else if (r->op == OpKind::WRITE && can_stage(r->len)) {
      // Staged when that is quicker than the estimate of going home.
      if (stage_cost < 0) {
        Cost k = model_.cost(OpKind::WRITE, band_off_, 0, t0, t0);
        stage_cost = k.overhead + k.seek + stage_time_;
      }
      Cost h = model_.cost(OpKind::WRITE, r->off, 0, t0, r->queued);
      if (!h.sequential && stage_cost < h.overhead + h.seek + h.rotation) {
        c.fixed_cost = stage_cost;
        stage = true;
      }
    }
    cands.push_back(c);
    cand_req.push_back(r);
    cand_seg.push_back(nullptr);
    cand_staged.push_back(-1);
    cand_stage.push_back(stage);
  }
  for (const Segment* s : segs) {
    if (s->acked <= t0) {
      // Dirty data has no one waiting on it: it never ages into FIFO order
      // (a flush that waits restricts the candidates instead).
      cands.push_back({OpKind::WRITE, s->off, s->len, t0, -1});
      cand_req.push_back(nullptr);
      cand_seg.push_back(s);
      cand_staged.push_back(-1);
      cand_stage.push_back(false);
    }
  }
  for (size_t j = 0; j < staged.size(); ++j) {
    cands.push_back({OpKind::WRITE, staged[j].off, staged[j].len, t0, -1});
    cand_req.push_back(nullptr);
    cand_seg.push_back(nullptr);
    cand_staged.push_back(static_cast<int>(j));
    cand_stage.push_back(false);
  }
  if (cands.empty()) {
    return false;   // (only host commands not yet queued at t0: none here)
  }
  FwParams fw{opts_.fw_margin, opts_.fw_lookahead};
  size_t i = pick_next(opts_.policy, model_, cands, t0, opts_.aging, fw);
  const Candidate& c = cands[i];
  *a = Action();
  a->resource = Action::ACTUATOR;
  a->start = t0;
  a->off = c.off;
  a->len = c.len;
  uint64_t head_off = c.off;
  if (cand_stage[i]) {
    // To the band: no wait for a home sector; the staging time instead.
    Cost k = model_.cost(OpKind::WRITE, band_off_, 0, t0, c.arrival,
                         seek_scale());
    a->cost.overhead = k.overhead;
    a->cost.seek = k.seek;
    a->cost.moved = k.moved;
    a->cost.rotation = stage_time_;
    a->cost.transfer = model_.transfer_time(band_off_, c.len);
    head_off = band_off_;
  } else {
    a->cost = model_.cost(c.op, c.off, c.len, t0, c.arrival, seek_scale());
  }
  if (cand_staged[i] >= 0) {
    // Reading the staged copy back is sequential in the band.
    a->cost.transfer += model_.transfer_time(band_off_, c.len);
  }
  a->end = t0 + a->cost.total();
  if (cand_req[i]) {
    a->kind = Action::HOST;
    a->req = cand_req[i];
    a->req->staged = cand_stage[i];
    take(a->req);
  } else if (cand_seg[i]) {
    a->kind = Action::DESTAGE;
    a->seq = cand_seg[i]->seq;
  } else {
    a->kind = Action::STAGE_DESTAGE;
    a->seq = staged[cand_staged[i]].seq;
  }
  if (cand_req[i] && c.op == OpKind::WRITE && !cand_stage[i] &&
      stage_.capacity() > 0 && c.len <= model_.spec().stage_max_bytes &&
      !can_stage(c.len)) {
    stats_.stage_full++;
  }
  model_.commit(head_off, c.len, a->end);
  act_busy_ = true;
  stats_.media_ops++;
  stats_.seeks += a->cost.moved;
  stats_.sequential += a->cost.sequential;
  stats_.overhead += a->cost.overhead;
  stats_.seek += a->cost.seek;
  stats_.rotation += a->cost.rotation;
  stats_.transfer += a->cost.transfer;
  stats_.busy_actuator += a->end - a->start;
  return true;
}

void Drive::complete(HostReq* r, ns_t t, int err, std::vector<HostReq*>* done) {
  r->completion = t;
  r->err = err;
  last_host_ = std::max(last_host_, t);
  inflight_host_--;
  OpStats& s = r->op == OpKind::READ ? stats_.reads
             : r->op == OpKind::WRITE ? stats_.writes : stats_.flushes;
  s.count++;
  s.bytes += r->len;
  ns_t lat = t - r->arrival;
  s.latency_sum += lat;
  s.latency_max = std::max(s.latency_max, lat);
  done->push_back(r);
  admit_overflow(t);
}

void Drive::finish(const Action& a, std::vector<HostReq*>* done,
                   std::vector<PlatterWrite>* platter) {
  if (a.gen != gen_) {
    return;   // cut() already answered it
  }
  for (auto it = inflight_.begin(); it != inflight_.end(); ++it) {
    if (it->kind == a.kind && it->req == a.req && it->seq == a.seq &&
        it->start == a.start && it->resource == a.resource) {
      inflight_.erase(it);
      break;
    }
  }
  last_finish_ = std::max(last_finish_, a.end);
  if (a.resource == Action::ACTUATOR) {
    act_busy_ = false;
    act_free_ = a.end;
  } else if (a.resource == Action::INTERFACE) {
    iface_busy_ = false;
    iface_free_ = a.end;
  }
  switch (a.kind) {
  case Action::DESTAGE: {
    auto pw = cache_.complete_destage(a.off, a.len, a.seq);
    stats_.destages++;
    for (auto& w : pw) {
      stats_.destage_bytes += w.len;
      stage_.invalidate(w.off, w.len);   // home now, newer than a staged copy
      platter->push_back(std::move(w));
    }
    break;
  }
  case Action::STAGE_DESTAGE:
    stage_.complete_destage(Staged{a.off, a.len, a.seq});
    stats_.stage_destages++;
    stats_.stage_destage_bytes += a.len;
    break;
  case Action::HOST: {
    HostReq* r = a.req;
    if (r->op == OpKind::WRITE && r->cached) {
      cache_.insert(r->off, r->len, a.end, r->data, 0);
      stats_.cached_writes++;
      stats_.max_dirty = std::max(stats_.max_dirty, cache_.dirty());
    } else if (r->op == OpKind::WRITE && r->staged) {
      stage_.insert(r->off, r->len);
      stats_.staged_writes++;
      stats_.max_staged = std::max(stats_.max_staged, stage_.bytes());
    } else if (r->op == OpKind::WRITE) {
      stage_.invalidate(r->off, r->len);
      if (opts_.write_cache) {
        stats_.write_through++;
      }
    } else if (r->op == OpKind::READ && r->cached) {
      stats_.cache_hits++;
    }
    complete(r, a.end, 0, done);
    break;
  }
  case Action::FLUSH_DONE:
    complete(a.req, a.end, 0, done);
    break;
  }
}

void Drive::cut(uint64_t seed, bool torn, std::vector<HostReq*>* failed,
                std::vector<PlatterWrite>* platter) {
  *platter = cache_.cut(seed, torn);
  auto fail = [&](HostReq* r) {
    r->err = EIO;
    failed->push_back(r);
    stats_.failed++;
  };
  for (auto& a : inflight_) {
    if (a.req) {
      fail(a.req);
    }
  }
  for (HostReq* r : queue_) {
    fail(r);
  }
  for (HostReq* r : overflow_) {
    fail(r);
  }
  inflight_.clear();
  queue_.clear();
  overflow_.clear();
  inflight_host_ = 0;
  act_busy_ = iface_busy_ = false;
  write_blocked_ = false;
  failed_ = true;
  gen_++;
  model_.reset_head();
}

void Drive::restore() {
  failed_ = false;
}

static void op_json(std::string* o, const char* name, const OpStats& s) {
  char b[256];
  snprintf(b, sizeof b,
           "\"%s\": {\"count\": %llu, \"bytes\": %llu, \"avg_latency_us\": %.1f, "
           "\"max_latency_us\": %.1f}, ",
           name, (unsigned long long)s.count, (unsigned long long)s.bytes,
           s.count ? s.latency_sum / 1e3 / s.count : 0.0, s.latency_max / 1e3);
  *o += b;
}

std::string Drive::stats_json(const std::string& name) const {
  const DriveStats& s = stats_;
  std::string o = "{\"disk\": \"" + name + "\", ";
  char b[2048];
  snprintf(b, sizeof b,
           "\"model\": \"%s\", \"disk_bytes\": %llu, \"sched\": \"%s\", "
           "\"queue_depth\": %u, \"write_cache\": %s, \"cache_bytes\": %llu, "
           "\"dirty_bytes\": %llu, \"failed\": %s, \"idle_destage\": %s, "
           "\"outstanding\": %zu, ",
           model_.spec().name.c_str(), (unsigned long long)model_.disk_bytes(),
           policy_name(opts_.policy), opts_.queue_depth,
           opts_.write_cache ? "true" : "false",
           (unsigned long long)cache_.capacity(), (unsigned long long)cache_.dirty(),
           failed_ ? "true" : "false", idle_destage_ ? "true" : "false", outstanding());
  o += b;
  op_json(&o, "reads", s.reads);
  op_json(&o, "writes", s.writes);
  op_json(&o, "flushes", s.flushes);
  snprintf(b, sizeof b,
           "\"requests\": %llu, \"bytes\": %llu, \"busy_ms\": %.3f, "
           "\"interface_busy_ms\": %.3f, \"media_ops\": %llu, \"seeks\": %llu, "
           "\"sequential\": %llu, \"overhead_ms\": %.3f, \"seek_ms\": %.3f, "
           "\"rotation_ms\": %.3f, \"transfer_ms\": %.3f, "
           "\"cache\": {\"hits\": %llu, \"cached_writes\": %llu, "
           "\"write_through\": %llu, \"destages\": %llu, \"destage_bytes\": %llu, "
           "\"full_waits\": %llu, \"max_dirty_bytes\": %llu}, \"eio\": %llu, "
           "\"media_cache\": {\"bytes\": %llu, \"staged_bytes\": %llu, "
           "\"staged_writes\": %llu, \"destages\": %llu, \"destage_bytes\": %llu, "
           "\"full\": %llu, \"max_staged_bytes\": %llu}, ",
           (unsigned long long)(s.reads.count + s.writes.count + s.flushes.count),
           (unsigned long long)(s.reads.bytes + s.writes.bytes),
           s.busy_actuator / 1e6, s.busy_interface / 1e6,
           (unsigned long long)s.media_ops, (unsigned long long)s.seeks,
           (unsigned long long)s.sequential, s.overhead / 1e6, s.seek / 1e6,
           s.rotation / 1e6, s.transfer / 1e6, (unsigned long long)s.cache_hits,
           (unsigned long long)s.cached_writes, (unsigned long long)s.write_through,
           (unsigned long long)s.destages, (unsigned long long)s.destage_bytes,
           (unsigned long long)s.cache_full_waits, (unsigned long long)s.max_dirty,
           (unsigned long long)s.failed, (unsigned long long)stage_.capacity(),
           (unsigned long long)stage_.bytes(), (unsigned long long)s.staged_writes,
           (unsigned long long)s.stage_destages,
           (unsigned long long)s.stage_destage_bytes,
           (unsigned long long)s.stage_full, (unsigned long long)s.max_staged);
  o += b;
  o += "\"qd_hist\": {";
  bool first = true;
  for (int i = 0; i < DriveStats::QD_BUCKETS; i++) {
    if (s.qd_hist[i]) {
      snprintf(b, sizeof b, "%s\"%d%s\": %llu", first ? "" : ", ", i,
               i == DriveStats::QD_BUCKETS - 1 ? "+" : "",
               (unsigned long long)s.qd_hist[i]);
      o += b;
      first = false;
    }
  }
  o += "}}";
  return o;
}

}  // namespace diskemu
