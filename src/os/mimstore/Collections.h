// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the registry of collection handles by name, and the tombstones
 * of collections a PG merge removed.
 *
 * A tombstone (objects/.gone/<collection>, ObjectFiles.h) records the
 * position of the merge that emptied and removed a collection, so that a
 * replay of that merge knows its objects have moved. It is needed until
 * the checkpoint passes the merge: replay never starts before a persisted
 * checkpoint.
 *
 * Locks (both leaves but for what is said):
 *   lock            the handle map. Outer to Collection::lock (list, fsck
 *                   and holds_anywhere take both); taken after an object
 *                   stripe (ObjectLocks.h).
 *   tombstone_lock  `tombstones` and the tombstone files, so that trimming
 *                   an old tombstone never removes a newer one of the same
 *                   name. Taken alone.
 */
#pragma once

#include <map>
#include <unordered_map>

#include "include/common_fwd.h"
#include "os/SequencerPosition.h"

#include "Collection.h"
#include "core/thread_annotations.h"
#include "core/types.h"

namespace mimstore {

class ObjectFiles;

class Collections {
 public:
  explicit Collections(CephContext* cct) : cct(cct) {}

  /// The handle of `c`, or null.
  CollectionRef get(const coll_t& c) const;
  /// The handle of `c`; a new one, not existing until its create op
  /// applies, if there is none (transactions are queued on a handle
  /// before the collection is made).
  CollectionRef get_or_create(MIMStore* store, const coll_t& c);
  /// Register a handle loaded from disk at mount.
  void add(const CollectionRef& c);
  /// Forget `c` (removed, or merged into another).
  void drop(const coll_t& c);
  /// Forget every handle and tombstone (umount, failed mount).
  void clear();
  size_t size() const;

  /// f(cid, handle) for each handle, with the registry locked (shared):
  /// f must not call back into the registry.
  template <typename F>
  void for_each(F&& f) const {
    mim::ReadLock l(lock);
    for (auto& [cid, c] : map) {
      f(cid, c);
    }
  }

  /// Some existing collection holds `oid`.
  bool holds_anywhere(const ghobject_t& oid) const;

  /// Persist the tombstone of `c`, removed by the merge at `pos`.
  int record_tombstone(ObjectFiles* files, const coll_t& c,
                       const SequencerPosition& pos);
  /// Read the tombstones left on disk (mount).
  int load_tombstones(ObjectFiles* files);
  /// Remove the tombstones of merges before the persisted `checkpoint`.
  /// REQUIRES: `checkpoint` is persisted: replay never starts before it, so
  /// a tombstone of an earlier merge has nothing left to stop.
  void trim_tombstones(ObjectFiles* files, mim::sn_t checkpoint);

 private:
  CephContext* const cct;

  /// Protects map.
  mutable mim::SharedMutex lock;
  std::unordered_map<coll_t, CollectionRef> map MIM_GUARDED_BY(lock);

  /// Protects tombstones and the tombstone files.
  mim::Mutex tombstone_lock;
  /// By the sn of the merge.
  std::map<coll_t, mim::sn_t> tombstones MIM_GUARDED_BY(tombstone_lock);
};

}  // namespace mimstore
