// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: writeback planning for merged extents (MIM flush phase II).
 *
 * Pure functions, no locking, no I/O. The flush thread takes an object's
 * merged extents out of the HTMLL and asks plan_writeback() how to issue
 * them: as few, as large, writes as possible, each one in offset order, so
 * the HDD sees long sequential writes instead of scattered microwrites.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace mim {

/// Bytes [offset, offset + data.length) of one object, written by the
/// transaction `sn` (the newest write that covers them).
struct CachedExtent {
  uint64_t offset = 0;
  DataRef data;
  sn_t sn = 0;

  uint64_t end() const { return offset + data.length; }
};

/// One contiguous piece of a WriteRun: cached bytes (`data`), or a GAP:
/// bytes the cache does not hold; the caller reads them from the backend
/// file and writes them back unchanged, so that the whole run goes down in
/// one write. The flag is explicit because a cached piece need not have its
/// bytes in memory (DataRef::jpos: they can be read from the journal).
struct WritePiece {
  uint64_t offset = 0;
  uint64_t length = 0;
  DataRef data;   ///< empty for a gap
  bool gap = false;

  bool is_gap() const { return gap; }
};

/// One write to issue. pieces are contiguous, sorted, and cover exactly
/// [offset, offset + length); the first and the last piece are never gaps.
struct WriteRun {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::vector<WritePiece> pieces;
};

/// Build maximal runs from `sorted_extents`. Exactly adjacent extents are
/// joined; runs separated by a gap of at most `max_gap_fill` bytes are
/// joined too, with a GAP piece in between (one larger write beats two
/// seeks on an HDD; reading the gap back is cheap when it is small).
/// max_gap_fill == 0 joins only exactly adjacent extents. Zero-length
/// extents are skipped.
/// REQUIRES: sorted_extents sorted by offset and non-overlapping (what
/// Htmll::take_frozen()/take_object() return). Checked by assert().
std::vector<WriteRun> plan_writeback(
  const std::vector<CachedExtent>& sorted_extents, uint64_t max_gap_fill);

/// Overlay `top` on `base`: where both cover a byte, top wins; the parts of
/// a base extent that survive keep that extent's sn. The result is sorted
/// and non-overlapping. Used to put the active HTMLL generation over the
/// frozen one, and the cache over a backend read.
/// REQUIRES: base and top each sorted by offset and non-overlapping.
std::vector<CachedExtent> overlay_extents(std::vector<CachedExtent> base,
                                          std::vector<CachedExtent> top);

/// Whether `sorted_extents` cover every byte of [off, off + len): a read of
/// that range needs nothing from the backend file. len == 0 is covered.
/// REQUIRES: sorted_extents sorted by offset and non-overlapping (what
/// Htmll::lookup() returns).
bool extents_cover(const std::vector<CachedExtent>& sorted_extents,
                   uint64_t off, uint64_t len);

}  // namespace mim
