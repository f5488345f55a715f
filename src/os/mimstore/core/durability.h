// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: durability accounting and the sync thread (MIM paper, section
 * 4.5, sorted-sn checkpointing).
 *
 * Every sn holds one part for what the apply thread did directly (files,
 * RocksDB) and one per write merged into the HTMLL. A part is released
 * once a sync that *started after* the part was done completes: the direct
 * part after apply, a merged write after its object was written back (the
 * flush, or taken early by another op). When an sn's count reaches zero it
 * is recorded in the CheckpointTracker, whose checkpoint (the smallest sn
 * not yet durable) the store persists in the journal header; the journal
 * reclaims the space behind it. Merging reorders writeback, so sns become
 * durable out of order; the tracker keeps the checkpoint from passing one
 * that is not.
 *
 *   hold(sn)                 one more part of sn outstanding
 *   release_after_sync(sn)   one part done; durable after the next sync
 *   sync (sync thread)       swap out the released parts, sync_data(),
 *                            count them down, record the sns that reach
 *                            zero, and if the checkpoint moved, tell the
 *                            store (checkpoint_moved)
 *
 * The sync thread (run()) syncs at least every `interval` seconds, on
 * request sooner, but never twice within `min_interval` (a storm of
 * requests must not become a storm of syncfs calls). wait_for_next_sync()
 * waits for a sync that starts after the call: one already running may have
 * missed the caller's writes. The writeback throttle (FileStore's
 * WBThrottle): writers count the bytes they leave dirty in the page cache,
 * and past a limit wait for the next sync, which syncs them and zeroes the
 * count (a sync with nothing dirty and nothing released skips sync_data).
 *
 * Kept free of Ceph (as all of core/): the store supplies the sync itself,
 * the checkpoint's persistence and its counters as hooks, and starts the
 * thread under its own name.
 *
 * Locks (both leaves; no hook is called with either held):
 *   parts_lock   holds, unsynced. The tracker locks internally.
 *   sync_lock    requested, started, done, stopping, waiters; sync_cond
 *                waits on them.
 * Sync thread only: last_checkpoint, last_sync. Atomic: dirty_ios,
 * dirty_bytes. Constant while the thread runs: limits, hooks.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/checkpoint_tracker.h"
#include "core/sn_counts.h"
#include "core/thread_annotations.h"
#include "core/types.h"

namespace mim {

struct DurabilityLimits {
  double interval = 5.0;            ///< s: the longest time between syncs
  double min_interval = 0.01;       ///< s: the shortest time between syncs
  uint64_t writeback_ios = 5000;    ///< dirty file writes before writers wait
  uint64_t writeback_bytes = 500ull << 20;  ///< dirty bytes, likewise
};

struct DurabilityHooks {
  /// Make every file and RocksDB write completed so far durable (syncfs,
  /// the DB's sync). Called only when some part waits for it. Must not
  /// return on failure: a failed sync leaves the disk in an unknown state
  /// (the store aborts; the journal still holds everything).
  std::function<void()> sync_data;
  /// sync_data took `secs` (only after a data sync).
  std::function<void(double secs)> synced;
  /// The checkpoint moved forward to `cp`: every sn below it is durable.
  /// Persist it (the journal header) and reclaim what it frees; must not
  /// return on failure.
  std::function<void(sn_t cp)> checkpoint_moved;
  /// After every sync, with or without data, with the checkpoint.
  std::function<void(sn_t cp)> after_sync;
  /// Each time the sync thread wakes, before its sync: checks that must
  /// fire when no writes arrive to make them (the time threshold).
  std::function<void()> tick;
};

class Durability {
 public:
  Durability() = default;
  Durability(const Durability&) = delete;
  Durability& operator=(const Durability&) = delete;

  // ---- accounting (any thread) ----
  /// One more part of `sn` outstanding.
  void hold(sn_t sn);
  /// One part of `sn` is done; it counts as durable after the next sync
  /// that starts after this call. REQUIRES: a hold of sn.
  void release_after_sync(sn_t sn);
  void release_after_sync(const std::vector<sn_t>& sns);
  /// Mount: every sn below `first` is durable and nothing is held (what
  /// an earlier mount held is forgotten); the journal holds at most
  /// `max_live_sns` entries at once (journal_max_live_sns()), which bounds
  /// how far ahead of the checkpoint an sn can be. REQUIRES: the sync
  /// thread is not running.
  void reset_checkpoint(sn_t first, uint64_t max_live_sns);
  /// The smallest sn not yet durable.
  sn_t checkpoint() const { return tracker.checkpoint(); }
  /// sns recorded durable above the checkpoint (waiting for a gap).
  uint64_t checkpoint_pending() const { return tracker.pending(); }
  /// sns with outstanding parts, and parts waiting for a sync.
  size_t sns_held() const;
  /// sns the hold counters span (about 4 B each).
  size_t sns_window() const;
  size_t parts_unsynced() const;

  // ---- the writeback throttle ----
  /// A writer left `bytes` dirty in the page cache (one write).
  void note_dirty(uint64_t bytes) {
    ++dirty_ios;
    dirty_bytes += bytes;
  }
  /// The dirty writes since the last sync started are past a limit: the
  /// caller should wait_for_next_sync().
  bool over_writeback_limit() const {
    return dirty_ios >= limits.writeback_ios ||
           dirty_bytes >= limits.writeback_bytes;
  }

  // ---- the sync thread ----
  /// Before run(): the limits and hooks it uses until it returns.
  void configure(const DurabilityLimits& l, DurabilityHooks h);
  /// The sync thread's body: syncs until stop(), then once more (whatever
  /// completed before the stop) and returns.
  void run();
  /// Ask run() to return; releases every wait_for_next_sync().
  void stop();
  /// A sync soon (not before min_interval after the last one).
  void request_sync();
  /// Wait until a sync that starts after this call has finished (or the
  /// thread is stopping). REQUIRES: no lock held that the hooks take.
  void wait_for_next_sync();
  /// Threads inside wait_for_next_sync() (tests wait for a waiter).
  size_t sync_waiters() const;

 private:
  /// One sync on the sync thread.
  void sync_once();

  CheckpointTracker tracker;

  mutable Mutex parts_lock;
  /// Outstanding parts per sn, from about the checkpoint on (a dense
  /// window: 4 B per sn in flight).
  SnCounts holds MIM_GUARDED_BY(parts_lock);
  /// Parts done since the last sync started.
  std::vector<sn_t> unsynced MIM_GUARDED_BY(parts_lock);

  mutable Mutex sync_lock;
  std::condition_variable sync_cond;
  bool requested MIM_GUARDED_BY(sync_lock) = false;
  bool stopping MIM_GUARDED_BY(sync_lock) = false;
  uint64_t started MIM_GUARDED_BY(sync_lock) = 0;  ///< syncs begun
  uint64_t done MIM_GUARDED_BY(sync_lock) = 0;     ///< syncs finished
  size_t waiters MIM_GUARDED_BY(sync_lock) = 0;  ///< in wait_for_next_sync

  /// File writes since the last sync started (the writeback throttle).
  std::atomic<uint64_t> dirty_ios{0};
  std::atomic<uint64_t> dirty_bytes{0};

  DurabilityLimits limits;  ///< constant while run() runs
  DurabilityHooks hooks;    ///< likewise
  sn_t last_checkpoint = 0; ///< sync thread only: the one last persisted
};

}  // namespace mim
