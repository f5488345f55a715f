// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the merge control's rules (core/merge_rules.h) as tables: each
 * row a situation the apply thread, a writer or the timer meets, and what
 * the rule says.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/merge_rules.h"

#include <gtest/gtest.h>

using namespace mim;

namespace {

using T = FlushTrigger;
using A = FreezeAction;

constexpr uint64_t MiB = 1 << 20;
constexpr uint64_t JOURNAL = 64 * MiB;

struct FreezeRow {
  const char* what;
  T forced;
  T policy;
  bool share_reached;
  uint64_t blocks;
  bool pending;
  T refreeze;
  uint64_t gen_journal;  // journal bytes since the active generation began
  // expected
  A action;
  T trigger;
  T new_refreeze;
  bool explicit_served;
};

const FreezeRow FREEZE_ROWS[] = {
  // after a transaction (forced NONE): the policy and the journal share
  {"nothing due", T::NONE, T::NONE, false, 10, false, T::NONE, 0,
   A::NONE, T::NONE, T::NONE, false},
  {"policy: space", T::NONE, T::SPACE, false, 10, false, T::NONE, 0,
   A::FREEZE, T::SPACE, T::NONE, false},
  {"policy: index budget", T::NONE, T::INDEX_BUDGET, false, 10, false, T::NONE, 0,
   A::FREEZE, T::INDEX_BUDGET, T::NONE, false},
  {"policy: memory cap", T::NONE, T::MEMORY_CAP, false, 10, false, T::NONE, 0,
   A::FREEZE, T::MEMORY_CAP, T::NONE, false},
  {"journal share reached is space", T::NONE, T::NONE, true, 10, false, T::NONE, 0,
   A::FREEZE, T::SPACE, T::NONE, false},
  {"the policy's trigger wins over the share", T::NONE, T::TIME, true, 10, false, T::NONE, 0,
   A::FREEZE, T::TIME, T::NONE, false},
  {"due but nothing cached", T::NONE, T::SPACE, true, 0, false, T::NONE, 0,
   A::NONE, T::NONE, T::NONE, false},
  {"due while a flush runs: double buffering, nothing remembered",
   T::NONE, T::SPACE, true, 10, true, T::NONE, 0,
   A::NONE, T::NONE, T::NONE, false},
  // queued requests while a flush runs
  {"time request remembered", T::TIME, T::NONE, false, 10, true, T::NONE, 0,
   A::REMEMBER, T::NONE, T::TIME, false},
  {"memory-cap request remembered", T::MEMORY_CAP, T::NONE, false, 10, true, T::NONE, 0,
   A::REMEMBER, T::NONE, T::MEMORY_CAP, false},
  {"explicit request remembered", T::EXPLICIT, T::NONE, false, 10, true, T::TIME, 0,
   A::REMEMBER, T::NONE, T::EXPLICIT, false},
  {"an explicit one is never replaced", T::INDEX_BUDGET, T::NONE, false, 10, true,
   T::EXPLICIT, 0, A::NONE, T::NONE, T::NONE, false},
  {"nor by another explicit one (its freeze serves both)", T::EXPLICIT, T::NONE, false, 10,
   true, T::EXPLICIT, 0, A::NONE, T::NONE, T::NONE, false},
  {"journal pressure is not remembered", T::JOURNAL_PRESSURE, T::NONE, false, 10, true,
   T::NONE, 0, A::NONE, T::NONE, T::NONE, false},
  {"a later request replaces a remembered non-explicit one", T::MEMORY_CAP, T::NONE, false,
   10, true, T::TIME, 0, A::REMEMBER, T::NONE, T::MEMORY_CAP, false},
  {"a request while flushing, even with nothing cached", T::TIME, T::NONE, false, 0, true,
   T::NONE, 0, A::REMEMBER, T::NONE, T::TIME, false},
  // queued requests, no flush running
  {"time request freezes", T::TIME, T::NONE, false, 10, false, T::NONE, 0,
   A::FREEZE, T::TIME, T::NONE, false},
  {"forced ignores the policy", T::TIME, T::SPACE, true, 10, false, T::NONE, 0,
   A::FREEZE, T::TIME, T::NONE, false},
  {"explicit request freezes and is served", T::EXPLICIT, T::NONE, false, 10, false,
   T::NONE, 0, A::FREEZE, T::EXPLICIT, T::NONE, true},
  {"explicit with nothing cached: served, waiters woken", T::EXPLICIT, T::NONE, false, 0,
   false, T::NONE, 0, A::NOTHING_CACHED, T::NONE, T::NONE, true},
  {"time request with nothing cached", T::TIME, T::NONE, false, 0, false, T::NONE, 0,
   A::NOTHING_CACHED, T::NONE, T::NONE, false},
  {"pressure from a small generation: a sync frees the journal", T::JOURNAL_PRESSURE,
   T::NONE, false, 10, false, T::NONE, JOURNAL / 4 - 1,
   A::SYNC, T::NONE, T::NONE, false},
  {"pressure from a quarter of the journal: freeze", T::JOURNAL_PRESSURE, T::NONE, false, 10,
   false, T::NONE, JOURNAL / 4, A::FREEZE, T::JOURNAL_PRESSURE, T::NONE, false},
  {"pressure, small generation, nothing cached: still a sync", T::JOURNAL_PRESSURE, T::NONE,
   false, 0, false, T::NONE, 0, A::SYNC, T::NONE, T::NONE, false},
};

}  // namespace

TEST(MergeRules, DecideFreeze)
{
  for (const auto& r : FREEZE_ROWS) {
    FreezeInputs in;
    in.forced = r.forced;
    in.policy = r.policy;
    in.generation_share_reached = r.share_reached;
    in.blocks_used = r.blocks;
    in.flush_pending = r.pending;
    in.refreeze = r.refreeze;
    in.generation_journal_bytes = r.gen_journal;
    in.journal_size = JOURNAL;
    FreezeDecision d = decide_freeze(in);
    EXPECT_EQ(int(r.action), int(d.action)) << r.what;
    EXPECT_EQ(r.trigger, d.trigger) << r.what;
    EXPECT_EQ(r.new_refreeze, d.refreeze) << r.what;
    EXPECT_EQ(r.explicit_served, d.explicit_served) << r.what;
  }
}

TEST(MergeRules, CacheRoomWait)
{
  struct Row {
    const char* what;
    bool bytes_bound;
    uint64_t cached, bytes, cap, index, index_cap;
    T want;
  };
  const Row rows[] = {
    {"data in the journal, no budget", false, 100 * MiB, MiB, 64 * MiB, 10 * MiB, 0, T::NONE},
    {"data in the journal, under budget", false, 0, MiB, 0, MiB - 1, MiB, T::NONE},
    {"data in the journal, at the budget", false, 0, MiB, 0, MiB, MiB, T::INDEX_BUDGET},
    {"cache holds data, fits exactly", true, 63 * MiB, MiB, 64 * MiB, 0, 0, T::NONE},
    {"cache holds data, one byte over", true, 63 * MiB + 1, MiB, 64 * MiB, 0, 0,
     T::MEMORY_CAP},
    {"both over: the bytes first", true, 64 * MiB, MiB, 64 * MiB, MiB, MiB, T::MEMORY_CAP},
    {"bytes fit, index over", true, 0, MiB, 64 * MiB, 2 * MiB, MiB, T::INDEX_BUDGET},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(r.want, cache_room_wait(r.bytes_bound, r.cached, r.bytes, r.cap,
                                      r.index, r.index_cap)) << r.what;
  }
}

TEST(MergeRules, BackoffFill)
{
  struct Row {
    const char* what;
    uint64_t used, size;
    bool merge;
    uint64_t cached, cap, index, index_cap;
    double want;
  };
  const Row rows[] = {
    {"journal only without merging", 16, 64, false, 64, 64, 64, 64, 0.25},
    {"the cache when fuller", 16, 64, true, 32, 64, 0, 0, 0.5},
    {"the index when fuller", 16, 64, true, 0, 64, 48, 64, 0.75},
    {"the journal when fuller", 60, 64, true, 32, 64, 16, 64, 60.0 / 64},
    {"no index budget is not counted", 0, 64, true, 0, 64, 1000, 0, 0},
    {"over the cap counts as over", 0, 64, true, 128, 64, 0, 0, 2.0},
  };
  for (const auto& r : rows) {
    EXPECT_DOUBLE_EQ(r.want, backoff_fill(r.used, r.size, r.merge, r.cached, r.cap,
                                          r.index, r.index_cap)) << r.what;
  }
}

TEST(MergeRules, BackoffDelay)
{
  struct Row {
    const char* what;
    double fill, low, high, max_delay, want;
  };
  const Row rows[] = {
    {"below low", 0.5, 0.6, 0.9, 0.1, 0},
    {"at low", 0.6, 0.6, 0.9, 0.1, 0},
    {"a third of the way: x^2 = 1/9", 0.7, 0.6, 0.9, 0.09, 0.01},
    {"two thirds: 4/9", 0.8, 0.6, 0.9, 0.09, 0.04},
    {"at high: the whole delay", 0.9, 0.6, 0.9, 0.1, 0.1},
    {"past high: capped", 1.5, 0.6, 0.9, 0.1, 0.1},
    {"no delay configured", 0.95, 0.6, 0.9, 0, 0},
    {"low equals high: all or nothing", 0.61, 0.6, 0.6, 0.1, 0.1},
  };
  for (const auto& r : rows) {
    EXPECT_NEAR(r.want, backoff_delay(r.fill, r.low, r.high, r.max_delay), 1e-12)
      << r.what;
  }
}

TEST(MergeRules, TimeFreezeDue)
{
  struct Row {
    const char* what;
    bool merge, pending, queued;
    uint64_t blocks;
    double since, thresh;
    bool want;
  };
  const Row rows[] = {
    {"due", true, false, false, 1, 30, 30, true},
    {"not yet", true, false, false, 1, 29.9, 30, false},
    {"nothing cached", true, false, false, 0, 100, 30, false},
    {"a flush runs", true, true, false, 1, 100, 30, false},
    {"a freeze is queued", true, false, true, 1, 100, 30, false},
    {"no merging", false, false, false, 1, 100, 30, false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(r.want, time_freeze_due(r.merge, r.pending, r.queued, r.blocks, r.since,
                                      r.thresh)) << r.what;
  }
}
