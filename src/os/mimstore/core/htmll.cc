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
 *   Block      extents: offset -> {DataRef, sn}, non-overlapping; the sns
 *              merged into it, in insert order
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
#include <map>

// Always on, like ceph_assert: for caller contract violations that would
// otherwise corrupt the cache silently.
#define MIM_CHECK(cond)                                                   \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

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

struct Ext {
  DataRef data;  // length is the extent's length
  sn_t sn = 0;
};
using ExtentMap = std::map<uint64_t, Ext>;

// The first extent of m that ends after off: where a walk over the extents
// overlapping [off, ...) starts.
ExtentMap::const_iterator first_overlap(const ExtentMap& m, uint64_t off)
{
  auto it = m.upper_bound(off);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->first + p->second.data.length > off) {
      return p;
    }
  }
  return it;
}

// Bytes of [off, end) that extents of m already cover.
uint64_t overlap_bytes(const ExtentMap& m, uint64_t off, uint64_t end)
{
  uint64_t ov = 0;
  for (auto it = first_overlap(m, off); it != m.end() && it->first < end; ++it) {
    ov += std::min(it->first + it->second.data.length, end) - std::max(it->first, off);
  }
  return ov;
}

// Append to *out the parts of m's extents inside [off, end), clipped.
void clip_extents(const ExtentMap& m, uint64_t off, uint64_t end,
                  std::vector<CachedExtent>* out)
{
  for (auto it = first_overlap(m, off); it != m.end() && it->first < end; ++it) {
    const uint64_t s = std::max(it->first, off);
    const uint64_t e = std::min(it->first + it->second.data.length, end);
    out->push_back(
      CachedExtent{s, it->second.data.slice(s - it->first, e - s), it->second.sn});
  }
}

}  // namespace

struct Htmll::Block {
  ExtentMap extents;
  std::vector<sn_t> sns;  // every merged sn, in insert order
  uint64_t bytes = 0;     // sum of extent lengths
};

struct Htmll::Slot {
  std::string oid;
  uint64_t hash = 0;
  uint32_t live_index = 0;  // index in Generation::live
  std::vector<std::pair<uint32_t, std::unique_ptr<Block>>> blocks;  // (position, block)

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

  // Make an emptied generation ready to be the active one again.
  // REQUIRES: live.empty() (so every table entry is already empty).
  void reset() {
    assert(live.empty());
    assert(blocks == 0 && bytes == 0 && extents == 0);
    cid_pos.clear();
    std::fill(pos_count.begin(), pos_count.end(), 0);
    std::fill(pos_bytes.begin(), pos_bytes.end(), 0);
    npos_bound = 0;
  }
};

namespace {

// Merge [off, off + data.length) into m. The later write wins over
// whatever it overlaps; surviving parts of older extents keep their sn.
// Returns the growth in cached bytes. May swap a replaced DataRef into
// `data`, so the caller releases it after dropping the lock.
uint64_t merge_extent(ExtentMap& m, uint64_t off, DataRef& data, sn_t sn)
{
  const uint64_t len = data.length;
  const uint64_t end = off + len;
  uint64_t removed = 0;
  ExtentMap::node_type spare;  // a node freed by this write, reused for it

  auto it = m.upper_bound(off);  // first extent starting after off
  bool covered = false;          // one older extent covers [off, end)
  if (it != m.begin()) {
    auto p = std::prev(it);
    const uint64_t pstart = p->first;
    const uint64_t pend = pstart + p->second.data.length;
    if (pend > off) {
      if (pstart == off && pend == end) {
        // Exact overwrite, the common case for aligned rewrites.
        std::swap(p->second.data, data);
        p->second.sn = sn;
        return 0;
      }
      if (pend > end) {
        // p sticks out past the new range: its tail [end, pend) survives
        // as an extent of its own (sharing p's buffer).
        it = m.emplace_hint(
          it, end,
          Ext{p->second.data.slice(end - pstart, pend - end), p->second.sn});
        covered = true;
      }
      removed += std::min(pend, end) - off;
      if (pstart < off) {
        p->second.data.length = off - pstart;  // keep p's head
      } else {
        spare = m.extract(p);
      }
    }
  }
  // Extents starting inside [off, end): drop those inside, trim the one
  // that straddles end. None if one extent covered the whole range.
  while (!covered && it != m.end() && it->first < end) {
    const uint64_t estart = it->first;
    const uint64_t eend = estart + it->second.data.length;
    auto nx = std::next(it);
    if (eend <= end) {
      removed += eend - estart;
      if (spare.empty()) {
        spare = m.extract(it);
      } else {
        m.erase(it);
      }
      it = nx;
    } else {
      // Keep [end, eend): re-key the node, advance the view in place (same
      // buffer, so no reference count traffic).
      const uint64_t cut = end - estart;
      removed += cut;
      auto nh = m.extract(it);
      nh.key() = end;
      nh.mapped().data.drop_front(cut);
      it = m.insert(nx, std::move(nh));
      break;
    }
  }
  if (spare.empty()) {
    m.emplace_hint(it, off, Ext{std::move(data), sn});
    data = DataRef();
  } else {
    spare.key() = off;
    std::swap(spare.mapped().data, data);  // old ref leaves with `data`
    spare.mapped().sn = sn;
    m.insert(it, std::move(spare));
  }
  return len - removed;
}

// Extents of a map the caller owns, moved out (no reference counts change).
std::vector<CachedExtent> extract_extents(ExtentMap& m)
{
  std::vector<CachedExtent> v;
  v.reserve(m.size());
  for (auto& [off, e] : m) {
    v.push_back(CachedExtent{off, std::move(e.data), e.sn});
  }
  return v;
}

}  // namespace

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
    st.extents = extract_extents(frozen->extents);
    st.sns = std::move(frozen->sns);
  }
  if (active) {
    top = extract_extents(active->extents);
    st.sns.insert(st.sns.end(), active->sns.begin(), active->sns.end());
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
  InsertResult r;
  std::unique_ptr<Block> frozen_block, active_block;
  {
    std::lock_guard l(mu_);
    r = insert_locked(cid, oid, h, sn, offset, data);
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
  // `data` (possibly holding a replaced DataRef) is released after mu_.
}

InsertResult Htmll::insert_locked(std::string_view cid, std::string_view oid,
                                  uint64_t h, sn_t sn, uint64_t offset,
                                  DataRef& data)
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
  const uint64_t len = data.length;
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
  const uint64_t grown = merge_extent(b->extents, offset, data, sn);
  b->bytes += grown;
  g.bytes += grown;
  g.pos_bytes[pos] += grown;
  g.extents += b->extents.size() - extents_before;
  b->sns.push_back(sn);
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

  if (slot->blocks.empty()) {
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
        clip_extents(b->extents, off, end, &base);
      }
    }
    if (const Block* b = find_block_locked(*active_, cid, oid, h)) {
      clip_extents(b->extents, off, end, out);
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
      const auto& last = *b->extents.rbegin();
      e = std::max(e, last.first + last.second.data.length);
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
  if (frozen_) {
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
