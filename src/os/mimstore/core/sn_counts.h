// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: outstanding parts per sn, as a dense window of counters.
 *
 * Durability counts, per sn, the parts not yet durable (one for the apply,
 * one per merged write). The sns in flight are dense: every sn from the
 * checkpoint to the newest applied one, 300,000 of them behind a 64 GiB
 * sweep. A hash node per sn cost about 50 B there (15 MiB of the OSD's
 * RSS, docs/results/20261125-64G-compact-index); a counter in a window
 * indexed by sn costs 4 B.
 *
 *   window   counts_[i] is the parts outstanding for sn base_ + i; 0 means
 *            none (never held, or all released). It covers every sn with
 *            a nonzero count; it grows at either end on add() and is cut
 *            from the front by trim_below() (the checkpoint: everything
 *            below it is durable, so nothing there can be outstanding).
 *   held_    the number of nonzero counters (what the map's size() was).
 *
 * Not thread-safe: Durability guards it with parts_lock.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <deque>

#include "core/types.h"

namespace mim {

class SnCounts {
 public:
  /// One more part of sn outstanding.
  void add(sn_t sn);
  /// One part of sn done. Returns the parts still outstanding; -1 if sn
  /// had none (a release without a hold: the caller's invariant broke).
  int64_t remove(sn_t sn);
  /// Forget the counters of sns below `sn` that are zero (below the
  /// checkpoint all are). Stops at a nonzero one, which stays counted.
  void trim_below(sn_t sn);
  /// sns with a nonzero count.
  size_t held() const { return held_; }
  /// sns the window spans (its memory is about 4 B each).
  size_t span() const { return counts_.size(); }

 private:
  std::deque<uint32_t> counts_;
  sn_t base_ = 0;
  size_t held_ = 0;
};

}  // namespace mim
