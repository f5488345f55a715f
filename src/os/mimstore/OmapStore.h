// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: omap and xattrs in RocksDB, mimstore's own layer (format 3),
 * in place of FileStore's DBObjectMap (removed from Ceph in Tentacle).
 *
 * DB layout (KeyValueDB prefix / key -> value):
 *   MIM_O / object_key(oid) (ObjectKey.h)  -> record {nid, stamp, oid}
 *   MIM_H / be64(nid)                      -> the omap header
 *   MIM_M / be64(nid) + omap key           -> value
 *   MIM_X / be64(nid) + xattr name         -> value
 *   MIM_S / "nid_max"                      -> be64: every nid in use is below
 *   MIM_C / be64(nid) + be32(group)        -> the data checksums of chunks
 *                                             16 * group .. 16 * group + 15
 *                                             (core/csum_group.h: value
 *                                             format, merge operator)
 * An object has a record once any of its omap or xattrs is set; a clear
 * of both (the object's remove) deletes the record and every key of its
 * nid, in one batch. The nid makes a clear or a clone one range of keys
 * and leaves the record key free for an index of every object later.
 * Record value: ENCODE_START(1, 1) nid (u64), stamp (SequencerPosition),
 * oid (ghobject_t).
 *
 * Replay (FileStore's rule, as DBObjectMap kept it): every write op takes
 * the op's SequencerPosition and is skipped when the object has a record
 * whose stamp is at or after it. Stamps come only from guards
 * (sync(oid, spos): the op's position, never lower than the stamp there:
 * the rule of patch 0011) and clones (the destination's new record); a
 * record created by a plain write starts at stamp 0, and a clear of the
 * keys and header keeps the stamp (DBObjectMap reset it; a stamp only
 * ever covers ops already applied, and keeping it makes it monotone).
 * Each op is one RocksDB batch, not synced: sync() makes every earlier
 * batch durable (RocksDB keeps a prefix of its WAL; CrashRocksEnv.h).
 *
 * Checksum groups are written by merge (csum_update, no read of the old
 * value) and follow the object as its xattrs do: copied by clone, dropped
 * by clear; clear_keys_header and remove_all_xattrs keep them. They take
 * no spos: a checksum change goes with a data change the store applied,
 * so no stamp may skip it (docs/plan-checksums.md section 3).
 *
 * Reads see one RocksDB snapshot per call (a whole-space iterator), so a
 * read racing a write of the same object sees it before or after.
 *
 * Locks: `locks` serialise the writes of one object (a stripe per oid
 * hash; clone takes the two stripes in index order); `nid_lock` guards
 * nid_last and nid_max and is taken inside a stripe. A new block of nids
 * is recorded (MIM_S) in a batch of its own before its first nid is
 * handed out, so the counter is durable before any record that uses it,
 * whatever order concurrent writers' batches take. No lock is held
 * across a call out of this class but into RocksDB.
 */
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/hobject.h"
#include "include/buffer.h"
#include "kv/KeyValueDB.h"
#include "os/SequencerPosition.h"

#include "core/csum_group.h"
#include "core/thread_annotations.h"

namespace mimstore {

class OmapStore {
 public:
  static constexpr const char* RECORD_PREFIX = "MIM_O";
  static constexpr const char* HEADER_PREFIX = "MIM_H";
  static constexpr const char* OMAP_PREFIX = "MIM_M";
  static constexpr const char* XATTR_PREFIX = "MIM_X";
  static constexpr const char* STATE_PREFIX = "MIM_S";
  static constexpr const char* CSUM_PREFIX = "MIM_C";
  /// csum_update's "delete no group".
  static constexpr uint64_t CSUM_KEEP_GROUPS = UINT64_MAX;

  /// Before the database opens (RocksDB takes its merge operators at
  /// open; a database with MIM_C operands opened without it cannot read
  /// them): the checksum groups' merge operator.
  static int register_merge_operators(KeyValueDB* db);

  /// `db` stays the caller's.
  OmapStore(CephContext* cct, KeyValueDB* db);

  /// Reads the nid counter (a new store has none). `csum_order` is the
  /// store's checksum chunk order (fixed at mkfs), which values must carry.
  int init(unsigned csum_order = mim::CSUM_MIN_ORDER);

  // ---- writes: 0, or -ENOENT where the object has no record, or an error
  int set_keys(const ghobject_t& oid,
               const std::map<std::string, ceph::bufferlist>& set,
               const SequencerPosition* spos);
  int set_header(const ghobject_t& oid, const ceph::bufferlist& bl,
                 const SequencerPosition* spos);
  int rm_keys(const ghobject_t& oid, const std::set<std::string>& keys,
              const SequencerPosition* spos);
  /// The keys in [first, last), in one batch, by what is there when it is
  /// built (RocksDBStore deletes key by key under a million keys).
  int rm_key_range(const ghobject_t& oid, const std::string& first,
                   const std::string& last, const SequencerPosition* spos);
  /// The omap keys and header; xattrs and the stamp stay.
  int clear_keys_header(const ghobject_t& oid, const SequencerPosition* spos);
  /// Everything of the object, its record too.
  int clear(const ghobject_t& oid, const SequencerPosition* spos);
  int set_xattrs(const ghobject_t& oid,
                 const std::map<std::string, ceph::bufferlist>& set,
                 const SequencerPosition* spos);
  int remove_xattrs(const ghobject_t& oid, const std::set<std::string>& names,
                    const SequencerPosition* spos);
  int remove_all_xattrs(const ghobject_t& oid, const SequencerPosition* spos);
  /// `to` becomes a copy of `from` (nothing, if `from` has no record),
  /// stamped with spos; skipped where `to`'s stamp is at or after spos.
  int clone(const ghobject_t& from, const ghobject_t& to,
            const SequencerPosition* spos);

  /// Data checksums, in one batch (the record created if need be): delete
  /// the object's groups from `drop_from_group` on (unless it is
  /// CSUM_KEEP_GROUPS), then merge each patch into its group.
  int csum_update(const ghobject_t& oid,
                  const std::map<uint32_t, mim::CsumGroup>& patches,
                  uint64_t drop_from_group = CSUM_KEEP_GROUPS);
  /// The object's groups first..last (inclusive) that exist, on one
  /// snapshot. A group that does not decode reads as all BAD (logged), so
  /// its chunks give -EIO rather than unverified data.
  int csum_get(const ghobject_t& oid, uint32_t first, uint32_t last,
               std::map<uint32_t, mim::CsumGroup>* out);

  /// Every batch so far durable.
  int sync();
  /// Stamp `oid` (if it has a record) with spos unless its stamp is later,
  /// then every batch so far durable.
  int sync(const ghobject_t& oid, const SequencerPosition& spos);

  // ---- reads: 0 (an object without a record reads as empty) or an error
  int get(const ghobject_t& oid, ceph::bufferlist* header,
          std::map<std::string, ceph::bufferlist>* out);
  int get_header(const ghobject_t& oid, ceph::bufferlist* header);
  int get_keys(const ghobject_t& oid, std::set<std::string>* keys);
  int get_values(const ghobject_t& oid, const std::set<std::string>& keys,
                 std::map<std::string, ceph::bufferlist>* out);
  int check_keys(const ghobject_t& oid, const std::set<std::string>& keys,
                 std::set<std::string>* out);
  int get_xattrs(const ghobject_t& oid, const std::set<std::string>& names,
                 std::map<std::string, ceph::bufferlist>* out);
  int get_all_xattrs(const ghobject_t& oid,
                     std::map<std::string, ceph::bufferlist>* out);

  /// The visitor's answer to one key: go on or stop.
  enum class Visit { NEXT, STOP };
  /// Calls fn on each omap key from `start` (its lower bound, or its upper
  /// bound with `after`), in order. 1 if fn stopped, else 0, or an error.
  /// The shape of Tentacle's ObjectStore::omap_iterate.
  int iterate(const ghobject_t& oid, const std::string& start, bool after,
              const std::function<Visit(std::string_view,
                                        std::string_view)>& fn);

  /// A cursor over one object's omap keys, on one snapshot (what Reef's
  /// ObjectStore::get_omap_iterator wraps).
  class Cursor {
   public:
    Cursor(KeyValueDB::WholeSpaceIterator it, std::string nid_key);
    int seek_to_first();
    int lower_bound(const std::string& to);
    int upper_bound(const std::string& after);
    bool valid();
    int next();
    std::string key();
    ceph::bufferlist value();
    int status();
    int error = 0;  ///< reading the object's record failed
   private:
    KeyValueDB::WholeSpaceIterator it;
    std::string nid_key;  ///< be64(nid); empty: the object has no omap
  };
  std::unique_ptr<Cursor> cursor(const ghobject_t& oid);

  /// The object's stamp; -ENOENT without a record.
  int get_stamp(const ghobject_t& oid, SequencerPosition* stamp);
  /// Migration: put an object that has no record in t, its record with
  /// `stamp`, its header (if any) and xattrs; *nid for its keys, which
  /// import_key puts (in any batch after this one).
  int import(KeyValueDB::Transaction t, const ghobject_t& oid,
             const SequencerPosition& stamp, const ceph::bufferlist* header,
             const std::map<std::string, ceph::bufferlist>& xattrs,
             uint64_t* nid);
  void import_key(KeyValueDB::Transaction t, uint64_t nid,
                  const std::string& key, const ceph::bufferlist& value);

  /// Every object with a record.
  int list_objects(std::vector<ghobject_t>* out);
  /// Records and keys agree: each record decodes and holds its own oid,
  /// no two share a nid, no key belongs to a nid without a record, no nid
  /// at or above nid_max, every checksum group decodes (repair leaves a
  /// group that does not: its chunks read -EIO until rewritten). With repair, keys of no record are deleted and
  /// nid_max raised. The problems found (and with repair not mended).
  int check(std::ostream& out, bool repair);

  /// Every key of this layer's prefixes (migration restarts from nothing).
  int remove_all();

 private:
  struct Record {
    uint64_t nid = 0;
    SequencerPosition stamp;
    ghobject_t oid;
    void encode(ceph::bufferlist& bl) const;
    void decode(ceph::bufferlist::const_iterator& p);
  };

  CephContext* cct;
  KeyValueDB* db;
  static constexpr size_t STRIPES = 64;
  std::array<mim::Mutex, STRIPES> locks;
  mim::Mutex nid_lock;
  /// Constant after init().
  unsigned csum_order = mim::CSUM_MIN_ORDER;
  uint64_t nid_last MIM_GUARDED_BY(nid_lock) = 0;
  uint64_t nid_max MIM_GUARDED_BY(nid_lock) = 0;

  size_t stripe(const ghobject_t& oid) const;
  int decode_record(const ceph::bufferlist& bl, Record* rec) const;
  /// A snapshot (a whole-space iterator) and the object's nid key in it:
  /// 0, -ENOENT without a record, or an error.
  int snapshot(const ghobject_t& oid, KeyValueDB::WholeSpaceIterator* it,
               std::string* nk);
  /// One object's keys under prefix (those of `names`, or all) on one
  /// snapshot; none without a record.
  int read_object(const ghobject_t& oid, const std::string& prefix,
                  const std::set<std::string>* names,
                  std::map<std::string, ceph::bufferlist>* out);
  /// The keys of `names` under prefix and nk that exist.
  int read_named(KeyValueDB::WholeSpaceIterator& it,
                 const std::string& prefix, const std::string& nk,
                 const std::set<std::string>& names,
                 std::map<std::string, ceph::bufferlist>* out);
  /// 0 and the record, -ENOENT, or an error (a record that does not decode).
  int read_record(const ghobject_t& oid, Record* rec);
  int read_record(KeyValueDB::WholeSpaceIterator& it, const std::string& okey,
                  Record* rec);
  /// The record, a new one (nid allocated, stamp 0, put in t) if none.
  int record_for_write(const ghobject_t& oid, KeyValueDB::Transaction t,
                       Record* rec, bool* existed);
  /// Skip a replayed op the record's stamp covers.
  bool covered(const Record& rec, const SequencerPosition* spos) const;
  void put_record(KeyValueDB::Transaction t, const Record& rec);
  /// Drop every key of nid (omap, header, xattrs, checksums as asked).
  void drop_nid(KeyValueDB::Transaction t, uint64_t nid, bool keys_header,
                bool xattrs, bool csums);
  /// A write that creates the record if need be, then calls fill(t, rec).
  int write_op(const ghobject_t& oid, const SequencerPosition* spos,
               bool create,
               const std::function<void(KeyValueDB::Transaction,
                                        const Record&)>& fill);
  /// Set or remove keys of the object under prefix (OMAP or XATTR).
  int set_under(const char* prefix, const ghobject_t& oid,
                const std::map<std::string, ceph::bufferlist>& set,
                const SequencerPosition* spos);
  int rm_under(const char* prefix, const ghobject_t& oid,
               const std::set<std::string>& keys,
               const SequencerPosition* spos);
  int read_prefixed(KeyValueDB::WholeSpaceIterator& it,
                    const std::string& prefix, const std::string& nid_key,
                    std::map<std::string, ceph::bufferlist>* out);
};

/// be64(nid): the start of an object's keys under MIM_M, MIM_X, MIM_H,
/// MIM_C.
std::string nid_key(uint64_t nid);
/// be64(nid) + be32(group): a checksum group's key under MIM_C.
std::string csum_key(uint64_t nid, uint64_t group);

}  // namespace mimstore
