// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: one collection's handle. It holds the collection's object
 * index (rebuilt from the directory at mount) and what a reader must wait
 * for before it reads: the sn of the last transaction queued on the handle,
 * per object hash slot and for the collection as a whole.
 *
 * Locks: `lock` protects objects, bits and exists. The queued-sn fields
 * are atomics written under the Sequencer's submit_lock (in admit's
 * callback, so in sn order) and read without a lock.
 */
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "os/ObjectStore.h"

#include "core/thread_annotations.h"

namespace mimstore {

class MIMStore;

struct Collection : public ObjectStore::CollectionImpl {
  MIMStore* const store;
  const std::string name;  ///< cid.to_str(): directory and HTMLL key

  /// Protects objects, bits and exists.
  mim::SharedMutex lock;
  /// In collection_list order.
  std::set<ghobject_t> objects MIM_GUARDED_BY(lock);
  int bits MIM_GUARDED_BY(lock) = 0;
  /// The directory exists. A handle made by create_new_collection exists
  /// only once its create op is applied.
  bool exists MIM_GUARDED_BY(lock) = true;

  /// sn of the last transaction queued on this handle. Written under
  /// the submit lock; collection_list and flush wait until applied_sn
  /// reaches it.
  std::atomic<uint64_t> last_queued_sn{0};
  /// A read of one object waits only for the transactions that changed
  /// it (by hash slot) or the collection as a whole, as FileStore's
  /// wait_for_apply(oid) did: not behind other objects' applies, which
  /// writeback throttling can hold up for seconds. An OSD thread held
  /// that long (reading object info for a write) lets the PG's read
  /// lease lapse, and Reef then leaves a 1-OSD PG laggy for good.
  /// Written under the submit lock.
  static constexpr size_t APPLY_SLOTS = 128;
  std::array<std::atomic<uint64_t>, APPLY_SLOTS> slot_queued_sn{};
  std::atomic<uint64_t> coll_op_queued_sn{0};
  /// The slot of an object, from its std::hash<ghobject_t>.
  static size_t slot_of(size_t object_hash) {
    return object_hash % APPLY_SLOTS;
  }
  /// Transaction `sn` is queued on this handle, changing the objects
  /// whose hashes are given, and the collection as a whole if
  /// collection_wide. REQUIRES: the Sequencer's submit_lock.
  void note_queued(uint64_t sn, const std::vector<size_t>& object_hashes,
                   bool collection_wide) {
    last_queued_sn = sn;
    for (size_t h : object_hashes) {
      slot_queued_sn[slot_of(h)] = sn;
    }
    if (collection_wide) {
      coll_op_queued_sn = sn;
    }
  }
  /// What a read of `oid` must see applied.
  uint64_t queued_sn_for(const ghobject_t& oid) const {
    return std::max(
      slot_queued_sn[slot_of(std::hash<ghobject_t>()(oid))].load(),
      coll_op_queued_sn.load());
  }
  std::atomic<ContextQueue*> commit_queue{nullptr};

  // (defined in MIMStore.cc, with the apply progress they wait on)
  void flush() override;
  bool flush_commit(Context* c) override;
  /// The collection exists and holds the object. Takes lock (shared).
  bool has(const ghobject_t& oid) {
    mim::ReadLock l(lock);
    return exists && objects.count(oid);
  }

 private:
  FRIEND_MAKE_REF(Collection);
  Collection(MIMStore* s, const coll_t& c);
};
using CollectionRef = ceph::ref_t<Collection>;

}  // namespace mimstore
