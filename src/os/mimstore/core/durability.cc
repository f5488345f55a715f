// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: durability accounting and the sync thread (see durability.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/durability.h"

#include "core/check.h"

namespace mim {

void Durability::hold(sn_t sn)
{
  MutexLock l(parts_lock);
  holds.add(sn);
}

void Durability::release_after_sync(sn_t sn)
{
  MutexLock l(parts_lock);
  unsynced.push_back(sn);
}

void Durability::release_after_sync(const std::vector<sn_t>& sns)
{
  MutexLock l(parts_lock);
  unsynced.insert(unsynced.end(), sns.begin(), sns.end());
}

void Durability::reset_checkpoint(sn_t first, uint64_t max_live_sns)
{
  // A mount starts from nothing held: what a previous mount of this object
  // still held (a window it left in the journal) is replayed and held anew.
  {
    MutexLock l(parts_lock);
    holds = SnCounts();
    unsynced.clear();
  }
  tracker.reset(first, CheckpointTracker::window_for_journal(max_live_sns));
}

size_t Durability::sns_held() const
{
  MutexLock l(parts_lock);
  return holds.held();
}

size_t Durability::sns_window() const
{
  MutexLock l(parts_lock);
  return holds.span();
}

size_t Durability::parts_unsynced() const
{
  MutexLock l(parts_lock);
  return unsynced.size();
}

void Durability::configure(const DurabilityLimits& l, DurabilityHooks h)
{
  limits = l;
  hooks = std::move(h);
  MutexLock g(sync_lock);
  stopping = false;
}

void Durability::stop()
{
  MutexLock l(sync_lock);
  stopping = true;
  sync_cond.notify_all();
}

void Durability::request_sync()
{
  MutexLock l(sync_lock);
  requested = true;
  sync_cond.notify_all();
}

void Durability::wait_for_next_sync()
{
  UniqueLock l(sync_lock);
  const uint64_t want = started + 1;
  requested = true;
  sync_cond.notify_all();
  ++waiters;
  while (done < want && !stopping) {
    sync_cond.wait(l.get());
  }
  --waiters;
}

size_t Durability::sync_waiters() const
{
  MutexLock l(sync_lock);
  return waiters;
}

void Durability::run()
{
  using clock = std::chrono::steady_clock;
  using secs = std::chrono::duration<double>;
  last_checkpoint = tracker.checkpoint();
  auto last_sync = clock::now();
  // Waits are loops around wait_until, not predicates: the lock
  // annotations follow a loop (core/thread_annotations.h).
  auto until = [](secs s) {
    return clock::now() + std::chrono::duration_cast<clock::duration>(s);
  };
  UniqueLock l(sync_lock);
  while (!stopping) {
    const auto interval_end = until(secs(limits.interval));
    while (!stopping && !requested &&
           sync_cond.wait_until(l.get(), interval_end) ==
             std::cv_status::no_timeout) {
    }
    if (stopping) {
      break;
    }
    auto since = clock::now() - last_sync;
    auto min_gap = secs(limits.min_interval);
    if (since < min_gap) {
      const auto gap_end = until(min_gap - since);
      while (!stopping && sync_cond.wait_until(l.get(), gap_end) ==
                            std::cv_status::no_timeout) {
      }
      if (stopping) {
        break;
      }
    }
    requested = false;
    l.unlock();
    if (hooks.tick) {
      hooks.tick();
    }
    sync_once();
    last_sync = clock::now();
    l.lock();
  }
  l.unlock();
  sync_once();  // whatever completed before the stop
}

void Durability::sync_once()
{
  uint64_t seq;
  {
    MutexLock l(sync_lock);
    seq = ++started;
  }
  std::vector<sn_t> batch;
  {
    MutexLock l(parts_lock);
    batch.swap(unsynced);
  }
  // What this sync makes durable no longer counts as dirty. Dirty file
  // data is synced even when no part waits for it yet (a writer releases
  // its part just after its write): zeroed without a sync, the writeback
  // throttle would forget data still in the page cache.
  const bool dirty_ios_left = dirty_ios.exchange(0) > 0;
  const bool dirty_bytes_left = dirty_bytes.exchange(0) > 0;
  if (!batch.empty() || dirty_ios_left || dirty_bytes_left) {
    auto start = std::chrono::steady_clock::now();
    hooks.sync_data();
    if (hooks.synced) {
      hooks.synced(std::chrono::duration<double>(
        std::chrono::steady_clock::now() - start).count());
    }
    MutexLock l(parts_lock);
    for (sn_t sn : batch) {
      const int64_t left = holds.remove(sn);
      // Invariant: every released part was held first.
      MIM_CHECK(left >= 0);
      if (left == 0) {
        int r = tracker.record_durable(sn);
        MIM_CHECK(r == 0);
      }
    }
    // Below the checkpoint every sn is durable: its counters can go.
    holds.trim_below(tracker.checkpoint());
  }
  const sn_t cp = tracker.checkpoint();
  if (cp > last_checkpoint) {
    hooks.checkpoint_moved(cp);
    last_checkpoint = cp;
  }
  if (hooks.after_sync) {
    hooks.after_sync(cp);
  }
  MutexLock l(sync_lock);
  done = seq;
  sync_cond.notify_all();
}

}  // namespace mim
