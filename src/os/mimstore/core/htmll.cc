// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: HTMLL, the in-memory merge cache of MIM (paper, section 4.3):
 * inserting a write, lookups, taking objects out, freezing a generation.
 * The records a generation is made of, and their layout, are in
 * core/htmll_records.h.
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
#include "core/htmll_records.h"

namespace mim {

using namespace htmll_detail;

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
    MutexLock l(mu_);
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
    MutexLock l(mu_);
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
  MutexLock l(mu_);
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
  MutexLock l(mu_);
  return find_block_locked(*active_, cid, oid, h) ||
         (frozen_ && find_block_locked(*frozen_, cid, oid, h));
}

bool Htmll::take_object(std::string_view cid, std::string_view oid,
                        ObjectState* out)
{
  const uint64_t h = hash_oid(oid);
  std::unique_ptr<Block> fb, ab;
  {
    MutexLock l(mu_);
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
    MutexLock l(mu_);
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
    MutexLock l(mu_);
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
    MutexLock l(mu_);
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
  MutexLock l(mu_);
  return frozen_ != nullptr;
}

HtmllStats Htmll::stats() const
{
  MutexLock l(mu_);
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
  MutexLock l(mu_);
  std::vector<std::pair<std::string, uint64_t>> v;
  v.reserve(active_->npos_bound);
  for (uint32_t j = 0; j < active_->npos_bound; ++j) {
    v.emplace_back(active_->pos_cid[j], active_->pos_count[j]);
  }
  return v;
}

}  // namespace mim
