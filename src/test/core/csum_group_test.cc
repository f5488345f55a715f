// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of the data checksums' chunk arithmetic and value format
 * (core/csum_group.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/csum_group.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <random>

#include "core/crc32c.h"

using namespace mim;

namespace {

CsumGroup random_group(std::mt19937_64& rng, bool patch)
{
  CsumGroup g;
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    // Patches are sparse, as a write back's are.
    unsigned s = rng() % (patch ? 8 : 4);
    if (s < 4) {
      g.set(i, ChunkState(s), uint32_t(rng()));
    }
  }
  return g;
}

}  // namespace

TEST(CsumGroup, EncodeDecodeRoundTrip)
{
  std::mt19937_64 rng(1);
  for (int n = 0; n < 1000; ++n) {
    CsumGroup g = random_group(rng, false);
    std::string v = g.encode(12);
    unsigned crcs = 0;
    for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
      crcs += g.state(i) == ChunkState::CRC;
    }
    ASSERT_EQ(6 + 4 * crcs, v.size());
    ASSERT_LE(v.size(), CSUM_VALUE_MAX);
    CsumGroup d;
    ASSERT_EQ(0, CsumGroup::decode(v, 12, &d));
    ASSERT_EQ(g, d);
  }
}

TEST(CsumGroup, SetKeepsCrcOnlyInStateCrc)
{
  CsumGroup a, b;
  a.set(3, ChunkState::CRC, 0x1234);
  a.set(3, ChunkState::ZERO, 0x1234);
  b.set(3, ChunkState::ZERO);
  EXPECT_EQ(a, b);
  EXPECT_EQ(0u, a.crc(3));
  EXPECT_EQ(ChunkState::ZERO, a.state(3));
  EXPECT_EQ(ChunkState::UNKNOWN, a.state(2));
}

TEST(CsumGroup, DecodeRefusesWhatIsNotAV1ValueOfThisOrder)
{
  CsumGroup g;
  g.set(0, ChunkState::CRC, 7);
  g.set(5, ChunkState::BAD);
  std::string v = g.encode(12);
  CsumGroup d;
  EXPECT_EQ(-EINVAL, CsumGroup::decode(v, 13, &d));   // other order
  std::string other = v;
  other[0] = 2;                                        // other version
  EXPECT_EQ(-EINVAL, CsumGroup::decode(other, 12, &d));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(v.substr(0, v.size() - 1), 12, &d));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(v + "x", 12, &d));
  EXPECT_EQ(-EINVAL, CsumGroup::decode("", 12, &d));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(csum_poisoned_value(), 12, &d));
  // States that claim a crc the value does not carry.
  std::string lying = v;
  lying[2] = char(uint8_t(lying[2]) | 0x04);   // chunk 1 -> CRC
  EXPECT_EQ(-EINVAL, CsumGroup::decode(lying, 12, &d));
}

TEST(CsumGroup, MergeTakesTheRightWhereItIsKnown)
{
  CsumGroup l, r;
  l.set(0, ChunkState::CRC, 1);
  l.set(1, ChunkState::CRC, 2);
  l.set(2, ChunkState::BAD);
  r.set(1, ChunkState::ZERO);
  r.set(2, ChunkState::CRC, 9);
  r.set(15, ChunkState::CRC, 10);
  CsumGroup m;
  ASSERT_EQ(0, CsumGroup::decode(
                 csum_merge_values(l.encode(12), r.encode(12)), 12, &m));
  EXPECT_EQ(ChunkState::CRC, m.state(0));
  EXPECT_EQ(1u, m.crc(0));
  EXPECT_EQ(ChunkState::ZERO, m.state(1));
  EXPECT_EQ(ChunkState::CRC, m.state(2));
  EXPECT_EQ(9u, m.crc(2));
  EXPECT_EQ(ChunkState::UNKNOWN, m.state(3));
  EXPECT_EQ(10u, m.crc(15));
}

// RocksDB may combine operands in any grouping (partial merges during
// compaction), so the operator must be associative.
TEST(CsumGroup, MergeIsAssociative)
{
  std::mt19937_64 rng(2);
  for (int n = 0; n < 2000; ++n) {
    std::string a = random_group(rng, n % 2).encode(12);
    std::string b = random_group(rng, true).encode(12);
    std::string c = random_group(rng, true).encode(12);
    ASSERT_EQ(csum_merge_values(csum_merge_values(a, b), c),
              csum_merge_values(a, csum_merge_values(b, c)));
  }
}

TEST(CsumGroup, MergeNeverRepairsAValueThatDoesNotDecode)
{
  CsumGroup g;
  g.set(0, ChunkState::CRC, 1);
  std::string good = g.encode(12);
  std::string bad = good.substr(0, 5);
  CsumGroup d;
  EXPECT_EQ(bad, csum_merge_values(bad, good));
  EXPECT_EQ(bad, csum_merge_values(good, bad));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(csum_merge_values(bad, good), 12, &d));
  // Both decode, but with different chunk orders.
  std::string m = csum_merge_values(good, g.encode(13));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(m, 12, &d));
  EXPECT_EQ(-EINVAL, CsumGroup::decode(m, 13, &d));
}

namespace {

// The reference: a byte map of what the extents cover.
std::vector<ChunkPlan> plan_by_bytes(const std::vector<Extent>& ext,
                                     unsigned order, uint64_t old_size,
                                     uint64_t span)
{
  const uint64_t cs = uint64_t(1) << order;
  std::vector<bool> covered(span, false);
  for (const Extent& e : ext) {
    for (uint64_t b = e.off; b < e.off + e.len; ++b) {
      covered[b] = true;
    }
  }
  std::vector<ChunkPlan> out;
  for (uint64_t c = 0; c * cs < span; ++c) {
    bool any = false;
    int64_t first_gap = -1;
    for (uint64_t b = c * cs; b < (c + 1) * cs; ++b) {
      bool cov = b < span && covered[b];
      any |= cov;
      if (!cov && first_gap < 0) {
        first_gap = b;
      }
    }
    if (!any) {
      continue;
    }
    ChunkPlan p;
    p.chunk = c;
    p.cover = first_gap < 0 ? ChunkCover::FULL
            : uint64_t(first_gap) >= old_size ? ChunkCover::PARTIAL_TAIL
            : ChunkCover::PARTIAL;
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST(CsumGroup, PlanChunksCases)
{
  using V = std::vector<ChunkPlan>;
  auto F = ChunkCover::FULL;
  auto P = ChunkCover::PARTIAL;
  auto T = ChunkCover::PARTIAL_TAIL;
  // An aligned 4 KiB overwrite: one FULL chunk, no read.
  EXPECT_EQ((V{{1, F}}), plan_chunks({{4096, 4096}}, 12, 1 << 20));
  // Unaligned inside the object: both edge chunks need their old bytes.
  EXPECT_EQ((V{{0, P}, {1, F}, {2, P}}),
            plan_chunks({{100, 9000}}, 12, 1 << 20));
  // Two halves, in either order, make a chunk FULL.
  EXPECT_EQ((V{{0, F}}), plan_chunks({{2048, 2048}, {0, 2048}}, 12, 8192));
  // An append: the rest of the last chunk lies past the old end.
  EXPECT_EQ((V{{0, P}, {1, T}}), plan_chunks({{3000, 2000}}, 12, 3000));
  EXPECT_EQ((V{{2, T}}), plan_chunks({{8292, 10}}, 12, 8192));
  // A gap below the old end inside the chunk needs a read.
  EXPECT_EQ((V{{0, P}}), plan_chunks({{0, 100}, {200, 3896}}, 12, 150));
  EXPECT_EQ((V{{0, T}}), plan_chunks({{0, 100}, {200, 3896}}, 12, 100));
  // Empty extents touch nothing.
  EXPECT_EQ(V{}, plan_chunks({{5000, 0}}, 12, 0));
  // 64 KiB chunks.
  EXPECT_EQ((V{{0, P}, {1, F}}), plan_chunks({{4096, 126976}}, 16, 1 << 20));
}

TEST(CsumGroup, PlanChunksMatchesAByteMap)
{
  std::mt19937_64 rng(3);
  const uint64_t span = 8 * 4096;
  for (int n = 0; n < 3000; ++n) {
    std::vector<Extent> ext(1 + rng() % 4);
    for (Extent& e : ext) {
      e.off = rng() % span;
      e.len = rng() % 3 ? rng() % 5000 : 4096;
      if (rng() % 2) {
        e.off &= ~uint64_t(511);
      }
      e.len = std::min(e.len, span - e.off);
    }
    uint64_t old_size = rng() % (span + 1);
    ASSERT_EQ(plan_by_bytes(ext, 12, old_size, span),
              plan_chunks(ext, 12, old_size))
      << "case " << n;
  }
}

TEST(CsumGroup, GroupPatchesSplitByGroup)
{
  auto p = group_patches({{3, ChunkState::CRC, 33},
                          {16, ChunkState::ZERO, 0},
                          {17, ChunkState::BAD, 0},
                          {4, ChunkState::CRC, 44}});
  ASSERT_EQ(2u, p.size());
  EXPECT_EQ(33u, p[0].crc(3));
  EXPECT_EQ(44u, p[0].crc(4));
  EXPECT_EQ(ChunkState::UNKNOWN, p[0].state(5));
  EXPECT_EQ(ChunkState::ZERO, p[1].state(0));
  EXPECT_EQ(ChunkState::BAD, p[1].state(1));
  EXPECT_EQ(0u, csum_group_of(15));
  EXPECT_EQ(1u, csum_group_of(16));
  EXPECT_EQ(15u, csum_index_in_group(CSUM_MAX_CHUNK));
  EXPECT_EQ(UINT32_MAX, csum_group_of(CSUM_MAX_CHUNK));
}

TEST(CsumGroup, TruncatePatchZeroesWhatIsPastTheEnd)
{
  uint32_t g;
  uint64_t del;
  CsumGroup p = truncate_patch(0, 12, &g, &del);
  EXPECT_EQ(0u, g);
  EXPECT_EQ(1u, del);
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    EXPECT_EQ(ChunkState::ZERO, p.state(i));
  }
  // The chunk that holds the new end is the caller's (an RMW).
  p = truncate_patch(4097, 12, &g, &del);
  EXPECT_EQ(0u, g);
  EXPECT_EQ(ChunkState::UNKNOWN, p.state(1));
  EXPECT_EQ(ChunkState::ZERO, p.state(2));
  // On a group bound: the next group is the boundary one, all ZERO.
  p = truncate_patch(65536, 12, &g, &del);
  EXPECT_EQ(1u, g);
  EXPECT_EQ(2u, del);
  EXPECT_EQ(ChunkState::ZERO, p.state(0));
}

TEST(CsumGroup, ChunkUpdateOf)
{
  std::string zeros(4096, '\0');
  ChunkUpdate u = chunk_update_of(7, zeros.data(), zeros.size());
  EXPECT_EQ(7u, u.chunk);
  EXPECT_EQ(ChunkState::ZERO, u.state);
  std::string data = zeros;
  data[4095] = 1;
  u = chunk_update_of(7, data.data(), data.size());
  EXPECT_EQ(ChunkState::CRC, u.state);
  EXPECT_EQ(crc32c(0, data.data(), data.size()), u.crc);
  EXPECT_FALSE(is_all_zero(data.data() + 1, 4095));
  EXPECT_TRUE(is_all_zero(data.data() + 1, 4094));
}
