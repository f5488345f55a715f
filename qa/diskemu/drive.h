// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: one emulated drive as a discrete-event state machine.
 *
 * Two resources, each serving one thing at a time:
 *   actuator   seeks, rotates, moves data to or from the platter: host
 *              commands that need the media, and destages of cached writes
 *   interface  host transfers that need no media: writes acknowledged into
 *              the write cache, reads served wholly from it
 * Commands beyond the queue depth wait in the host's queue (FIFO).
 * A drive with a media cache (DiskSpec::stage_bytes, stage.h) may write a
 * write that needs the media to its staging band instead of home, when
 * that is quicker, and copies staged data home (destage) when it has
 * nothing else to do or the band is nearly full (STAGE_HIGH).
 *
 * Driving it (the daemon with the wall clock, replay and tests with a
 * virtual one, the same code):
 *   submit(r)           r->arrival set by the caller
 *   while plan(&a) ...  start every action that can start; each has an end
 *   finish(a, ...)      at a's end time, in end order: completes commands,
 *                       returns the bytes a destage puts on the platter
 * Time only moves through the times the caller gives: an action starts at
 * max(resource free, arrival of what it serves), never at "now", so a late
 * wake-up of the caller does not shift the emulated timeline.
 *
 * Not thread-safe: the caller serializes (the daemon holds its mutex).
 */
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "model.h"
#include "ncq.h"
#include "stage.h"
#include "wcache.h"

namespace diskemu {

struct HostReq {
  OpKind op = OpKind::READ;
  uint64_t off = 0, len = 0;
  Payload data;                 ///< write payload for the cache (may be null)
  ns_t arrival = 0;             ///< set by the caller before submit()
  // Filled in by the drive.
  ns_t queued = 0;              ///< when it got a queue slot
  uint64_t flush_target = 0;    ///< FLUSH: newest acknowledged write then
  ns_t completion = 0;
  int err = 0;                  ///< 0 or EIO
  bool cached = false;          ///< served by the interface alone
  bool staged = false;          ///< written to the media cache's band
  void* user = nullptr;
};

struct DriveOptions {
  uint32_t queue_depth = 32;
  /// fw with its calibrated margin and seek variation (README,
  /// "Validation"); sptf (ideal) and clook are the bracket.
  Policy policy = Policy::FW;
  ns_t aging = 1000 * NS_PER_MS;    ///< 0: no aging bound
  bool write_cache = false;
  uint64_t cache_bytes = 0;         ///< 0: the spec's
  uint32_t destage_window = 32;     ///< oldest dirty segments considered
  ns_t seq_window = -1;             ///< see HddModel
  uint64_t capacity_bytes = 0;      ///< see HddModel
  /// Policy::FW: the rotational slack it insists on, the candidates it
  /// rates (0: all), and how far an executed seek deviates from the curve
  /// (uniform within +-seek_err of it, seeded: the same run twice is the
  /// same). seek_err applies to fw only: sptf stays the ideal bracket.
  ns_t fw_margin = 300 * 1000;
  uint32_t fw_lookahead = 0;
  double seek_err = 0.03;
  uint64_t seed = 1;
  /// Staged extents the drive reorders its media-cache destages over.
  uint32_t stage_window = 64;
};

struct Action {
  /// STAGE_DESTAGE: a staged extent (off, len, seq) copied home.
  enum Kind { HOST, DESTAGE, FLUSH_DONE, STAGE_DESTAGE } kind = HOST;
  enum Resource { ACTUATOR, INTERFACE, NONE } resource = NONE;
  HostReq* req = nullptr;           ///< HOST and FLUSH_DONE
  uint64_t off = 0, len = 0, seq = 0;   ///< DESTAGE
  ns_t start = 0, end = 0;
  Cost cost;
  uint64_t gen = 0;                 ///< power cycle it belongs to
};

struct OpStats {
  uint64_t count = 0, bytes = 0;
  ns_t latency_sum = 0, latency_max = 0;
};

struct DriveStats {
  OpStats reads, writes, flushes;
  uint64_t media_ops = 0;         ///< actuator actions (host + destage)
  uint64_t seeks = 0;             ///< ... that moved the arm
  uint64_t sequential = 0;        ///< ... that continued the previous one
  uint64_t cache_hits = 0, cached_writes = 0, write_through = 0;
  uint64_t destages = 0, destage_bytes = 0;
  uint64_t cache_full_waits = 0;  ///< times a write waited for cache space
  uint64_t max_dirty = 0;
  uint64_t staged_writes = 0;     ///< writes put in the media cache
  uint64_t stage_destages = 0, stage_destage_bytes = 0;
  uint64_t stage_full = 0;        ///< writes that went home: band too full
  uint64_t max_staged = 0;        ///< most bytes staged at once
  uint64_t failed = 0;            ///< commands answered EIO
  ns_t busy_actuator = 0, busy_interface = 0;
  ns_t overhead = 0, seek = 0, rotation = 0, transfer = 0;
  static constexpr int QD_BUCKETS = 65;
  uint64_t qd_hist[QD_BUCKETS] = {};  ///< outstanding at arrival, incl. it
};

class Drive {
 public:
  Drive(const DiskSpec& spec, uint64_t disk_bytes, const DriveOptions& opts);

  void submit(HostReq* r);
  /// now: the caller's clock (an idle media-cache destage is not planned
  /// before it; the default lets it start whenever it is due).
  bool plan(Action* a, ns_t now = std::numeric_limits<ns_t>::max());
  /// When an idle media-cache destage becomes due, if nothing else happens
  /// (the caller wakes then and plans again); the max ns_t if none is.
  ns_t wake_at() const;
  void finish(const Action& a, std::vector<HostReq*>* done,
              std::vector<PlatterWrite>* platter);

  /// Power cut: queued and in-flight commands fail with EIO, the cache is
  /// lost (torn: a seeded part of it returned in *platter), and every
  /// command fails until restore().
  void cut(uint64_t seed, bool torn, std::vector<HostReq*>* failed,
           std::vector<PlatterWrite>* platter);
  void restore();
  bool failed() const { return failed_; }
  /// Idle destaging on (default) or held: held, dirty data stays in the
  /// cache until a FLUSH or a full cache forces it out (crash tests: the
  /// window of loss does not depend on timing).
  void set_idle_destage(bool on) { idle_destage_ = on; }
  bool idle_destage() const { return idle_destage_; }

  /// Writes of this size bypass the cache (bigger than all of it).
  bool write_through(uint64_t len) const;
  /// Cached pieces of [off, off+len) to lay over a platter read.
  std::vector<PlatterWrite> overlay(uint64_t off, uint64_t len) const {
    return cache_.overlay(off, len);
  }
  /// The range is being zeroed on the platter behind the model's back
  /// (discard, fast-mode write): forget cached and staged data for it.
  void discard(uint64_t off, uint64_t len) {
    cache_.discard(off, len);
    stage_.invalidate(off, len);
  }
  /// Everything dirty, for writing out uncharged (entering fast mode); the
  /// media cache is emptied too (its data is already in the backing file).
  std::vector<PlatterWrite> drain() {
    stage_ = MediaCache(stage_.capacity());
    return cache_.drain();
  }

  bool idle() const;                ///< nothing queued, in flight or dirty
  ns_t actuator_free() const { return act_free_; }
  const DriveStats& stats() const { return stats_; }
  std::string stats_json(const std::string& name) const;
  const HddModel& model() const { return model_; }
  const DriveOptions& options() const { return opts_; }
  const WriteCache& cache() const { return cache_; }
  const MediaCache& media_cache() const { return stage_; }
  size_t outstanding() const { return queue_.size() + inflight_host_ + overflow_.size(); }

 private:
  bool plan_flush_done(Action* a);
  bool plan_interface(Action* a);
  bool plan_actuator(Action* a, ns_t now);
  bool needs_media(const HostReq* r) const;
  void take(HostReq* r);            ///< out of queue_, into flight
  void admit_overflow(ns_t t);
  void complete(HostReq* r, ns_t t, int err, std::vector<HostReq*>* done);
  uint64_t pending_flush_target() const;   ///< lowest unsatisfied, or 0
  /// Whether a write of len may be staged now (a band, room below
  /// STAGE_HIGH, small enough).
  bool can_stage(uint64_t len) const;
  /// Policy::FW: this executed seek's deviation from the curve (1.0 else).
  double seek_scale();

  HddModel model_;
  DriveOptions opts_;
  WriteCache cache_;
  MediaCache stage_;
  uint64_t band_off_ = 0;           ///< an offset on the staging band
  ns_t stage_time_ = 0;             ///< DiskSpec::stage_ms
  ns_t stage_idle_ = 0;             ///< DiskSpec::stage_idle_ms
  ns_t last_host_ = 0;              ///< latest host arrival or completion
  std::vector<HostReq*> queue_;     ///< in the drive's command queue
  std::deque<HostReq*> overflow_;   ///< waiting for a queue slot
  size_t inflight_host_ = 0;
  std::vector<Action> inflight_;    ///< for cut()
  bool act_busy_ = false, iface_busy_ = false;
  ns_t act_free_ = 0, iface_free_ = 0;
  ns_t last_finish_ = 0;
  bool write_blocked_ = false;      ///< a write waits for cache space
  bool failed_ = false;
  bool idle_destage_ = true;
  uint64_t gen_ = 1;
  DriveStats stats_;
};

}  // namespace diskemu
