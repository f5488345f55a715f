// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of SnCounts, the dense per-sn part counters.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/sn_counts.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace mim;

TEST(SnCounts, CountsPartsPerSn)
{
  SnCounts c;
  c.add(5);
  c.add(5);
  c.add(6);
  EXPECT_EQ(2u, c.held());
  EXPECT_EQ(1, c.remove(5));
  EXPECT_EQ(2u, c.held());
  EXPECT_EQ(0, c.remove(5));
  EXPECT_EQ(1u, c.held());
  EXPECT_EQ(0, c.remove(6));
  EXPECT_EQ(0u, c.held());
}

TEST(SnCounts, ReleaseWithoutHoldIsRefused)
{
  SnCounts c;
  EXPECT_EQ(-1, c.remove(7));   // empty
  c.add(10);
  EXPECT_EQ(-1, c.remove(9));   // below the window
  EXPECT_EQ(-1, c.remove(11));  // above it
  EXPECT_EQ(0, c.remove(10));
  EXPECT_EQ(-1, c.remove(10));  // released twice
  EXPECT_EQ(0u, c.held());
}

TEST(SnCounts, AnOlderSnExtendsTheFront)
{
  SnCounts c;
  c.add(10);
  c.add(7);
  EXPECT_EQ(4u, c.span());
  EXPECT_EQ(2u, c.held());
  EXPECT_EQ(0, c.remove(7));
  EXPECT_EQ(0, c.remove(10));
}

TEST(SnCounts, TrimDropsZerosBelowTheCheckpointOnly)
{
  SnCounts c;
  for (sn_t sn = 1; sn <= 1000; ++sn) {
    c.add(sn);
  }
  for (sn_t sn = 1; sn <= 1000; ++sn) {
    if (sn != 500) {
      EXPECT_EQ(0, c.remove(sn));
    }
  }
  c.trim_below(500);
  EXPECT_EQ(501u, c.span());    // 500..1000
  c.trim_below(1001);           // stops at 500, still held
  EXPECT_EQ(501u, c.span());
  EXPECT_EQ(1u, c.held());
  EXPECT_EQ(0, c.remove(500));
  c.trim_below(1001);
  EXPECT_EQ(0u, c.span());
  // An empty window starts again wherever the next hold is.
  c.add(5000);
  EXPECT_EQ(1u, c.span());
  EXPECT_EQ(0, c.remove(5000));
}

TEST(SnCounts, TrimKeepsZerosAboveTheCheckpoint)
{
  SnCounts c;
  c.add(3);
  c.add(5);  // 4 never held yet: a zero inside the window
  EXPECT_EQ(0, c.remove(3));
  c.trim_below(4);
  EXPECT_EQ(2u, c.span());  // 4 and 5
  c.add(4);                 // 4 may still come: it is above the checkpoint
  EXPECT_EQ(0, c.remove(4));
  EXPECT_EQ(0, c.remove(5));
}

// Random holds and releases against a map of counts: remove() returns what
// the map says, held() is its size, and trimming below the smallest held sn
// never loses a count.
TEST(SnCounts, AgreesWithAMapOfCounts)
{
  std::mt19937_64 rng(42);
  SnCounts c;
  std::map<sn_t, uint32_t> model;
  sn_t next = 100;
  for (int step = 0; step < 200000; ++step) {
    const unsigned op = rng() % 10;
    if (op < 4 || model.empty()) {
      // mostly new sns in order, sometimes another part of a held one
      sn_t sn = (op == 0 && !model.empty()) ? model.rbegin()->first : next++;
      c.add(sn);
      ++model[sn];
    } else if (op < 9) {
      auto it = model.begin();
      std::advance(it, rng() % std::min<size_t>(model.size(), 64));
      const int64_t left = c.remove(it->first);
      ASSERT_EQ(int64_t(it->second) - 1, left);
      if (--it->second == 0) {
        model.erase(it);
      }
    } else {
      c.trim_below(model.empty() ? next : model.begin()->first);
    }
    ASSERT_EQ(model.size(), c.held());
  }
  for (auto& [sn, n] : model) {
    for (uint32_t i = n; i > 0; --i) {
      ASSERT_EQ(int64_t(i) - 1, c.remove(sn));
    }
  }
  c.trim_below(next);
  EXPECT_EQ(0u, c.span());
}
