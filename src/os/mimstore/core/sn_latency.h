// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: how long a transaction takes from queueing until the
 * checkpoint passes it (its writes in the object files and synced, its
 * journal entry free to trim), sampled.
 *
 * The commit and apply latencies are measured per transaction as it goes;
 * this stage ends for thousands of transactions at once, when a sync moves
 * the checkpoint, long after anything holds them. So one transaction in
 * `every` (by sn) has its queueing time recorded, in sn order, and the
 * checkpoint hands back the records below it. At most `cap` records wait
 * (the rest are not sampled): 16 B each.
 *
 * Thread safety: every member is protected by `lock`, a leaf lock; queued()
 * is called by submitters, passed() by the sync thread.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "core/thread_annotations.h"
#include "core/types.h"

namespace mim {

class SnLatency {
 public:
  explicit SnLatency(uint64_t every = 64, size_t cap = 65536)
    : every_(every ? every : 1), cap_(cap) {}

  /// sn was queued at time t (seconds, monotonic). sns come in increasing
  /// order; one in `every` is kept while fewer than `cap` wait.
  void queued(sn_t sn, double t);

  /// The checkpoint is at cp: every kept sn below it is done at `now`.
  /// Calls f(seconds) for each, oldest first; returns how many.
  template <typename F>
  size_t passed(sn_t cp, double now, F f) {
    std::deque<std::pair<sn_t, double>> done;
    {
      MutexLock l(lock_);
      while (!q_.empty() && q_.front().first < cp) {
        done.push_back(q_.front());
        q_.pop_front();
      }
    }
    for (auto& d : done) {
      f(now - d.second);
    }
    return done.size();
  }

  /// Forget every record (a mount starts the clock again).
  void clear();
  size_t waiting() const;

 private:
  const uint64_t every_;
  const size_t cap_;
  mutable Mutex lock_;
  std::deque<std::pair<sn_t, double>> q_ MIM_GUARDED_BY(lock_);
};

}  // namespace mim
