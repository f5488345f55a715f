// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of FlushPolicy (thresholds, validation, trigger order).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/flush_policy.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <limits>

using namespace mim;

namespace {

FlushPolicyConfig good()
{
  FlushPolicyConfig c;
  c.journal_throughput = 1e9;  // 1 GB/s
  c.max_flush_interval = 5;
  c.block_size = 4 << 20;
  c.replicas = 3;
  c.nodes = 10;
  c.memory_cap = 1000;
  return c;
}

// create() must fail with `want`, name `field` in the message, leave out alone.
void expect_reject(const FlushPolicyConfig& c, int want, const std::string& field)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  EXPECT_EQ(want, FlushPolicy::create(c, &p, &err)) << field;
  EXPECT_EQ(nullptr, p) << field;
  EXPECT_NE(std::string::npos, err.find(field)) << "message '" << err
                                                << "' should name " << field;
}

}  // namespace

TEST(FlushPolicy, Thresholds)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  ASSERT_EQ(0, FlushPolicy::create(good(), &p, &err)) << err;
  // floor(1e9 * 5 / 4194304) = floor(1192.09...) = 1192
  EXPECT_EQ(1192u, p->sp_thresh_blocks());
  EXPECT_DOUBLE_EQ(50.0, p->time_thresh());  // max(3, 10) * 5
  EXPECT_EQ(900u, p->memory_thresh_bytes());  // 90% of 1000

  FlushPolicyConfig c = good();
  c.replicas = 12;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_DOUBLE_EQ(60.0, p->time_thresh());  // replicas now the larger
}

TEST(FlushPolicy, SpaceThresholdAtLeastOneAndFloored)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  FlushPolicyConfig c = good();
  c.journal_throughput = 1;  // 5 bytes per interval: less than a block
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(1u, p->sp_thresh_blocks());

  c.journal_throughput = 4194304.0 * 3 - 1;  // just under 3 blocks/s
  c.max_flush_interval = 1;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(2u, p->sp_thresh_blocks());
}

TEST(FlushPolicy, RejectsZero)
{
  FlushPolicyConfig c;
  c = good(); c.journal_throughput = 0; expect_reject(c, -EINVAL, "journal_throughput");
  c = good(); c.max_flush_interval = 0; expect_reject(c, -EINVAL, "max_flush_interval");
  c = good(); c.block_size = 0; expect_reject(c, -EINVAL, "block_size");
  c = good(); c.replicas = 0; expect_reject(c, -EINVAL, "replicas");
  c = good(); c.nodes = 0; expect_reject(c, -EINVAL, "nodes");
  c = good(); c.memory_cap = 0; expect_reject(c, -EINVAL, "memory_cap");
  // The default-constructed config is all zeros: rejected, never defaulted.
  expect_reject(FlushPolicyConfig(), -EINVAL, "journal_throughput");
}

TEST(FlushPolicy, RejectsNegativeNanInf)
{
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  FlushPolicyConfig c;
  c = good(); c.journal_throughput = -1; expect_reject(c, -EINVAL, "journal_throughput");
  c = good(); c.max_flush_interval = -0.5; expect_reject(c, -EINVAL, "max_flush_interval");
  c = good(); c.journal_throughput = nan; expect_reject(c, -EINVAL, "journal_throughput");
  c = good(); c.max_flush_interval = nan; expect_reject(c, -EINVAL, "max_flush_interval");
  c = good(); c.journal_throughput = inf; expect_reject(c, -EINVAL, "journal_throughput");
  c = good(); c.max_flush_interval = -inf; expect_reject(c, -EINVAL, "max_flush_interval");
}

TEST(FlushPolicy, RejectsOverflow)
{
  FlushPolicyConfig c;
  // The product overflows a double.
  c = good(); c.journal_throughput = 1e300; c.max_flush_interval = 1e300;
  expect_reject(c, -ERANGE, "journal_throughput * max_flush_interval");
  // The block count does not fit in 64 bits.
  c = good(); c.journal_throughput = 1e30; c.max_flush_interval = 1; c.block_size = 1;
  expect_reject(c, -ERANGE, "sp_thresh");
  // Exactly 2^64 blocks does not fit either; 2^63 does.
  c = good(); c.journal_throughput = 18446744073709551616.0;
  c.max_flush_interval = 1; c.block_size = 1;
  expect_reject(c, -ERANGE, "sp_thresh");
  c.journal_throughput = 9223372036854775808.0;
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err)) << err;
  EXPECT_EQ(uint64_t(1) << 63, p->sp_thresh_blocks());
  // time_thresh overflows.
  c = good(); c.journal_throughput = 1e-300; c.max_flush_interval = 1e308;
  c.replicas = 100;
  expect_reject(c, -ERANGE, "time_thresh");
}

TEST(FlushPolicy, TriggerOrderAndBoundaries)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  ASSERT_EQ(0, FlushPolicy::create(good(), &p, &err));
  const uint64_t sp = p->sp_thresh_blocks();  // 1192
  const double t = p->time_thresh();          // 50
  EXPECT_EQ(FlushTrigger::NONE, p->check(0, 0, 0, 0));
  EXPECT_EQ(FlushTrigger::NONE, p->check(sp - 1, 899, t - 0.001, 0));
  EXPECT_EQ(FlushTrigger::MEMORY_CAP, p->check(0, 900, 0, 0));
  EXPECT_EQ(FlushTrigger::SPACE, p->check(sp, 0, 0, 0));
  EXPECT_EQ(FlushTrigger::TIME, p->check(0, 0, t, 0));
  // All apply: MEMORY_CAP first, then SPACE, then TIME.
  EXPECT_EQ(FlushTrigger::MEMORY_CAP, p->check(sp, 900, t, 0));
  EXPECT_EQ(FlushTrigger::SPACE, p->check(sp, 899, t, 0));
  EXPECT_EQ(FlushTrigger::TIME, p->check(sp - 1, 899, t, 0));
}

TEST(FlushPolicy, IndexBudgetFreezesAtHalf)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  FlushPolicyConfig c = good();
  // No budget: no index size fires.
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(UINT64_MAX, p->index_thresh_bytes());
  EXPECT_EQ(FlushTrigger::NONE, p->check(0, 0, 0, UINT64_MAX - 1));
  // A budget of 1000: the active generation may take half of it.
  c.index_budget = 1000;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(500u, p->index_thresh_bytes());
  EXPECT_EQ(FlushTrigger::NONE, p->check(0, 0, 0, 499));
  EXPECT_EQ(FlushTrigger::INDEX_BUDGET, p->check(0, 0, 0, 500));
  // After MEMORY_CAP, before SPACE and TIME.
  const uint64_t sp = p->sp_thresh_blocks();
  const double t = p->time_thresh();
  EXPECT_EQ(FlushTrigger::MEMORY_CAP, p->check(sp, 900, t, 500));
  EXPECT_EQ(FlushTrigger::INDEX_BUDGET, p->check(sp, 899, t, 500));
  // Never 0: an empty index is no trigger.
  c.index_budget = 1;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(1u, p->index_thresh_bytes());
  EXPECT_EQ(FlushTrigger::NONE, p->check(0, 0, 0, 0));
  EXPECT_STREQ("index_budget", to_string(FlushTrigger::INDEX_BUDGET));
}

TEST(FlushPolicy, MemoryThresholdSmallCaps)
{
  std::unique_ptr<FlushPolicy> p;
  std::string err;
  FlushPolicyConfig c = good();
  c.memory_cap = 1;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(1u, p->memory_thresh_bytes());  // never 0: an empty cache is no trigger
  EXPECT_EQ(FlushTrigger::NONE, p->check(0, 0, 0, 0));
  c.memory_cap = 19;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(17u, p->memory_thresh_bytes());  // floor(17.1)
  c.memory_cap = UINT64_MAX;
  ASSERT_EQ(0, FlushPolicy::create(c, &p, &err));
  EXPECT_EQ(UINT64_MAX / 10 * 9 + 4, p->memory_thresh_bytes());  // no overflow
}

TEST(FlushPolicy, ToString)
{
  EXPECT_STREQ("none", to_string(FlushTrigger::NONE));
  EXPECT_STREQ("space", to_string(FlushTrigger::SPACE));
  EXPECT_STREQ("time", to_string(FlushTrigger::TIME));
  EXPECT_STREQ("memory_cap", to_string(FlushTrigger::MEMORY_CAP));
  EXPECT_STREQ("journal_pressure", to_string(FlushTrigger::JOURNAL_PRESSURE));
  EXPECT_STREQ("explicit", to_string(FlushTrigger::EXPLICIT));
}
