// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of PayloadIndex (a write's bytes inside its payload).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/payload_index.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace mim;
using Span = PayloadIndex::Span;

TEST(PayloadIndex, FindsAWriteAndAPartOfIt)
{
  std::string hdr(8, 'h'), data(100, 'd'), tail(20, 't');
  PayloadIndex x;
  x.add(hdr.data(), hdr.size());
  x.add(data.data(), 0);  // empty: ignored
  x.add(data.data(), data.size());
  x.add(tail.data(), tail.size());
  EXPECT_EQ(128u, x.length());
  uint64_t off = 0;
  ASSERT_TRUE(x.find({{data.data(), 100}}, &off));
  EXPECT_EQ(8u, off);
  ASSERT_TRUE(x.find({{data.data() + 10, 30}}, &off));
  EXPECT_EQ(18u, off);
  // A write running from data into tail: contiguous in the payload.
  ASSERT_TRUE(x.find({{data.data() + 90, 10}, {tail.data(), 5}}, &off));
  EXPECT_EQ(98u, off);
}

TEST(PayloadIndex, RefusesWhatIsNotThere)
{
  std::string a(16, 'a'), b(16, 'b'), copy(16, 'a');
  PayloadIndex x;
  x.add(a.data(), a.size());
  x.add(b.data(), b.size());
  uint64_t off = 7;
  EXPECT_FALSE(x.find({{copy.data(), 16}}, &off));       // equal bytes, other memory
  EXPECT_FALSE(x.find({{b.data(), 16}, {a.data(), 16}}, &off));  // wrong order
  EXPECT_FALSE(x.find({{b.data(), 17}}, &off));          // past the payload
  EXPECT_FALSE(x.find({{a.data() + 8, 8}, {b.data() + 1, 4}}, &off));  // not contiguous
  EXPECT_FALSE(x.find({}, &off));
  EXPECT_FALSE(x.find({{a.data(), 0}}, &off));
  EXPECT_EQ(7u, off);  // untouched on failure
  PayloadIndex none;
  EXPECT_FALSE(none.find({{a.data(), 1}}, &off));
}

TEST(PayloadIndex, SameBufferTwiceMatchesWhereTheWholeWriteDoes)
{
  std::string x(10, 'x'), y(10, 'y'), z(10, 'z');
  PayloadIndex p;
  p.add(x.data(), 10);
  p.add(y.data(), 10);
  p.add(x.data(), 10);
  p.add(z.data(), 10);
  uint64_t off = 0;
  ASSERT_TRUE(p.find({{x.data(), 10}, {z.data(), 10}}, &off));
  EXPECT_EQ(20u, off);
  ASSERT_TRUE(p.find({{x.data(), 10}, {y.data(), 3}}, &off));
  EXPECT_EQ(0u, off);
}

TEST(PayloadIndex, OneBufferSplitOverSegments)
{
  std::string buf(100, 0);
  for (size_t i = 0; i < buf.size(); ++i) {
    buf[i] = char(i);
  }
  PayloadIndex p;
  std::string pre(4, 'p');
  p.add(pre.data(), pre.size());
  p.add(buf.data(), 50);
  p.add(buf.data() + 50, 50);
  uint64_t off = 0;
  ASSERT_TRUE(p.find({{buf.data() + 40, 20}}, &off));
  EXPECT_EQ(44u, off);
}

// Random payloads cut from a few buffers, some parts repeated; any range of
// the payload, split along its segments (and re-joined where memory is
// contiguous), is found at an offset whose bytes are the write's.
TEST(PayloadIndex, RandomRangesAreFoundWithTheirBytes)
{
  std::mt19937_64 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> bufs(1 + rng() % 4);
    for (auto& b : bufs) {
      b.resize(1 + rng() % 200);
      for (auto& c : b) {
        c = char(rng());
      }
    }
    PayloadIndex p;
    std::vector<Span> segs;
    std::string bytes;
    const int n = 1 + rng() % 12;
    for (int i = 0; i < n; ++i) {
      const std::string& b = bufs[rng() % bufs.size()];
      const uint64_t s = rng() % b.size();
      const uint64_t l = 1 + rng() % (b.size() - s);
      p.add(b.data() + s, l);
      segs.push_back({b.data() + s, l});
      bytes.append(b.data() + s, l);
    }
    ASSERT_EQ(bytes.size(), p.length());
    const uint64_t from = rng() % bytes.size();
    const uint64_t len = 1 + rng() % (bytes.size() - from);
    // The write's spans: the payload's segments over [from, from + len).
    std::vector<Span> w;
    uint64_t at = 0;
    for (const Span& s : segs) {
      const uint64_t a = std::max(at, from), e = std::min(at + s.second, from + len);
      if (a < e) {
        const char* q = s.first + (a - at);
        if (!w.empty() && w.back().first + w.back().second == q) {
          w.back().second += e - a;
        } else {
          w.push_back({q, e - a});
        }
      }
      at += s.second;
    }
    uint64_t off = 0;
    ASSERT_TRUE(p.find(w, &off)) << "round " << round;
    std::string want;
    for (const Span& s : w) {
      want.append(s.first, s.second);
    }
    ASSERT_LE(off + len, bytes.size());
    EXPECT_EQ(want, bytes.substr(off, len)) << "round " << round;
  }
}
