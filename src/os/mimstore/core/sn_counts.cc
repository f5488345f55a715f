// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: outstanding parts per sn (see sn_counts.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/sn_counts.h"

namespace mim {

void SnCounts::add(sn_t sn)
{
  if (counts_.empty()) {
    base_ = sn;
  }
  // Holds come in sn order from the apply thread; the front end is for
  // replay or a caller that holds an older sn again.
  while (sn < base_) {
    counts_.push_front(0);
    --base_;
  }
  if (sn - base_ >= counts_.size()) {
    counts_.resize(sn - base_ + 1, 0);
  }
  if (counts_[sn - base_]++ == 0) {
    ++held_;
  }
}

int64_t SnCounts::remove(sn_t sn)
{
  if (sn < base_ || sn - base_ >= counts_.size() || counts_[sn - base_] == 0) {
    return -1;
  }
  uint32_t& c = counts_[sn - base_];
  if (--c == 0) {
    --held_;
  }
  return c;
}

void SnCounts::trim_below(sn_t sn)
{
  while (!counts_.empty() && base_ < sn && counts_.front() == 0) {
    counts_.pop_front();
    ++base_;
  }
}

}  // namespace mim
