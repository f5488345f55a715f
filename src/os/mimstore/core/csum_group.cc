// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: data checksums, chunk arithmetic and value format (see
 * csum_group.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/csum_group.h"

#include <algorithm>
#include <cerrno>

#include "core/crc32c.h"

namespace mim {

namespace {

void put_u32(std::string* s, uint32_t v)
{
  for (int b = 0; b < 4; ++b) {
    s->push_back(char((v >> (8 * b)) & 0xff));
  }
}

uint32_t get_u32(const char* p)
{
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) {
    v |= uint32_t(uint8_t(p[b])) << (8 * b);
  }
  return v;
}

unsigned crc_count(uint32_t states)
{
  unsigned n = 0;
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    if (ChunkState((states >> (2 * i)) & 3) == ChunkState::CRC) {
      ++n;
    }
  }
  return n;
}

// The order a value claims, or -1 when it is not a v1 value at all.
int value_order(std::string_view v)
{
  if (v.size() < 6 || uint8_t(v[0]) != CSUM_VALUE_VERSION) {
    return -1;
  }
  return uint8_t(v[1]);
}

}  // namespace

const char* chunk_state_name(ChunkState s)
{
  switch (s) {
  case ChunkState::UNKNOWN: return "unknown";
  case ChunkState::CRC: return "crc";
  case ChunkState::ZERO: return "zero";
  case ChunkState::BAD: return "bad";
  }
  return "?";
}

void CsumGroup::set(unsigned i, ChunkState s, uint32_t c)
{
  states = (states & ~(3u << (2 * i))) | (uint32_t(s) << (2 * i));
  crcs[i] = s == ChunkState::CRC ? c : 0;
}

void CsumGroup::merge_from(const CsumGroup& right)
{
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    if (right.state(i) != ChunkState::UNKNOWN) {
      set(i, right.state(i), right.crc(i));
    }
  }
}

std::string CsumGroup::encode(unsigned order) const
{
  std::string v;
  v.reserve(CSUM_VALUE_MAX);
  v.push_back(char(CSUM_VALUE_VERSION));
  v.push_back(char(order));
  put_u32(&v, states);
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    if (state(i) == ChunkState::CRC) {
      put_u32(&v, crcs[i]);
    }
  }
  return v;
}

int CsumGroup::decode(std::string_view v, unsigned order, CsumGroup* out)
{
  if (value_order(v) != int(order)) {
    return -EINVAL;
  }
  uint32_t states = get_u32(v.data() + 2);
  if (v.size() != 6 + 4 * size_t(crc_count(states))) {
    return -EINVAL;
  }
  CsumGroup g;
  const char* p = v.data() + 6;
  for (unsigned i = 0; i < CSUM_GROUP_CHUNKS; ++i) {
    ChunkState s = ChunkState((states >> (2 * i)) & 3);
    uint32_t c = 0;
    if (s == ChunkState::CRC) {
      c = get_u32(p);
      p += 4;
    }
    g.set(i, s, c);
  }
  *out = g;
  return 0;
}

std::string csum_poisoned_value()
{
  return std::string(6, '\0');
}

std::string csum_merge_values(std::string_view left, std::string_view right)
{
  int lo = value_order(left);
  int ro = value_order(right);
  CsumGroup l, r;
  if (lo < 0 || CsumGroup::decode(left, lo, &l) < 0) {
    return std::string(left);
  }
  if (ro < 0 || CsumGroup::decode(right, ro, &r) < 0) {
    return std::string(right);
  }
  if (lo != ro) {
    return csum_poisoned_value();
  }
  l.merge_from(r);
  return l.encode(lo);
}

std::vector<ChunkPlan> plan_chunks(std::vector<Extent> extents,
                                   unsigned order, uint64_t old_size)
{
  const uint64_t cs = uint64_t(1) << order;
  extents.erase(std::remove_if(extents.begin(), extents.end(),
                               [](const Extent& e) { return e.len == 0; }),
                extents.end());
  std::sort(extents.begin(), extents.end(),
            [](const Extent& a, const Extent& b) { return a.off < b.off; });
  // The union, as sorted disjoint extents (adjacent ones joined).
  std::vector<Extent> u;
  for (const Extent& e : extents) {
    if (!u.empty() && e.off <= u.back().off + u.back().len) {
      uint64_t end = std::max(u.back().off + u.back().len, e.off + e.len);
      u.back().len = end - u.back().off;
    } else {
      u.push_back(e);
    }
  }
  // A chunk is FULL when nothing in it is uncovered; otherwise its first
  // uncovered byte decides: at or past the old end, everything uncovered
  // reads as zeros (PARTIAL_TAIL), else old bytes are needed (PARTIAL).
  std::vector<ChunkPlan> out;
  bool open = false;
  uint64_t chunk = 0, pos = 0, gap = 0;
  bool has_gap = false;
  auto close = [&]() {
    if (!open) {
      return;
    }
    uint64_t cend = (chunk + 1) * cs;
    if (!has_gap && pos < cend) {
      has_gap = true;
      gap = pos;
    }
    ChunkPlan p;
    p.chunk = chunk;
    p.cover = !has_gap ? ChunkCover::FULL
            : gap >= old_size ? ChunkCover::PARTIAL_TAIL
            : ChunkCover::PARTIAL;
    out.push_back(p);
    open = false;
  };
  for (const Extent& e : u) {
    uint64_t end = e.off + e.len;
    for (uint64_t c = e.off / cs; c * cs < end; ++c) {
      if (!open || chunk != c) {
        close();
        open = true;
        chunk = c;
        pos = c * cs;
        has_gap = false;
      }
      if (has_gap) {
        continue;
      }
      if (e.off > pos) {
        has_gap = true;
        gap = pos;
      } else {
        pos = std::min(std::max(pos, end), (c + 1) * cs);
      }
    }
  }
  close();
  return out;
}

std::map<uint32_t, CsumGroup> group_patches(
  const std::vector<ChunkUpdate>& updates)
{
  std::map<uint32_t, CsumGroup> out;
  for (const ChunkUpdate& u : updates) {
    out[csum_group_of(u.chunk)].set(csum_index_in_group(u.chunk), u.state,
                                    u.crc);
  }
  return out;
}

CsumGroup truncate_patch(uint64_t size, unsigned order,
                         uint32_t* boundary_group,
                         uint64_t* first_deleted_group)
{
  const uint64_t cs = uint64_t(1) << order;
  uint64_t first_past = (size + cs - 1) / cs;  // first chunk wholly past
  *boundary_group = csum_group_of(first_past);
  CsumGroup patch;
  for (unsigned i = csum_index_in_group(first_past); i < CSUM_GROUP_CHUNKS;
       ++i) {
    patch.set(i, ChunkState::ZERO);
  }
  *first_deleted_group = uint64_t(*boundary_group) + 1;
  return patch;
}

bool is_all_zero(const char* p, size_t n)
{
  // Word at a time over the aligned middle; chunks come from page-aligned
  // buffers, so the edges are rare.
  size_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(p + i) & 7); ++i) {
    if (p[i]) {
      return false;
    }
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, p + i, 8);
    if (w) {
      return false;
    }
  }
  for (; i < n; ++i) {
    if (p[i]) {
      return false;
    }
  }
  return true;
}

ChunkUpdate chunk_update_of(uint64_t chunk, const char* p, size_t n)
{
  ChunkUpdate u;
  u.chunk = chunk;
  if (is_all_zero(p, n)) {
    u.state = ChunkState::ZERO;
  } else {
    u.state = ChunkState::CRC;
    u.crc = crc32c(0, p, n);
  }
  return u;
}

}  // namespace mim
