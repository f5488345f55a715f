// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal checkpoint under out-of-order writeback
 * (MIM paper, section 4.5).
 *
 * Merging writes back transactions out of sn order, so "the last sn written
 * back" is no checkpoint. The checkpoint is the smallest sn whose data is
 * not yet durable in the backend; the journal may be trimmed below it and
 * replay starts at it.
 *
 * The paper keeps the durable sns in a sorted linked list: inserting costs
 * O(depth of reordering). We keep a sliding bitmap instead: bit i of the
 * window is sn base_ + i. Recording sets one bit, O(1); advancing pops
 * full 64-bit words and counts the trailing ones of the first, O(1)
 * amortized. The cost per sn stays flat however far writeback runs ahead
 * of the checkpoint (see src/test/core/bench/checkpoint_bench.cc).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>

#include "core/thread_annotations.h"
#include "core/types.h"

namespace mim {

/// Thread-safe: every method takes mu_, so writeback threads may record
/// concurrently while the sync thread reads checkpoint().
class CheckpointTracker {
 public:
  /// Default bound on how far ahead of the checkpoint an sn may be
  /// recorded: 2^26 sns = a bitmap of 8 MiB at most. A larger distance is
  /// a caller bug, and refusing it keeps one bad sn from allocating
  /// unbounded memory. The store sizes the window from its journal at every
  /// mount (window_for_journal()): a 40 GB journal of small transactions
  /// holds more than 2^26 sns, all of them above the checkpoint.
  static constexpr uint64_t DEFAULT_MAX_WINDOW = uint64_t(1) << 26;

  /// The window for a journal that holds at most `max_live_sns` entries at
  /// once: never below the default. Every sn from the checkpoint on is
  /// still in the journal (it is trimmed only below the checkpoint), so
  /// no recorded sn is further ahead than that.
  static uint64_t window_for_journal(uint64_t max_live_sns) {
    return std::max(max_live_sns + 64, DEFAULT_MAX_WINDOW);
  }

  /// All sns < first are durable. REQUIRES: first >= 1, max_window >= 64.
  explicit CheckpointTracker(sn_t first = 1,
                             uint64_t max_window = DEFAULT_MAX_WINDOW);

  CheckpointTracker(const CheckpointTracker&) = delete;
  CheckpointTracker& operator=(const CheckpointTracker&) = delete;

  /// Record that sn's data is durable in the backend; advance the
  /// checkpoint over every contiguous durable sn (never past a gap).
  /// Returns 0; -ERANGE if sn < checkpoint() (already covered);
  /// -EEXIST if sn was already recorded (above the checkpoint);
  /// -EOVERFLOW if sn >= checkpoint() + max_window (nothing recorded).
  int record_durable(sn_t sn);

  /// The smallest sn not yet recorded durable.
  sn_t checkpoint() const;

  /// Number of recorded sns above the checkpoint (waiting for a gap).
  uint64_t pending() const;

  /// Forget everything: all sns < first are durable, and sns up to
  /// first + max_window - 1 may be recorded. Used at mount, after journal
  /// replay. REQUIRES: first >= 1, max_window >= 64.
  void reset(sn_t first, uint64_t max_window = DEFAULT_MAX_WINDOW);

 private:
  void advance_locked() MIM_REQUIRES(mu_);

  mutable Mutex mu_;
  // State below is protected by mu_.
  uint64_t max_window_ MIM_GUARDED_BY(mu_);
  //
  // Invariants: base_ <= checkpoint_ < base_ + 64; every sn in
  // [base_, checkpoint_) has its bit set and checkpoint_'s bit is clear;
  // words_.front() is never all ones (advance_locked() pops full words).
  // bit i of words_[w] is sn base_ + 64*w + i
  std::deque<uint64_t> words_ MIM_GUARDED_BY(mu_);
  sn_t base_ MIM_GUARDED_BY(mu_);
  sn_t checkpoint_ MIM_GUARDED_BY(mu_);
  uint64_t set_bits_ MIM_GUARDED_BY(mu_) = 0;  // bits set in words_
};

}  // namespace mim
