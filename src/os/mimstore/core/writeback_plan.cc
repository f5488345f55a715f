// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: writeback planning for merged extents (MIM flush phase II).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/writeback_plan.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace mim {

std::vector<WriteRun> plan_writeback(
  const std::vector<CachedExtent>& sorted_extents, uint64_t max_gap_fill)
{
  std::vector<WriteRun> runs;
  for (const CachedExtent& e : sorted_extents) {
    if (e.data.length == 0) {
      continue;
    }
    if (!runs.empty()) {
      WriteRun& r = runs.back();
      const uint64_t run_end = r.offset + r.length;
      assert(e.offset >= run_end);  // sorted and non-overlapping
      const uint64_t gap = e.offset - run_end;
      if (gap <= max_gap_fill) {
        if (gap > 0) {
          r.pieces.push_back(WritePiece{run_end, gap, DataRef(), true});
        }
        r.pieces.push_back(WritePiece{e.offset, e.data.length, e.data});
        r.length = e.end() - r.offset;
        continue;
      }
    }
    WriteRun r;
    r.offset = e.offset;
    r.length = e.data.length;
    r.pieces.push_back(WritePiece{e.offset, e.data.length, e.data});
    runs.push_back(std::move(r));
  }
  return runs;
}

std::vector<CachedExtent> overlay_extents(std::vector<CachedExtent> base,
                                          std::vector<CachedExtent> top)
{
  if (base.empty()) {
    return top;
  }
  if (top.empty()) {
    return base;
  }
  // What survives of base: each base extent minus the top extents over it.
  // Both lists are sorted, so one forward pass over top serves all of base.
  std::vector<CachedExtent> survivors;
  survivors.reserve(base.size() + top.size());
  size_t j = 0;
  for (CachedExtent& b : base) {
    const uint64_t bend = b.end();
    while (j < top.size() && top[j].end() <= b.offset) {
      ++j;
    }
    uint64_t cur = b.offset;
    size_t k = j;
    while (cur < bend) {
      if (k == top.size() || top[k].offset >= bend) {
        if (cur == b.offset) {
          survivors.push_back(std::move(b));  // untouched: no refcount churn
        } else {
          survivors.push_back(
            CachedExtent{cur, b.data.slice(cur - b.offset, bend - cur), b.sn});
        }
        break;
      }
      if (top[k].offset > cur) {
        survivors.push_back(CachedExtent{
          cur, b.data.slice(cur - b.offset, top[k].offset - cur), b.sn});
      }
      cur = std::max(cur, top[k].end());
      ++k;
    }
  }
  // survivors and top are disjoint and each sorted: merge by offset.
  std::vector<CachedExtent> out;
  out.reserve(survivors.size() + top.size());
  std::merge(std::make_move_iterator(survivors.begin()),
             std::make_move_iterator(survivors.end()),
             std::make_move_iterator(top.begin()),
             std::make_move_iterator(top.end()),
             std::back_inserter(out),
             [](const CachedExtent& a, const CachedExtent& b) {
               return a.offset < b.offset;
             });
  return out;
}

bool extents_cover(const std::vector<CachedExtent>& sorted_extents,
                   uint64_t off, uint64_t len)
{
  uint64_t cur = off;
  const uint64_t end = off + len;
  for (const CachedExtent& e : sorted_extents) {
    if (cur >= end) {
      break;
    }
    if (e.end() <= cur) {
      continue;            // wholly before what is still uncovered
    }
    if (e.offset > cur) {
      return false;        // a hole at cur
    }
    cur = e.end();
  }
  return cur >= end;
}

}  // namespace mim
