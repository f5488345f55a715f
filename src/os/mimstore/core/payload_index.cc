// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: where a write's bytes sit inside its journal payload. See the
 * header.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/payload_index.h"

#include <algorithm>
#include <functional>

namespace mim {

namespace {

// Pointer comparison through std::less: ranges of different buffers are
// not of one array, and the built-in < on them is unspecified.
bool inside(const char* p, const char* base, uint64_t len)
{
  std::less<const char*> lt;
  return !lt(p, base) && lt(p, base + len);
}

}  // namespace

void PayloadIndex::add(const char* p, uint64_t len)
{
  if (len == 0) {
    return;
  }
  segs_.push_back(Seg{p, len, total_});
  total_ += len;
}

bool PayloadIndex::matches_from(size_t i, uint64_t at,
                                const std::vector<Span>& write) const
{
  for (const Span& w : write) {
    const char* wp = w.first;
    uint64_t wleft = w.second;
    while (wleft > 0) {
      if (i == segs_.size()) {
        return false;  // the payload ends first
      }
      const Seg& s = segs_[i];
      const uint64_t in = at - s.off;  // at lies in segment i
      if (s.p + in != wp) {
        return false;
      }
      const uint64_t n = std::min(wleft, s.len - in);
      wp += n;
      wleft -= n;
      at += n;
      if (at == s.off + s.len) {
        ++i;
      }
    }
  }
  return true;
}

bool PayloadIndex::find(const std::vector<Span>& write, uint64_t* off) const
{
  std::vector<Span> w;
  w.reserve(write.size());
  for (const Span& s : write) {
    if (s.second) {
      w.push_back(s);
    }
  }
  if (w.empty()) {
    return false;
  }
  // Every segment that holds the write's first byte is a candidate start.
  // Payloads have a handful of segments, so a linear pass is cheaper than
  // keeping an address-sorted copy.
  const char* first = w.front().first;
  for (size_t i = 0; i < segs_.size(); ++i) {
    const Seg& s = segs_[i];
    if (!inside(first, s.p, s.len)) {
      continue;
    }
    const uint64_t at = s.off + uint64_t(first - s.p);
    if (matches_from(i, at, w)) {
      *off = at;
      return true;
    }
  }
  return false;
}

}  // namespace mim
