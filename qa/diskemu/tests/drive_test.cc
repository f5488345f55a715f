// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// The drive: command queueing, aging, write cache and power cuts.
#include <gtest/gtest.h>

#include <cerrno>

#include "replay.h"
#include "sim.h"

using namespace diskemu;
using diskemu::test::Sim;
using diskemu::test::fill;
using diskemu::test::rnd;

static const DiskSpec& hdd7200() { return *find_preset("hdd7200"); }
static constexpr uint64_t GiB = 1ull << 30;
static constexpr uint64_t MiB = 1ull << 20;

static std::vector<TraceReq> random_writes(int n, uint64_t span, uint64_t seed, ns_t t = 0) {
  std::vector<TraceReq> v;
  for (int i = 0; i < n; i++) {
    v.push_back({t, OpKind::WRITE, rnd(&seed) % (span / 4096) * 4096, 4096});
  }
  return v;
}

TEST(Queue, SptfBeatsFifoOnTheSameQueue) {
  auto trace = random_writes(32, 64 * GiB, 42);   // all queued at t=0
  DriveOptions o;
  o.policy = Policy::FIFO;
  ns_t fifo = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN).makespan;
  o.policy = Policy::SPTF;
  ns_t sptf = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN).makespan;
  o.policy = Policy::CLOOK;
  ns_t clook = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN).makespan;
  // FIFO: ~32 x (average seek + half a revolution).
  EXPECT_GT(fifo, 32 * 11 * NS_PER_MS);
  EXPECT_LT(sptf, fifo * 6 / 10);
  EXPECT_LT(clook, fifo);
  EXPECT_LE(sptf, clook);
}

TEST(Queue, DepthCapsWhatTheDriveReorders) {
  // 64 queued, depth 1: the drive sees them one by one (FIFO in effect).
  auto trace = random_writes(64, 64 * GiB, 3);
  DriveOptions o;
  o.policy = Policy::SPTF;   // (fw's executed seeks vary: not FIFO's)
  o.queue_depth = 1;
  ReplayResult r1 = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN);
  o.queue_depth = 32;
  ReplayResult r32 = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN);
  o.queue_depth = 1;
  o.policy = Policy::FIFO;
  ReplayResult f = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::OPEN);
  EXPECT_EQ(r1.makespan, f.makespan);
  EXPECT_LT(r32.makespan, r1.makespan * 7 / 10);
}

// Near requests keep arriving; one far request must not wait forever.
static ns_t far_completion(ns_t aging) {
  std::vector<TraceReq> t;
  // Arrives once the arm works near the start of the disk.
  t.push_back({1 * NS_PER_MS, OpKind::WRITE, 64 * GiB - 4096, 4096});
  uint64_t seed = 9;
  for (int i = 0; i < 600; i++) {    // one every 2 ms for 1.2 s, within 16 MiB
    t.push_back({i * 2 * NS_PER_MS, OpKind::WRITE, rnd(&seed) % 4096 * 4096, 4096});
  }
  DriveOptions o;
  o.aging = aging;
  return replay(hdd7200(), 64 * GiB, o, t, ReplayMode::OPEN).completion[0];
}

TEST(Queue, AgingBoundsStarvation) {
  EXPECT_GT(far_completion(0), 1000 * NS_PER_MS);          // starved
  ns_t bounded = far_completion(200 * NS_PER_MS);
  EXPECT_GT(bounded, 201 * NS_PER_MS);
  EXPECT_LT(bounded, 201 * NS_PER_MS + 60 * NS_PER_MS);    // + what was in service
}

static DriveOptions cached() {
  DriveOptions o;
  o.write_cache = true;
  return o;
}

TEST(WriteCache, CachedWritesAreFastFlushWaitsForThePlatter) {
  Sim s(hdd7200(), 256 * MiB, cached());
  HostReq w;
  w.op = OpKind::WRITE;
  w.off = 100 * MiB;
  w.len = 4096;
  w.data = fill(4096, 'a');
  s.submit(&w, 0);
  s.run_until([&] { return w.completion != 0; });
  // Interface only: overhead + 4 KiB over the link.
  EXPECT_LT(w.completion, 300000);
  EXPECT_TRUE(w.cached);
  EXPECT_EQ(s.platter[100 * MiB], 0);   // not on the platter yet
  HostReq f;
  f.op = OpKind::FLUSH;
  s.submit(&f, w.completion);
  s.run_until([&] { return f.completion != 0; });
  EXPECT_EQ(s.platter[100 * MiB], 'a');
  EXPECT_GT(f.completion - w.completion, 1 * NS_PER_MS);  // a media write
  EXPECT_EQ(s.drive.cache().dirty(), 0u);
}

TEST(WriteCache, CutLosesUnflushedKeepsFlushed) {
  Sim s(hdd7200(), 256 * MiB, cached());
  HostReq a, f, b;
  a.op = b.op = OpKind::WRITE;
  f.op = OpKind::FLUSH;
  a.off = 10 * MiB;
  b.off = 200 * MiB;
  a.len = b.len = 8192;
  a.data = fill(8192, 'A');
  b.data = fill(8192, 'B');
  s.submit(&a, 0);
  s.submit(&f, 0);   // arrives before a is acknowledged: does not cover it
  s.run_until([&] { return f.completion != 0; });
  EXPECT_EQ(f.err, 0);
  HostReq f2;
  f2.op = OpKind::FLUSH;
  s.submit(&f2, s.now);
  s.run_until([&] { return f2.completion != 0; });
  s.submit(&b, s.now);
  s.run_until([&] { return b.completion != 0; });   // acknowledged, dirty
  EXPECT_GT(s.drive.cache().dirty(), 0u);
  s.cut(1, false);
  EXPECT_TRUE(s.drive.failed());
  EXPECT_EQ(s.platter[10 * MiB], 'A');
  EXPECT_EQ(s.platter[10 * MiB + 8191], 'A');
  EXPECT_EQ(s.platter[200 * MiB], 0);
  EXPECT_EQ(s.platter[200 * MiB + 8191], 0);
  // Every command fails until restore.
  HostReq r;
  r.op = OpKind::READ;
  r.off = 0;
  r.len = 4096;
  s.submit(&r, s.now);
  Action act;
  EXPECT_FALSE(s.drive.plan(&act));
  s.drive.restore();
  EXPECT_FALSE(s.drive.failed());
}

TEST(WriteCache, FlushCoversANewerWriteThatReplacedAnOlderOne) {
  Sim s(hdd7200(), 256 * MiB, cached());
  HostReq a, b, f;
  a.op = b.op = OpKind::WRITE;
  a.off = b.off = 50 * MiB;
  a.len = b.len = 4096;
  a.data = fill(4096, '1');
  b.data = fill(4096, '2');
  s.submit(&a, 0);
  s.run_until([&] { return a.completion != 0; });
  // b replaces a before a reaches the platter; the flush (after b) must
  // still put the block on the platter.
  s.submit(&b, a.completion);
  f.op = OpKind::FLUSH;
  s.run_until([&] { return b.completion != 0; });
  s.submit(&f, b.completion);
  s.run_until([&] { return f.completion != 0; });
  s.cut(5, false);
  EXPECT_EQ(s.platter[50 * MiB], '2');
}

// The platter after a torn cut of one unflushed 64 KiB write over 'o'.
static std::vector<char> torn_result(uint64_t seed) {
  Sim s(hdd7200(), 16 * MiB, cached());
  std::fill(s.platter.begin(), s.platter.end(), 'o');
  HostReq w;
  w.op = OpKind::WRITE;
  w.off = 1 * MiB;
  w.len = 65536;
  w.data = fill(65536, 'n');
  s.submit(&w, 0);
  s.run_until([&] { return w.completion != 0; });
  s.cut(seed, true);
  return std::vector<char>(s.platter.begin() + w.off, s.platter.begin() + w.off + w.len);
}

TEST(WriteCache, TornCutTearsAtSectorsDeterministically) {
  std::vector<char> a = torn_result(11), a2 = torn_result(11), b = torn_result(12);
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  int kept = 0;
  for (size_t sec = 0; sec < a.size() / 512; sec++) {
    char c = a[sec * 512];
    EXPECT_TRUE(c == 'n' || c == 'o');
    for (size_t i = 1; i < 512; i++) {
      ASSERT_EQ(a[sec * 512 + i], c) << "torn inside sector " << sec;
    }
    kept += c == 'n';
    EXPECT_EQ(c == 'n', WriteCache::torn_keeps(11, (MiB + sec * 512) / 512));
  }
  EXPECT_GT(kept, 128 / 4);      // about half of 128 sectors
  EXPECT_LT(kept, 128 * 3 / 4);
}

TEST(WriteCache, FullCacheThrottlesToPlatterSpeed) {
  DriveOptions o = cached();
  o.cache_bytes = 4 * MiB;      // 1024 x 4 KiB
  auto trace = random_writes(3000, 64 * GiB, 77);
  ReplayResult r = replay(hdd7200(), 64 * GiB, o, trace, ReplayMode::CLOSED, 1);
  // The first ~1024 are absorbed at interface speed, the rest wait for
  // destages: far slower than the interface, faster than no cache (the
  // drive reorders its destages).
  ReplayResult nc = replay(hdd7200(), 64 * GiB, DriveOptions(), trace, ReplayMode::CLOSED, 1);
  EXPECT_GT(r.stats.cache_full_waits, 0u);
  EXPECT_GT(r.makespan, 3000 * 1 * NS_PER_MS);
  EXPECT_LT(r.makespan, nc.makespan);
  EXPECT_GE(r.stats.destages, 2990u);   // a rare repeat offset merges
  EXPECT_LE(r.stats.destages, 3000u);
}

TEST(WriteCache, ReadsSeeCachedData) {
  Sim s(hdd7200(), 64 * MiB, cached());
  HostReq w, r;
  w.op = OpKind::WRITE;
  w.off = 4096;
  w.len = 4096;
  w.data = fill(4096, 'x');
  s.submit(&w, 0);
  s.run_until([&] { return w.completion != 0; });
  auto ov = s.drive.overlay(0, 16384);
  ASSERT_EQ(ov.size(), 1u);
  EXPECT_EQ(ov[0].off, 4096u);
  EXPECT_EQ(ov[0].data[0], 'x');
  r.op = OpKind::READ;
  r.off = 4096;
  r.len = 4096;
  s.submit(&r, s.now);
  s.run_until([&] { return r.completion != 0; });
  EXPECT_TRUE(r.cached);   // a hit, served by the interface
}

TEST(WriteCache, HeldDestageKeepsDataUntilFlush) {
  Sim s(hdd7200(), 64 * MiB, cached());
  s.drive.set_idle_destage(false);
  HostReq w;
  w.op = OpKind::WRITE;
  w.off = 8192;
  w.len = 4096;
  w.data = fill(4096, 'h');
  s.submit(&w, 0);
  s.run_all();                               // nothing more to do: held
  EXPECT_EQ(s.drive.cache().dirty(), 4096u);
  EXPECT_EQ(s.platter[8192], 0);
  HostReq f;
  f.op = OpKind::FLUSH;
  s.submit(&f, 5000 * NS_PER_MS);
  s.run_all();
  EXPECT_EQ(f.err, 0);
  EXPECT_EQ(s.platter[8192], 'h');
  EXPECT_EQ(s.drive.cache().dirty(), 0u);
}

TEST(Queue, FailedDriveAnswersEverythingWithEio) {
  Sim s(hdd7200(), 64 * MiB, DriveOptions());
  HostReq a, b;
  a.op = b.op = OpKind::WRITE;
  a.len = b.len = 4096;
  b.off = 32 * MiB;
  s.submit(&a, 0);
  s.submit(&b, 0);
  Action act;
  ASSERT_TRUE(s.drive.plan(&act));            // a or b in service, the other queued
  std::vector<HostReq*> failed;
  std::vector<PlatterWrite> pw;
  s.drive.cut(0, false, &failed, &pw);
  EXPECT_EQ(failed.size(), 2u);
  EXPECT_EQ(a.err, EIO);
  EXPECT_EQ(b.err, EIO);
  std::vector<HostReq*> done;
  s.drive.finish(act, &done, &pw);           // the stale action: ignored
  EXPECT_TRUE(done.empty());
}

TEST(WriteCache, DestagesAreReorderedEvenWhenOld) {
  // A full cache of old random writes: destages still go by SPTF, not
  // oldest first, so they beat a FIFO drive by a wide margin.
  DriveOptions o = cached();
  o.cache_bytes = 16 * MiB;
  o.aging = 100 * NS_PER_MS;
  Sim s(hdd7200(), 64 * GiB, o);
  s.drive.set_idle_destage(false);
  std::vector<HostReq> w(4096);
  uint64_t seed = 1;
  for (auto& r : w) {
    r.op = OpKind::WRITE;
    r.off = rnd(&seed) % (64 * GiB / 4096) * 4096;
    r.len = 4096;
    s.submit(&r, 0);
  }
  s.run_all();
  HostReq f;
  f.op = OpKind::FLUSH;
  ns_t t0 = 10000 * NS_PER_MS;     // everything is 10 s old
  s.submit(&f, t0);
  s.run_all();
  double per = (f.completion - t0) / 4096.0 / NS_PER_MS;
  EXPECT_LT(per, 8.0);   // FIFO would be ~12.9 ms per write
}
