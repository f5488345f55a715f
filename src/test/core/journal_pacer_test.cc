// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of JournalPacer (clients paced to the journal space a
 * write-back sweep leaves). Time is virtual: every call gets its `now`.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/journal_pacer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace mim;

namespace {

JournalPacerConfig test_conf()
{
  JournalPacerConfig c;
  c.max_delay = 1.0;
  c.burst = 0;
  c.min_progress_objects = 10;
  c.min_elapsed = 1.0;
  c.ratio_window = 1 << 20;
  c.initial_ratio = 2.0;
  return c;
}

}  // namespace

TEST(JournalPacer, NoSweepNoDelay)
{
  JournalPacer p(test_conf());
  EXPECT_LT(p.remaining(0), 0);
  EXPECT_EQ(0.0, p.delay(4096, 1000, 0, 0));
  EXPECT_EQ(0.0, p.delay(4096, 0, 0, 0));  // even a full journal: not ours
}

TEST(JournalPacer, FirstSweepWaitsForAMeasurement)
{
  JournalPacer p(test_conf());
  p.sweep_started(1000, 100);
  p.sweep_progress(5);
  EXPECT_LT(p.remaining(110), 0);  // too few objects to trust
  EXPECT_EQ(0.0, p.delay(4096, 1, 0, 110));
  p.sweep_progress(10);
  EXPECT_LT(p.remaining(100.5), 0);  // too short to trust
  // 10 objects in 10 s: 990 left at 1 s each
  EXPECT_DOUBLE_EQ(990.0, p.remaining(110));
  p.sync_took(2.5);
  EXPECT_DOUBLE_EQ(992.5, p.remaining(110));
}

TEST(JournalPacer, LastSweepRateUntilThisOneIsMeasured)
{
  JournalPacer p(test_conf());
  p.sweep_started(100, 0);
  p.sweep_progress(100);
  p.sweep_finished(50);  // 0.5 s per object
  EXPECT_LT(p.remaining(60), 0);  // no sweep running
  p.sweep_started(400, 60);
  EXPECT_DOUBLE_EQ(200.0, p.remaining(60));
  p.sweep_progress(20);
  EXPECT_DOUBLE_EQ(190.0, p.remaining(60.5));  // too early: still 0.5 s
  EXPECT_DOUBLE_EQ(380.0 * 0.2, p.remaining(64));  // 20 in 4 s
}

TEST(JournalPacer, AdmitsAtFreeSpaceOverRemainingTime)
{
  JournalPacer p(test_conf());
  p.sweep_started(100, 0);
  p.sweep_progress(10);
  // 10 s per object measured, 900 s left; 90 MB free: 100 kB/s.
  const double now = 100;
  ASSERT_DOUBLE_EQ(900.0, p.remaining(now));
  const int64_t free = 90'000'000;
  // 4096 payload bytes at the unmeasured ratio 2: 8192 journal bytes each
  const double step = 8192.0 / 100'000.0;
  for (int i = 0; i < 10; ++i) {
    EXPECT_NEAR(i * step, p.delay(4096, free, 0, now), 1e-9) << i;
  }
}

TEST(JournalPacer, NoFreeSpaceWaitsTheLongestAndTheBacklogIsBounded)
{
  JournalPacer p(test_conf());
  p.sweep_started(100, 0);
  p.sweep_progress(50);
  EXPECT_EQ(1.0, p.delay(4096, 0, 0, 10));
  EXPECT_EQ(1.0, p.delay(4096, -5, 0, 10));
  // A tiny rate: each call would push the backlog out; it stays at
  // max_delay, so when space comes back the next call is admitted at once.
  for (int i = 0; i < 100; ++i) {
    EXPECT_LE(p.delay(1 << 20, 1, 0, 10), 1.0);
  }
  EXPECT_EQ(0.0, p.delay(4096, 1'000'000'000, 0, 11.0));
}

TEST(JournalPacer, MeasuresJournalBytesPerPayloadByte)
{
  JournalPacer p(test_conf());
  EXPECT_DOUBLE_EQ(2.0, p.journal_ratio());
  uint64_t appended = 1000;
  p.delay(0, 0, appended, 0);  // the mark
  for (int i = 0; i < 256; ++i) {  // 1 MiB of payload, 1.5x appended
    appended += 6144;
    p.delay(4096, 0, appended, 0);
  }
  EXPECT_DOUBLE_EQ(1.5, p.journal_ratio());
  // a journal counter that went back (a new journal): a new mark, no
  // nonsense ratio
  p.delay(4096, 0, 10, 0);
  EXPECT_DOUBLE_EQ(1.5, p.journal_ratio());
}

// Closed loop in virtual time: 8 clients against one sweep whose objects
// take a fixed time each. The journal must not run out before the sweep
// frees it, and the clients must not be slowed far below what the free
// space allows.
TEST(JournalPacer, ClosedLoopSweepNeverRunsTheJournalOut)
{
  auto c = test_conf();
  c.burst = 0.05;
  JournalPacer p(c);
  const uint64_t objects = 2000;
  const double spo = 0.1;              // the sweep: 200 s
  const double journal_per_txn = 9000; // what a 4 KiB write really takes
  const int64_t free0 = 600'000'000;   // 600 MB free at the start
  p.sync_took(0.5);
  p.sweep_started(objects, 0);
  std::vector<double> ready(8, 0.0);   // when each client next submits
  double now = 0;
  int64_t free = free0;
  uint64_t appended = 0, txns = 0;
  const double end = objects * spo + 0.5;
  while (now < end) {
    auto it = std::min_element(ready.begin(), ready.end());
    now = *it;
    p.sweep_progress(std::min<uint64_t>(objects, uint64_t(now / spo)));
    double d = p.delay(4096, free, appended, now);
    ASSERT_LE(d, c.max_delay);
    // admitted after the delay; the journal takes the bytes, the write
    // completes 1 ms later (the NVMe)
    free -= int64_t(journal_per_txn);
    appended += uint64_t(journal_per_txn);
    ++txns;
    ASSERT_GT(free, 0) << "journal ran out at t=" << now << " after "
                       << txns << " transactions";
    *it = now + d + 0.001;
  }
  // What the free space allowed over the sweep, against what was taken:
  // the pacer must use most of it (the ratio is learnt as it goes).
  double used = double(free0 - free);
  EXPECT_GT(used, 0.6 * double(free0)) << txns << " transactions";
  EXPECT_NEAR(9000.0 / 4096.0, p.journal_ratio(), 0.01);
}
