// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: a store of format 1 or 2 keeps its omap and xattrs in
 * FileStore's DBObjectMap; mount converts them to OmapStore (format 3)
 * before the journal is replayed.
 *
 * Order, each step safe to stop after: (1) OmapStore's keys of an earlier
 * conversion that stopped go; (2) every object of DBObjectMap is written
 * as a record with its stamp (its header's SequencerPosition: replay then
 * skips on the new layer what it skipped on the old), header, keys and
 * xattrs, and synced; (3) mimstore_format 3 is written (fsynced); (4)
 * DBObjectMap's keys (every prefix that starts with '_') go. A stop before
 * (3) converts again from the start; after it, (4) is done again by every
 * mount (_drop_legacy_omap). DBObjectMap is not in Ceph from Tentacle on:
 * there, a store of format 1 or 2 is refused with the way out.
 */
#include "MIMStore.h"

#include "common/debug.h"
#include "common/errno.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#if __has_include("os/DBObjectMap.h")
#include "os/DBObjectMap.h"
#define MIMSTORE_HAVE_DBOBJECTMAP 1
#endif

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using namespace mimstore;

namespace {

/// Delete every key under a prefix that starts with '_' (DBObjectMap's;
/// mimstore's all start with "MIM_"). The number deleted, or an error.
int64_t drop_legacy_keys(KeyValueDB* kv)
{
  int64_t n = 0;
  KeyValueDB::WholeSpaceIterator it = kv->get_wholespace_iterator();
  KeyValueDB::Transaction t = kv->get_transaction();
  for (it->lower_bound("_", string()); it->valid(); it->next()) {
    auto [prefix, key] = it->raw_key();
    if (prefix.empty() || prefix[0] != '_') {
      break;
    }
    t->rmkey(prefix, key);
    if (++n % 4096 == 0) {
      int r = kv->submit_transaction(t);
      if (r < 0) {
        return r;
      }
      t = kv->get_transaction();
    }
  }
  if (it->status() < 0) {
    return it->status();
  }
  int r = kv->submit_transaction_sync(t);
  return r < 0 ? r : n;
}

#ifdef MIMSTORE_HAVE_DBOBJECTMAP
#undef dout_prefix
#define dout_prefix *_dout << "mimstore omap conversion: "
/// DBObjectMap's objects into an OmapStore, streamed: the objects straight
/// from its object-to-header map (parent headers of old clones are not
/// in it), each object's keys through its iterator, a batch submitted
/// every 16 MiB; nothing grows with the number of objects or of an
/// object's keys. Splitting an object over batches is safe: the format
/// file written after run() is the commit point.
class Conversion {
 public:
  Conversion(CephContext* cct, KeyValueDB* kv, DBObjectMap* old,
             OmapStore* fresh)
    : cct(cct), kv(kv), old(old), fresh(fresh), t(kv->get_transaction()) {}

  /// Every object converted and synced: 0, or an error (logged).
  int run()
  {
    KeyValueDB::Iterator objs = kv->get_iterator(DBObjectMap::HOBJECT_TO_SEQ);
    int r = 0;
    for (objs->seek_to_first(); r == 0 && objs->valid(); objs->next()) {
      DBObjectMap::_Header h;
      try {
        bufferlist hb = objs->value();
        auto p = hb.cbegin();
        h.decode(p);
      } catch (const ceph::buffer::error& e) {
        lderr(cct) << "a DBObjectMap header does not decode: " << e.what()
                   << dendl;
        return -EIO;
      }
      r = object(h);
      if (r < 0) {
        lderr(cct) << "cannot convert the omap of " << h.oid << ": "
                   << cpp_strerror(r) << dendl;
      }
    }
    if (r == 0) {
      r = objs->status();
    }
    return r < 0 ? r : kv->submit_transaction_sync(t);
  }

  uint64_t objects = 0, keys = 0;

 private:
  static constexpr size_t BATCH_BYTES = 16 << 20;
  CephContext* cct;
  KeyValueDB* kv;
  DBObjectMap* old;
  OmapStore* fresh;
  KeyValueDB::Transaction t;
  size_t in_batch = 0;

  int object(const DBObjectMap::_Header& h)
  {
    bufferlist header;
    std::set<string> names;
    std::map<string, bufferlist> xattrs;
    int r = old->get_header(h.oid, &header);
    if (r == 0) {
      r = old->get_all_xattrs(h.oid, &names);
    }
    if (r == 0 && !names.empty()) {
      r = old->get_xattrs(h.oid, names, &xattrs);
    }
    uint64_t nid = 0;
    if (r == 0) {
      r = fresh->import(t, h.oid, h.spos,
                        header.length() ? &header : nullptr, xattrs, &nid);
    }
    if (r < 0) {
      return r;
    }
    in_batch += header.length() + 256;
    keys += xattrs.size();
    auto it = old->get_iterator(h.oid);
    for (it->seek_to_first(); r == 0 && it->valid(); it->next()) {
      bufferlist v = it->value();
      in_batch += it->key().size() + v.length();
      fresh->import_key(t, nid, it->key(), v);
      ++keys;
      r = flush_if_full();
    }
    if (r == 0) {
      r = it->status();
    }
    ++objects;
    return r < 0 ? r : flush_if_full();
  }

  int flush_if_full()
  {
    if (in_batch < BATCH_BYTES) {
      return 0;
    }
    int r = kv->submit_transaction(t);
    t = kv->get_transaction();
    in_batch = 0;
    return r;
  }
};
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "
#endif

}  // namespace

int MIMStore::_drop_legacy_omap()
{
  int64_t n = drop_legacy_keys(db);
  if (n > 0) {
    dout(1) << "deleted " << n << " keys of the DBObjectMap a conversion "
            << "to format " << FORMAT << " left" << dendl;
  }
  return n < 0 ? static_cast<int>(n) : 0;
}

int MIMStore::_migrate_omap()
{
#ifdef MIMSTORE_HAVE_DBOBJECTMAP
  dout(0) << "mimstore_format below 3: converting the omap and xattrs from "
          << "DBObjectMap to mimstore's own layer" << dendl;
  KeyValueDB* kv = db;
  db = nullptr;
  // DBObjectMap takes the database (ObjectMap's scoped_ptr) and closes it
  // when it goes; _open_db opens it again.
  auto old = std::make_unique<DBObjectMap>(cct, kv);
  auto done = [&](int r) {
    rocks_crash_env = nullptr;  // goes with the database
    old.reset();
    return r;
  };
  int r = old->init(false);
  if (r < 0) {
    derr << "cannot read the DBObjectMap to convert: " << cpp_strerror(r)
         << dendl;
    return done(r);
  }
  OmapStore fresh(cct, kv);
  r = fresh.remove_all();
  if (r == 0) {
    r = fresh.init();
  }
  if (r < 0) {
    derr << "cannot start the omap conversion: " << cpp_strerror(r) << dendl;
    return done(r);
  }
  Conversion conv(cct, kv, old.get(), &fresh);
  r = conv.run();
  if (r < 0) {
    derr << "the omap conversion stopped (it starts again at the next "
         << "mount): " << cpp_strerror(r) << dendl;
    return done(r);
  }
  r = write_meta("mimstore_format", stringify(FORMAT));
  if (r < 0) {
    derr << "the omap conversion stopped (it starts again at the next "
         << "mount): " << cpp_strerror(r) << dendl;
    return done(r);
  }
  omap_legacy = false;
  int64_t dropped = drop_legacy_keys(kv);
  if (dropped < 0) {
    // (the next mount deletes them: _drop_legacy_omap)
    derr << "cannot delete DBObjectMap's keys: " << cpp_strerror(dropped)
         << dendl;
  } else {
    // Or every later mount's check for leftovers (and every read near
    // them) seeks over their deletion marks until RocksDB compacts.
    kv->compact();
  }
  dout(0) << "converted the omap and xattrs of " << conv.objects
          << " objects (" << conv.keys << " keys) to format " << FORMAT
          << dendl;
  return done(0);
#else
  derr << path << " is a mimstore of format 1 or 2: its omap and xattrs are "
       << "in FileStore's DBObjectMap, which this Ceph release no longer "
       << "has. Mount it once with a mimstore built on Ceph Reef (18.2.x), "
       << "which converts it to format " << FORMAT << ", then upgrade" << dendl;
  rocks_crash_env = nullptr;  // goes with the database
  delete db;
  db = nullptr;
  return -EOPNOTSUPP;
#endif
}
