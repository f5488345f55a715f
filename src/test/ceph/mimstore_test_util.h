// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore Ceph-tier tests: helpers shared by the test files.
 *
 * StoreDir   a scratch directory with a data dir and a journal file
 * Conf       scoped config overrides (restored on destruction)
 * in_mounted_child  a workload in a forked child that dies without umount
 * dump_state the full observable state of a store, for comparisons
 * InFlight   transactions queued without waiting, then waited for at once
 * RandomTxns random transactions over a small set of objects
 */
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/Cond.h"
#include "os/ObjectStore.h"

class KeyValueDB;

namespace mimtest {

/// A temporary directory with `data/` and a journal file, removed at the
/// end unless MIMSTORE_TEST_KEEP is set. Base: $MIMSTORE_TEST_DIR or
/// /var/tmp (it must support O_DIRECT; tmpfs does on current kernels).
struct StoreDir {
  std::string root, data, journal;
  StoreDir();
  ~StoreDir();
};

/// Set config values for the lifetime of this object. Movable, not
/// copyable: a copy would restore the old values while the other lives.
class Conf {
 public:
  Conf(std::initializer_list<std::pair<std::string, std::string>> kv);
  Conf(Conf&& o) noexcept : old(std::move(o.old)) { o.old.clear(); }
  Conf(const Conf&) = delete;
  Conf& operator=(const Conf&) = delete;
  ~Conf();
  void set(const std::string& k, const std::string& v);

 private:
  std::map<std::string, std::string> old;
};

/// The three ways a store runs, for suites parameterised over them:
/// merging off, merging with the bytes only in the journal (the default),
/// merging with the bytes in memory (the paper's window). Off and Journal
/// keep the values, and so the seeds, of the older on/off suites.
enum class Window { Off = 0, Journal = 1, Ram = 2 };

/// All three, for ::testing::ValuesIn.
inline constexpr Window kWindows[] = {Window::Off, Window::Journal,
                                      Window::Ram};

/// "off", "on" (the default window), "on_ram": test-name suffixes.
const char* window_name(Window w);

/// Set mimstore_merge for w, and for Ram the bytes kept in memory;
/// Journal leaves the default in place, so the suites run the default.
void set_window(Conf& c, Window w);

std::unique_ptr<ObjectStore> make_store(const StoreDir& d,
                                        const std::string& type = "mimstore");

/// Write the merge window back, then umount: the journal is left clean,
/// as the tests that count write back or look at the files need (a plain
/// umount with merging on leaves the window in the journal).
int write_back_and_umount(ObjectStore* s);

/// Queue one transaction and wait until it commits.
int apply(ObjectStore* s, ObjectStore::CollectionHandle& ch,
          ObjectStore::Transaction&& t);

/// Transactions queued without waiting for each, so that they overlap
/// (batches form, the journal or the cache can fill); wait_all() then waits
/// for every commit.
class InFlight {
 public:
  /// queue_transaction's result.
  int queue(ObjectStore* s, ObjectStore::CollectionHandle& ch,
            ObjectStore::Transaction&& t);
  /// Waits for all queued so far: 0, or the first commit error.
  int wait_all();

 private:
  std::vector<std::unique_ptr<C_SaferCond>> done;
};

/// mkfs, mount and create collection `cid`: how most tests start. Uses
/// gtest assertions: call it in ASSERT_NO_FATAL_FAILURE().
void start_with_collection(ObjectStore* s, const coll_t& cid,
                           ObjectStore::CollectionHandle* ch);

/// fork() with Ceph's service and log threads stopped around it, so the
/// child starts its own (a forked child has only the forking thread).
pid_t fork_child();

/// In a child: die (exit 0, as kill -9) the n-th time (1-based) the store
/// passes its named point `point` (MIMStore::set_debug_hook).
void die_at(ObjectStore* s, const std::string& point, int n = 1);

/// Run `body` in a forked child on the store at `d`, mounted. The child
/// exits 0 when body returns, without umount (as kill -9 leaves a store
/// after body's last commit; a body that needs its last transaction
/// applied, not only committed, flushes its handle), 2 if the mount fails,
/// or wherever body (a debug hook) exits. Returns the wait status.
int in_mounted_child(
  const StoreDir& d,
  const std::function<void(std::unique_ptr<ObjectStore>&)>& body);

/// Everything a client can observe: per collection, per object, the data,
/// xattrs, omap header and omap keys/values.
struct ObjectState {
  std::string data;
  std::map<std::string, std::string> attrs;
  std::string omap_header;
  std::map<std::string, std::string> omap;
  bool operator==(const ObjectState&) const = default;
};
using StoreState =
  std::map<coll_t, std::map<ghobject_t, ObjectState>>;

StoreState dump_state(ObjectStore* s);
/// "" if equal, else a description of the first difference.
std::string diff_state(const StoreState& a, const StoreState& b);

/// Random transactions over a fixed set of objects in a few collections.
/// Each call to next() returns one transaction (several ops). Writes are
/// mostly 4 KiB-aligned microwrites, with some unaligned, large, and
/// beyond-4-MiB ones, and every other op kind the OSD issues. About one
/// transaction in 16 also changes collections as the OSD does: a PG split
/// (base collection c, bits 1, splits into c+2 with bits 2) or the merge
/// back, or a PG-deletion-like pair (a collection made and filled, later
/// emptied and removed in one transaction).
///
/// Wide (the crash loop's on_wide setting): 8 base collections (hash bits
/// 3; a split makes c+8 with bits 4), each transaction's ops on objects of
/// one collection (the one collection() names, for its handle, as the OSD
/// queues a PG's transactions on that PG's), a collection change alone in
/// its transaction; and larger values: an xattr or omap value up to 64 KiB
/// one time in eight, rmattrs (every xattr at once) beside rmattr.
class RandomTxns {
 public:
  RandomTxns(uint64_t seed, int colls = 2, int objs_per_coll = 12,
             bool wide = false);
  /// Wide: the collection the last next() is for (its handle queues it),
  /// and whether it changed collections (split, merge, deletion); the
  /// caller lets every earlier transaction finish first, as the OSD
  /// drains a PG before it splits or merges it.
  const coll_t& collection() const { return last_coll; }
  bool changed_collections() const { return last_changed; }
  /// Transactions creating the collections (run first).
  std::vector<ObjectStore::Transaction> setup();
  /// The next transaction; `created` gets the collections it creates (the
  /// caller makes their handles first, as the OSD does).
  ObjectStore::Transaction next(std::vector<coll_t>* created = nullptr);
  /// The base collections (always present).
  const std::vector<coll_t>& collections() const { return colls; }

 private:
  ghobject_t pick_obj(int c);
  /// Where an object lives now (its base collection or the split child).
  coll_t home(const ghobject_t& o) const;
  void collection_event(ObjectStore::Transaction& t, int c,
                        std::vector<coll_t>* created);
  std::string random_data(size_t len);

  /// The size of a value that may be large (wide: up to 64 KiB one time in
  /// eight), else `small`.
  size_t value_len(size_t small);

  std::mt19937_64 rng;
  bool wide;
  int bits;  ///< hash bits naming a base collection
  coll_t last_coll;
  bool last_changed = false;
  std::vector<coll_t> colls;
  std::vector<std::vector<ghobject_t>> objs;
  std::vector<bool> split;     ///< base collection c is split into c+2
  std::vector<bool> deleting;  ///< the PG-deletion collection of c exists
};

/// A u64 counter of a store's perf counters (l_mimstore_*); -1 if none.
int64_t perf_counter(ObjectStore* s, int idx);

/// The data checksums of the unmounted store at d against its object
/// files: every chunk of every object with a state must match its bytes
/// (Checksums::debug_verify; BAD counts as wrong), and with `strict` (a
/// store mkfs made, so every chunk written has a state) a chunk without a
/// state must hold zeros. Returns the number of wrong chunks (each in
/// *report), or a negative error. Only after a write back: a chunk the
/// merge window covers whole may differ from its file until then.
int verify_checksums(const StoreDir& d, bool strict, std::string* report);

/// The RocksDB of the (unmounted) store at d, opened with the store's
/// merge operators; null with *err saying why.
std::unique_ptr<KeyValueDB> open_store_db(const StoreDir& d,
                                          std::string* err);

}  // namespace mimtest
