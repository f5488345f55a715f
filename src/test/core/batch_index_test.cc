// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of BatchIndex, the journal's per-batch index of live
 * entries, against the per-entry index it replaced.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/batch_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>

using namespace mim;

TEST(BatchIndex, TrimKeepsTheBatchOfTheCheckpoint)
{
  BatchIndex ix;
  ix.push(10, 14, 4096);
  ix.push(15, 15, 8192);
  ix.push(16, 20, 12288);
  EXPECT_EQ(11u, ix.live_entries());
  ix.trim_below(12);
  EXPECT_EQ(12u, ix.first_sn());
  EXPECT_EQ(10u, ix.front().first_sn);  // replay starts at its batch
  EXPECT_EQ(4096u, ix.front().off);
  EXPECT_EQ(9u, ix.live_entries());
  ix.trim_below(16);
  EXPECT_EQ(16u, ix.first_sn());
  EXPECT_EQ(12288u, ix.front().off);
  EXPECT_EQ(5u, ix.live_entries());
  ix.trim_below(21);
  EXPECT_TRUE(ix.empty());
  EXPECT_EQ(0u, ix.live_entries());
  ix.push(21, 22, 0);  // after a wrap
  EXPECT_EQ(2u, ix.live_entries());
  EXPECT_EQ(21u, ix.first_sn());
}

TEST(BatchIndex, BatchFromFindsTheFirstLiveSnAtOrAbove)
{
  BatchIndex ix;
  bool oldest = false;
  EXPECT_FALSE(ix.batch_from(1, &oldest));
  ix.push(10, 14, 4096);
  ix.push(20, 24, 8192);  // a gap of sns never journaled here
  ix.trim_below(11);
  std::optional<BatchRange> b = ix.batch_from(5, &oldest);
  ASSERT_TRUE(b);
  EXPECT_EQ(4096u, b->off);
  EXPECT_TRUE(oldest);
  b = ix.batch_from(11, &oldest);
  ASSERT_TRUE(b);
  EXPECT_TRUE(oldest);
  b = ix.batch_from(12, &oldest);
  ASSERT_TRUE(b);
  EXPECT_EQ(4096u, b->off);
  EXPECT_FALSE(oldest);
  b = ix.batch_from(17, &oldest);
  ASSERT_TRUE(b);
  EXPECT_EQ(8192u, b->off);
  EXPECT_FALSE(oldest);
  EXPECT_FALSE(ix.batch_from(25, &oldest));
  // An sn in the gap: its first live sn at or above is the next batch's.
  b = ix.batch_from(16, &oldest);
  ASSERT_TRUE(b);
  EXPECT_EQ(20u, b->first_sn);
  EXPECT_EQ(24u, b->last_sn);
  // Trimming into the gap leaves the batch after it at the front.
  ix.trim_below(17);
  EXPECT_EQ(20u, ix.first_sn());
  EXPECT_EQ(8192u, ix.front().off);
  EXPECT_EQ(5u, ix.live_entries());
}

// The per-entry index the journal writer kept before (an entry per sn with
// its batch's offset and first sn), driven with the same random batches
// and checkpoints: every answer the writer asks for must be the same.
namespace {
struct Entry {
  sn_t sn;
  uint64_t off;
  sn_t batch_first;
};
}  // namespace

// Sns start past 2^32 (a record keeps only their low 32 bits), some sns
// are never journaled (gaps between pushes), and offsets run up to near
// the largest area a record can address.
class BatchIndexModel : public ::testing::TestWithParam<sn_t> {};

TEST_P(BatchIndexModel, AnswersAsThePerEntryIndex)
{
  std::mt19937_64 rng(7 + GetParam());
  BatchIndex ix;
  std::deque<Entry> model;
  sn_t next = GetParam(), cp = GetParam();
  uint64_t off = 0;
  for (int step = 0; step < 100000; ++step) {
    if (rng() % 3) {
      if (rng() % 10 == 0) {
        next += 1 + rng() % 5;  // sns never journaled
      }
      const sn_t n = 1 + rng() % 8;
      ix.push(next, next + n - 1, off);
      for (sn_t sn = next; sn < next + n; ++sn) {
        model.push_back(Entry{sn, off, next});
      }
      next += n;
      off += 512 * (1 + rng() % 16);
      if (rng() % 1000 == 0) {
        off = rng() % 2 ? 0 : BatchIndex::MAX_AREA_BYTES - (uint64_t(1) << 30);
      }
    } else {
      cp = std::min<sn_t>(next, cp + rng() % 12);
      ix.trim_below(cp);
      while (!model.empty() && model.front().sn < cp) {
        model.pop_front();
      }
    }
    ASSERT_EQ(model.size(), ix.live_entries());
    ASSERT_EQ(model.empty(), ix.empty());
    if (!model.empty()) {
      ASSERT_EQ(model.front().sn, ix.first_sn());
      ASSERT_EQ(model.front().off, ix.front().off);
      ASSERT_EQ(model.front().batch_first, ix.front().first_sn);
    }
    const sn_t probe = cp > 3 ? cp - 3 + rng() % (next - cp + 6) : rng() % (next + 3);
    auto p = std::lower_bound(model.begin(), model.end(), probe,
                              [](const Entry& e, sn_t v) { return e.sn < v; });
    bool oldest = false;
    const std::optional<BatchRange> b = ix.batch_from(probe, &oldest);
    if (p == model.end()) {
      ASSERT_FALSE(b);
    } else {
      ASSERT_TRUE(b);
      ASSERT_EQ(p->batch_first, b->first_sn);
      ASSERT_EQ(p == model.begin(), oldest);
      ASSERT_EQ(p->off, b->off);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bases, BatchIndexModel,
                         ::testing::Values(sn_t(1), (sn_t(1) << 32) - 777,
                                           sn_t(5) << 40));

TEST(BatchIndex, EightBytesPerBatch)
{
  BatchIndex ix;
  for (sn_t sn = 1; sn <= 1000; ++sn) {
    ix.push(sn, sn, sn * 512);
  }
  EXPECT_EQ(8000u, ix.bytes());
  ix.push(1005, 1006, 0);  // after a gap: a hole record and the batch
  EXPECT_EQ(8016u, ix.bytes());
  EXPECT_EQ(1002u, ix.live_entries());
}
