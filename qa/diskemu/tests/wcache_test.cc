// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// The write cache's bookkeeping: overlap, flush sequence, destage, cut.
#include <gtest/gtest.h>

#include "sim.h"
#include "wcache.h"

using namespace diskemu;
using diskemu::test::fill;

TEST(WriteCacheMap, NewerWriteCutsOlderOnes) {
  WriteCache c(1 << 20);
  c.insert(0, 8192, 0, fill(8192, 'a'), 0);
  c.insert(2048, 2048, 0, fill(2048, 'b'), 0);     // in the middle
  EXPECT_EQ(c.segments(), 3u);
  EXPECT_EQ(c.dirty(), 8192u);
  auto ov = c.overlay(0, 8192);
  ASSERT_EQ(ov.size(), 3u);
  EXPECT_EQ(ov[0].off, 0u);
  EXPECT_EQ(ov[0].len, 2048u);
  EXPECT_EQ(ov[0].data[0], 'a');
  EXPECT_EQ(ov[1].data[0], 'b');
  EXPECT_EQ(ov[2].off, 4096u);
  EXPECT_EQ(ov[2].data[0], 'a');
  EXPECT_EQ(ov[2].data[4095], 'a');
  EXPECT_EQ(c.covered(1024, 16384), 8192u - 1024);
}

TEST(WriteCacheMap, FlushSequenceIsInherited) {
  WriteCache c(1 << 20);
  uint64_t s1 = c.insert(0, 4096, 0, nullptr, 0);
  uint64_t s2 = c.insert(0, 4096, 0, nullptr, 0);    // replaces s1 entirely
  EXPECT_EQ(c.segments(), 1u);
  // A flush issued after s1 must wait for s2's segment.
  EXPECT_TRUE(c.has_through(s1));
  auto old = c.oldest(8, s1);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0]->seq, s2);
  EXPECT_EQ(old[0]->flush_seq, s1);
  auto pw = c.complete_destage(0, 4096, s1);          // s1's destage: nothing left of it
  EXPECT_TRUE(pw.empty());
  pw = c.complete_destage(0, 4096, s2);
  ASSERT_EQ(pw.size(), 1u);
  EXPECT_FALSE(c.has_through(s2));
  EXPECT_TRUE(c.empty());
}

TEST(WriteCacheMap, OldestAreByFlushSequence) {
  WriteCache c(1 << 20);
  for (int i = 0; i < 10; i++) {
    c.insert(i * 4096, 4096, i, nullptr, 0);
  }
  auto w = c.oldest(4, UINT64_MAX);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0]->off, 0u);
  EXPECT_EQ(w[3]->off, 3 * 4096u);
  EXPECT_EQ(c.oldest(100, 5).size(), 5u);
  EXPECT_FALSE(c.fits((1 << 20) - 40960 + 1));
  EXPECT_TRUE(c.fits((1 << 20) - 40960));
}

TEST(WriteCacheMap, DiscardAndDrain) {
  WriteCache c(1 << 20);
  c.insert(0, 8192, 0, fill(8192, 'a'), 0);
  c.discard(4096, 8192);
  EXPECT_EQ(c.dirty(), 4096u);
  auto all = c.drain();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].len, 4096u);
  EXPECT_TRUE(c.empty());
}

TEST(WriteCacheMap, TornCutOfUnalignedWriteStaysInsideSectors) {
  WriteCache c(1 << 20);
  c.insert(100, 2000, 0, fill(2000, 'z'), 0);       // sectors 0..4, partial ends
  auto pw = c.cut(3, true);
  for (auto& w : pw) {
    EXPECT_GE(w.off, 100u);
    EXPECT_LE(w.off + w.len, 2100u);
    // A piece never crosses a sector boundary it did not start at.
    uint64_t first = w.off / 512, last = (w.off + w.len - 1) / 512;
    for (uint64_t s = first; s <= last; s++) {
      EXPECT_TRUE(WriteCache::torn_keeps(3, s));
    }
  }
  EXPECT_TRUE(c.empty());
  EXPECT_TRUE(c.cut(3, true).empty());
}
