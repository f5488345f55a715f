// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: unit tests of the HTMLL merge cache, one rule per test.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/htmll.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace mim;

namespace {

constexpr auto MERGED = InsertResult::MERGED;

// A write of `len` bytes of `fill`.
DataRef bytes(uint64_t len, char fill)
{
  return DataRef::copy_of(std::string(len, fill));
}

HtmllConfig small_config()
{
  HtmllConfig c;
  c.slots = 8;
  c.blocks = 4;
  c.block_size = 1 << 16;
  c.max_bytes = 1 << 20;
  return c;
}

// (offset, length, sn, fill) of each extent; fill is the byte every byte of
// the extent must have (every test write is uniform).
using Want = std::vector<std::tuple<uint64_t, uint64_t, sn_t, char>>;

void expect_extents(const Want& want, const std::vector<CachedExtent>& got)
{
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto [off, len, sn, fill] = want[i];
    EXPECT_EQ(off, got[i].offset) << "extent " << i;
    EXPECT_EQ(len, got[i].data.length) << "extent " << i;
    EXPECT_EQ(sn, got[i].sn) << "extent " << i;
    EXPECT_EQ(std::string(len, fill), got[i].data.view()) << "extent " << i;
  }
}

std::vector<CachedExtent> all(const Htmll& h, std::string_view cid,
                              std::string_view oid)
{
  std::vector<CachedExtent> v;
  h.lookup(cid, oid, 0, UINT64_MAX, &v);
  return v;
}

}  // namespace

TEST(HtmllConfig, Validate)
{
  std::string err;
  EXPECT_EQ(0, HtmllConfig::validate(HtmllConfig(), &err)) << err;
  EXPECT_EQ(0, HtmllConfig::validate(small_config(), &err)) << err;

  auto reject = [](HtmllConfig c, const std::string& field) {
    std::string err;
    EXPECT_EQ(-EINVAL, HtmllConfig::validate(c, &err)) << field;
    EXPECT_NE(std::string::npos, err.find(field)) << err;
  };
  HtmllConfig c;
  c = HtmllConfig(); c.slots = 0; reject(c, "slots");
  c = HtmllConfig(); c.slots = (1 << 24) + 1; reject(c, "slots");
  c = HtmllConfig(); c.blocks = 0; reject(c, "blocks");
  c = HtmllConfig(); c.blocks = (1 << 24) + 1; reject(c, "blocks");
  c = HtmllConfig(); c.block_size = 0; reject(c, "block_size");
  c = HtmllConfig(); c.block_size = 2048; reject(c, "block_size");
  c = HtmllConfig(); c.block_size = 12288; reject(c, "block_size");  // not a power of two
  c = HtmllConfig(); c.block_size = uint64_t(1) << 31; c.max_bytes = uint64_t(1) << 32;
  reject(c, "block_size");
  c = HtmllConfig(); c.max_bytes = c.block_size - 1; reject(c, "max_bytes");
  c = HtmllConfig(); c.max_slots = c.slots - 1; reject(c, "max_slots");
  c = HtmllConfig(); c.max_slots = (1 << 24) + 1; reject(c, "max_slots");
  c = HtmllConfig(); c.max_blocks = c.blocks - 1; reject(c, "max_blocks");
  c = HtmllConfig(); c.max_blocks = (1 << 24) + 1; reject(c, "max_blocks");
  c = HtmllConfig(); c.max_slots = c.slots; c.max_blocks = 1 << 24;
  EXPECT_EQ(0, HtmllConfig::validate(c, &err)) << err;
  c = HtmllConfig(); c.slots = 1 << 24; c.blocks = 1 << 24; c.block_size = 1 << 30;
  c.max_bytes = 1 << 30;
  EXPECT_EQ(0, HtmllConfig::validate(c, &err)) << err;
}

TEST(Htmll, ToString)
{
  EXPECT_STREQ("merged", to_string(InsertResult::MERGED));
  EXPECT_STREQ("direct_no_slot", to_string(InsertResult::DIRECT_NO_SLOT));
  EXPECT_STREQ("direct_no_block", to_string(InsertResult::DIRECT_NO_BLOCK));
  EXPECT_STREQ("direct_beyond_block", to_string(InsertResult::DIRECT_BEYOND_BLOCK));
  EXPECT_STREQ("direct_memory_cap", to_string(InsertResult::DIRECT_MEMORY_CAP));
}

TEST(Htmll, InsertAndLookup)
{
  Htmll h(small_config());
  EXPECT_FALSE(h.contains("c", "o"));
  EXPECT_EQ(MERGED, h.insert("c", "o", 1, 100, bytes(50, 'a')));
  EXPECT_TRUE(h.contains("c", "o"));
  EXPECT_FALSE(h.contains("c", "other"));
  EXPECT_FALSE(h.contains("d", "o"));
  expect_extents({{100, 50, 1, 'a'}}, all(h, "c", "o"));
  HtmllStats s = h.stats();
  EXPECT_EQ(1u, s.slots_used);
  EXPECT_EQ(1u, s.blocks_used);
  EXPECT_EQ(50u, s.bytes);
  EXPECT_EQ(1u, s.extents);
}

TEST(Htmll, SlotsOpenAddressingAndNoSlot)
{
  HtmllConfig c = small_config();
  c.slots = 4;
  Htmll h(c);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(MERGED, h.insert("c", "o" + std::to_string(i), i + 1, 0, bytes(1, 'x')));
  }
  EXPECT_EQ(4u, h.stats().slots_used);
  // Table full: a new oid goes direct; present oids keep their slot, in any
  // collection (same slot, another block).
  EXPECT_EQ(InsertResult::DIRECT_NO_SLOT, h.insert("c", "new", 9, 0, bytes(1, 'x')));
  EXPECT_EQ(MERGED, h.insert("c", "o2", 10, 1, bytes(1, 'y')));
  EXPECT_EQ(MERGED, h.insert("d", "o2", 11, 0, bytes(1, 'z')));
  HtmllStats s = h.stats();
  EXPECT_EQ(4u, s.slots_used);
  EXPECT_EQ(5u, s.blocks_used);
  EXPECT_EQ(1u, s.direct_no_slot);
  // Taking one block of o2 keeps its slot (it still has the other block);
  // taking o3's only block frees a slot for the new oid.
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "o2", &st));
  EXPECT_EQ(InsertResult::DIRECT_NO_SLOT, h.insert("c", "new", 12, 0, bytes(1, 'x')));
  ASSERT_TRUE(h.take_object("c", "o3", &st));
  EXPECT_EQ(MERGED, h.insert("c", "new", 13, 0, bytes(1, 'x')));
  EXPECT_TRUE(h.contains("d", "o2"));
  EXPECT_TRUE(h.contains("c", "o0"));
  EXPECT_TRUE(h.contains("c", "new"));
}

TEST(Htmll, SlotTableGrowsUpToMaxSlots)
{
  // 4 slots growing to 64: every new oid is merged until 64 are cached
  // (the table doubles at 7/8 load: 4 -> 8 -> 16 -> 32 -> 64), then the
  // 65th goes direct; every oid stays findable across the rehashes.
  HtmllConfig c = small_config();
  c.slots = 4;
  c.max_slots = 64;
  Htmll h(c);
  EXPECT_EQ(4u, h.stats().table_slots);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(MERGED, h.insert("c", "o" + std::to_string(i), i + 1, i, bytes(1, 'a' + i % 26)))
      << i;
  }
  HtmllStats s = h.stats();
  EXPECT_EQ(64u, s.slots_used);
  EXPECT_EQ(64u, s.table_slots);
  EXPECT_EQ(4u, s.table_grows);
  EXPECT_EQ(0u, s.direct_no_slot);
  EXPECT_EQ(InsertResult::DIRECT_NO_SLOT, h.insert("c", "o64", 99, 0, bytes(1, 'x')));
  for (int i = 0; i < 64; ++i) {
    expect_extents({{uint64_t(i), 1, sn_t(i + 1), char('a' + i % 26)}},
                   all(h, "c", "o" + std::to_string(i)));
  }
  // A freed slot is reused at the cap, as in a fixed table.
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "o7", &st));
  EXPECT_EQ(MERGED, h.insert("c", "o64", 100, 0, bytes(1, 'x')));
  EXPECT_EQ(4u, h.stats().table_grows);
}

TEST(Htmll, RefusedWriteDoesNotGrowTheTable)
{
  // A write refused for another reason (beyond the block) leaves the
  // geometry alone: DIRECT_* changes only the counters.
  HtmllConfig c = small_config();
  c.slots = 1;
  c.max_slots = 16;
  Htmll h(c);
  ASSERT_EQ(MERGED, h.insert("c", "a", 1, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK,
            h.insert("c", "b", 2, c.block_size, bytes(1, 'x')));
  EXPECT_EQ(1u, h.stats().table_slots);
  EXPECT_EQ(0u, h.stats().table_grows);
  EXPECT_EQ(MERGED, h.insert("c", "b", 3, 0, bytes(1, 'x')));
  EXPECT_EQ(2u, h.stats().table_slots);
}

TEST(Htmll, PositionsGrowUpToMaxBlocks)
{
  HtmllConfig c = small_config();
  c.blocks = 2;
  c.max_blocks = 5;
  Htmll h(c);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(MERGED, h.insert("c" + std::to_string(i), "o", i + 1, 0, bytes(1, 'a' + i)))
      << i;
  }
  HtmllStats s = h.stats();
  EXPECT_EQ(5u, s.positions);  // 2 -> 4 -> 5 (capped)
  EXPECT_EQ(2u, s.position_grows);
  EXPECT_EQ(5u, s.blocks_used);
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c5", "o", 9, 0, bytes(1, 'x')));
  for (int i = 0; i < 5; ++i) {
    expect_extents({{0, 1, sn_t(i + 1), char('a' + i)}}, all(h, "c" + std::to_string(i), "o"));
  }
  // The next generation binds the 5 most called collections: refused calls
  // count, so c5 (2 calls) comes first and c4 loses the tie among c0-c4
  // (1 call each, broken by name).
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c5", "p", 10, 0, bytes(1, 'x')));
  FlushOrder order;
  ASSERT_TRUE(h.freeze(&order));
  auto top = h.top_collections();
  ASSERT_EQ(5u, top.size());
  EXPECT_EQ("c5", top[0].first);
  EXPECT_EQ("c3", top[4].first);
  EXPECT_EQ(5u, h.stats().positions);
  EXPECT_EQ(MERGED, h.insert("c5", "o", 11, 0, bytes(1, 'y')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c4", "o", 12, 0, bytes(1, 'y')));
}

TEST(Htmll, NewGenerationKeepsTheGrownGeometry)
{
  // Gen A grows to 32 slots and is frozen; gen B starts at 32 (no rehash
  // for the same working set) and grows to 64; after A is flushed and
  // reused as the spare, the next generation is grown to B's 64.
  HtmllConfig c = small_config();
  c.slots = 4;
  c.max_slots = 1024;
  c.max_bytes = 1 << 30;
  Htmll h(c);
  sn_t sn = 0;
  auto fill = [&](int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(MERGED, h.insert("c", "o" + std::to_string(i), ++sn, 0, bytes(1, 'x')));
    }
  };
  fill(20);
  EXPECT_EQ(32u, h.stats().table_slots);
  const uint64_t grows_a = h.stats().table_grows;
  FlushOrder order;
  ASSERT_TRUE(h.freeze(&order));
  EXPECT_EQ(32u, h.stats().table_slots);
  fill(20);
  EXPECT_EQ(grows_a, h.stats().table_grows);
  fill(50);
  EXPECT_EQ(64u, h.stats().table_slots);
  for (const auto& [cid, oids] : order.collections) {
    for (const auto& oid : oids) {
      ObjectState st;
      ASSERT_TRUE(h.take_frozen(cid, oid, &st));
    }
  }
  h.end_flush();
  ASSERT_TRUE(h.freeze(&order));  // the spare (32) becomes active, grown to 64
  EXPECT_EQ(64u, h.stats().table_slots);
  const uint64_t grows_b = h.stats().table_grows;
  fill(50);
  EXPECT_EQ(grows_b, h.stats().table_grows);
  EXPECT_EQ(50u, h.stats().slots_used);
}

TEST(Htmll, SlotTableChurnMatchesModel)
{
  // A full table with many collisions, churned by take/insert: every present
  // oid stays findable (checks Robin Hood insertion and backward-shift
  // deletion), and a free slot is always found while one exists.
  HtmllConfig c = small_config();
  c.slots = 61;  // not a power of two
  c.max_bytes = 1 << 30;
  Htmll h(c);
  std::mt19937_64 rng(5);
  std::set<std::string> present;
  sn_t sn = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string oid = "obj" + std::to_string(rng() % 200);
    if (rng() % 3 == 0) {
      ObjectState st;
      ASSERT_EQ(present.count(oid) == 1, h.take_object("c", oid, &st)) << oid;
      present.erase(oid);
    } else {
      InsertResult r = h.insert("c", oid, ++sn, 0, bytes(1, 'x'));
      if (present.count(oid) || present.size() < c.slots) {
        ASSERT_EQ(MERGED, r) << oid;
        present.insert(oid);
      } else {
        ASSERT_EQ(InsertResult::DIRECT_NO_SLOT, r) << oid;
      }
    }
    if (i % 997 == 0) {
      for (int k = 0; k < 200; ++k) {
        const std::string o = "obj" + std::to_string(k);
        ASSERT_EQ(present.count(o) == 1, h.contains("c", o)) << o;
      }
    }
    ASSERT_EQ(present.size(), h.stats().slots_used);
  }
}

TEST(Htmll, BlockPositionsFirstUseBinding)
{
  HtmllConfig c = small_config();
  c.blocks = 2;
  Htmll h(c);
  EXPECT_TRUE(h.top_collections().empty());
  EXPECT_EQ(MERGED, h.insert("a", "o", 1, 0, bytes(1, 'x')));
  EXPECT_EQ(MERGED, h.insert("b", "o", 2, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c", "o", 3, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c", "p", 4, 0, bytes(1, 'x')));
  EXPECT_EQ(MERGED, h.insert("b", "p", 5, 0, bytes(1, 'x')));
  auto top = h.top_collections();
  ASSERT_EQ(2u, top.size());
  EXPECT_EQ(std::make_pair(std::string("a"), uint64_t(1)), top[0]);
  EXPECT_EQ(std::make_pair(std::string("b"), uint64_t(2)), top[1]);
  EXPECT_EQ(2u, h.stats().direct_no_block);
}

TEST(Htmll, PositionBoundOnlyByMergedWrite)
{
  HtmllConfig c = small_config();
  c.blocks = 1;
  Htmll h(c);
  // a's first write goes direct (beyond the block): a does not take the
  // only position, b's merged write does.
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK,
            h.insert("a", "o", 1, c.block_size, bytes(1, 'x')));
  EXPECT_TRUE(h.top_collections().empty());
  EXPECT_EQ(MERGED, h.insert("b", "o", 2, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("a", "o", 3, 0, bytes(1, 'x')));
}

TEST(Htmll, RebindToTopByFrequencyAtFreeze)
{
  HtmllConfig c = small_config();
  c.blocks = 2;
  Htmll h(c);
  sn_t sn = 0;
  // Interval 1: a and b bound first; c is written most, all direct (no
  // block), but direct writes count too.
  ASSERT_EQ(MERGED, h.insert("a", "o", ++sn, 0, bytes(1, 'x')));
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(MERGED, h.insert("b", "o", ++sn, 0, bytes(1, 'x')));
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("c", "o", ++sn, 0, bytes(1, 'x')));
  }
  FlushOrder order;
  ASSERT_TRUE(h.freeze(&order));
  // Top 2 by frequency: c (3), b (2); counts reset.
  auto top = h.top_collections();
  ASSERT_EQ(2u, top.size());
  EXPECT_EQ(std::make_pair(std::string("c"), uint64_t(0)), top[0]);
  EXPECT_EQ(std::make_pair(std::string("b"), uint64_t(0)), top[1]);
  EXPECT_EQ(MERGED, h.insert("c", "o", ++sn, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("a", "o", ++sn, 0, bytes(1, 'x')));
  // The frozen generation keeps its own bindings: a's frozen block is there.
  EXPECT_TRUE(h.contains("a", "o"));
  ObjectState st;
  EXPECT_TRUE(h.take_frozen("a", "o", &st));
  EXPECT_TRUE(h.take_frozen("b", "o", &st));
  h.end_flush();

  // Interval 2: c 1 call, a 1 call (direct): tie broken by cid -> a, c.
  ASSERT_TRUE(h.freeze(&order));
  top = h.top_collections();
  ASSERT_EQ(2u, top.size());
  EXPECT_EQ("a", top[0].first);
  EXPECT_EQ("c", top[1].first);
}

TEST(Htmll, FewCollectionsLeaveFreePositionsAfterFreeze)
{
  HtmllConfig c = small_config();
  c.blocks = 3;
  Htmll h(c);
  ASSERT_EQ(MERGED, h.insert("a", "o", 1, 0, bytes(1, 'x')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(1u, h.top_collections().size());
  // Two positions still unbound: new collections bind on first use.
  EXPECT_EQ(MERGED, h.insert("x", "o", 2, 0, bytes(1, 'x')));
  EXPECT_EQ(MERGED, h.insert("y", "o", 3, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("z", "o", 4, 0, bytes(1, 'x')));
  // A collection that was bound but not written in the interval loses its
  // position at the next freeze.
  ObjectState st;
  ASSERT_TRUE(h.take_frozen("a", "o", &st));
  h.end_flush();
  ASSERT_TRUE(h.freeze(nullptr));
  auto top = h.top_collections();
  ASSERT_EQ(3u, top.size());  // x, y, z wrote once each; a not at all
  EXPECT_EQ("x", top[0].first);
  EXPECT_EQ("y", top[1].first);
  EXPECT_EQ("z", top[2].first);
}

TEST(Htmll, BeyondBlock)
{
  HtmllConfig c = small_config();
  c.block_size = 4096;
  c.max_bytes = 1 << 20;
  Htmll h(c);
  EXPECT_EQ(MERGED, h.insert("c", "o", 1, 4000, bytes(96, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK, h.insert("c", "o", 2, 4000, bytes(97, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK, h.insert("c", "o", 3, 4096, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK,
            h.insert("c", "o", 4, UINT64_MAX - 1, bytes(4, 'x')));  // no wrap
  EXPECT_EQ(MERGED, h.insert("c", "o", 5, 0, bytes(4096, 'x')));
  EXPECT_EQ(3u, h.stats().direct_beyond_block);
}

TEST(Htmll, MemoryCapCountsBothGenerations)
{
  HtmllConfig c = small_config();
  c.block_size = 4096;
  c.max_bytes = 8192;
  Htmll h(c);
  ASSERT_EQ(MERGED, h.insert("c", "a", 1, 0, bytes(4096, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "b", 2, 0, bytes(4095, 'b')));
  // Exactly at the cap is allowed; one byte past it is not.
  ASSERT_EQ(MERGED, h.insert("c", "x", 3, 0, bytes(1, 'x')));
  EXPECT_EQ(InsertResult::DIRECT_MEMORY_CAP, h.insert("c", "y", 4, 0, bytes(1, 'y')));
  // An overwrite is charged only for the bytes it adds.
  EXPECT_EQ(MERGED, h.insert("c", "a", 5, 100, bytes(200, 'z')));
  EXPECT_EQ(InsertResult::DIRECT_MEMORY_CAP,
            h.insert("c", "b", 6, 4000, bytes(96, 'b')));  // 95 of 96 cached
  EXPECT_EQ(MERGED, h.insert("c", "b", 7, 4000, bytes(95, 'b')));
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "x", &st));  // frees 1 byte
  EXPECT_EQ(MERGED, h.insert("c", "b", 8, 4000, bytes(96, 'b')));
  ASSERT_TRUE(h.take_object("c", "b", &st));  // frees 4096
  ASSERT_EQ(MERGED, h.insert("c", "b", 9, 0, bytes(2048, 'b')));
  ASSERT_TRUE(h.freeze(nullptr));
  // Active is empty, frozen holds 6144: only 2048 more fit.
  HtmllStats s = h.stats();
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(6144u, s.frozen_bytes);
  EXPECT_EQ(InsertResult::DIRECT_MEMORY_CAP, h.insert("c", "y", 10, 0, bytes(2049, 'y')));
  EXPECT_EQ(MERGED, h.insert("c", "y", 11, 0, bytes(2048, 'y')));
  EXPECT_EQ(InsertResult::DIRECT_MEMORY_CAP, h.insert("c", "z", 12, 0, bytes(1, 'z')));
  // Draining the frozen generation frees room.
  ASSERT_TRUE(h.take_frozen("c", "a", &st));
  EXPECT_EQ(MERGED, h.insert("c", "z", 13, 0, bytes(4096, 'z')));
  s = h.stats();
  EXPECT_EQ(c.max_bytes, s.bytes + s.frozen_bytes);
  EXPECT_EQ(4u, s.direct_memory_cap);
}

TEST(Htmll, OverwriteSemantics)
{
  struct Case {
    const char* name;
    std::vector<std::tuple<uint64_t, uint64_t, char>> writes;  // sn = index + 1
    Want want;
  };
  const std::vector<Case> cases = {
    {"partial overlap at the front of the new write",
     {{0, 100, 'a'}, {50, 100, 'b'}},
     {{0, 50, 1, 'a'}, {50, 100, 2, 'b'}}},
    {"partial overlap at the back of the new write",
     {{100, 100, 'a'}, {50, 100, 'b'}},
     {{50, 100, 2, 'b'}, {150, 50, 1, 'a'}}},
    {"exact",
     {{0, 100, 'a'}, {0, 100, 'b'}},
     {{0, 100, 2, 'b'}}},
    {"new inside old",
     {{0, 300, 'a'}, {100, 100, 'b'}},
     {{0, 100, 1, 'a'}, {100, 100, 2, 'b'}, {200, 100, 1, 'a'}}},
    {"old inside new",
     {{100, 100, 'a'}, {0, 300, 'b'}},
     {{0, 300, 2, 'b'}}},
    {"same start, shorter",
     {{0, 300, 'a'}, {0, 100, 'b'}},
     {{0, 100, 2, 'b'}, {100, 200, 1, 'a'}}},
    {"same end, shorter",
     {{0, 300, 'a'}, {200, 100, 'b'}},
     {{0, 200, 1, 'a'}, {200, 100, 2, 'b'}}},
    {"same start, longer",
     {{0, 100, 'a'}, {0, 300, 'b'}},
     {{0, 300, 2, 'b'}}},
    {"adjacent, no overlap",
     {{0, 100, 'a'}, {100, 100, 'b'}, {300, 10, 'c'}},
     {{0, 100, 1, 'a'}, {100, 100, 2, 'b'}, {300, 10, 3, 'c'}}},
    {"spanning several extents, cutting both ends",
     {{0, 100, 'a'}, {150, 100, 'b'}, {300, 100, 'c'}, {450, 50, 'd'}, {50, 410, 'e'}},
     {{0, 50, 1, 'a'}, {50, 410, 5, 'e'}, {460, 40, 4, 'd'}}},
    {"spanning several extents exactly",
     {{0, 100, 'a'}, {100, 100, 'b'}, {200, 100, 'c'}, {0, 300, 'd'}},
     {{0, 300, 4, 'd'}}},
    {"spanning from a hole into an extent",
     {{100, 100, 'a'}, {300, 100, 'b'}, {0, 350, 'c'}},
     {{0, 350, 3, 'c'}, {350, 50, 2, 'b'}}},
    {"split twice",
     {{0, 1000, 'a'}, {100, 100, 'b'}, {500, 100, 'c'}, {150, 400, 'd'}},
     {{0, 100, 1, 'a'}, {100, 50, 2, 'b'}, {150, 400, 4, 'd'},
      {550, 50, 3, 'c'}, {600, 400, 1, 'a'}}},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    Htmll h(small_config());
    sn_t sn = 0;
    for (auto [off, len, fill] : tc.writes) {
      ASSERT_EQ(MERGED, h.insert("c", "o", ++sn, off, bytes(len, fill)));
    }
    expect_extents(tc.want, all(h, "c", "o"));
    uint64_t want_bytes = 0;
    for (const auto& w : tc.want) {
      want_bytes += std::get<1>(w);
    }
    HtmllStats s = h.stats();
    EXPECT_EQ(want_bytes, s.bytes);
    EXPECT_EQ(tc.want.size(), s.extents);
    // take_object returns the same extents, and every merged sn once.
    ObjectState st;
    ASSERT_TRUE(h.take_object("c", "o", &st));
    expect_extents(tc.want, st.extents);
    std::vector<sn_t> want_sns;
    for (sn_t i = 1; i <= sn; ++i) {
      want_sns.push_back(i);
    }
    EXPECT_EQ(want_sns, st.sns);
    s = h.stats();
    EXPECT_EQ(0u, s.bytes);
    EXPECT_EQ(0u, s.extents);
    EXPECT_EQ(0u, s.blocks_used);
    EXPECT_EQ(0u, s.slots_used);
  }
}

TEST(Htmll, LaterCallWinsEvenWithSmallerSn)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 10, 0, bytes(100, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "o", 5, 50, bytes(100, 'b')));
  expect_extents({{0, 50, 10, 'a'}, {50, 100, 5, 'b'}}, all(h, "c", "o"));
}

TEST(Htmll, SnsKeepMultiplicityAcrossGenerations)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 7, 0, bytes(10, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "o", 7, 10, bytes(10, 'b')));  // one sn, two writes
  ASSERT_EQ(MERGED, h.insert("c", "o", 8, 0, bytes(10, 'c')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(MERGED, h.insert("c", "o", 9, 5, bytes(10, 'd')));
  ASSERT_EQ(MERGED, h.insert("c", "o", 9, 30, bytes(1, 'e')));
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "o", &st));
  EXPECT_EQ((std::vector<sn_t>{7, 7, 8, 9, 9}), st.sns);
  expect_extents({{0, 5, 8, 'c'}, {5, 10, 9, 'd'}, {15, 5, 7, 'b'}, {30, 1, 9, 'e'}},
                 st.extents);
}

TEST(Htmll, LookupClipsAndActiveWinsOverFrozen)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(100, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 200, bytes(100, 'b')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(MERGED, h.insert("c", "o", 3, 50, bytes(20, 'c')));
  ASSERT_EQ(MERGED, h.insert("c", "o", 4, 250, bytes(100, 'd')));
  std::vector<CachedExtent> v;
  h.lookup("c", "o", 20, 60, &v);  // [20, 80)
  expect_extents({{20, 30, 1, 'a'}, {50, 20, 3, 'c'}, {70, 10, 1, 'a'}}, v);
  h.lookup("c", "o", 90, 200, &v);  // [90, 290)
  expect_extents({{90, 10, 1, 'a'}, {200, 50, 2, 'b'}, {250, 40, 4, 'd'}}, v);
  h.lookup("c", "o", 100, 100, &v);  // the hole [100, 200)
  EXPECT_TRUE(v.empty());
  h.lookup("c", "o", 0, 0, &v);
  EXPECT_TRUE(v.empty());
  h.lookup("c", "nobody", 0, 1000, &v);
  EXPECT_TRUE(v.empty());
  // Only the frozen generation has it / only the active one.
  ASSERT_EQ(MERGED, h.insert("c", "p", 5, 10, bytes(10, 'p')));
  h.lookup("c", "p", 0, 1000, &v);
  expect_extents({{10, 10, 5, 'p'}}, v);
}

TEST(Htmll, CachedEnd)
{
  Htmll h(small_config());
  uint64_t end = 12345;
  EXPECT_FALSE(h.cached_end("c", "o", &end));
  EXPECT_EQ(12345u, end);
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(100, 'a')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 10, bytes(10, 'b')));
  ASSERT_TRUE(h.cached_end("c", "o", &end));
  EXPECT_EQ(100u, end);  // the frozen generation's end is higher
  ASSERT_EQ(MERGED, h.insert("c", "o", 3, 200, bytes(100, 'c')));
  ASSERT_TRUE(h.cached_end("c", "o", &end));
  EXPECT_EQ(300u, end);
  ObjectState st;
  ASSERT_TRUE(h.take_frozen("c", "o", &st));
  ASSERT_TRUE(h.cached_end("c", "o", &end));
  EXPECT_EQ(300u, end);
}

TEST(Htmll, TakeObjectFromBothGenerations)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(100, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "other", 2, 0, bytes(10, 'z')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(MERGED, h.insert("c", "o", 3, 40, bytes(20, 'b')));
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "o", &st));
  expect_extents({{0, 40, 1, 'a'}, {40, 20, 3, 'b'}, {60, 40, 1, 'a'}}, st.extents);
  EXPECT_EQ((std::vector<sn_t>{1, 3}), st.sns);
  EXPECT_FALSE(h.contains("c", "o"));
  EXPECT_TRUE(all(h, "c", "o").empty());
  ObjectState again;
  EXPECT_FALSE(h.take_object("c", "o", &again));
  EXPECT_FALSE(h.take_frozen("c", "o", &again));  // the flusher finds it gone
  HtmllStats s = h.stats();
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(10u, s.frozen_bytes);
  EXPECT_EQ(1u, s.frozen_blocks);
  ASSERT_TRUE(h.take_frozen("c", "other", &st));
  h.end_flush();
  EXPECT_FALSE(h.has_frozen());
}

TEST(Htmll, TakeFrozenLeavesActive)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(100, 'a')));
  ASSERT_TRUE(h.freeze(nullptr));
  ObjectState st;
  EXPECT_FALSE(h.take_frozen("c", "nobody", &st));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 50, bytes(100, 'b')));
  ASSERT_TRUE(h.take_frozen("c", "o", &st));
  expect_extents({{0, 100, 1, 'a'}}, st.extents);
  EXPECT_EQ((std::vector<sn_t>{1}), st.sns);
  EXPECT_FALSE(h.take_frozen("c", "o", &st));
  expect_extents({{50, 100, 2, 'b'}}, all(h, "c", "o"));
  h.end_flush();
  expect_extents({{50, 100, 2, 'b'}}, all(h, "c", "o"));
  // No frozen generation at all.
  EXPECT_FALSE(h.take_frozen("c", "o", &st));
}

TEST(Htmll, FreezeRefusedWhileFrozenExists)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(1, 'a')));
  EXPECT_FALSE(h.has_frozen());
  ASSERT_TRUE(h.freeze(nullptr));
  EXPECT_TRUE(h.has_frozen());
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 0, bytes(1, 'b')));
  FlushOrder order;
  order.blocks = 77;
  EXPECT_FALSE(h.freeze(&order));
  EXPECT_EQ(77u, order.blocks);  // untouched
  EXPECT_EQ(1u, h.stats().bytes);  // the active generation is untouched too
  ObjectState st;
  ASSERT_TRUE(h.take_frozen("c", "o", &st));
  h.end_flush();
  EXPECT_FALSE(h.has_frozen());
  ASSERT_TRUE(h.freeze(&order));
  EXPECT_EQ(1u, order.blocks);
  EXPECT_EQ(2u, h.stats().freezes);
}

TEST(Htmll, FlushOrderGroupsByCollection)
{
  HtmllConfig c = small_config();
  c.slots = 16;
  Htmll h(c);
  sn_t sn = 0;
  ASSERT_EQ(MERGED, h.insert("small", "o9", ++sn, 0, bytes(10, 'x')));
  ASSERT_EQ(MERGED, h.insert("big", "o2", ++sn, 0, bytes(1000, 'x')));
  ASSERT_EQ(MERGED, h.insert("big", "o1", ++sn, 0, bytes(1000, 'x')));
  ASSERT_EQ(MERGED, h.insert("mid", "o1", ++sn, 0, bytes(500, 'x')));
  ASSERT_EQ(MERGED, h.insert("small", "o3", ++sn, 0, bytes(10, 'x')));
  ASSERT_EQ(MERGED, h.insert("big", "o1", ++sn, 500, bytes(1000, 'x')));  // 500 new
  // A collection whose only object was taken is not listed.
  ASSERT_EQ(MERGED, h.insert("gone", "o1", ++sn, 0, bytes(5000, 'x')));
  ObjectState st;
  ASSERT_TRUE(h.take_object("gone", "o1", &st));
  FlushOrder order;
  ASSERT_TRUE(h.freeze(&order));
  ASSERT_EQ(3u, order.collections.size());
  EXPECT_EQ("big", order.collections[0].first);
  EXPECT_EQ((std::vector<std::string>{"o1", "o2"}), order.collections[0].second);
  EXPECT_EQ("mid", order.collections[1].first);
  EXPECT_EQ((std::vector<std::string>{"o1"}), order.collections[1].second);
  EXPECT_EQ("small", order.collections[2].first);
  EXPECT_EQ((std::vector<std::string>{"o3", "o9"}), order.collections[2].second);
  EXPECT_EQ(5u, order.blocks);
  EXPECT_EQ(2500u + 500 + 20, order.bytes);
  HtmllStats s = h.stats();
  EXPECT_EQ(5u, s.frozen_blocks);
  EXPECT_EQ(4u, s.frozen_slots);  // o1 (in big and mid), o2, o3, o9
}

TEST(Htmll, StatsCounters)
{
  HtmllConfig c = small_config();
  c.slots = 1;
  c.blocks = 1;
  c.block_size = 4096;
  c.max_bytes = 4096;
  Htmll h(c);
  EXPECT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(4000, 'a')));
  EXPECT_EQ(InsertResult::DIRECT_NO_SLOT, h.insert("c", "p", 2, 0, bytes(1, 'a')));
  EXPECT_EQ(InsertResult::DIRECT_NO_BLOCK, h.insert("d", "o", 3, 0, bytes(1, 'a')));
  EXPECT_EQ(InsertResult::DIRECT_BEYOND_BLOCK, h.insert("c", "o", 4, 4096, bytes(1, 'a')));
  EXPECT_EQ(MERGED, h.insert("c", "o", 5, 4000, bytes(96, 'a')));  // fills the cap exactly
  EXPECT_EQ(MERGED, h.insert("c", "o", 6, 0, bytes(1, 'a')));      // overwrite at the cap
  HtmllStats s = h.stats();
  EXPECT_EQ(6u, s.inserts);
  EXPECT_EQ(3u, s.merged);
  EXPECT_EQ(1u, s.direct_no_slot);
  EXPECT_EQ(1u, s.direct_no_block);
  EXPECT_EQ(1u, s.direct_beyond_block);
  EXPECT_EQ(0u, s.direct_memory_cap);
  EXPECT_EQ(3u, s.extents);  // [0,1) [1,4000) [4000,4096)
  EXPECT_EQ(4096u, s.bytes);
  EXPECT_EQ(1u, s.slots_used);
  EXPECT_EQ(1u, s.blocks_used);
  EXPECT_EQ(0u, s.freezes);
  ASSERT_TRUE(h.freeze(nullptr));
  // The frozen 4096 bytes count against the cap.
  EXPECT_EQ(InsertResult::DIRECT_MEMORY_CAP, h.insert("c", "o", 7, 0, bytes(1, 'a')));
  s = h.stats();
  EXPECT_EQ(7u, s.inserts);
  EXPECT_EQ(1u, s.direct_memory_cap);
  EXPECT_EQ(1u, s.freezes);
  EXPECT_EQ(0u, s.slots_used);
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(1u, s.frozen_slots);
  EXPECT_EQ(1u, s.frozen_blocks);
  EXPECT_EQ(4096u, s.frozen_bytes);
  EXPECT_EQ(3u, s.frozen_extents);
}

TEST(Htmll, EndFlushForgetsWhatWasNotTaken)
{
#ifndef NDEBUG
  GTEST_SKIP() << "end_flush() asserts that everything was taken in debug builds";
#endif
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(10, 'a')));
  ASSERT_EQ(MERGED, h.insert("c", "p", 2, 0, bytes(10, 'a')));
  ASSERT_TRUE(h.freeze(nullptr));
  ObjectState st;
  ASSERT_TRUE(h.take_frozen("c", "o", &st));
  h.end_flush();
  EXPECT_FALSE(h.has_frozen());
  EXPECT_FALSE(h.contains("c", "p"));
  EXPECT_EQ(0u, h.stats().frozen_bytes);
  // And the cache works on: another freeze, new generations.
  ASSERT_EQ(MERGED, h.insert("c", "p", 3, 0, bytes(10, 'b')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_TRUE(h.take_frozen("c", "p", &st));
  expect_extents({{0, 10, 3, 'b'}}, st.extents);
  h.end_flush();
}

TEST(Htmll, GenerationsReusedAcrossManyCycles)
{
  Htmll h(small_config());
  sn_t sn = 0;
  for (int cycle = 0; cycle < 50; ++cycle) {
    for (int i = 0; i < 8; ++i) {
      ASSERT_EQ(MERGED, h.insert("c" + std::to_string(i % 3), "o" + std::to_string(i),
                                 ++sn, i * 10, bytes(10, 'a' + cycle % 26)));
    }
    FlushOrder order;
    ASSERT_TRUE(h.freeze(&order));
    size_t n = 0;
    ObjectState st;
    for (const auto& [cid, oids] : order.collections) {
      for (const auto& oid : oids) {
        ASSERT_TRUE(h.take_frozen(cid, oid, &st));
        ASSERT_EQ(1u, st.extents.size());
        EXPECT_EQ(char('a' + cycle % 26), st.extents[0].data.data[0]);
        ++n;
      }
    }
    EXPECT_EQ(8u, n);
    EXPECT_EQ(0u, h.stats().frozen_blocks);
    h.end_flush();
  }
}

TEST(Htmll, SameOidInSeveralCollections)
{
  Htmll h(small_config());
  ASSERT_EQ(MERGED, h.insert("a", "o", 1, 0, bytes(10, 'a')));
  ASSERT_EQ(MERGED, h.insert("b", "o", 2, 0, bytes(10, 'b')));
  EXPECT_EQ(1u, h.stats().slots_used);
  EXPECT_EQ(2u, h.stats().blocks_used);
  expect_extents({{0, 10, 1, 'a'}}, all(h, "a", "o"));
  expect_extents({{0, 10, 2, 'b'}}, all(h, "b", "o"));
  ObjectState st;
  ASSERT_TRUE(h.take_object("a", "o", &st));
  EXPECT_FALSE(h.contains("a", "o"));
  EXPECT_TRUE(h.contains("b", "o"));
  EXPECT_EQ(1u, h.stats().slots_used);
}

TEST(Htmll, InsertTakesObjectOnDirect)
{
  HtmllConfig c = small_config();
  c.block_size = 4096;
  Htmll h(c);
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, bytes(100, 'a')));
  ASSERT_TRUE(h.freeze(nullptr));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 50, bytes(100, 'b')));
  ObjectState taken;
  taken.sns = {999};
  // Merged: *taken untouched.
  ASSERT_EQ(MERGED, h.insert("c", "o", 3, 1000, bytes(1, 'c'), &taken));
  EXPECT_EQ((std::vector<sn_t>{999}), taken.sns);
  // Direct: both generations taken in the same call.
  ASSERT_EQ(InsertResult::DIRECT_BEYOND_BLOCK,
            h.insert("c", "o", 4, 4000, bytes(200, 'd'), &taken));
  expect_extents({{0, 50, 1, 'a'}, {50, 100, 2, 'b'}, {1000, 1, 3, 'c'}}, taken.extents);
  EXPECT_EQ((std::vector<sn_t>{1, 2, 3}), taken.sns);
  EXPECT_FALSE(h.contains("c", "o"));
  // Direct with nothing cached: empty state.
  ASSERT_EQ(InsertResult::DIRECT_BEYOND_BLOCK,
            h.insert("c", "o", 5, 4000, bytes(200, 'd'), &taken));
  EXPECT_TRUE(taken.extents.empty());
  EXPECT_TRUE(taken.sns.empty());
}

TEST(Htmll, MemoryGrowsWithBytesNotSlotsTimesBlocks)
{
  // N * M * block_size = 2^20 * 1024 * 4 MiB = 4 PiB if blocks were
  // preallocated. Construction must stay small.
  auto rss_kib = [] {
    std::ifstream f("/proc/self/statm");
    int64_t size = 0, resident = 0;
    f >> size >> resident;
    return resident * 4;  // 4 KiB pages
  };
  // Earlier tests in this process leave freed but resident heap pages that
  // the allocations below could reuse unseen, or that a trim could give
  // back mid-test (RSS going down): hand them back first, and keep the
  // differences signed.
  malloc_trim(0);
  const int64_t before = rss_kib();
  HtmllConfig c;
  c.slots = 1 << 20;
  c.blocks = 1024;
  c.block_size = 4 << 20;
  c.max_bytes = uint64_t(1) << 40;
  Htmll h(c);
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 123, bytes(10, 'x')));
  ASSERT_EQ(MERGED, h.insert("c999", "o", 2, 4 << 19, bytes(10, 'x')));
  HtmllStats s = h.stats();
  EXPECT_EQ(20u, s.bytes);
  EXPECT_EQ(2u, s.blocks_used);
  EXPECT_EQ(1u, s.slots_used);
  const int64_t one = rss_kib() - before;
  // A freeze allocates the second generation's table, still no blocks.
  ASSERT_TRUE(h.freeze(nullptr));
  const int64_t two = rss_kib() - before;
  std::printf("RSS growth: %" PRId64 " KiB after construction, %" PRId64
              " KiB after a freeze\n", one, two);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer shadow memory inflates RSS";
#endif
  // The slot table, 16 bytes per slot = 16 MiB here, is the only thing
  // proportional to N; nothing is proportional to M * block_size.
  EXPECT_LT(one, 24 * 1024) << "KiB";
  EXPECT_LT(two, 40 * 1024) << "KiB";
}

// A journal-only write is kept as a 32-byte record, not as the DataRef it
// came in: every extent handed out gets a JournalSource equal to the whole
// write's (position, length, crc), and its jpos moves with every cut.
TEST(Htmll, JournalOnlyWriteKeepsItsSourceThroughCuts)
{
  Htmll h(small_config());
  auto src = std::make_shared<JournalSource>();
  src->jpos = 1000;
  src->length = 12288;
  src->crc = 0xabcd1234;
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, DataRef::in_journal(src)));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 4096, bytes(4096, 'b')));  // the middle
  ASSERT_EQ(MERGED, h.insert("c", "o", 3, 0, bytes(100, 'c')));      // the head's head
  auto check = [&](const std::vector<CachedExtent>& v) {
    ASSERT_EQ(4u, v.size());
    // (offset, length, sn, jpos) of the journal-only pieces.
    const std::vector<std::tuple<uint64_t, uint64_t, sn_t, uint64_t>> want = {
      {100, 3996, 1, 1100}, {8192, 4096, 1, 9192}};
    for (size_t k = 0; k < 2; ++k) {
      const CachedExtent& e = v[k == 0 ? 1 : 3];
      auto [off, len, sn, jpos] = want[k];
      EXPECT_EQ(off, e.offset);
      EXPECT_EQ(len, e.data.length);
      EXPECT_EQ(sn, e.sn);
      EXPECT_FALSE(e.data.resident());
      EXPECT_EQ(jpos, e.data.jpos);
      const JournalSource* s = e.data.source();
      ASSERT_NE(nullptr, s);
      EXPECT_EQ(1000u, s->jpos);
      EXPECT_EQ(12288u, s->length);
      EXPECT_EQ(0xabcd1234u, s->crc);
    }
    EXPECT_EQ(std::string(100, 'c'), v[0].data.view());
    EXPECT_EQ(std::string(4096, 'b'), v[2].data.view());
  };
  check(all(h, "c", "o"));
  std::vector<CachedExtent> part;
  h.lookup("c", "o", 8200, 8, &part);  // a slice of a piece
  ASSERT_EQ(1u, part.size());
  EXPECT_EQ(9200u, part[0].data.jpos);
  EXPECT_EQ(8u, part[0].data.length);
  EXPECT_EQ(1000u, part[0].data.source()->jpos);
  uint64_t end = 0;
  ASSERT_TRUE(h.cached_end("c", "o", &end));
  EXPECT_EQ(12288u, end);
  // The cache keeps no reference to the source it was given.
  EXPECT_EQ(1, src.use_count());
  ObjectState st;
  ASSERT_TRUE(h.take_object("c", "o", &st));
  check(st.extents);
  EXPECT_EQ((std::vector<sn_t>{1, 2, 3}), st.sns);
}

// A DataRef the compact record cannot express (here journal-only without a
// position) is kept as given: the same owner comes back.
TEST(Htmll, UnusualDataRefIsKeptAsGiven)
{
  Htmll h(small_config());
  auto src = std::make_shared<JournalSource>();
  src->jpos = 1000;
  src->length = 4096;
  DataRef d = DataRef::in_journal(src);
  d.jpos = NO_JPOS;
  ASSERT_EQ(MERGED, h.insert("c", "o", 1, 0, d));
  ASSERT_EQ(MERGED, h.insert("c", "o", 2, 1000, bytes(10, 'x')));
  std::vector<CachedExtent> v = all(h, "c", "o");
  ASSERT_EQ(3u, v.size());
  for (size_t k : {0, 2}) {
    EXPECT_EQ(src.get(), v[k].data.source()) << k;
    EXPECT_FALSE(v[k].data.has_jpos()) << k;
  }
  EXPECT_EQ(1000u, v[0].data.length);
  EXPECT_EQ(4096u - 1010, v[2].data.length);
}

// A block keeps its sns in 4 bytes each while they stay within 2^32 above
// the first; any other sn (smaller, or far larger) widens the list, and
// order, multiplicity and each extent's sn are kept either way.
TEST(Htmll, SnsOfAnyRangeAreKept)
{
  const std::vector<std::vector<sn_t>> cases = {
    {10, 11, 11, 12, 10 + UINT32_MAX},              // narrow
    {10, 11, 5, 12},                                // below the first
    {10, 11, 11 + (uint64_t(1) << 32), 12},         // past the window
    {UINT64_MAX - 1, 3, UINT64_MAX, 1},             // both
  };
  for (const auto& sns : cases) {
    Htmll h(small_config());
    Want want;
    for (size_t i = 0; i < sns.size(); ++i) {
      const char fill = char('a' + i);
      // Each write at its own offset, the third exactly over the second.
      const uint64_t off = i == 2 ? 100 : 100 * i;
      ASSERT_EQ(MERGED, h.insert("c", "o", sns[i], off, bytes(50, fill)));
    }
    for (size_t i = 0; i < sns.size(); ++i) {
      if (i != 1) {
        want.emplace_back(i == 2 ? 100 : 100 * i, 50, sns[i], char('a' + i));
      }
    }
    std::sort(want.begin(), want.end());
    expect_extents(want, all(h, "c", "o"));
    ObjectState st;
    ASSERT_TRUE(h.take_object("c", "o", &st));
    expect_extents(want, st.extents);
    EXPECT_EQ(sns, st.sns);
  }
}

// Heap per cached journal-only write (docs/mim-core.md "Memory per cached
// write"; htmll_membench measures the store's case). 50,000 uniform 4 KiB
// writes over 1,024 objects: about 46 bytes each, where a std::map node and
// a JournalSource per write took about 160.
TEST(Htmll, HeapPerJournalOnlyWrite)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
  GTEST_SKIP() << "needs glibc's malloc (mallinfo2)";
#else
  constexpr uint64_t OBJECTS = 1024, WRITES = 50000, BLOCK = 4 << 20;
  std::vector<std::string> oids;
  for (uint64_t o = 0; o < OBJECTS; ++o) {
    oids.push_back("rbd\\udata.10226b8b4567." + std::to_string(o) + "__head_2");
  }
  HtmllConfig c;
  c.slots = 4096;
  c.blocks = 64;
  c.max_slots = 1 << 20;
  c.max_blocks = 1024;
  c.block_size = BLOCK;
  c.max_bytes = uint64_t(1) << 31;
  std::mt19937_64 rng(7);
  Htmll h(c);
  const size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
  for (uint64_t i = 0; i < WRITES; ++i) {
    const uint64_t obj = rng() % OBJECTS;
    auto src = std::make_shared<JournalSource>();
    src->jpos = i * 8192;
    src->length = 4096;
    ASSERT_EQ(MERGED, h.insert("2." + std::to_string(obj % 32) + "_head", oids[obj],
                               i + 1, (rng() % (BLOCK / 4096)) * 4096,
                               DataRef::in_journal(std::move(src))));
  }
  const double heap =
    double(mallinfo2().uordblks + mallinfo2().hblkhd - before);
  const double per_write = heap / WRITES;
  const double counted = double(h.stats().index_bytes);
  std::printf("heap per journal-only write: %.1f bytes; counted %.1f\n",
              per_write, counted / WRITES);
  EXPECT_LT(per_write, 64.0);
  // The index's own count (what mimstore_cache_index_max_bytes budgets) is
  // the heap less malloc's chunk headers and the per-collection maps.
  EXPECT_GT(counted, 0.8 * heap);
  EXPECT_LT(counted, 1.05 * heap);
#endif
}

// The index's memory is counted per generation as records come and go:
// it moves with a freeze and returns to the bare slot table once every
// object is taken.
TEST(Htmll, IndexBytesFollowTheRecords)
{
  HtmllConfig c = small_config();
  Htmll h(c);
  const uint64_t table = h.stats().index_bytes;
  EXPECT_GT(table, 0u);  // the slot table
  EXPECT_EQ(0u, h.stats().frozen_index_bytes);
  sn_t sn = 0;
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(MERGED, h.insert("c", "a", ++sn, i * 2048, bytes(1024, 'a')));
  }
  const uint64_t a16 = h.stats().index_bytes;
  // 16 extents and 16 sns at least; the block and slot besides.
  EXPECT_GE(a16 - table, 16 * (32u + 4u));
  // An exact overwrite adds an sn, never an extent.
  ASSERT_EQ(MERGED, h.insert("c", "a", ++sn, 0, bytes(1024, 'b')));
  EXPECT_GE(h.stats().index_bytes, a16);
  EXPECT_LT(h.stats().index_bytes, a16 + 64);
  ASSERT_EQ(MERGED, h.insert("c", "b", ++sn, 0, bytes(4096, 'b')));
  const uint64_t before = h.stats().index_bytes;
  EXPECT_GT(before, a16);

  ASSERT_TRUE(h.freeze(nullptr));
  HtmllStats st = h.stats();
  EXPECT_EQ(before, st.frozen_index_bytes);
  EXPECT_EQ(table, st.index_bytes);
  ASSERT_EQ(MERGED, h.insert("c", "a", ++sn, 0, bytes(512, 'c')));
  EXPECT_GT(h.stats().index_bytes, table);

  ObjectState out;
  ASSERT_TRUE(h.take_frozen("c", "b", &out));
  st = h.stats();
  EXPECT_LT(st.frozen_index_bytes, before);
  EXPECT_GT(st.frozen_index_bytes, table);
  ASSERT_TRUE(h.take_frozen("c", "a", &out));
  EXPECT_EQ(table, h.stats().frozen_index_bytes);
  h.end_flush();
  EXPECT_EQ(0u, h.stats().frozen_index_bytes);
  ASSERT_TRUE(h.take_object("c", "a", &out));
  EXPECT_EQ(table, h.stats().index_bytes);
}

TEST(HtmllDeathTest, ZeroLengthWriteIsAContractViolation)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Htmll h(small_config());
  EXPECT_DEATH(h.insert("c", "o", 1, 0, DataRef()), "data.length > 0");
}

TEST(HtmllDeathTest, InvalidConfigIsAContractViolation)
{
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  HtmllConfig c;
  c.block_size = 1000;
  EXPECT_DEATH(Htmll h(c), "validate");
}
