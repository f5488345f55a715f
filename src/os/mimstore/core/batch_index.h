// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal's index of live entries, 8 bytes per batch.
 *
 * The writer needs, for any live sn, where its batch starts: replay must
 * start at a batch (block aligned), and the space a generation uses is
 * counted from its first batch. Batches are placed in sn order and a batch
 * holds consecutive sns, so a record per batch with its first sn and its
 * offset says it for every entry; its last sn is the next record's first
 * less one.
 *
 * Record (8 B; 24 B per batch before, which was 16 MiB of the OSD's heap
 * at 666k live batches in docs/results/20261125-64G-jblock):
 *
 *   first_lo   the low 32 bits of the batch's first sn; the full sn is
 *              base_ plus its distance from the front record's, so the
 *              live sns must span less than 2^32 (checked at push)
 *   off_units  the batch's offset in the journal area in 512-byte units
 *              (every block size is a multiple; so the area is at most
 *              MAX_AREA_BYTES, checked when the journal is opened), or
 *              HOLE: sns from first_lo up to the next record were never
 *              journaled (a gap between two pushes); holes hold no live
 *              sns and are never at the front
 *
 * State:
 *   recs_      the records in sn order; the front one is a batch and may
 *              be partly trimmed: its live sns start at live_from_
 *   base_      the full first sn of recs_.front()
 *   end_       one past the last sn of recs_.back()
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

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "core/types.h"

namespace mim {

struct BatchRange {
  sn_t first_sn;  ///< the batch's sns are first_sn..last_sn
  sn_t last_sn;
  uint64_t off;   ///< the batch's offset in the journal area
};

class BatchIndex {
 public:
  static constexpr uint64_t UNIT = 512;
  static constexpr uint32_t HOLE = UINT32_MAX;
  /// The largest journal area whose offsets a record can hold.
  static constexpr uint64_t MAX_AREA_BYTES = uint64_t(HOLE) * UNIT;

  /// A batch was placed. REQUIRES: first <= last, first above every sn
  /// pushed before (batches are placed in sn order), off a multiple of
  /// UNIT below MAX_AREA_BYTES.
  void push(sn_t first, sn_t last, uint64_t off);
  /// Every sn below `checkpoint` is trimmed; batches left without a live
  /// sn are dropped.
  void trim_below(sn_t checkpoint);
  bool empty() const { return recs_.empty(); }
  /// The oldest live sn. REQUIRES: !empty().
  sn_t first_sn() const;
  /// The batch of the oldest live sn. REQUIRES: !empty().
  BatchRange front() const { return range(0); }
  /// The batch of the first live sn >= sn, or nothing if there is none;
  /// `*oldest` says whether that sn is the oldest live one.
  std::optional<BatchRange> batch_from(sn_t sn, bool* oldest) const;
  /// Live sns.
  uint64_t live_entries() const { return live_; }
  /// Heap bytes of the records (the deque's blocks, not its map).
  size_t bytes() const { return recs_.size() * sizeof(Rec); }

 private:
  struct Rec {
    uint32_t first_lo;
    uint32_t off_units;
  };
  static_assert(sizeof(Rec) == 8);

  sn_t first_of(size_t i) const {
    return base_ + uint32_t(recs_[i].first_lo - recs_.front().first_lo);
  }
  sn_t last_of(size_t i) const {
    return (i + 1 < recs_.size() ? first_of(i + 1) : end_) - 1;
  }
  bool hole(size_t i) const { return recs_[i].off_units == HOLE; }
  BatchRange range(size_t i) const {
    return BatchRange{first_of(i), last_of(i), recs_[i].off_units * UNIT};
  }
  void pop_front();

  std::deque<Rec> recs_;
  sn_t base_ = 0;
  sn_t end_ = 0;
  sn_t live_from_ = 0;
  uint64_t live_ = 0;
};

}  // namespace mim
