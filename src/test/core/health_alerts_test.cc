// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of HealthMonitor, the rules of the store's health alerts:
 * when each is raised, when it clears, what its message says.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/health_alerts.h"

#include <gtest/gtest.h>

using namespace mim;

namespace {

HealthLimits limits()
{
  HealthLimits l;
  l.journal_full_window = 60;
  l.stall_age = 100;
  l.inodes_free_ratio = 0.05;
  l.db_free_ratio = 0.10;
  return l;
}

// A healthy store at time t.
HealthSample at(double t)
{
  HealthSample s;
  s.now = t;
  s.journal_size = 1 << 30;
  s.data_inodes = 1000;
  s.data_inodes_free = 900;
  return s;
}

std::vector<std::string> keys(const std::vector<HealthAlert>& v)
{
  std::vector<std::string> k;
  for (auto& a : v) {
    k.push_back(a.key);
  }
  return k;
}

using Keys = std::vector<std::string>;

}  // namespace

TEST(HealthAlerts, HealthyStoreHasNone)
{
  HealthMonitor m(limits());
  for (double t = 0; t < 1000; t += 5) {
    EXPECT_TRUE(m.update(at(t)).empty()) << t;
  }
}

TEST(HealthAlerts, JournalFullHoldsForTheWindowAfterTheLastWait)
{
  HealthMonitor m(limits());
  auto s = at(0);
  s.journal_full_waits = 7;   // an earlier mount's count: not this one's
  EXPECT_TRUE(m.update(s).empty());
  // {time, counter, raised?}
  struct Row { double t; uint64_t waits; bool raised; };
  for (const Row& r : {Row{10, 7, false}, Row{20, 9, true}, Row{50, 9, true},
                       Row{79, 9, true}, Row{80, 9, false},  // 60 s after the wait at 20
                       Row{90, 10, true}, Row{149, 12, true}, Row{209, 12, false}}) {
    s = at(r.t);
    s.journal_full_waits = r.waits;
    auto a = m.update(s);
    EXPECT_EQ(r.raised ? Keys{"MIMSTORE_JOURNAL_FULL"} : Keys{}, keys(a)) << "t=" << r.t;
    if (r.t == 149) {   // the episode's own waits: 9 -> 10 at 90, -> 12 at 149
      ASSERT_EQ(1u, a.size());
      EXPECT_NE(std::string::npos,
                a[0].message.find("waited for journal room 3 time(s) in the last 60 s"))
        << a[0].message;
    }
  }
}

TEST(HealthAlerts, ACounterThatRestartsIsNotAWait)
{
  HealthMonitor m(limits());
  auto s = at(0);
  s.journal_full_waits = 100;
  m.update(s);
  s = at(5);
  s.journal_full_waits = 0;   // a remount's counters
  EXPECT_TRUE(m.update(s).empty());
  s = at(10);
  s.journal_full_waits = 1;
  EXPECT_EQ(Keys{"MIMSTORE_JOURNAL_FULL"}, keys(m.update(s)));
}

TEST(HealthAlerts, AWaitUnderWayRaisesItFromTheFirstSample)
{
  HealthMonitor m(limits());
  auto s = at(0);
  s.journal_full_waits = 4;   // counted before this monitor: not new
  s.journal_waiting = 30;     // but one is under way
  auto a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_JOURNAL_FULL"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("are waiting for journal room")) << a[0].message;
  EXPECT_NE(std::string::npos, a[0].message.find("(1024 MiB)")) << a[0].message;
  // Over by 40; the alert holds 60 s after the last sample that saw it.
  for (double t : {40.0, 59.0}) {
    s = at(t);
    s.journal_full_waits = 4;
    a = m.update(s);
    ASSERT_EQ(Keys{"MIMSTORE_JOURNAL_FULL"}, keys(a)) << t;
    EXPECT_NE(std::string::npos, a[0].message.find("1 time(s)")) << a[0].message;
  }
  s = at(60);
  s.journal_full_waits = 4;
  EXPECT_TRUE(m.update(s).empty());
}

TEST(HealthAlerts, WritebackStalledWhenNothingMovesWithTransactionsBeyondTheCheckpoint)
{
  HealthMonitor m(limits());
  struct Row { double t; uint64_t progress; uint64_t lag; bool raised; };
  for (const Row& r : {Row{0, 10, 5, false}, Row{99, 10, 500, false},
                       Row{100, 10, 900, true},     // 100 s at 10
                       Row{150, 10, 900, true},
                       Row{151, 11, 900, false},    // one write-back I/O
                       Row{250, 11, 900, false}, Row{251, 11, 900, true},
                       Row{260, 11, 0, false},      // nothing beyond it
                       Row{350, 11, 3, false},      // the clock restarted at 260
                       Row{360, 11, 3, true}}) {
    auto s = at(r.t);
    s.progress = r.progress;
    s.lag_sns = r.lag;
    s.lag_bytes = uint64_t(r.lag) << 20;
    auto a = m.update(s);
    EXPECT_EQ(r.raised ? Keys{"MIMSTORE_WRITEBACK_STALLED"} : Keys{}, keys(a))
      << "t=" << r.t;
    if (r.t == 100) {
      ASSERT_EQ(1u, a.size());
      EXPECT_NE(std::string::npos,
                a[0].message.find("100 s with 900 transactions (900 MiB of journal)"))
        << a[0].message;
    }
  }
}

TEST(HealthAlerts, InodesAndDbSpaceAreLevels)
{
  HealthMonitor m(limits());
  struct Row { uint64_t ino, ino_free, db, db_free; Keys want; };
  for (const Row& r : {Row{1000, 50, 0, 0, {}},                 // 5.0%: not below
                       Row{1000, 49, 0, 0, {"MIMSTORE_DATA_FS_INODES"}},
                       Row{0, 0, 0, 0, {}},                     // not reported
                       Row{1000, 900, 1000, 100, {}},           // 10%: not below
                       Row{1000, 900, 1000, 99, {"MIMSTORE_DB_FS_FULL"}},
                       Row{1000, 10, 1000, 0,
                           {"MIMSTORE_DATA_FS_INODES", "MIMSTORE_DB_FS_FULL"}},
                       Row{1000, 900, 1000, 500, {}}}) {
    auto s = at(0);
    s.data_inodes = r.ino;
    s.data_inodes_free = r.ino_free;
    s.db_bytes = r.db;
    s.db_bytes_free = r.db_free;
    EXPECT_EQ(r.want, keys(m.update(s))) << r.ino_free << " " << r.db_free;
  }
}

TEST(HealthAlerts, FsckErrorsUntilACleanFsck)
{
  HealthMonitor m(limits());
  auto s = at(0);
  s.fsck_errors = -1;
  EXPECT_TRUE(m.update(s).empty());
  s.fsck_errors = 0;
  EXPECT_TRUE(m.update(s).empty());
  s.fsck_errors = 3;
  s.fsck_when = "2026-12-06T07:00:00Z";
  auto a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_FSCK_ERRORS"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("(2026-12-06T07:00:00Z) found 3 error(s)"));
}

TEST(HealthAlerts, ChecksumErrorsHoldForTheWindowAfterTheLast)
{
  auto l = limits();
  l.csum_error_window = 100;
  HealthMonitor m(l);
  auto s = at(0);
  s.csum_errors = 2;  // before the first sample: counted all the same
  s.csum_last = "1.0_head/a bytes 12288~4096";
  auto a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_CSUM_ERRORS"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("2 chunk(s)"));
  EXPECT_NE(std::string::npos, a[0].message.find("(1.0_head/a bytes 12288~4096)"));
  EXPECT_NE(std::string::npos, a[0].message.find("the last 0 s ago"));
  s.now = 50;
  s.csum_errors = 3;
  a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_CSUM_ERRORS"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("3 chunk(s)"));
  s.now = 149;
  EXPECT_EQ(Keys{"MIMSTORE_CSUM_ERRORS"}, keys(m.update(s)));
  s.now = 150;  // a window after the last
  EXPECT_TRUE(m.update(s).empty());
  s.now = 160;
  s.csum_errors = 1;  // a remount's counter: a new base, no error
  EXPECT_TRUE(m.update(s).empty());
  s.now = 170;
  s.csum_errors = 2;  // a new episode counts from one
  a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_CSUM_ERRORS"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("1 chunk(s)"));
}

TEST(HealthAlerts, ChecksumErrorsCountFromTheMonitorsBase)
{
  // A remount in one process keeps the store's counters: the errors
  // before it are not new.
  HealthMonitor m(limits(), 5);
  auto s = at(0);
  s.csum_errors = 5;
  EXPECT_TRUE(m.update(s).empty());
  s.now = 10;
  s.csum_errors = 6;
  auto a = m.update(s);
  ASSERT_EQ(Keys{"MIMSTORE_CSUM_ERRORS"}, keys(a));
  EXPECT_NE(std::string::npos, a[0].message.find("1 chunk(s)"));
}

TEST(HealthAlerts, AllAtOnceInTheDocumentedOrder)
{
  HealthMonitor m(limits());
  auto s = at(0);
  s.progress = 1;
  s.lag_sns = 1;
  m.update(s);
  s = at(200);
  s.progress = 1;
  s.lag_sns = 1;
  s.journal_full_waits = 1;
  s.data_inodes_free = 0;
  s.db_bytes = 100;
  s.fsck_errors = 1;
  s.csum_errors = 1;
  EXPECT_EQ((Keys{"MIMSTORE_JOURNAL_FULL", "MIMSTORE_WRITEBACK_STALLED",
                  "MIMSTORE_DATA_FS_INODES", "MIMSTORE_DB_FS_FULL", "MIMSTORE_FSCK_ERRORS",
                  "MIMSTORE_CSUM_ERRORS"}),
            keys(m.update(s)));
}
