// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: where a write's bytes sit inside its journal payload.
 *
 * A journal payload is encoded from the transaction's buffers without
 * copying the write data (Ceph's bufferlist append shares the buffers), so
 * the payload is a list of memory segments, and a write's data is one or
 * more of those same segments, in order. PayloadIndex records the segments
 * of one payload as it is encoded; find() then answers, for the buffers a
 * write was decoded into, at which payload offset those bytes are. With the
 * payload's device offset from the journal, that is the write's DataRef::jpos.
 *
 * Matching is by address, so it holds only while every buffer of the
 * payload is alive and unchanged: the store keeps the payload's buffers
 * until the transaction is applied, so no other buffer can be given an
 * address the index records. The same memory may appear twice in a payload (one buffer
 * written to two objects): then the bytes at both places are equal, and
 * find() returns one of them where the whole write matches. A write whose
 * buffers are not found contiguous in the payload gets no position.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mim {

class PayloadIndex {
 public:
  /// A memory range: start and length.
  using Span = std::pair<const char*, uint64_t>;

  /// Append the payload's next segment (payload order). Empty ones are
  /// ignored.
  void add(const char* p, uint64_t len);
  void clear() { segs_.clear(); total_ = 0; }
  uint64_t length() const { return total_; }
  bool empty() const { return segs_.empty(); }

  /// Payload offset of the bytes `write` (its segments in order; empty ones
  /// are skipped), if they are found contiguous in the payload; false when
  /// not (or when the write is empty).
  bool find(const std::vector<Span>& write, uint64_t* off) const;

 private:
  struct Seg {
    const char* p;
    uint64_t len;
    uint64_t off;  ///< payload offset of p[0]
  };
  /// Whether the payload bytes from segment i, offset `at` in the payload,
  /// are the memory of `write` from its segment 0 on.
  bool matches_from(size_t i, uint64_t at, const std::vector<Span>& write) const;

  std::vector<Seg> segs_;  ///< payload order: off ascending, contiguous
  uint64_t total_ = 0;
};

}  // namespace mim
