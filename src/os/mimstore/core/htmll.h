// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: HTMLL (the paper's open-address hash table-based multiple
 * linked-list), the in-memory merge cache of MIM (paper, section 4.3).
 *
 * A hash table of N slots keyed by oid (open addressing), each slot heading
 * a list of M object-sized blocks; block position j of every list belongs
 * to one collection (cid). A write <cid, oid, sn, data> whose oid has (or
 * gets) a slot and whose cid has a position is merged into that block;
 * otherwise the caller writes it straight back (InsertResult says why).
 *
 * Double buffered: freeze() turns the active generation into a frozen one
 * that the flush thread drains object by object (take_frozen()), while
 * writes keep merging into a new active generation. Reads see both, the
 * active one on top.
 *
 * Blocks are allocated lazily and hold extents (offset -> DataRef), not
 * block_size buffers, so memory grows with the bytes cached, not with
 * N * M * block_size. An extent is a 32-byte record; a journal-only one
 * (DataRef::in_journal) keeps its write's JournalSource inline, so the
 * DataRefs that lookup() and take_*() hand out carry a new JournalSource
 * equal to the one inserted, not the same object.
 *
 * Index memory: each generation counts the heap its records take
 * (HtmllStats::index_bytes): every block's vectors at their capacity and the
 * block itself, every live slot with its name and block list, and the slot
 * table. Kept exact as records change, so the store can hold the index to
 * a memory budget (mimstore_cache_index_max_bytes) without a walk. Not
 * counted: boxed DataRefs (the bytes-in-memory form, where the data itself
 * dominates and max_bytes bounds it), recycled slots, the position tables.
 *
 * Geometry grows: N and M are initial sizes. The slot table doubles (a
 * rehash under the lock) when a new oid would take it past 7/8 load, and
 * the positions double when a new cid finds all of them bound, up to
 * max_slots and max_blocks; only at those caps do writes go direct for
 * want of a slot or position. A new generation starts at the size the
 * previous one reached, so the rehash is paid once per workload, not once
 * per generation.
 *
 * Ownership hand-off: take_object()/take_frozen() remove bytes from the
 * cache; until the caller has written them to the backend file, neither the
 * cache nor the file shows them. The caller must keep readers and direct
 * writers of that object out for that window (the store's object lock),
 * and must write a taken state before any later direct write to the same
 * object. Merges may go on meanwhile: they only add to the active
 * generation, which the taken state does not include.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/thread_annotations.h"
#include "core/types.h"
#include "core/writeback_plan.h"

namespace mim {

struct HtmllConfig {
  uint32_t slots = 1024;                     ///< N: initial hash table slots (distinct oids per generation)
  uint32_t blocks = 64;                      ///< M: initial blocks per slot, one position per collection
  uint32_t max_slots = 0;                    ///< the table grows up to this; 0: fixed at slots
  uint32_t max_blocks = 0;                   ///< positions grow up to this; 0: fixed at blocks
  uint64_t block_size = uint64_t(4) << 20;   ///< object-sized window [0, block_size)
  uint64_t max_bytes = uint64_t(256) << 20;  ///< hard cap on cached bytes, both generations

  uint32_t slot_cap() const { return max_slots ? max_slots : slots; }
  uint32_t block_cap() const { return max_blocks ? max_blocks : blocks; }

  /// 0, or -EINVAL with *err naming the field: slots and blocks in
  /// [1, 2^24]; max_slots and max_blocks 0 or in [slots, 2^24] and
  /// [blocks, 2^24]; block_size a power of two in [4096, 2^30];
  /// max_bytes >= block_size.
  static int validate(const HtmllConfig& c, std::string* err);
};

enum class InsertResult {
  MERGED,               ///< cached; the caller must not write it now
  DIRECT_NO_SLOT,       ///< oid has no slot and the table is full at max_slots
  DIRECT_NO_BLOCK,      ///< cid has no block position (max_blocks bound to other cids)
  DIRECT_BEYOND_BLOCK,  ///< offset + length > block_size
  DIRECT_MEMORY_CAP,    ///< accepting it would exceed max_bytes
};
const char* to_string(InsertResult r);

struct ObjectState {
  /// Newest-wins resolved, non-overlapping, sorted by offset. A part of an
  /// extent that survived a newer overwrite keeps its own sn.
  std::vector<CachedExtent> extents;
  /// Every sn merged into the object, once per MERGED insert() (multiplicity
  /// kept, for reference counting), frozen generation first, each
  /// generation in insert order.
  std::vector<sn_t> sns;
};

struct HtmllStats {
  // The active generation.
  uint64_t slots_used = 0;
  uint64_t blocks_used = 0;
  uint64_t bytes = 0;
  uint64_t extents = 0;
  // The frozen generation (0 when there is none); what is left of it.
  uint64_t frozen_slots = 0;
  uint64_t frozen_blocks = 0;
  uint64_t frozen_bytes = 0;
  uint64_t frozen_extents = 0;
  // The index's own heap, per generation (class comment, "Index memory").
  uint64_t index_bytes = 0;
  uint64_t frozen_index_bytes = 0;

  // Both generations: what the caps and budgets count.
  uint64_t all_bytes() const { return bytes + frozen_bytes; }
  uint64_t all_index_bytes() const { return index_bytes + frozen_index_bytes; }
  // The active generation's geometry: table entries and block positions.
  uint64_t table_slots = 0;
  uint64_t positions = 0;
  // Counters since construction.
  uint64_t inserts = 0;  ///< insert() calls
  uint64_t merged = 0;
  uint64_t direct_no_slot = 0;
  uint64_t direct_no_block = 0;
  uint64_t direct_beyond_block = 0;
  uint64_t direct_memory_cap = 0;
  uint64_t freezes = 0;
  uint64_t table_grows = 0;     ///< slot table rehashes to a larger size
  uint64_t position_grows = 0;  ///< block position vectors grown
};

/// What a freeze() froze: each collection once, with the oids that have a
/// block for it (sorted). Collections are ordered by cached bytes,
/// descending, ties by cid, so the flush thread writes the collections of
/// one directory consecutively (paper 4.4), biggest first.
struct FlushOrder {
  std::vector<std::pair<std::string, std::vector<std::string>>> collections;
  uint64_t blocks = 0;
  uint64_t bytes = 0;
};

class Htmll {
 public:
  /// REQUIRES: HtmllConfig::validate(c) == 0 (checked; aborts otherwise).
  explicit Htmll(const HtmllConfig& c);
  ~Htmll();

  Htmll(const Htmll&) = delete;
  Htmll& operator=(const Htmll&) = delete;

  /// Merge a write into the active generation, or say why it must go
  /// direct. Rules, checked in this order:
  ///  - oid keeps its slot, or takes a free one by open addressing;
  ///    none free -> DIRECT_NO_SLOT.
  ///  - cid's block position; an unbound position is bound to cid on first
  ///    use (only if the write is merged); none -> DIRECT_NO_BLOCK.
  ///  - offset + length > block_size -> DIRECT_BEYOND_BLOCK.
  ///  - cached bytes (both generations) would exceed max_bytes, counting
  ///    the bytes this write replaces -> DIRECT_MEMORY_CAP.
  /// Every call counts towards cid's frequency, merged or not. A merged
  /// write replaces the cached bytes it overlaps (the later call wins). On a
  /// DIRECT_* result nothing is changed except the counters; the caller
  /// should take_object() first if the object has cached bytes.
  /// REQUIRES: data.length > 0 (checked; aborts otherwise).
  InsertResult insert(std::string_view cid, std::string_view oid, sn_t sn,
                      uint64_t offset, DataRef data);

  /// As above; and on a DIRECT_* result also takes the object's cached
  /// state (both generations) into *taken, in the same critical section, so
  /// that no merge can slip in between. taken->extents is empty when
  /// nothing was cached. *taken is left alone on MERGED.
  InsertResult insert(std::string_view cid, std::string_view oid, sn_t sn,
                      uint64_t offset, DataRef data, ObjectState* taken);

  /// Cached bytes overlapping [off, off + len), clipped to that range, the
  /// active generation over the frozen one; non-overlapping, sorted. *out
  /// is replaced.
  void lookup(std::string_view cid, std::string_view oid, uint64_t off,
              uint64_t len, std::vector<CachedExtent>* out) const;

  /// Highest cached end offset over both generations; false if nothing is
  /// cached for the object.
  bool cached_end(std::string_view cid, std::string_view oid,
                  uint64_t* end) const;

  bool contains(std::string_view cid, std::string_view oid) const;

  /// Remove the object from both generations and return its state merged,
  /// active over frozen. False (and *out untouched) if nothing was cached.
  bool take_object(std::string_view cid, std::string_view oid,
                   ObjectState* out);

  /// Remove the object from the frozen generation only and return its
  /// state: the flush thread's per-object step. False (and *out untouched)
  /// if it is not there (never was, or already taken).
  bool take_frozen(std::string_view cid, std::string_view oid,
                   ObjectState* out);

  /// Freeze the active generation and start an empty one of the same
  /// geometry: every slot free, block positions rebound to the collections
  /// with the most insert() calls since the previous freeze (at most
  /// max_blocks; ties by cid), frequencies reset.
  /// Returns false, changing nothing, while a frozen generation exists.
  /// On success fills *order (may be null).
  bool freeze(FlushOrder* order);

  /// Drop the frozen generation. REQUIRES: all its objects were taken
  /// (assert()ed in debug builds; in any case whatever is left is dropped,
  /// so it must have been written some other way). No-op if none.
  void end_flush();

  bool has_frozen() const;
  HtmllStats stats() const;

  /// The active generation's position bindings, in position order, with the
  /// insert() calls counted for each since the last freeze.
  std::vector<std::pair<std::string, uint64_t>> top_collections() const;

  const HtmllConfig& config() const { return config_; }

 private:
  struct Block;
  struct Slot;
  struct Generation;
  struct Incoming;

  struct StrHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  using FreqMap = std::unordered_map<std::string, uint64_t, StrHash,
                                     std::equal_to<>>;

  InsertResult insert_locked(std::string_view cid, std::string_view oid,
                             uint64_t hash, sn_t sn, uint64_t offset,
                             Incoming& in) MIM_REQUIRES(mu_);
  Slot* claim_slot_locked(Generation& g, std::string_view oid, uint64_t hash)
    MIM_REQUIRES(mu_);
  std::unique_ptr<Block> remove_block_locked(Generation& g,
                                             std::string_view cid,
                                             std::string_view oid,
                                             uint64_t hash) MIM_REQUIRES(mu_);
  const Block* find_block_locked(const Generation& g, std::string_view cid,
                                 std::string_view oid, uint64_t hash) const
    MIM_REQUIRES(mu_);

  // Blocks taken out of the cache (the caller owns them) as one state, the
  // active block over the frozen one. Either may be null. Needs no lock.
  static void to_state(std::unique_ptr<Block> frozen,
                       std::unique_ptr<Block> active, ObjectState* out);

  // Constant after construction.
  const HtmllConfig config_;

  // One mutex guards everything below. Critical sections are short: hashing
  // happens before taking it, extents taken out are converted and merged
  // after releasing it, and a replaced DataRef is released outside it
  // where the code can arrange that.
  mutable Mutex mu_;
  std::unique_ptr<Generation> active_ MIM_GUARDED_BY(mu_);  // never null
  std::unique_ptr<Generation> frozen_ MIM_GUARDED_BY(mu_);  // null: none
  // an emptied generation kept for reuse
  std::unique_ptr<Generation> spare_ MIM_GUARDED_BY(mu_);
  /// insert() calls since the last freeze for cids without a position in
  /// the active generation (bound cids count in Generation::pos_count).
  FreqMap unbound_freq_ MIM_GUARDED_BY(mu_);
  // recycled slots, at most the table size
  std::vector<std::unique_ptr<Slot>> free_slots_ MIM_GUARDED_BY(mu_);
  HtmllStats counters_ MIM_GUARDED_BY(mu_);  // the counter fields only
};

}  // namespace mim
