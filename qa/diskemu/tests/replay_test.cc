// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// Replay: trace formats, and open-loop replay of a closed-loop stream.
#include <gtest/gtest.h>

#include <sstream>

#include "replay.h"
#include "sim.h"

using namespace diskemu;
using diskemu::test::rnd;

static constexpr uint64_t GiB = 1ull << 30;

// A mixed stream: random and sequential, reads, writes and flushes.
static std::vector<TraceReq> mixed(int n) {
  std::vector<TraceReq> v;
  uint64_t st = 5, off = 0;
  for (int i = 0; i < n; i++) {
    uint64_t r = rnd(&st);
    TraceReq t;
    t.op = r % 10 == 0 ? OpKind::FLUSH : (r % 3 == 0 ? OpKind::READ : OpKind::WRITE);
    if (t.op != OpKind::FLUSH) {
      off = r % 4 == 0 ? off : (rnd(&st) % (64 * GiB / 4096)) * 4096;   // a quarter sequential
      t.off = off;
      t.len = 4096 << (r % 5);
      off += t.len;
    }
    v.push_back(t);
  }
  return v;
}

static void same_as_closed_loop(const DriveOptions& o) {
  const DiskSpec& spec = *find_preset("hdd7200");
  auto stream = mixed(2000);
  // Closed loop: each request issued when the previous completes, as the
  // daemon sees a QD1 client.
  ReplayResult closed = replay(spec, 64 * GiB, o, stream, ReplayMode::CLOSED, 1);
  // The daemon's --trace would record those arrivals; replay them open-loop.
  std::vector<TraceReq> recorded = stream;
  for (size_t i = 0; i < recorded.size(); i++) {
    recorded[i].t = closed.arrival[i];
  }
  ReplayResult open = replay(spec, 64 * GiB, o, recorded, ReplayMode::OPEN);
  EXPECT_EQ(open.makespan, closed.makespan);
  EXPECT_EQ(open.completion, closed.completion);
  EXPECT_EQ(open.stats.busy_actuator, closed.stats.busy_actuator);
  if (!o.write_cache) {
    // Back to back at QD1 without cache: the total time is the sum of the
    // service times.
    EXPECT_EQ(closed.makespan, closed.stats.busy_actuator);
  }
}

TEST(Replay, EqualsClosedLoopForBackToBackArrivals) {
  same_as_closed_loop(DriveOptions());
}

TEST(Replay, EqualsClosedLoopWithWriteCache) {
  DriveOptions o;
  o.write_cache = true;
  same_as_closed_loop(o);
}

TEST(Replay, ParsesCsv) {
  std::istringstream in("t_us,op,offset,len\n0,W,4096,8192\n12.5,R,0,512\n20,F,0,0\n");
  std::vector<TraceReq> t;
  std::string err;
  ASSERT_TRUE(parse_csv_trace(in, &t, &err)) << err;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].op, OpKind::WRITE);
  EXPECT_EQ(t[0].len, 8192u);
  EXPECT_EQ(t[1].t, 12500);
  EXPECT_EQ(t[2].op, OpKind::FLUSH);
  std::istringstream bad("0,X,1,2\n");
  EXPECT_FALSE(parse_csv_trace(bad, &t, &err));
}

TEST(Replay, ParsesTracefsLikeHddmodel) {
  std::istringstream in(
      "  kworker/1:1-42  [001] .....  100.000100: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [kworker]\n"
      "  kworker/1:1-42  [001] .....  100.000200: block_rq_issue: 7,0 R () 100 + 16 none,0,0 [fio]\n"
      "  kworker/1:1-42  [001] .....  100.000300: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [x]\n"
      "  kworker/1:1-42  [001] .....  100.000400: block_rq_issue: 7,1 W 4096 () 8 + 8 be,0,4 [y]\n"
      "  kworker/1:1-42  [001] .....  100.000500: block_rq_issue: 7,0 DS 4096 () 8 + 8 be,0,4 [y]\n"
      "  kworker/1:1-42  [001] .....  100.000600: block_rq_complete: 7,0 WS () 2048 + 8 be,0,4 [0]\n");
  std::vector<TraceReq> t;
  std::string err, dev;
  EXPECT_FALSE(parse_tracefs_trace(in, "", &t, &dev, &err));   // two devices
  in.clear();
  in.seekg(0);
  ASSERT_TRUE(parse_tracefs_trace(in, "7,0", &t, &dev, &err)) << err;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].op, OpKind::WRITE);
  EXPECT_EQ(t[0].off, 2048u * 512);
  EXPECT_EQ(t[0].len, 4096u);
  EXPECT_EQ(t[0].t, 100000100000);
  EXPECT_EQ(t[1].op, OpKind::READ);
  EXPECT_EQ(t[1].len, 16u * 512);
  EXPECT_EQ(t[2].op, OpKind::FLUSH);
}

TEST(Replay, OpenLoopIdleGapsAreNotCharged) {
  const DiskSpec& spec = *find_preset("hdd7200");
  std::vector<TraceReq> t = {{0, OpKind::WRITE, 0, 4096},
                             {1000 * NS_PER_MS, OpKind::WRITE, 32 * GiB, 4096}};
  ReplayResult r = replay(spec, 64 * GiB, DriveOptions(), t, ReplayMode::OPEN);
  EXPECT_GT(r.makespan, 1000 * NS_PER_MS);
  EXPECT_LT(r.stats.busy_actuator, 50 * NS_PER_MS);
}
