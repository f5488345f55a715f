// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: HTMLL, the in-memory merge cache of MIM (paper, section 4.3).
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
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/htmll.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "core/check.h"

namespace mim {

namespace {

constexpr uint32_t NO_POS = ~uint32_t(0);

uint64_t hash_oid(std::string_view oid)
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
void reserve_more(std::vector<T>& v, size_t more)
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
size_t first_overlap(const ExtentVec& v, uint64_t off)
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
uint64_t overlap_bytes(const ExtentVec& v, uint64_t off, uint64_t end)
{
  uint64_t ov = 0;
  for (size_t i = first_overlap(v, off); i < v.size() && v[i].off < end; ++i) {
    ov += std::min(v[i].end(), end) - std::max<uint64_t>(v[i].off, off);
  }
  return ov;
}

}  // namespace

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

// Merge nw into the extents. The later write wins over whatever it
// overlaps; surviving parts of older extents keep their sn. Returns the
// growth in cached bytes. On an exact overwrite of a boxed extent its
// DataRef goes to *released, for the caller to delete after dropping the
// lock; boxes dropped by other overlap shapes are deleted here.
// REQUIRES: nw.len > 0, nw.end() <= block_size; nw's box (if any) is now
// owned by this block.
uint64_t Htmll::Block::merge(Ext nw, DataRef** released)
{
  ExtentVec& v = extents;
  const uint64_t off = nw.off, end = nw.end();
  // [i, k): the extents overlapping [off, end).
  const size_t i = first_overlap(v, off);
  size_t k = i;
  uint64_t removed = 0;
  for (; k < v.size() && v[k].off < end; ++k) {
    removed += std::min(v[k].end(), end) - std::max<uint64_t>(v[k].off, off);
  }
  if (k == i + 1 && v[i].off == off && v[i].len == nw.len) {
    // Exact overwrite, the common case for aligned rewrites.
    if (v[i].boxed()) {
      *released = v[i].ref;
    }
    v[i] = nw;
    return 0;
  }
  // What replaces [i, k): the head of v[i] before off, nw, the tail of
  // v[k-1] after end.
  Ext repl[3];
  size_t n = 0;
  const bool head = k > i && v[i].off < off;
  const bool tail = k > i && v[k - 1].end() > end;
  Ext t;
  if (tail) {
    const Ext& last = v[k - 1];
    const uint32_t cut = uint32_t(end - last.off);
    t = last;
    if (head && k == i + 1) {
      // One extent sticks out on both sides: its tail becomes an extent of
      // its own (sharing the buffer, or the same journal write).
      t.off = uint32_t(end);
      t.len = last.len - cut;
      if (last.boxed()) {
        t.ref = new DataRef(last.ref->slice(cut, t.len));
      } else {
        t.j.delta += cut;
      }
    } else {
      t.drop_front(cut);  // the box, if any, moves over with it
    }
  }
  // Delete the boxes of the extents dropped whole; the head keeps v[i]'s,
  // the tail v[k-1]'s (or a new one, above).
  for (size_t m = i; m < k; ++m) {
    if (v[m].boxed() && !(head && m == i) && !(tail && m == k - 1)) {
      delete v[m].ref;
    }
  }
  if (head) {
    repl[n] = v[i];
    repl[n++].keep_front(uint32_t(off - v[i].off));
  }
  repl[n++] = nw;
  if (tail) {
    repl[n++] = t;
  }
  const size_t old = k - i;
  if (n <= old) {
    std::copy(repl, repl + n, v.begin() + i);
    v.erase(v.begin() + i + n, v.begin() + k);
  } else {
    std::copy(repl, repl + old, v.begin() + i);
    reserve_more(v, n - old);
    v.insert(v.begin() + k, repl + old, repl + n);
  }
  return nw.len - removed;
}

const char* to_string(InsertResult r)
{
  switch (r) {
  case InsertResult::MERGED:
    return "merged";
  case InsertResult::DIRECT_NO_SLOT:
    return "direct_no_slot";
  case InsertResult::DIRECT_NO_BLOCK:
    return "direct_no_block";
  case InsertResult::DIRECT_BEYOND_BLOCK:
    return "direct_beyond_block";
  case InsertResult::DIRECT_MEMORY_CAP:
    return "direct_memory_cap";
  }
  return "unknown";
}

int HtmllConfig::validate(const HtmllConfig& c, std::string* err)
{
  std::string scratch;
  if (!err) {
    err = &scratch;
  }
  constexpr uint32_t MAX_COUNT = uint32_t(1) << 24;
  if (c.slots == 0 || c.slots > MAX_COUNT) {
    *err = "slots must be in [1, 2^24] (got " + std::to_string(c.slots) + ")";
    return -EINVAL;
  }
  if (c.blocks == 0 || c.blocks > MAX_COUNT) {
    *err = "blocks must be in [1, 2^24] (got " + std::to_string(c.blocks) + ")";
    return -EINVAL;
  }
  if (c.max_slots != 0 && (c.max_slots < c.slots || c.max_slots > MAX_COUNT)) {
    *err = "max_slots must be 0 or in [slots, 2^24] (got " +
           std::to_string(c.max_slots) + ", slots " + std::to_string(c.slots) + ")";
    return -EINVAL;
  }
  if (c.max_blocks != 0 && (c.max_blocks < c.blocks || c.max_blocks > MAX_COUNT)) {
    *err = "max_blocks must be 0 or in [blocks, 2^24] (got " +
           std::to_string(c.max_blocks) + ", blocks " + std::to_string(c.blocks) + ")";
    return -EINVAL;
  }
  if (c.block_size < 4096 || c.block_size > (uint64_t(1) << 30) ||
      (c.block_size & (c.block_size - 1)) != 0) {
    *err = "block_size must be a power of two in [4096, 2^30] (got " +
           std::to_string(c.block_size) + ")";
    return -EINVAL;
  }
  if (c.max_bytes < c.block_size) {
    *err = "max_bytes must be >= block_size (got " +
           std::to_string(c.max_bytes) + " < " +
           std::to_string(c.block_size) + ")";
    return -EINVAL;
  }
  return 0;
}

Htmll::Htmll(const HtmllConfig& c)
  : config_(c)
{
  MIM_CHECK(HtmllConfig::validate(c, nullptr) == 0);
  active_ = std::make_unique<Generation>(c.slots, c.blocks);
}

Htmll::~Htmll() = default;

void Htmll::to_state(std::unique_ptr<Block> frozen,
                     std::unique_ptr<Block> active, ObjectState* out)
{
  ObjectState st;
  std::vector<CachedExtent> top;
  if (frozen) {
    st.extents = frozen->extract();
    frozen->sns.append_to(&st.sns);
  }
  if (active) {
    top = active->extract();
    active->sns.append_to(&st.sns);
  }
  st.extents = overlay_extents(std::move(st.extents), std::move(top));
  *out = std::move(st);
}

InsertResult Htmll::insert(std::string_view cid, std::string_view oid,
                           sn_t sn, uint64_t offset, DataRef data)
{
  return insert(cid, oid, sn, offset, std::move(data), nullptr);
}

InsertResult Htmll::insert(std::string_view cid, std::string_view oid,
                           sn_t sn, uint64_t offset, DataRef data,
                           ObjectState* taken)
{
  // The store never passes an empty write; caching one would have no bytes
  // to flush and would leave the sn unaccounted.
  MIM_CHECK(data.length > 0);
  const uint64_t h = hash_oid(oid);
  Incoming in(std::move(data));  // any allocation before mu_
  InsertResult r;
  std::unique_ptr<Block> frozen_block, active_block;
  {
    std::lock_guard l(mu_);
    r = insert_locked(cid, oid, h, sn, offset, in);
    if (r != InsertResult::MERGED && taken) {
      if (frozen_) {
        frozen_block = remove_block_locked(*frozen_, cid, oid, h);
      }
      active_block = remove_block_locked(*active_, cid, oid, h);
    }
  }
  if (r != InsertResult::MERGED && taken) {
    to_state(std::move(frozen_block), std::move(active_block), taken);
  }
  return r;
  // `in` (holding a replaced DataRef, or the box of a refused write) and
  // `data` are released after mu_.
}

InsertResult Htmll::insert_locked(std::string_view cid, std::string_view oid,
                                  uint64_t h, sn_t sn, uint64_t offset,
                                  Incoming& in)
{
  Generation& g = *active_;
  ++counters_.inserts;

  // The cid's position, counting the call towards its frequency either way.
  uint32_t pos = g.find_pos(cid);
  FreqMap::iterator unbound = unbound_freq_.end();
  if (pos != NO_POS) {
    ++g.pos_count[pos];
  } else {
    unbound = unbound_freq_.find(cid);
    if (unbound == unbound_freq_.end()) {
      unbound = unbound_freq_.emplace(std::string(cid), 0).first;
    }
    ++unbound->second;
  }

  // Growth is decided here and done only once the write is accepted, so a
  // DIRECT_* result changes nothing but the counters.
  Slot* slot = g.find_slot(oid, h);
  size_t grow_table_to = 0;
  if (!slot) {
    const size_t n = g.table.size();
    if (g.live.size() + 1 > g.grow_at() && n < config_.slot_cap()) {
      grow_table_to = std::min<size_t>(2 * n, config_.slot_cap());
    } else if (g.live.size() == n) {
      ++counters_.direct_no_slot;
      return InsertResult::DIRECT_NO_SLOT;
    }
  }
  size_t grow_pos_to = 0;
  bool bind = false;
  if (pos == NO_POS) {
    const size_t m = g.pos_cid.size();
    if (g.npos_bound < m) {
      bind = true;
    } else if (m < config_.block_cap()) {
      bind = true;
      grow_pos_to = std::min<size_t>(2 * m, config_.block_cap());
    }
  }
  if (bind) {
    pos = g.npos_bound;  // bound below, only if the write is merged
  }
  if (pos == NO_POS) {
    ++counters_.direct_no_block;
    return InsertResult::DIRECT_NO_BLOCK;
  }
  const uint64_t len = in.length;
  if (offset > config_.block_size || len > config_.block_size - offset) {
    ++counters_.direct_beyond_block;
    return InsertResult::DIRECT_BEYOND_BLOCK;
  }
  Block* b = slot ? slot->find(pos) : nullptr;
  // Invariant: total <= max_bytes, so the subtraction cannot wrap.
  const uint64_t total = g.bytes + (frozen_ ? frozen_->bytes : 0);
  assert(total <= config_.max_bytes);
  if (len > config_.max_bytes - total) {
    // Only now pay for the exact figure: an overwrite of cached bytes
    // grows the cache by less than len.
    const uint64_t ov = b ? overlap_bytes(b->extents, offset, offset + len) : 0;
    if (len - ov > config_.max_bytes - total) {
      ++counters_.direct_memory_cap;
      return InsertResult::DIRECT_MEMORY_CAP;
    }
  }

  // Accepted: from here on nothing fails.
  if (grow_table_to) {
    g.grow_table(grow_table_to);
    ++counters_.table_grows;
  }
  if (grow_pos_to) {
    g.grow_positions(grow_pos_to);
    ++counters_.position_grows;
  }
  if (!slot) {
    slot = claim_slot_locked(g, oid, h);
  }
  if (bind) {
    g.bind(pos, cid, unbound->second);
    unbound_freq_.erase(unbound);
  }
  if (!b) {
    slot->blocks.emplace_back(pos, std::make_unique<Block>());
    b = slot->blocks.back().second.get();
    ++g.blocks;
  }
  const size_t extents_before = b->extents.size();
  // Checked above: offset + len <= block_size <= 2^30.
  in.ext.off = uint32_t(offset);
  in.ext.len = uint32_t(len);
  MIM_CHECK(b->sns.size() < UINT32_MAX);
  in.ext.sn_idx = uint32_t(b->sns.size());
  in.box.release();  // if boxed, in.ext.ref now belongs to the block
  const uint64_t grown = b->merge(in.ext, &in.released);
  b->bytes += grown;
  g.bytes += grown;
  g.pos_bytes[pos] += grown;
  g.extents += b->extents.size() - extents_before;
  b->sns.push_back(sn);
  g.recharge(*b);
  g.recharge(*slot);
  ++counters_.merged;
  return InsertResult::MERGED;
}

Htmll::Slot* Htmll::claim_slot_locked(Generation& g, std::string_view oid,
                                      uint64_t h)
{
  std::unique_ptr<Slot> s;
  if (!free_slots_.empty()) {
    s = std::move(free_slots_.back());  // keeps its string and vector capacity
    free_slots_.pop_back();
  } else {
    s = std::make_unique<Slot>();
  }
  s->oid.assign(oid);
  s->hash = h;
  s->live_index = g.live.size();
  Slot* raw = s.get();
  g.live.push_back(std::move(s));
  g.insert_entry(Generation::Entry{h, raw});
  return raw;
}

std::unique_ptr<Htmll::Block> Htmll::remove_block_locked(
  Generation& g, std::string_view cid, std::string_view oid, uint64_t h)
{
  const uint32_t pos = g.find_pos(cid);
  if (pos == NO_POS) {
    return nullptr;
  }
  const size_t idx = g.find_index(oid, h);
  if (idx == g.table.size()) {
    return nullptr;
  }
  Slot* slot = g.table[idx].slot;
  auto bit = std::find_if(slot->blocks.begin(), slot->blocks.end(),
                          [pos](const auto& pb) { return pb.first == pos; });
  if (bit == slot->blocks.end()) {
    return nullptr;
  }
  std::unique_ptr<Block> b = std::move(bit->second);
  if (bit + 1 != slot->blocks.end()) {
    *bit = std::move(slot->blocks.back());
  }
  slot->blocks.pop_back();
  --g.blocks;
  g.bytes -= b->bytes;
  g.pos_bytes[pos] -= b->bytes;
  g.extents -= b->extents.size();
  g.discharge(*b);

  if (slot->blocks.empty()) {
    g.discharge(*slot);
    // Free the slot: out of the table, out of live (swap with the last).
    g.erase_index(idx);
    const uint32_t li = slot->live_index;
    std::unique_ptr<Slot> s = std::move(g.live[li]);
    if (li + 1 != g.live.size()) {
      g.live[li] = std::move(g.live.back());
      g.live[li]->live_index = li;
    }
    g.live.pop_back();
    if (free_slots_.size() < g.table.size()) {
      free_slots_.push_back(std::move(s));
    }
  }
  return b;
}

const Htmll::Block* Htmll::find_block_locked(const Generation& g,
                                             std::string_view cid,
                                             std::string_view oid,
                                             uint64_t h) const
{
  const uint32_t pos = g.find_pos(cid);
  if (pos == NO_POS) {
    return nullptr;
  }
  const Slot* slot = g.find_slot(oid, h);
  return slot ? slot->find(pos) : nullptr;
}

void Htmll::lookup(std::string_view cid, std::string_view oid, uint64_t off,
                   uint64_t len, std::vector<CachedExtent>* out) const
{
  out->clear();
  if (len == 0) {
    return;
  }
  const uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
  const uint64_t h = hash_oid(oid);
  std::vector<CachedExtent> base;
  {
    std::lock_guard l(mu_);
    if (frozen_) {
      if (const Block* b = find_block_locked(*frozen_, cid, oid, h)) {
        b->clip(off, end, &base);
      }
    }
    if (const Block* b = find_block_locked(*active_, cid, oid, h)) {
      b->clip(off, end, out);
    }
  }
  if (!base.empty()) {
    *out = overlay_extents(std::move(base), std::move(*out));
  }
}

bool Htmll::cached_end(std::string_view cid, std::string_view oid,
                       uint64_t* end) const
{
  const uint64_t h = hash_oid(oid);
  bool found = false;
  uint64_t e = 0;
  std::lock_guard l(mu_);
  for (const Generation* g : {frozen_.get(), active_.get()}) {
    if (!g) {
      continue;
    }
    if (const Block* b = find_block_locked(*g, cid, oid, h)) {
      // Extents do not overlap, so the last one ends highest. A block is
      // never empty (it is created by a merged write of length > 0).
      e = std::max(e, b->extents.back().end());
      found = true;
    }
  }
  if (found) {
    *end = e;
  }
  return found;
}

bool Htmll::contains(std::string_view cid, std::string_view oid) const
{
  const uint64_t h = hash_oid(oid);
  std::lock_guard l(mu_);
  return find_block_locked(*active_, cid, oid, h) ||
         (frozen_ && find_block_locked(*frozen_, cid, oid, h));
}

bool Htmll::take_object(std::string_view cid, std::string_view oid,
                        ObjectState* out)
{
  const uint64_t h = hash_oid(oid);
  std::unique_ptr<Block> fb, ab;
  {
    std::lock_guard l(mu_);
    if (frozen_) {
      fb = remove_block_locked(*frozen_, cid, oid, h);
    }
    ab = remove_block_locked(*active_, cid, oid, h);
  }
  if (!fb && !ab) {
    return false;
  }
  to_state(std::move(fb), std::move(ab), out);
  return true;
}

bool Htmll::take_frozen(std::string_view cid, std::string_view oid,
                        ObjectState* out)
{
  const uint64_t h = hash_oid(oid);
  std::unique_ptr<Block> fb;
  {
    std::lock_guard l(mu_);
    if (frozen_) {
      fb = remove_block_locked(*frozen_, cid, oid, h);
    }
  }
  if (!fb) {
    return false;
  }
  to_state(std::move(fb), nullptr, out);
  return true;
}

bool Htmll::freeze(FlushOrder* order)
{
  // Copied out under mu_, sorted after it.
  struct PosInfo {
    std::string cid;
    uint64_t bytes = 0;
    std::vector<std::string> oids;
  };
  std::vector<PosInfo> info;
  uint64_t blocks = 0, bytes = 0;
  {
    std::lock_guard l(mu_);
    if (frozen_) {
      return false;
    }
    Generation& g = *active_;
    std::unique_ptr<Generation> next = std::move(spare_);
    if (!next) {
      next = std::make_unique<Generation>(g.table.size(), g.pos_cid.size());
    } else if (next->table.size() < g.table.size()) {
      next->grow_table(g.table.size());  // empty: no entries to move
    }

    // Rebind: the M collections with the most insert() calls since the
    // last freeze, ties by cid so the choice is deterministic.
    std::vector<std::pair<uint64_t, std::string_view>> cand;
    cand.reserve(g.npos_bound + unbound_freq_.size());
    for (uint32_t j = 0; j < g.npos_bound; ++j) {
      if (g.pos_count[j] > 0) {
        cand.emplace_back(g.pos_count[j], g.pos_cid[j]);
      }
    }
    for (const auto& [cid, n] : unbound_freq_) {
      cand.emplace_back(n, cid);
    }
    const size_t k = std::min<size_t>(cand.size(), config_.block_cap());
    auto by_freq = [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), by_freq);
    const size_t m = std::max({next->pos_cid.size(), g.pos_cid.size(), k});
    if (m > next->pos_cid.size()) {
      next->grow_positions(m);
    }
    for (size_t i = 0; i < k; ++i) {
      next->bind(i, cand[i].second, 0);
    }
    cand.clear();           // views into unbound_freq_ die with it
    unbound_freq_.clear();

    if (order) {
      info.resize(g.npos_bound);
      for (uint32_t j = 0; j < g.npos_bound; ++j) {
        info[j].cid = g.pos_cid[j];
        info[j].bytes = g.pos_bytes[j];
      }
      for (const auto& s : g.live) {
        for (const auto& pb : s->blocks) {
          info[pb.first].oids.push_back(s->oid);
        }
      }
    }
    blocks = g.blocks;
    bytes = g.bytes;
    frozen_ = std::move(active_);
    active_ = std::move(next);
    ++counters_.freezes;
  }
  if (order) {
    std::erase_if(info, [](const PosInfo& p) { return p.oids.empty(); });
    std::sort(info.begin(), info.end(), [](const PosInfo& a, const PosInfo& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.cid < b.cid;
    });
    order->collections.clear();
    order->collections.reserve(info.size());
    for (PosInfo& p : info) {
      std::sort(p.oids.begin(), p.oids.end());
      order->collections.emplace_back(std::move(p.cid), std::move(p.oids));
    }
    order->blocks = blocks;
    order->bytes = bytes;
  }
  return true;
}

void Htmll::end_flush()
{
  std::unique_ptr<Generation> old;
  {
    std::lock_guard l(mu_);
    if (!frozen_) {
      return;
    }
    assert(frozen_->live.empty());  // REQUIRES: every object was taken
    old = std::move(frozen_);
    if (old->live.empty()) {
      old->reset();
      spare_ = std::move(old);
    }
  }
  // Objects never taken are dropped here, outside mu_.
}

bool Htmll::has_frozen() const
{
  std::lock_guard l(mu_);
  return frozen_ != nullptr;
}

HtmllStats Htmll::stats() const
{
  std::lock_guard l(mu_);
  HtmllStats s = counters_;
  s.slots_used = active_->live.size();
  s.blocks_used = active_->blocks;
  s.bytes = active_->bytes;
  s.extents = active_->extents;
  s.index_bytes = active_->index_bytes();
  if (frozen_) {
    s.frozen_index_bytes = frozen_->index_bytes();
    s.frozen_slots = frozen_->live.size();
    s.frozen_blocks = frozen_->blocks;
    s.frozen_bytes = frozen_->bytes;
    s.frozen_extents = frozen_->extents;
  }
  s.table_slots = active_->table.size();
  s.positions = active_->pos_cid.size();
  return s;
}

std::vector<std::pair<std::string, uint64_t>> Htmll::top_collections() const
{
  std::lock_guard l(mu_);
  std::vector<std::pair<std::string, uint64_t>> v;
  v.reserve(active_->npos_bound);
  for (uint32_t j = 0; j < active_->npos_bound; ++j) {
    v.emplace_back(active_->pos_cid[j], active_->pos_count[j]);
  }
  return v;
}

}  // namespace mim
