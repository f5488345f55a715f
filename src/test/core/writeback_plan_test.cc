// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of plan_writeback() and overlay_extents().
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/writeback_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace mim;

namespace {

CachedExtent ext(uint64_t off, uint64_t len, sn_t sn, char fill = 'x')
{
  return CachedExtent{off, DataRef::copy_of(std::string(len, fill)), sn};
}

// Every run: pieces contiguous, sorted, covering exactly the run, first and
// last piece data; runs sorted and separated by more than max_gap_fill.
void check_runs(const std::vector<WriteRun>& runs, uint64_t max_gap_fill)
{
  for (size_t i = 0; i < runs.size(); ++i) {
    const WriteRun& r = runs[i];
    ASSERT_FALSE(r.pieces.empty());
    EXPECT_FALSE(r.pieces.front().is_gap());
    EXPECT_FALSE(r.pieces.back().is_gap());
    uint64_t cur = r.offset;
    for (const WritePiece& p : r.pieces) {
      EXPECT_EQ(cur, p.offset);
      EXPECT_GT(p.length, 0u);
      if (p.is_gap()) {
        EXPECT_LE(p.length, max_gap_fill);
      } else {
        EXPECT_EQ(p.length, p.data.length);
      }
      cur += p.length;
    }
    EXPECT_EQ(r.offset + r.length, cur);
    if (i > 0) {
      const WriteRun& prev = runs[i - 1];
      EXPECT_GT(r.offset, prev.offset + prev.length + max_gap_fill);
    }
  }
}

}  // namespace

TEST(WritebackPlan, Empty)
{
  EXPECT_TRUE(plan_writeback({}, 0).empty());
  EXPECT_TRUE(plan_writeback({}, 1 << 20).empty());
}

TEST(WritebackPlan, SingleExtent)
{
  auto runs = plan_writeback({ext(4096, 100, 1)}, 0);
  ASSERT_EQ(1u, runs.size());
  EXPECT_EQ(4096u, runs[0].offset);
  EXPECT_EQ(100u, runs[0].length);
  ASSERT_EQ(1u, runs[0].pieces.size());
  EXPECT_EQ(100u, runs[0].pieces[0].data.length);
}

TEST(WritebackPlan, AdjacentJoinedEvenWithoutGapFill)
{
  auto runs = plan_writeback({ext(0, 10, 1), ext(10, 20, 2), ext(30, 5, 3)}, 0);
  ASSERT_EQ(1u, runs.size());
  EXPECT_EQ(0u, runs[0].offset);
  EXPECT_EQ(35u, runs[0].length);
  EXPECT_EQ(3u, runs[0].pieces.size());
  check_runs(runs, 0);
}

TEST(WritebackPlan, ZeroGapFillJoinsOnlyAdjacent)
{
  auto runs = plan_writeback({ext(0, 10, 1), ext(11, 9, 2)}, 0);
  ASSERT_EQ(2u, runs.size());
  EXPECT_EQ(11u, runs[1].offset);
  check_runs(runs, 0);
}

TEST(WritebackPlan, ExtentWithoutBytesInMemoryIsNotAGap)
{
  // A cached extent whose bytes are only in the journal (data == nullptr,
  // jpos set) is data to write, not a gap to read from the file.
  std::vector<CachedExtent> v = {
    CachedExtent{0, DataRef(nullptr, nullptr, 8, 4096), 1},
    CachedExtent{12, DataRef(nullptr, nullptr, 4, 8192), 2}};
  auto runs = plan_writeback(v, 4);
  ASSERT_EQ(1u, runs.size());
  ASSERT_EQ(3u, runs[0].pieces.size());
  EXPECT_FALSE(runs[0].pieces[0].is_gap());
  EXPECT_EQ(4096u, runs[0].pieces[0].data.jpos);
  EXPECT_TRUE(runs[0].pieces[1].is_gap());
  EXPECT_FALSE(runs[0].pieces[2].is_gap());
  EXPECT_EQ(8192u, runs[0].pieces[2].data.jpos);
  check_runs(runs, 4);
}

TEST(DataRef, SliceAndDropFrontKeepTheJournalPosition)
{
  DataRef d = DataRef::copy_of(std::string("0123456789"));
  EXPECT_FALSE(d.has_jpos());
  EXPECT_FALSE(d.slice(2, 3).has_jpos());
  d.jpos = 1000;
  DataRef s = d.slice(2, 3);
  EXPECT_EQ("234", std::string(s.view()));
  EXPECT_EQ(1002u, s.jpos);
  d.drop_front(4);
  EXPECT_EQ("456789", std::string(d.view()));
  EXPECT_EQ(1004u, d.jpos);
  DataRef n = DataRef::copy_of(std::string("ab"));
  n.drop_front(1);
  EXPECT_FALSE(n.has_jpos());
  EXPECT_EQ("b", std::string(n.view()));
  EXPECT_TRUE(n.resident());
  EXPECT_EQ(nullptr, n.source());
}

TEST(DataRef, JournalOnlyRangesKeepTheirWholeWrite)
{
  auto src = std::make_shared<JournalSource>();
  src->jpos = 5000;
  src->length = 100;
  src->crc = 0x1234;
  DataRef d = DataRef::in_journal(src);
  EXPECT_FALSE(d.resident());
  EXPECT_EQ(100u, d.length);
  EXPECT_EQ(5000u, d.jpos);
  EXPECT_EQ(src.get(), d.source());
  DataRef s = d.slice(10, 20);
  EXPECT_FALSE(s.resident());
  EXPECT_EQ(5010u, s.jpos);
  EXPECT_EQ(20u, s.length);
  EXPECT_EQ(src.get(), s.source());
  s.drop_front(5);
  EXPECT_EQ(5015u, s.jpos);
  EXPECT_EQ(15u, s.length);
  EXPECT_EQ(nullptr, s.data);
  EXPECT_EQ(3, src.use_count());  // d and s share it
}

TEST(WritebackPlan, GapFillJoinsWithGapPiece)
{
  std::vector<CachedExtent> v = {ext(0, 10, 1), ext(15, 5, 2), ext(100, 1, 3)};
  auto runs = plan_writeback(v, 5);
  ASSERT_EQ(2u, runs.size());
  EXPECT_EQ(0u, runs[0].offset);
  EXPECT_EQ(20u, runs[0].length);
  ASSERT_EQ(3u, runs[0].pieces.size());
  EXPECT_TRUE(runs[0].pieces[1].is_gap());
  EXPECT_EQ(10u, runs[0].pieces[1].offset);
  EXPECT_EQ(5u, runs[0].pieces[1].length);
  EXPECT_EQ(100u, runs[1].offset);
  check_runs(runs, 5);

  // One byte less of gap fill: the 5-byte gap is no longer filled.
  auto runs4 = plan_writeback(v, 4);
  ASSERT_EQ(3u, runs4.size());
  check_runs(runs4, 4);

  // Enough to join everything.
  auto all = plan_writeback(v, 80);
  ASSERT_EQ(1u, all.size());
  EXPECT_EQ(101u, all[0].length);
  EXPECT_EQ(5u, all[0].pieces.size());
  check_runs(all, 80);
}

TEST(WritebackPlan, ZeroLengthExtentsSkipped)
{
  std::vector<CachedExtent> v = {ext(0, 0, 1), ext(5, 5, 2), ext(10, 0, 3)};
  auto runs = plan_writeback(v, 0);
  ASSERT_EQ(1u, runs.size());
  EXPECT_EQ(5u, runs[0].offset);
  EXPECT_EQ(1u, runs[0].pieces.size());
}

TEST(WritebackPlan, PiecesKeepDataAndCoverRunsRandomized)
{
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<CachedExtent> v;
    uint64_t cur = rng() % 100;
    const int n = rng() % 30;
    for (int i = 0; i < n; ++i) {
      const uint64_t len = 1 + rng() % 50;
      v.push_back(ext(cur, len, i + 1, 'a' + i % 26));
      cur += len + (rng() % 3 == 0 ? 0 : rng() % 40);
    }
    const uint64_t fill = rng() % 4 == 0 ? 0 : rng() % 50;
    auto runs = plan_writeback(v, fill);
    check_runs(runs, fill);
    // The data pieces, in order, are exactly the input extents.
    size_t k = 0;
    for (const WriteRun& r : runs) {
      for (const WritePiece& p : r.pieces) {
        if (p.is_gap()) {
          continue;
        }
        ASSERT_LT(k, v.size());
        EXPECT_EQ(v[k].offset, p.offset);
        EXPECT_EQ(v[k].data.data, p.data.data);
        ++k;
      }
    }
    EXPECT_EQ(v.size(), k);
  }
}

TEST(OverlayExtents, TopWinsBaseSurvivorsKeepSn)
{
  std::vector<CachedExtent> base = {ext(0, 100, 1, 'a'), ext(200, 100, 2, 'b')};
  std::vector<CachedExtent> top = {ext(50, 10, 3, 'c'), ext(90, 150, 4, 'd'),
                                   ext(290, 20, 5, 'e')};
  auto out = overlay_extents(base, top);
  // [0,50)a1 [50,60)c3 [60,90)a1 [90,240)d4 [240,290)b2 [290,310)e5
  std::vector<std::tuple<uint64_t, uint64_t, sn_t, char>> want = {
    {0, 50, 1, 'a'}, {50, 10, 3, 'c'}, {60, 30, 1, 'a'},
    {90, 150, 4, 'd'}, {240, 50, 2, 'b'}, {290, 20, 5, 'e'}};
  ASSERT_EQ(want.size(), out.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto [off, len, sn, c] = want[i];
    EXPECT_EQ(off, out[i].offset) << i;
    EXPECT_EQ(len, out[i].data.length) << i;
    EXPECT_EQ(sn, out[i].sn) << i;
    EXPECT_EQ(std::string(len, c), out[i].data.view()) << i;
  }
}

TEST(OverlayExtents, EmptySides)
{
  std::vector<CachedExtent> a = {ext(0, 10, 1)};
  EXPECT_EQ(1u, overlay_extents(a, {}).size());
  EXPECT_EQ(1u, overlay_extents({}, a).size());
  EXPECT_TRUE(overlay_extents({}, {}).empty());
  // Top covering base entirely.
  auto out = overlay_extents({ext(10, 10, 1)}, {ext(0, 100, 2)});
  ASSERT_EQ(1u, out.size());
  EXPECT_EQ(2u, out[0].sn);
}

TEST(ExtentsCover, HolesEdgesAndEmpty)
{
  std::vector<CachedExtent> v;
  EXPECT_TRUE(extents_cover(v, 100, 0));
  EXPECT_FALSE(extents_cover(v, 100, 1));
  v.push_back(ext(0, 4096, 1));
  v.push_back(ext(4096, 4096, 2));
  v.push_back(ext(12288, 4096, 3));
  EXPECT_TRUE(extents_cover(v, 0, 8192));        // two adjacent extents
  EXPECT_TRUE(extents_cover(v, 100, 4096));      // across their boundary
  EXPECT_TRUE(extents_cover(v, 12288, 4096));    // the last one exactly
  EXPECT_FALSE(extents_cover(v, 4096, 8192));    // the hole 8192..12288
  EXPECT_FALSE(extents_cover(v, 8191, 2));       // one byte into the hole
  EXPECT_FALSE(extents_cover(v, 12288, 4097));   // one byte past the end
  EXPECT_FALSE(extents_cover(v, 20000, 10));     // after every extent
}
