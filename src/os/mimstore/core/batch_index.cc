// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal's index of live entries (see batch_index.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/batch_index.h"

#include <algorithm>

#include "core/check.h"

namespace mim {

void BatchIndex::push(sn_t first, sn_t last, uint64_t off)
{
  MIM_CHECK(first <= last);
  MIM_CHECK(recs_.empty() || first >= end_);
  // The checkpoint never passes an sn not yet journaled.
  MIM_CHECK(first >= live_from_);
  MIM_CHECK(off % UNIT == 0 && off / UNIT < HOLE);
  if (recs_.empty()) {
    base_ = first;
  } else {
    // The live sns span less than 2^32, so 32 bits tell them apart.
    MIM_CHECK(last - base_ < (uint64_t(1) << 32));
    if (first > end_) {
      recs_.push_back(Rec{uint32_t(end_), HOLE});
    }
  }
  recs_.push_back(Rec{uint32_t(first), uint32_t(off / UNIT)});
  end_ = last + 1;
  live_ += last - std::max(first, live_from_) + 1;
}

void BatchIndex::pop_front()
{
  if (recs_.size() > 1) {
    base_ = first_of(1);
  }
  recs_.pop_front();
}

void BatchIndex::trim_below(sn_t checkpoint)
{
  while (!recs_.empty() && last_of(0) < checkpoint) {
    if (!hole(0)) {
      live_ -= last_of(0) - std::max(first_of(0), live_from_) + 1;
    }
    pop_front();
  }
  // A hole holds no live sn: the oldest live sn is in the batch after it.
  while (!recs_.empty() && hole(0)) {
    pop_front();
  }
  if (!recs_.empty()) {
    const sn_t was = first_sn();
    if (checkpoint > was) {
      live_ -= checkpoint - was;
    }
  }
  live_from_ = std::max(live_from_, checkpoint);
}

sn_t BatchIndex::first_sn() const
{
  return std::max(first_of(0), live_from_);
}

std::optional<BatchRange> BatchIndex::batch_from(sn_t sn, bool* oldest) const
{
  // The first record whose last sn is >= sn.
  size_t lo = 0, hi = recs_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (last_of(mid) < sn) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == recs_.size()) {
    return std::nullopt;
  }
  if (hole(lo)) {
    ++lo;  // never the back: a batch follows every hole
  }
  *oldest = sn <= first_sn();
  return range(lo);
}

}  // namespace mim
