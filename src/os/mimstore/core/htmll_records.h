// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the HTMLL's records (htmll.h), private to htmll.cc. Ceph-free.
 *
 * Layout of one generation:
 *
 *   table[N]   open addressing (Robin Hood linear probing, backward-shift
 *              deletion: no tombstones) of {hash(oid), Slot*}
 *   Slot       oid, and its blocks as a short list of (position, Block):
 *              an oid is rarely written in more than one collection, so the
 *              list costs memory per block, never M per slot
 *   Block      extents: a vector of 32-byte Ext records sorted by offset,
 *              non-overlapping; the sns merged into it, in insert order
 *   positions  pos_cid[j] / cid_pos: the collection bound to position j
 *
 * What each record costs in memory is counted by its footprint() and
 * summed per generation (Generation::record_bytes, the index budget).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <algorithm>
#include <cassert>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/htmll.h"

namespace mim {

namespace htmll_detail {

inline constexpr uint32_t NO_POS = ~uint32_t(0);

inline uint64_t hash_oid(std::string_view oid)
{
  // libstdc++'s std::hash of bytes (Murmur-derived, 8 bytes per step):
  // fast on 30-60 byte Ceph object names, well mixed in the high bits that
  // home_index() uses. The table is never persisted, so it need not be
  // stable across builds.
  return std::hash<std::string_view>{}(oid);
}

// One extent of a block: 32 bytes, kept in a sorted vector (a std::map
// node holding a DataRef and an sn took 96 bytes of heap, and each
// journal-only write's make_shared JournalSource 48 more: docs/mim-core.md
// "Memory per cached write"). Offsets and lengths fit in 32 bits because
// block_size <= 2^30 (HtmllConfig::validate).
//
// Two forms, told apart by src_len:
//  - journal-only (src_len > 0): the bytes are [src_jpos + delta, + len) on
//    the journal device, part of the write (src_jpos, src_len, crc). No
//    allocation: the JournalSource the write came with is released, and
//    to_ref() builds a new one, equal to it, for every extent handed out.
//  - boxed (src_len == 0): any other DataRef (bytes in memory, or a form
//    the journal-only one cannot express), owned by the Block through
//    `ref`. Invariant: ref->length == len.
struct Ext {
  struct JournalPart {
    uint64_t src_jpos;  // the whole write's first byte on the journal
    uint32_t crc;       // crc32c of the whole write
    uint32_t delta;     // this extent's first byte is src_jpos + delta
  };

  uint32_t off = 0;      // in the block
  uint32_t len = 0;
  uint32_t sn_idx = 0;   // its sn is Block::sns[sn_idx]
  uint32_t src_len = 0;  // the whole write's length; 0: boxed
  union {
    JournalPart j = {};
    DataRef* ref;        // boxed: owned by the Block
  };

  uint64_t end() const { return uint64_t(off) + len; }
  bool boxed() const { return src_len == 0; }

  // Bytes [off + from, off + from + n) as a DataRef. REQUIRES: from + n <= len.
  DataRef to_ref(uint32_t from, uint32_t n) const {
    if (boxed()) {
      return ref->slice(from, n);
    }
    auto src = std::make_shared<JournalSource>();
    src->jpos = j.src_jpos;
    src->length = src_len;
    src->crc = j.crc;
    return DataRef(std::move(src), nullptr, n, j.src_jpos + j.delta + from);
  }

  // Drop the first n bytes in place. REQUIRES: n < len.
  void drop_front(uint32_t n) {
    off += n;
    len -= n;
    if (boxed()) {
      ref->drop_front(n);
    } else {
      j.delta += n;
    }
  }

  // Keep the first n bytes. REQUIRES: 0 < n <= len.
  void keep_front(uint32_t n) {
    len = n;
    if (boxed()) {
      ref->length = n;
    }
  }
};
static_assert(sizeof(Ext) == 32, "an extent record is 32 bytes");
using ExtentVec = std::vector<Ext>;

// Room for `more` elements past size(), growing by a quarter instead of
// libstdc++'s doubling: a block's vectors hold tens of elements, and
// doubling left a quarter of them empty on average (about 12 bytes per
// cached write). Amortized O(1) still: at most 5 copies per element.
template <typename T>
inline void reserve_more(std::vector<T>& v, size_t more)
{
  if (v.size() + more > v.capacity()) {
    v.reserve(std::max(v.size() + more, v.size() + v.size() / 4 + 2));
  }
}

// The sns merged into a block, in insert order, with multiplicity: 4 bytes
// each while every one is within 2^32 above the first (the store's sns
// grow by one per transaction, so a block's always are), 8 bytes (two
// halves, low first) once one is not.
class SnList {
 public:
  size_t size() const { return wide_ ? v_.size() / 2 : v_.size(); }

  sn_t operator[](size_t i) const {
    return wide_ ? sn_t(v_[2 * i]) | sn_t(v_[2 * i + 1]) << 32
                 : base_ + v_[i];
  }

  void push_back(sn_t sn) {
    if (!wide_ && v_.empty()) {
      base_ = sn;
    }
    if (!wide_ && (sn < base_ || sn - base_ > UINT32_MAX)) {
      widen();
    }
    if (wide_) {
      reserve_more(v_, 2);
      v_.push_back(uint32_t(sn));
      v_.push_back(uint32_t(sn >> 32));
    } else {
      reserve_more(v_, 1);
      v_.push_back(uint32_t(sn - base_));
    }
  }

  size_t capacity_bytes() const { return v_.capacity() * sizeof(uint32_t); }

  void append_to(std::vector<sn_t>* out) const {
    const size_t n = size();
    out->reserve(out->size() + n);
    for (size_t i = 0; i < n; ++i) {
      out->push_back((*this)[i]);
    }
  }

 private:
  void widen() {
    std::vector<uint32_t> w;
    w.reserve(2 * v_.size() + 2);
    for (uint32_t d : v_) {
      const sn_t sn = base_ + d;
      w.push_back(uint32_t(sn));
      w.push_back(uint32_t(sn >> 32));
    }
    v_.swap(w);
    wide_ = true;
  }

  std::vector<uint32_t> v_;
  sn_t base_ = 0;      // the first sn, while !wide_
  bool wide_ = false;
};

// Index of the first extent of v that ends after off: where a walk over the
// extents overlapping [off, ...) starts.
inline size_t first_overlap(const ExtentVec& v, uint64_t off)
{
  auto it = std::upper_bound(
    v.begin(), v.end(), off,
    [](uint64_t o, const Ext& e) { return o < e.off; });  // first starting after off
  if (it != v.begin() && std::prev(it)->end() > off) {
    --it;
  }
  return it - v.begin();
}

// Bytes of [off, end) that extents of v already cover.
inline uint64_t overlap_bytes(const ExtentVec& v, uint64_t off, uint64_t end)
{
  uint64_t ov = 0;
  for (size_t i = first_overlap(v, off); i < v.size() && v[i].off < end; ++i) {
    ov += std::min(v[i].end(), end) - std::max<uint64_t>(v[i].off, off);
  }
  return ov;
}

}  // namespace htmll_detail

using htmll_detail::Ext;
using htmll_detail::ExtentVec;
using htmll_detail::SnList;
using htmll_detail::NO_POS;
using htmll_detail::first_overlap;
using htmll_detail::reserve_more;

struct Htmll::Block {
  ExtentVec extents;      // sorted by off, non-overlapping
  SnList sns;             // every merged sn, in insert order
  uint64_t bytes = 0;     // sum of extent lengths
  uint64_t charged = 0;   // its footprint() as its generation counts it

  // Heap this block takes, with its entry in the slot's block list.
  uint64_t footprint() const {
    return sizeof(Block) + extents.capacity() * sizeof(Ext) +
           sns.capacity_bytes() +
           sizeof(std::pair<uint32_t, std::unique_ptr<Block>>);
  }

  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block() {
    for (Ext& e : extents) {
      if (e.boxed()) {
        delete e.ref;
      }
    }
  }

  // Append to *out the parts of the extents inside [off, end), clipped.
  void clip(uint64_t off, uint64_t end, std::vector<CachedExtent>* out) const {
    for (size_t i = first_overlap(extents, off);
         i < extents.size() && extents[i].off < end; ++i) {
      const Ext& e = extents[i];
      const uint64_t s = std::max<uint64_t>(e.off, off);
      const uint64_t t = std::min(e.end(), end);
      out->push_back(CachedExtent{
        s, e.to_ref(uint32_t(s - e.off), uint32_t(t - s)), sns[e.sn_idx]});
    }
  }

  // The extents as CachedExtents, moved out (boxed DataRefs change no
  // reference count); leaves extents empty. sns is left alone.
  std::vector<CachedExtent> extract() {
    std::vector<CachedExtent> v;
    v.reserve(extents.size());
    for (Ext& e : extents) {
      if (e.boxed()) {
        v.push_back(CachedExtent{e.off, std::move(*e.ref), sns[e.sn_idx]});
        delete e.ref;
      } else {
        v.push_back(CachedExtent{e.off, e.to_ref(0, e.len), sns[e.sn_idx]});
      }
    }
    extents.clear();
    return v;
  }

  uint64_t merge(Ext nw, DataRef** released);
};

// A write on its way into the cache, prepared before mu_ is taken: its
// extent record, journal-only if the DataRef allows it (nothing to
// allocate), else with the DataRef moved into a box of its own.
struct Htmll::Incoming {
  Ext ext;                       // off, len and sn_idx are set under mu_
  uint64_t length = 0;
  std::unique_ptr<DataRef> box;  // the boxed form until a block owns it
  DataRef* released = nullptr;   // replaced by an exact overwrite

  explicit Incoming(DataRef&& d) : length(d.length) {
    const JournalSource* src = d.source();
    if (src && d.has_jpos() && src->length > 0 && src->length <= UINT32_MAX &&
        d.length <= src->length && d.jpos >= src->jpos &&
        d.jpos - src->jpos <= src->length - d.length) {
      ext.src_len = uint32_t(src->length);
      ext.j.src_jpos = src->jpos;
      ext.j.crc = src->crc;
      ext.j.delta = uint32_t(d.jpos - src->jpos);
      return;  // d, and with it the JournalSource, is released by the caller
    }
    box = std::make_unique<DataRef>(std::move(d));
    ext.ref = box.get();
  }
  ~Incoming() { delete released; }
  Incoming(const Incoming&) = delete;
  Incoming& operator=(const Incoming&) = delete;
};

struct Htmll::Slot {
  std::string oid;
  uint64_t hash = 0;
  uint32_t live_index = 0;  // index in Generation::live
  std::vector<std::pair<uint32_t, std::unique_ptr<Block>>> blocks;  // (position, block)
  uint64_t charged = 0;     // its footprint() as its generation counts it

  // Heap this slot takes beyond its blocks' entries (Block::footprint
  // counts those), with its entry in Generation::live.
  uint64_t footprint() const {
    return sizeof(Slot) + oid.capacity() + sizeof(std::unique_ptr<Slot>);
  }

  Block* find(uint32_t pos) const {
    for (const auto& [p, b] : blocks) {
      if (p == pos) {
        return b.get();
      }
    }
    return nullptr;
  }
};

struct Htmll::Generation {
  struct Entry {
    uint64_t hash = 0;
    Slot* slot = nullptr;  // nullptr: empty entry
  };

  Generation(uint32_t n, uint32_t m)
    : table(n), pos_cid(m), pos_count(m, 0), pos_bytes(m, 0) {}

  // --- the slot table ---------------------------------------------------
  std::vector<Entry> table;
  std::vector<std::unique_ptr<Slot>> live;  // owns the slots in table

  // Home index of a hash: fast range reduction (multiply-high) instead of
  // a modulo, so N need not be a power of two.
  size_t home_index(uint64_t h) const {
    return static_cast<size_t>(
      (static_cast<unsigned __int128>(h) * table.size()) >> 64);
  }
  size_t displacement(size_t i) const {
    const size_t home = home_index(table[i].hash);
    return i >= home ? i - home : i + table.size() - home;
  }
  size_t next(size_t i) const { return i + 1 == table.size() ? 0 : i + 1; }

  // Index of oid's entry, or table.size() if absent. Robin Hood order lets
  // a miss stop at the first entry closer to its home than we are to ours.
  size_t find_index(std::string_view oid, uint64_t h) const {
    const size_t n = table.size();
    size_t i = home_index(h);
    for (size_t d = 0; d < n; ++d, i = next(i)) {
      const Entry& e = table[i];
      if (!e.slot || displacement(i) < d) {
        return n;
      }
      if (e.hash == h && e.slot->oid == oid) {
        return i;
      }
    }
    return n;
  }

  Slot* find_slot(std::string_view oid, uint64_t h) const {
    const size_t i = find_index(oid, h);
    return i == table.size() ? nullptr : table[i].slot;
  }

  // REQUIRES: live.size() < table.size(); oid not present.
  void insert_entry(Entry e) {
    size_t i = home_index(e.hash);
    for (size_t d = 0;; ++d, i = next(i)) {
      Entry& cur = table[i];
      if (!cur.slot) {
        cur = e;
        return;
      }
      const size_t cd = displacement(i);
      if (cd < d) {
        std::swap(cur, e);  // the richer entry yields its place
        d = cd;
      }
    }
  }

  // Past this many live slots a new oid grows the table first (when it
  // may): Robin Hood probes stay short up to about 7/8 load.
  size_t grow_at() const { return table.size() - table.size() / 8; }

  // Rehash into a table of n entries. REQUIRES: n > live.size().
  void grow_table(size_t n) {
    assert(n > live.size());
    table.assign(n, Entry{});
    for (const auto& s : live) {
      insert_entry(Entry{s->hash, s.get()});
    }
  }

  // Backward-shift deletion: pull the following displaced entries one
  // step back, so no tombstone is needed and probes stay short.
  void erase_index(size_t i) {
    for (;;) {
      const size_t k = next(i);
      if (!table[k].slot || displacement(k) == 0) {
        table[i] = Entry{};
        return;
      }
      table[i] = table[k];
      i = k;
    }
  }

  // --- block positions --------------------------------------------------
  std::vector<std::string> pos_cid;   // [0, npos_bound) are bound
  std::vector<uint64_t> pos_count;    // insert() calls for pos_cid[j] (active generation)
  std::vector<uint64_t> pos_bytes;    // cached bytes at position j
  uint32_t npos_bound = 0;            // positions are bound in order 0, 1, ...
  std::unordered_map<std::string, uint32_t, StrHash, std::equal_to<>> cid_pos;

  uint32_t find_pos(std::string_view cid) const {
    auto it = cid_pos.find(cid);
    return it == cid_pos.end() ? NO_POS : it->second;
  }

  void bind(uint32_t pos, std::string_view cid, uint64_t count) {
    assert(pos == npos_bound);
    pos_cid[pos].assign(cid);
    pos_count[pos] = count;
    cid_pos.emplace(pos_cid[pos], pos);
    ++npos_bound;
  }

  // New positions are unbound; the bound ones keep their index, which the
  // slots' block lists refer to.
  void grow_positions(size_t m) {
    assert(m >= pos_cid.size());
    pos_cid.resize(m);
    pos_count.resize(m, 0);
    pos_bytes.resize(m, 0);
  }

  // --- totals -----------------------------------------------------------
  uint64_t blocks = 0;
  uint64_t bytes = 0;
  uint64_t extents = 0;
  uint64_t record_bytes = 0;  // the live slots' and blocks' charged footprints

  // Count what x takes now (x a Block or Slot of this generation).
  template <typename T>
  void recharge(T& x) {
    const uint64_t f = x.footprint();
    record_bytes = record_bytes - x.charged + f;
    x.charged = f;
  }
  template <typename T>
  void discharge(T& x) {
    assert(record_bytes >= x.charged);
    record_bytes -= x.charged;
    x.charged = 0;
  }

  // The index's heap: the records, and the slot table.
  uint64_t index_bytes() const {
    return record_bytes + table.capacity() * sizeof(Entry);
  }

  // Make an emptied generation ready to be the active one again.
  // REQUIRES: live.empty() (so every table entry is already empty).
  void reset() {
    assert(live.empty());
    assert(blocks == 0 && bytes == 0 && extents == 0 && record_bytes == 0);
    cid_pos.clear();
    std::fill(pos_count.begin(), pos_count.end(), 0);
    std::fill(pos_bytes.begin(), pos_bytes.end(), 0);
    npos_bound = 0;
  }
};

}  // namespace mim
