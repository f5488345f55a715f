// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// The media cache and the firmware scheduler, against the datasheet figures
// they are calibrated to (README, "Validation"), on the virtual clock.
#include <gtest/gtest.h>

#include <algorithm>

#include "replay.h"
#include "sim.h"
#include "stage.h"

using namespace diskemu;
using diskemu::test::rnd;

static constexpr uint64_t GiB = 1ull << 30;
static constexpr uint64_t MiB = 1ull << 20;

TEST(MediaCache, NewerWritesCutOlderAndDestageRemovesOnlyItsOwn) {
  MediaCache m(1 * MiB);
  m.insert(0, 8192);
  Staged old = m.near(0, 8)[0];
  m.insert(4096, 8192);            // replaces [4096, 8192) of the first
  EXPECT_EQ(12288u, m.bytes());
  EXPECT_EQ(12288u, m.covered(0, 65536));
  EXPECT_EQ(2u, m.extents());
  m.complete_destage(old);          // what is left of the first goes home
  EXPECT_EQ(8192u, m.bytes());
  EXPECT_EQ(0u, m.covered(0, 4096));
  EXPECT_EQ(8192u, m.covered(4096, 8192));
  m.invalidate(6144, 1024);         // a write that went home directly
  EXPECT_EQ(7168u, m.bytes());
  EXPECT_EQ(3u - 0u, m.extents() + 1);
  EXPECT_FALSE(m.fits(1 * MiB));
  EXPECT_TRUE(m.fits(1 * MiB - 7168));
}

TEST(MediaCache, NearTakesBothSidesOfTheHead) {
  MediaCache m(1 * GiB);
  for (uint64_t i = 0; i < 100; i++) {
    m.insert(i * MiB, 4096);
  }
  auto v = m.near(50 * MiB, 10);
  ASSERT_EQ(10u, v.size());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (auto& s : v) {
    lo = std::min(lo, s.off);
    hi = std::max(hi, s.off);
  }
  EXPECT_EQ(45 * MiB, lo);
  EXPECT_EQ(54 * MiB, hi);
  EXPECT_EQ(10u, m.near(99 * MiB, 10).size());   // one side runs out
}

namespace {

std::vector<TraceReq> random_4k(OpKind op, int n, uint64_t span, uint64_t seed) {
  std::vector<TraceReq> v;
  for (int i = 0; i < n; i++) {
    v.push_back({0, op, rnd(&seed) % (span / 4096) * 4096, 4096});
  }
  return v;
}

/// Closed-loop IOPS of 4 KiB random requests over the whole stroke.
double iops(const DiskSpec& spec, const DriveOptions& o, OpKind op, int depth,
            int n = 4000, ReplayResult* out = nullptr) {
  auto trace = random_4k(op, n, 64 * GiB, 17);
  ReplayResult r = replay(spec, 64 * GiB, o, trace, ReplayMode::CLOSED, depth);
  if (out) {
    *out = r;
  }
  return n / (r.makespan / 1e9);
}

}  // namespace

// The calibration itself: random 4 KiB at QD16 with the write cache off,
// against the datasheets (Exos X24 DS2080: 168 read / 550 write IOPS;
// Exos M 30TB DS2045: 170 / 350), within 15%, with the default scheduler.
TEST(Calibration, Qd16WcdWithinFifteenPercentOfTheDatasheets) {
  const struct { const char* preset; double read, write; } drives[] = {
    {"exos-x24", 168, 550}, {"exos-m30", 170, 350}};
  for (auto& d : drives) {
    const DiskSpec& spec = *find_preset(d.preset);
    DriveOptions o;   // the defaults: fw, write cache off
    double r = iops(spec, o, OpKind::READ, 16);
    double w = iops(spec, o, OpKind::WRITE, 16);
    EXPECT_NEAR(r, d.read, 0.15 * d.read) << d.preset;
    EXPECT_NEAR(w, d.write, 0.15 * d.write) << d.preset;
  }
}

// fw lies between the ideal scheduler and C-LOOK at depth, and equals
// both at QD1 in the mean (nothing to choose from).
TEST(Calibration, FirmwareLiesBetweenIdealSptfAndClook) {
  const DiskSpec& spec = *find_preset("exos-x24");
  DriveOptions o;
  double fw = iops(spec, o, OpKind::READ, 32);
  o.policy = Policy::SPTF;
  double ideal = iops(spec, o, OpKind::READ, 32);
  double ideal1 = iops(spec, o, OpKind::READ, 1);
  o.policy = Policy::CLOOK;
  double clook = iops(spec, o, OpKind::READ, 32);
  EXPECT_LT(fw, ideal * 0.97);
  EXPECT_GT(fw, clook * 1.03);
  o.policy = Policy::FW;
  EXPECT_NEAR(iops(spec, o, OpKind::READ, 1), ideal1, 0.03 * ideal1);
}

// A bounded look-ahead rates only the oldest: at QD32 with a look-ahead
// of 8 the drive reorders about as at QD8.
TEST(Calibration, LookaheadBoundsTheReordering) {
  const DiskSpec& spec = *find_preset("exos-x24");
  DriveOptions o;
  o.fw_lookahead = 8;
  double la8 = iops(spec, o, OpKind::READ, 32);
  o.fw_lookahead = 0;
  double qd8 = iops(spec, o, OpKind::READ, 8);
  double qd32 = iops(spec, o, OpKind::READ, 32);
  EXPECT_LT(la8, qd32 * 0.9);
  EXPECT_NEAR(la8, qd8, 0.1 * qd8);
}

// A full band: writes go home and destages compete with them; the band
// never holds more than its size.
TEST(MediaCache, FullBandFallsBackToWritingHome) {
  DiskSpec spec = *find_preset("exos-x24");
  spec.stage_bytes = 8 * MiB;    // 2048 writes fill it
  DriveOptions o;
  ReplayResult r;
  double sustained = iops(spec, o, OpKind::WRITE, 16, 12000, &r);
  EXPECT_LE(r.stats.max_staged, spec.stage_bytes);
  EXPECT_GT(r.stats.stage_full, 4000u);
  EXPECT_GT(r.stats.stage_destages, 1000u);
  spec.stage_bytes = 0;
  double none = iops(spec, o, OpKind::WRITE, 16, 12000);
  // Somewhat better than no media cache (its destages are sorted), far
  // below the staging rate.
  EXPECT_GT(sustained, none);
  EXPECT_LT(sustained, 350);
}

// Sorted writes at depth cost less at home than staged: the drive does not
// stage them (a merged write back is not slowed by the media cache).
TEST(MediaCache, SortedWritesGoHome) {
  const DiskSpec& spec = *find_preset("exos-x24");
  std::vector<TraceReq> trace;
  uint64_t seed = 5, off = 0;
  for (int i = 0; i < 2000; i++) {
    off += (1 + rnd(&seed) % 64) * 4096;   // ascending, 4 KiB to 256 KiB gaps
    trace.push_back({0, OpKind::WRITE, off, 4096});
  }
  ReplayResult r = replay(spec, 64 * GiB, DriveOptions(), trace,
                          ReplayMode::CLOSED, 32);
  EXPECT_LT(r.stats.staged_writes, 2000u / 20);
}

// Staged data is on the media: an idle drive copies it home, a power cut
// does not lose it, a FLUSH does not wait for it.
TEST(MediaCache, IdleDestageCutAndFlush) {
  const DiskSpec& spec = *find_preset("exos-x24");
  diskemu::test::Sim s(spec, 64 * GiB, DriveOptions());
  std::vector<HostReq> w(8);
  uint64_t seed = 3;
  for (auto& r : w) {
    r.op = OpKind::WRITE;
    r.off = rnd(&seed) % (64 * GiB / 4096) * 4096;
    r.len = 4096;
    s.submit(&r, 0);
  }
  HostReq f;
  f.op = OpKind::FLUSH;
  s.submit(&f, 0);
  s.run_until([&] {
    return std::all_of(w.begin(), w.end(),
                       [](const HostReq& r) { return r.completion != 0; });
  });
  EXPECT_LT(f.completion, w.back().completion) << "the flush waited";
  EXPECT_EQ(8u, s.drive.stats().staged_writes);
  EXPECT_EQ(8 * 4096u, s.drive.media_cache().bytes());
  std::vector<HostReq*> failed;
  std::vector<PlatterWrite> pw;
  s.drive.cut(1, false, &failed, &pw);
  s.inflight.clear();
  s.drive.restore();
  EXPECT_EQ(8 * 4096u, s.drive.media_cache().bytes()) << "lost in a cut";
  // Nothing more from the host: the idle drive copies it home after its
  // idle delay.
  s.run_all();
  EXPECT_TRUE(s.drive.media_cache().empty());
  EXPECT_EQ(8u, s.drive.stats().stage_destages);
  EXPECT_GE(s.now, static_cast<ns_t>(spec.stage_idle_ms * NS_PER_MS));
}
