// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: written-back records, what lets a mount skip the part of a
 * sweep that was done before a stop or a crash.
 *
 * A sweep writes a frozen generation back object by object, and the
 * checkpoint passes the generation only at the sweep's end (its writes'
 * sns are spread over all of it). A stop or crash in the middle left the
 * next mount to replay, index again and write back again the objects
 * already written: at 64 GiB a start after a stop took 148 s, most of it a
 * whole new sweep (docs/results/20261126-64G-term-keep-window-cap).
 *
 * A record says of one object: every op on it with an sn below F is
 * durable, in its file and in the DB. F is the first sn after the swept
 * generation (the active generation's first at the freeze). Why that
 * holds once the record exists: the record is put in the DB only after a
 * data sync (syncfs and the DB's sync) that began after the object was
 * written back; every op below F was applied before the freeze, so before
 * that sync, and is durable by then, except the cached writes of objects
 * the sweep had not reached, which this object is not. So a record is
 * never ahead of its data; until it is durable (the next sync) replay just
 * does the work again. Replay skips an object's ops below its record
 * (_guard_cmp), and a kept window leaves them out of the cache.
 *
 * A record is useful while replay can start below F: once the checkpoint
 * has passed F, the records of that sweep are deleted (every sync that
 * moves the checkpoint). sns never go back (a new journal starts at the
 * store's next sn, and only after a clean stop, when no record is left),
 * so a record never covers an op of a later life. Nor of an earlier one
 * that replay brings back: a record describes the file that was there at
 * the mount. When replay finds no file for the name (removed or moved away
 * by an op at or above F, durably) and makes one from older ops, that file
 * is not the one the record describes, and its ops must all apply (skipped,
 * a remove replay has to make again stays undone: a PG deleted, made again
 * and deleted again within one sweep left its collection non-empty, and
 * the mount aborted). So mount, before replay, deletes (durably) the
 * records of names with no file or with a file that has neither a birth
 * mark nor a guard (format 2 on: a create cut short, after every sync),
 * and replay forgets a name's record
 * whenever it finds no such file or moves one onto the name (a split,
 * merge). Durably: a mount killed while replaying has made files of older
 * lives at those names, and a record read again would skip their ops.
 *
 * DB layout: prefix "MIM_WB"; key "<F as 16 hex digits>.<collection>/<object
 * file name>"; empty value. A sweep's records share F, so deleting them is
 * one range.
 *
 * Locks: `lock` guards `unsynced` (the flush thread adds, the sync thread
 * takes); a leaf. `gens` is the sync thread's (and mount's, before the
 * threads start); `loaded` is mount's, for the replay.
 */
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "include/common_fwd.h"

#include "core/thread_annotations.h"
#include "core/types.h"

class KeyValueDB;

namespace mimstore {

class WrittenBackRecords {
 public:
  using sn_t = mim::sn_t;
  static constexpr const char* PREFIX = "MIM_WB";

  WrittenBackRecords(CephContext* cct, KeyValueDB* db) : cct(cct), db(db) {}

  /// Flush thread: the sweep of the generation that ends before `end_sn`
  /// wrote `cname/fname` back.
  void written_back(sn_t end_sn, const std::string& cname,
                    const std::string& fname);
  /// Sync thread, before the data sync: the records that sync covers.
  std::vector<std::string> take_unsynced();
  /// Sync thread, after that sync: put them in the DB (durable with the
  /// DB's next sync). -errno if the DB refused.
  int put(const std::vector<std::string>& keys);
  /// Sync thread: the checkpoint is at `checkpoint` (replay starts there):
  /// delete the records of every sweep with F at or below it.
  int trim(sn_t checkpoint);

  /// Mount, before replay (replay starts at `first_live`): read the
  /// records for covers(), deleting those replay can no longer use.
  int load(sn_t first_live);
  /// Replay: an op at `sn` on cname/fname is durable by a record.
  bool covers(const std::string& cname, const std::string& fname,
              sn_t sn) const;
  /// Mount, after load() and before replay: delete the records of every
  /// name whose file `is_there` says is not the one a record describes
  /// (0; 1: it is), in one synced DB transaction. The number deleted, or
  /// -errno: is_there's (nothing deleted then) or the DB's.
  int prune(const std::function<int(const std::string& cname,
                                    const std::string& fname)>& is_there);
  /// Replay found no file for cname/fname, or put another one there: its
  /// record is of a file that is gone, and covers nothing replay makes of
  /// the name from here. Deleted from the DB too, synced, when there was
  /// one (rare: a name removed and made again within one sweep). -errno if
  /// the DB refused.
  int forget(const std::string& cname, const std::string& fname);
  /// After replay: the records read are no longer needed in memory.
  void end_replay();
  size_t loaded_objects() const { return loaded.size(); }
  /// After load(): F of the newest sweep with records, 0 if none: where
  /// the generation that sweep was writing back ended.
  sn_t last_sweep_end() const { return gens.empty() ? 0 : gens.back(); }

  /// The DB key of a record (tests, dump).
  static std::string key(sn_t end_sn, const std::string& cname,
                         const std::string& fname);

 private:
  static std::string sn_key(sn_t sn);
  /// The keys `name`'s record may have: one under every sweep in gens.
  std::vector<std::string> keys_of(const std::string& name) const;
  /// F of a key made by key() (its 16 hex digits, up to the '.').
  static sn_t end_of(const std::string& key);

  CephContext* cct;
  KeyValueDB* db;
  mim::Mutex lock;
  std::vector<std::string> unsynced MIM_GUARDED_BY(lock);  ///< keys
  /// F of the sweeps with records in the DB, ascending. Sync thread.
  std::deque<sn_t> gens;
  /// "collection/file" -> the highest F of its records. Mount and replay.
  std::unordered_map<std::string, sn_t> loaded;
};

}  // namespace mimstore
