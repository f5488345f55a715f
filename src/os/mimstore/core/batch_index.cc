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
  MIM_CHECK(batches_.empty() || first > batches_.back().last_sn);
  // The checkpoint never passes an sn not yet journaled.
  MIM_CHECK(first >= live_from_);
  batches_.push_back(BatchRange{first, last, off});
  live_ += last - std::max(first, live_from_) + 1;
}

void BatchIndex::trim_below(sn_t checkpoint)
{
  while (!batches_.empty() && batches_.front().last_sn < checkpoint) {
    const BatchRange& b = batches_.front();
    live_ -= b.last_sn - std::max(b.first_sn, live_from_) + 1;
    batches_.pop_front();
  }
  if (!batches_.empty()) {
    const sn_t was = first_sn();
    if (checkpoint > was) {
      live_ -= checkpoint - was;
    }
  }
  live_from_ = std::max(live_from_, checkpoint);
}

sn_t BatchIndex::first_sn() const
{
  return std::max(batches_.front().first_sn, live_from_);
}

const BatchRange* BatchIndex::batch_from(sn_t sn, bool* oldest) const
{
  auto p = std::lower_bound(
    batches_.begin(), batches_.end(), sn,
    [](const BatchRange& b, sn_t v) { return b.last_sn < v; });
  if (p == batches_.end()) {
    return nullptr;
  }
  *oldest = sn <= first_sn();
  return &*p;
}

}  // namespace mim
