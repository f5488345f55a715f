// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of WritebackWindow (the flush's bounded writeback). The
 * disk is a recorder: which runs were started and waited for, in order.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/writeback_window.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

using namespace mim;

namespace {

using RunId = std::tuple<int, uint64_t, uint64_t>;  // file, off, len

struct Disk {
  std::vector<RunId> started, waited;
  int start_error = 0;  ///< what start returns (from fail_from on)
  size_t fail_from = 0;

  WritebackWindow<int> window() {
    return WritebackWindow<int>(
      [this](const int& f, uint64_t off, uint64_t len) {
        if (start_error && started.size() >= fail_from) {
          return start_error;
        }
        started.emplace_back(f, off, len);
        return 0;
      },
      [this](const int& f, uint64_t off, uint64_t len) {
        waited.emplace_back(f, off, len);
      });
  }
};

}  // namespace

TEST(WritebackWindow, RunsWaitUntilStarted)
{
  Disk d;
  auto w = d.window();
  w.set_cap(1 << 20);
  w.written(1, 0, 4096);
  w.written(2, 8192, 4096);
  // Written under an object lock: nothing reaches the disk yet.
  EXPECT_TRUE(d.started.empty());
  EXPECT_EQ(2u, w.runs_pending());
  auto s = w.start_written();
  EXPECT_EQ(2u, s.runs);
  EXPECT_EQ(0, s.unsupported);
  EXPECT_EQ((std::vector<RunId>{{1, 0, 4096}, {2, 8192, 4096}}), d.started);
  EXPECT_EQ(0u, w.runs_pending());
  EXPECT_EQ(8192u, w.bytes_in_flight());
  // Under the cap: no wait.
  EXPECT_EQ(0u, w.wait_for_room());
  EXPECT_TRUE(d.waited.empty());
}

TEST(WritebackWindow, WaitsForTheOldestUntilUnderTheCap)
{
  Disk d;
  auto w = d.window();
  w.set_cap(10000);
  for (int i = 0; i < 5; ++i) {
    w.written(i, 0, 4096);
  }
  w.start_written();
  EXPECT_EQ(5u * 4096, w.bytes_in_flight());
  // 20480 in flight, cap 10000: the three oldest go (8192 left).
  EXPECT_EQ(3u, w.wait_for_room());
  EXPECT_EQ((std::vector<RunId>{{0, 0, 4096}, {1, 0, 4096}, {2, 0, 4096}}),
            d.waited);
  EXPECT_EQ(8192u, w.bytes_in_flight());
  EXPECT_EQ(2u, w.runs_in_flight());
  EXPECT_LE(w.bytes_in_flight(), 10000u);
}

TEST(WritebackWindow, OneRunLargerThanTheCapIsWaitedFor)
{
  Disk d;
  auto w = d.window();
  w.set_cap(4096);
  w.written(7, 0, 4 << 20);
  w.start_written();
  EXPECT_EQ(1u, w.wait_for_room());
  EXPECT_EQ(0u, w.bytes_in_flight());
  EXPECT_EQ(0u, w.runs_in_flight());
}

TEST(WritebackWindow, NoCapLeavesEveryRunToTheSync)
{
  Disk d;
  auto w = d.window();  // cap 0: the window is off by option
  w.written(1, 0, 4096);
  auto s = w.start_written();
  EXPECT_EQ(0u, s.runs);
  EXPECT_TRUE(d.started.empty());
  // Dropped, not kept for later: the sync writes them.
  EXPECT_EQ(0u, w.runs_pending());
  EXPECT_EQ(0u, w.wait_for_room());
  EXPECT_FALSE(w.disabled());
}

TEST(WritebackWindow, UnsupportedTurnsTheWindowOffForGood)
{
  for (int err : {-EINVAL, -ENOSYS, -ESPIPE, -EOPNOTSUPP}) {
    Disk d;
    d.start_error = err;
    d.fail_from = 1;  // the first run starts, the second is refused
    auto w = d.window();
    w.set_cap(1 << 20);
    w.written(1, 0, 4096);
    w.written(2, 0, 4096);
    w.written(3, 0, 4096);
    auto s = w.start_written();
    EXPECT_EQ(err, s.unsupported);
    EXPECT_EQ(1u, s.runs);
    EXPECT_TRUE(w.disabled());
    // What had started is forgotten (the sync waits for it); the rest of
    // the runs are not started.
    EXPECT_EQ(0u, w.bytes_in_flight());
    EXPECT_EQ(1u, d.started.size());
    // Off for good: later runs are not offered to the disk.
    d.start_error = 0;
    w.written(4, 0, 4096);
    s = w.start_written();
    EXPECT_EQ(0u, s.runs);
    EXPECT_EQ(0, s.unsupported);
    EXPECT_EQ(1u, d.started.size());
  }
}

TEST(WritebackWindow, OtherStartErrorsKeepTheRunInFlight)
{
  // An I/O error stays recorded on the filesystem and the next sync
  // reports it; the window does not turn off.
  Disk d;
  d.start_error = -EIO;
  auto w = d.window();
  w.set_cap(1 << 20);
  w.written(1, 0, 4096);
  auto s = w.start_written();
  EXPECT_EQ(1u, s.runs);
  EXPECT_EQ(0, s.unsupported);
  EXPECT_FALSE(w.disabled());
  EXPECT_EQ(4096u, w.bytes_in_flight());
}

TEST(WritebackWindow, EndForgetsWhatIsInFlight)
{
  Disk d;
  auto w = d.window();
  w.set_cap(1 << 20);
  w.written(1, 0, 4096);
  w.written(2, 0, 4096);
  w.start_written();
  w.end();
  EXPECT_EQ(0u, w.bytes_in_flight());
  EXPECT_EQ(0u, w.runs_in_flight());
  EXPECT_TRUE(d.waited.empty());  // the sync waits for them, not end()
  // The next sweep starts from an empty window.
  w.written(3, 0, 4096);
  w.start_written();
  EXPECT_EQ(4096u, w.bytes_in_flight());
}
