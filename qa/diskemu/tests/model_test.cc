// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// The service-time model: seek curve, rotation, zones, sequential streams.
#include <gtest/gtest.h>

#include <cmath>

#include "model.h"
#include "replay.h"

using namespace diskemu;

static const DiskSpec& hdd7200() { return *find_preset("hdd7200"); }
static constexpr uint64_t GiB = 1ull << 30;
static constexpr uint64_t MiB = 1ull << 20;

TEST(SeekCurve, PassesThroughDatasheetPoints) {
  for (const char* name : {"hdd7200", "hdd10k"}) {
    const DiskSpec& s = *find_preset(name);
    for (const SeekPoints* p : {&s.read_seek, &s.write_seek}) {
      SeekCurve c(*p, static_cast<double>(s.cylinders));
      EXPECT_NEAR(c.ms(1), p->track_to_track_ms, 1e-9) << name;
      EXPECT_NEAR(c.ms(static_cast<double>(s.cylinders)), p->full_stroke_ms, 1e-9) << name;
      // The datasheet average is the mean over all pairs of cylinders.
      EXPECT_NEAR(c.pair_average_ms(), p->average_ms, 0.01 * p->average_ms) << name;
      EXPECT_EQ(c.ms(0), 0.0);
      EXPECT_NEAR(c.ms(0.3), p->track_to_track_ms, 1e-9);
      double prev = 0;
      for (double d = 1; d <= s.cylinders; d *= 1.5) {
        EXPECT_GE(c.ms(d), prev) << "not monotonic at " << d;
        prev = c.ms(d);
      }
    }
  }
}

TEST(SeekCurve, PresetsAreDatasheetFigures) {
  const DiskSpec& s = hdd7200();
  EXPECT_EQ(s.rpm, 7200);
  EXPECT_DOUBLE_EQ(s.write_seek.average_ms, 8.5);
  EXPECT_DOUBLE_EQ(s.outer_mb_s, 175);
  EXPECT_DOUBLE_EQ(s.inner_mb_s, 83);
  const DiskSpec& t = *find_preset("hdd10k");
  EXPECT_EQ(t.rpm, 10000);
  EXPECT_DOUBLE_EQ(t.read_seek.average_ms, 3.8);
  EXPECT_FALSE(find_preset("nvme")->rotational);
}

// A disk whose cylinders are much bigger than a track, so that offsets at
// any angle exist without leaving the head's cylinder (no seek).
static DiskSpec fat_cylinders() {
  DiskSpec s = hdd7200();
  s.cylinders = 1000;   // 64 MiB per cylinder on 64 GiB
  return s;
}

// Offset within [base, base + 2 tracks) whose angle is `frac` of a
// revolution ahead of `angle`.
static uint64_t offset_at(const HddModel& m, uint64_t base, double angle, double frac) {
  uint64_t best = base;
  double best_err = 2;
  for (uint64_t off = base; off < base + 4 * MiB; off += SECTOR) {
    double d = m.angle_of(off) - angle;
    d -= std::floor(d);
    if (std::fabs(d - frac) < best_err) {
      best_err = std::fabs(d - frac);
      best = off;
    }
  }
  return best;
}

TEST(Rotation, JustAheadPaysNothingJustBehindPaysARevolution) {
  HddModel m(fat_cylinders(), 64 * GiB);
  uint64_t head = 100 * MiB;              // mid-cylinder
  m.commit(head - 4096, 4096, 0);
  ns_t start = 50 * NS_PER_MS;            // well after, no continuation
  double at = m.platter_angle(start + static_cast<ns_t>(hdd7200().overhead_ms * 1e6));
  uint64_t ahead = offset_at(m, head + 4096, at, 0.01);
  uint64_t behind = offset_at(m, head + 4096, at, 0.99);
  Cost ca = m.cost(OpKind::WRITE, ahead, 4096, start, start);
  Cost cb = m.cost(OpKind::WRITE, behind, 4096, start, start);
  EXPECT_EQ(ca.seek, 0);
  EXPECT_EQ(cb.seek, 0);
  EXPECT_LT(ca.rotation, 0.03 * m.revolution());
  EXPECT_GT(cb.rotation, 0.97 * m.revolution());
  EXPECT_LT(cb.rotation, m.revolution());
  EXPECT_EQ(m.revolution(), 8333333);     // 7200 rpm
}

TEST(Rotation, RandomRequestsWaitHalfARevolutionOnAverage) {
  HddModel m(hdd7200(), 64 * GiB);
  uint64_t st = 7;
  double sum = 0;
  const int n = 4000;
  ns_t t = 0;
  for (int i = 0; i < n; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t off = (st >> 11) % (64 * GiB / 4096) * 4096;
    Cost c = m.cost(OpKind::WRITE, off, 4096, t, t);
    sum += c.rotation;
    t += c.total();
    m.commit(off, 4096, t);
  }
  EXPECT_NEAR(sum / n / m.revolution(), 0.5, 0.03);
}

TEST(Zones, OuterFasterThanInner) {
  HddModel m(hdd7200(), 64 * GiB);
  EXPECT_DOUBLE_EQ(m.rate_mb_s(0), 175);
  EXPECT_NEAR(m.rate_mb_s(64 * GiB - 1), 83, 0.01);
  EXPECT_NEAR(m.rate_mb_s(32 * GiB), (175 + 83) / 2.0, 0.01);
  EXPECT_GT(m.transfer_time(60 * GiB, MiB), 1.8 * m.transfer_time(0, MiB));
  // With a larger drive behind it, the emulated disk is its outer part.
  HddModel part(hdd7200(), 64 * GiB, 4096 * GiB);
  EXPECT_GT(part.rate_mb_s(64 * GiB - 1), 170);
}

// MB/s of a back-to-back stream of 1 MiB writes starting at `base`.
static double stream_mb_s(uint64_t base) {
  std::vector<TraceReq> t;
  for (int i = 0; i < 400; i++) {
    t.push_back({0, OpKind::WRITE, base + i * MiB, MiB});
  }
  ReplayResult r = replay(hdd7200(), 64 * GiB, DriveOptions(), t, ReplayMode::CLOSED, 1);
  EXPECT_EQ(r.stats.sequential, 399u);
  return 400.0 * MiB / (r.makespan / 1e9) / 1e6;
}

TEST(Zones, SequentialStreamRunsAtTheZoneMediaRate) {
  HddModel m(hdd7200(), 64 * GiB);
  double outer = stream_mb_s(0);
  double inner = stream_mb_s(60 * GiB);
  // 400 MiB, one initial positioning (< 30 ms) against ~2.4 s of transfer.
  EXPECT_NEAR(outer, m.rate_mb_s(200 * MiB), 0.02 * m.rate_mb_s(200 * MiB));
  EXPECT_NEAR(inner, m.rate_mb_s(60 * GiB + 200 * MiB), 0.02 * 90);
  EXPECT_GT(outer, 1.8 * inner);
}

TEST(Sequential, LateArrivalLosesTheContinuation) {
  HddModel m(hdd7200(), 64 * GiB);
  Cost first = m.cost(OpKind::WRITE, 0, 4096, 0, 0);
  ns_t end = first.total();
  m.commit(0, 4096, end);
  Cost in_time = m.cost(OpKind::WRITE, 4096, 4096, end, end);
  EXPECT_TRUE(in_time.sequential);
  EXPECT_EQ(in_time.total(), in_time.transfer);
  Cost late = m.cost(OpKind::WRITE, 4096, 4096, end + 3 * NS_PER_MS, end + 3 * NS_PER_MS);
  EXPECT_FALSE(late.sequential);
  EXPECT_EQ(late.seek, 0);
  // The sector went by 3 ms (+ overhead) ago: the rest of a revolution.
  EXPECT_NEAR(late.rotation, m.revolution() - 3 * NS_PER_MS - late.overhead, 20000);
}

TEST(Spec, OverridesAndSizes) {
  DiskSpec s = hdd7200();
  std::string err;
  EXPECT_TRUE(set_spec_value(&s, "outer_mbs", "260", &err));
  EXPECT_TRUE(set_spec_value(&s, "avg_ms", "9", &err));
  EXPECT_DOUBLE_EQ(s.read_seek.average_ms, 9);
  EXPECT_DOUBLE_EQ(s.write_seek.average_ms, 9);
  EXPECT_TRUE(set_spec_value(&s, "cache", "256M", &err));
  EXPECT_EQ(s.cache_bytes, 256 * MiB);
  EXPECT_FALSE(set_spec_value(&s, "warp", "9", &err));
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("64G", &v));
  EXPECT_EQ(v, 64 * GiB);
  EXPECT_TRUE(parse_size("1.5K", &v));
  EXPECT_EQ(v, 1536u);
  EXPECT_FALSE(parse_size("12X", &v));
}

TEST(Nvme, FixedLatencyNoSeek) {
  HddModel m(*find_preset("nvme"), 8 * GiB);
  Cost c = m.cost(OpKind::WRITE, 5 * GiB, 4096, 0, 0);
  EXPECT_EQ(c.seek, 0);
  EXPECT_EQ(c.rotation, 0);
  EXPECT_NEAR(c.total() / 1e3, 20 + 4096 / 2000.0, 0.1);
}
