// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of SnLatency, the sampled queue-to-checkpoint latency.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/sn_latency.h"

#include <vector>

#include <gtest/gtest.h>

using namespace mim;

TEST(SnLatency, SamplesOneInEveryAndHandsBackBelowTheCheckpoint)
{
  SnLatency s(4);
  for (sn_t sn = 1; sn <= 20; ++sn) {
    s.queued(sn, double(sn));  // queued at t = sn
  }
  EXPECT_EQ(5u, s.waiting());  // 4, 8, 12, 16, 20
  std::vector<double> got;
  auto add = [&](double secs) { got.push_back(secs); };
  EXPECT_EQ(0u, s.passed(4, 100, add));  // the checkpoint is at 4: 4 is not done
  EXPECT_EQ(2u, s.passed(9, 100, add));  // 4 and 8
  EXPECT_EQ((std::vector<double>{96, 92}), got);
  EXPECT_EQ(0u, s.passed(9, 200, add));  // nothing twice
  EXPECT_EQ(3u, s.passed(1000, 120, add));
  EXPECT_EQ((std::vector<double>{96, 92, 108, 104, 100}), got);
  EXPECT_EQ(0u, s.waiting());
}

TEST(SnLatency, AtMostCapWait)
{
  SnLatency s(1, 3);
  for (sn_t sn = 1; sn <= 10; ++sn) {
    s.queued(sn, 0);
  }
  EXPECT_EQ(3u, s.waiting());
  std::vector<double> got;
  EXPECT_EQ(3u, s.passed(11, 1, [&](double x) { got.push_back(x); }));
  s.queued(11, 1);  // room again
  EXPECT_EQ(1u, s.waiting());
  s.clear();
  EXPECT_EQ(0u, s.waiting());
}
