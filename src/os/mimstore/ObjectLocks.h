// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: object stripe locks. One object's file data is serialized
 * between the apply thread's direct writes and other ops, the flush thread
 * and readers by one of 256 mutexes, chosen by hashing the collection and
 * file names (objects share a stripe by chance; that only costs waiting).
 * A write that merges into the cache takes none: it only adds to the
 * active generation, and the flush holds a stripe across file writes that
 * can wait seconds behind a full disk queue.
 *
 * Order: a stripe is taken before coll_lock, Collection::lock, Durability's
 * locks and the HTMLL's lock (an op locks its object first, then looks it up).
 * An op on two objects (clone, rename, collection_move_rename) takes both
 * stripes with TwoLocks, in address order, so two such ops cannot deadlock.
 * The stripes share one name and stay std::mutex (lockdep cannot tell 256
 * instances of one lock apart); TwoLocks is their order.
 */
#pragma once

#include <array>
#include <functional>
#include <mutex>
#include <string>

namespace mimstore {

class ObjectLocks {
 public:
  static constexpr size_t STRIPES = 256;

  /// The stripe of object file `fname` in collection directory `cname`.
  std::mutex& of(const std::string& cname, const std::string& fname) {
    size_t h = std::hash<std::string>()(fname) ^
      (std::hash<std::string>()(cname) << 1);
    return stripes[h % STRIPES];
  }

 private:
  std::array<std::mutex, STRIPES> stripes;
};

/// Lock two stripes in address order (they may be the same).
struct TwoLocks {
  std::unique_lock<std::mutex> a, b;
  TwoLocks(std::mutex& x, std::mutex& y) {
    if (&x == &y) {
      a = std::unique_lock(x);
    } else if (&x < &y) {
      a = std::unique_lock(x);
      b = std::unique_lock(y);
    } else {
      a = std::unique_lock(y);
      b = std::unique_lock(x);
    }
  }
};

}  // namespace mimstore
