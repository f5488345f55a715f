// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of CheckpointTracker.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/checkpoint_tracker.h"
#include "core/durability.h"
#include "core/journal_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace mim;

TEST(CheckpointTracker, StartsAtFirst)
{
  CheckpointTracker t;
  EXPECT_EQ(1u, t.checkpoint());
  EXPECT_EQ(0u, t.pending());
  CheckpointTracker t2(1000);
  EXPECT_EQ(1000u, t2.checkpoint());
}

TEST(CheckpointTracker, InOrder)
{
  CheckpointTracker t;
  for (sn_t sn = 1; sn <= 1000; ++sn) {
    ASSERT_EQ(0, t.record_durable(sn));
    ASSERT_EQ(sn + 1, t.checkpoint());
    ASSERT_EQ(0u, t.pending());
  }
}

TEST(CheckpointTracker, ReverseHoldsUntilFirst)
{
  CheckpointTracker t(10);
  for (sn_t sn = 500; sn > 10; --sn) {
    ASSERT_EQ(0, t.record_durable(sn));
    ASSERT_EQ(10u, t.checkpoint());
    ASSERT_EQ(501 - sn, t.pending());
  }
  ASSERT_EQ(0, t.record_durable(10));
  EXPECT_EQ(501u, t.checkpoint());
  EXPECT_EQ(0u, t.pending());
}

TEST(CheckpointTracker, RandomOrderMatchesModel)
{
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    std::vector<sn_t> sns(5000);
    std::iota(sns.begin(), sns.end(), 7);
    std::shuffle(sns.begin(), sns.end(), rng);
    CheckpointTracker t(7);
    std::set<sn_t> done;
    sn_t want = 7;
    for (sn_t sn : sns) {
      ASSERT_EQ(0, t.record_durable(sn));
      done.insert(sn);
      while (done.count(want)) {
        ++want;
      }
      ASSERT_EQ(want, t.checkpoint());
      ASSERT_EQ(done.size() - (want - 7), t.pending());
    }
    EXPECT_EQ(5007u, t.checkpoint());
  }
}

TEST(CheckpointTracker, DuplicateAndBelow)
{
  CheckpointTracker t;
  ASSERT_EQ(0, t.record_durable(1));
  ASSERT_EQ(0, t.record_durable(3));
  EXPECT_EQ(-EEXIST, t.record_durable(3));   // recorded, above the checkpoint
  EXPECT_EQ(-ERANGE, t.record_durable(1));   // covered by the checkpoint
  EXPECT_EQ(-ERANGE, t.record_durable(0));
  EXPECT_EQ(2u, t.checkpoint());
  EXPECT_EQ(1u, t.pending());
  ASSERT_EQ(0, t.record_durable(2));
  EXPECT_EQ(4u, t.checkpoint());
  EXPECT_EQ(-ERANGE, t.record_durable(3));   // now covered
  EXPECT_EQ(0u, t.pending());
}

TEST(CheckpointTracker, GapHoldsCheckpointAcrossWords)
{
  CheckpointTracker t;
  // Everything but sn 100, spanning several 64-bit words.
  for (sn_t sn = 1; sn <= 1000; ++sn) {
    if (sn != 100) {
      ASSERT_EQ(0, t.record_durable(sn));
    }
  }
  EXPECT_EQ(100u, t.checkpoint());
  EXPECT_EQ(900u, t.pending());
  ASSERT_EQ(0, t.record_durable(100));
  EXPECT_EQ(1001u, t.checkpoint());
  EXPECT_EQ(0u, t.pending());
}

TEST(CheckpointTracker, FarAheadRefused)
{
  CheckpointTracker t(1, 1024);
  EXPECT_EQ(-EOVERFLOW, t.record_durable(1 + 1024));
  EXPECT_EQ(0, t.record_durable(1024));
  EXPECT_EQ(0u + 1, t.pending());
  EXPECT_EQ(1u, t.checkpoint());
  // With the default window a distance of 2^40 is refused, not allocated.
  CheckpointTracker big;
  EXPECT_EQ(-EOVERFLOW, big.record_durable(uint64_t(1) << 40));
}

TEST(CheckpointTracker, Reset)
{
  CheckpointTracker t;
  ASSERT_EQ(0, t.record_durable(5));
  ASSERT_EQ(0, t.record_durable(1));
  t.reset(1000);
  EXPECT_EQ(1000u, t.checkpoint());
  EXPECT_EQ(0u, t.pending());
  EXPECT_EQ(-ERANGE, t.record_durable(999));
  EXPECT_EQ(0, t.record_durable(1001));
  EXPECT_EQ(1000u, t.checkpoint());
  EXPECT_EQ(0, t.record_durable(1000));
  EXPECT_EQ(1002u, t.checkpoint());
  // Reset backwards (a fresh mount of another journal) works too.
  t.reset(3);
  EXPECT_EQ(3u, t.checkpoint());
  EXPECT_EQ(0, t.record_durable(3));
  EXPECT_EQ(4u, t.checkpoint());
}

TEST(CheckpointTracker, UnalignedStartAndWindowedShuffle)
{
  // A first sn that is not a multiple of 64, reordering within windows of
  // 100: the checkpoint is always the start of the current window or later.
  std::mt19937_64 rng(9);
  const sn_t first = 12345;
  CheckpointTracker t(first);
  const size_t W = 100;
  for (size_t w = 0; w < 50; ++w) {
    std::vector<sn_t> v(W);
    std::iota(v.begin(), v.end(), first + w * W);
    std::shuffle(v.begin(), v.end(), rng);
    for (sn_t sn : v) {
      ASSERT_EQ(0, t.record_durable(sn));
      ASSERT_GE(t.checkpoint(), first + w * W);
    }
    ASSERT_EQ(first + (w + 1) * W, t.checkpoint());
    ASSERT_EQ(0u, t.pending());
  }
}

// A 40 GB journal of small transactions holds more than 2^26 sns, all above
// the checkpoint while one early write is not yet written back (the window
// in the journal may use half of it). The window follows the journal: an sn
// that far ahead is recorded, and the sync that records it does not abort
// (before, the fixed 2^26 window made sync_once's check fail, and every
// mount that kept the window failed the same way).
TEST(CheckpointTracker, WindowFollowsTheJournal)
{
  JournalHeader h;
  h.block_size = 4096;
  h.journal_size = 40ull << 30;
  const JournalGeometry g(h);
  ASSERT_GT(g.max_live_sns(), CheckpointTracker::DEFAULT_MAX_WINDOW);
  const sn_t far = 1 + CheckpointTracker::DEFAULT_MAX_WINDOW + 100;
  ASSERT_LT(far - 1, g.max_live_sns());

  CheckpointTracker small;
  EXPECT_EQ(-EOVERFLOW, small.record_durable(far));
  CheckpointTracker t;
  t.reset(1, CheckpointTracker::window_for_journal(g.max_live_sns()));
  EXPECT_EQ(0, t.record_durable(far));
  EXPECT_EQ(1u, t.checkpoint());
  // Still a bound: an sn beyond what the journal can hold is refused.
  EXPECT_EQ(-EOVERFLOW, t.record_durable(1 + g.max_live_sns() + 64));
  // Never smaller than the default, for a small journal.
  EXPECT_EQ(CheckpointTracker::DEFAULT_MAX_WINDOW,
            CheckpointTracker::window_for_journal(100));
}

TEST(Durability, SyncRecordsAnSnBeyondTheDefaultWindow)
{
  JournalHeader h;
  h.block_size = 4096;
  h.journal_size = 40ull << 30;
  const JournalGeometry g(h);
  mim::Durability d;
  d.reset_checkpoint(1, g.max_live_sns());
  std::vector<sn_t> moved;
  mim::DurabilityHooks hooks;
  hooks.sync_data = [] {};
  hooks.checkpoint_moved = [&](sn_t cp) { moved.push_back(cp); };
  mim::DurabilityLimits lim;
  lim.interval = 0.01;
  lim.min_interval = 0;
  d.configure(lim, hooks);
  std::thread sync([&] { d.run(); });
  const sn_t far = 1 + CheckpointTracker::DEFAULT_MAX_WINDOW + 100;
  d.hold(1);
  d.hold(far);
  d.release_after_sync(far);
  d.wait_for_next_sync();
  EXPECT_EQ(1u, d.checkpoint());
  EXPECT_EQ(1u, d.checkpoint_pending());
  d.release_after_sync(1);
  d.wait_for_next_sync();
  EXPECT_EQ(2u, d.checkpoint());
  d.stop();
  sync.join();
  EXPECT_EQ(std::vector<sn_t>{2}, moved);
}
