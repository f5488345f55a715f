// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal checkpoint under out-of-order writeback.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/checkpoint_tracker.h"

#include <bit>
#include <cassert>
#include <cerrno>

namespace mim {

CheckpointTracker::CheckpointTracker(sn_t first, uint64_t max_window)
  : max_window_(max_window), base_(first), checkpoint_(first)
{
  assert(first >= 1);
  assert(max_window >= 64);
}

int CheckpointTracker::record_durable(sn_t sn)
{
  MutexLock l(mu_);
  if (sn < checkpoint_) {
    return -ERANGE;
  }
  if (sn - checkpoint_ >= max_window_) {
    return -EOVERFLOW;
  }
  const uint64_t idx = sn - base_;
  const size_t w = idx / 64;
  const uint64_t bit = uint64_t(1) << (idx % 64);
  if (w >= words_.size()) {
    words_.resize(w + 1, 0);
  }
  if (words_[w] & bit) {
    return -EEXIST;
  }
  words_[w] |= bit;
  ++set_bits_;
  if (sn == checkpoint_) {
    advance_locked();
  }
  return 0;
}

void CheckpointTracker::advance_locked()
{
  // Each word is popped once, so this is O(1) amortized per recorded sn.
  while (!words_.empty() && words_.front() == ~uint64_t(0)) {
    words_.pop_front();
    base_ += 64;
    set_bits_ -= 64;
  }
  if (words_.empty()) {
    checkpoint_ = base_;
  } else {
    checkpoint_ = base_ + std::countr_one(words_.front());
  }
  // Invariant: checkpoint_ < base_ + 64, and its bit is clear.
}

sn_t CheckpointTracker::checkpoint() const
{
  MutexLock l(mu_);
  return checkpoint_;
}

uint64_t CheckpointTracker::pending() const
{
  MutexLock l(mu_);
  return set_bits_ - (checkpoint_ - base_);
}

void CheckpointTracker::reset(sn_t first, uint64_t max_window)
{
  assert(first >= 1);
  assert(max_window >= 64);
  std::deque<uint64_t> old;
  {
    MutexLock l(mu_);
    max_window_ = max_window;
    words_.swap(old);
    base_ = first;
    checkpoint_ = first;
    set_bits_ = 0;
  }
  // old is freed here, outside mu_.
}

}  // namespace mim
