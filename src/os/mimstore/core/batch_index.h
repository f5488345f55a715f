// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal's index of live entries, one record per batch.
 *
 * The writer needs, for any live sn, where its batch starts: replay must
 * start at a batch (block aligned), and the space a generation uses is
 * counted from its first batch. A batch holds the consecutive sns
 * [first_sn, last_sn], so one 24 B record per batch says it for every
 * entry. (One record per entry costs 24 B per sn: 7 MiB for 300,000 sns.
 * The saving needs batches of several entries; at the rates measured so
 * far each batch held one, docs/results/20261125-64G-all.)
 *
 *   batches_   the live batches in sn order; the front one may be partly
 *              trimmed: its live sns start at live_from_
 *   live_from_ every sn below it is trimmed (the checkpoint)
 *   live_      live sns: the entries between the checkpoint and the head
 *
 * Not thread-safe: the journal writer guards it with its lock.
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

struct BatchRange {
  sn_t first_sn;  ///< the batch's sns are first_sn..last_sn
  sn_t last_sn;
  uint64_t off;   ///< the batch's offset in the journal area
};

class BatchIndex {
 public:
  /// A batch was placed. REQUIRES: first <= last, and first above every
  /// sn pushed before (batches are placed in sn order).
  void push(sn_t first, sn_t last, uint64_t off);
  /// Every sn below `checkpoint` is trimmed; batches left without a live
  /// sn are dropped.
  void trim_below(sn_t checkpoint);
  bool empty() const { return batches_.empty(); }
  /// The oldest live sn and its batch. REQUIRES: !empty().
  sn_t first_sn() const;
  const BatchRange& front() const { return batches_.front(); }
  /// The batch of the first live sn >= sn, or nullptr if there is none;
  /// `*oldest` says whether that sn is the oldest live one.
  const BatchRange* batch_from(sn_t sn, bool* oldest) const;
  /// Live sns.
  uint64_t live_entries() const { return live_; }

 private:
  std::deque<BatchRange> batches_;
  sn_t live_from_ = 0;
  uint64_t live_ = 0;
};

}  // namespace mim
