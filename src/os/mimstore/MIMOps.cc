// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: transaction ops. One _verb() per Transaction op, dispatched by
 * the switch in _do_transaction(). All of this runs on the apply thread
 * (or on the mount thread during replay), one transaction at a time, in sn
 * order.
 *
 * Rules every op follows:
 *  - Replay guards: while replaying, an op whose target carries a guard at
 *    or after the op's position was already applied and durable: skip it.
 *  - An op other than a merged write first takes the object's cached
 *    extents out of the HTMLL and writes them to the file, so it sees (and
 *    orders after) every earlier write. Removed or overwritten objects drop
 *    them instead.
 *  - omap and xattrs go to DBObjectMap with the op's SequencerPosition, which
 *    makes them idempotent on replay.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/debug.h"
#include "common/errno.h"
#include "kv/KeyValueDB.h"

#include "ObjectFiles.h"
#include "ObjectName.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using ceph::bufferptr;
using namespace mimstore;

void MIMStore::_do_transaction(Transaction& t, sn_t sn, uint32_t trans_num)
{
  Transaction::iterator i = t.begin();
  uint32_t op_num = 0;

  while (i.have_op()) {
    Transaction::Op* op = i.decode_op();
    cur_spos = SequencerPosition(sn, trans_num, op_num);
    int r = 0;

    switch (op->op) {
    case Transaction::OP_NOP:
      break;

    case Transaction::OP_TOUCH:
    case Transaction::OP_CREATE:
      r = _touch(i.get_cid(op->cid), i.get_oid(op->oid));
      break;

    case Transaction::OP_WRITE:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        uint32_t fadvise_flags = i.get_fadvise_flags();
        bufferlist bl;
        i.decode_bl(bl);
        r = _write(cid, oid, op->off, op->len, bl, fadvise_flags);
      }
      break;

    case Transaction::OP_ZERO:
      r = _zero(i.get_cid(op->cid), i.get_oid(op->oid), op->off, op->len);
      break;

    case Transaction::OP_TRIMCACHE:
      break;  // deprecated, no-op

    case Transaction::OP_TRUNCATE:
      r = _truncate(i.get_cid(op->cid), i.get_oid(op->oid), op->off);
      break;

    case Transaction::OP_REMOVE:
    case Transaction::OP_COLL_REMOVE:
      r = _remove(i.get_cid(op->cid), i.get_oid(op->oid));
      break;

    case Transaction::OP_SETATTR:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        string name = i.decode_string();
        bufferlist bl;
        i.decode_bl(bl);
        std::map<string, bufferptr> to_set;
        to_set[name] = bufferptr(bl.c_str(), bl.length());
        r = _setattrs(cid, oid, to_set);
      }
      break;

    case Transaction::OP_SETATTRS:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        std::map<string, bufferptr> aset;
        i.decode_attrset(aset);
        r = _setattrs(cid, oid, aset);
      }
      break;

    case Transaction::OP_RMATTR:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        string name = i.decode_string();
        r = _rmattr(cid, oid, name.c_str());
      }
      break;

    case Transaction::OP_RMATTRS:
      r = _rmattrs(i.get_cid(op->cid), i.get_oid(op->oid));
      break;

    case Transaction::OP_CLONE:
      r = _clone(i.get_cid(op->cid), i.get_oid(op->oid),
                 i.get_oid(op->dest_oid));
      break;

    case Transaction::OP_CLONERANGE:
      r = _clone_range(i.get_cid(op->cid), i.get_oid(op->oid),
                       i.get_oid(op->dest_oid), op->off, op->len, op->off);
      break;

    case Transaction::OP_CLONERANGE2:
      r = _clone_range(i.get_cid(op->cid), i.get_oid(op->oid),
                       i.get_oid(op->dest_oid), op->off, op->len,
                       op->dest_off);
      break;

    case Transaction::OP_MKCOLL:
      r = _create_collection(i.get_cid(op->cid), op->split_bits);
      break;

    case Transaction::OP_COLL_HINT:
      {
        bufferlist hint;
        i.decode_bl(hint);  // expected object counts: nothing to prepare
      }
      break;

    case Transaction::OP_RMCOLL:
      r = _destroy_collection(i.get_cid(op->cid));
      break;

    case Transaction::OP_COLL_ADD:
      ceph_abort_msg("mimstore: OP_COLL_ADD is not supported (unused since "
                     "Luminous)");
      break;

    case Transaction::OP_COLL_MOVE:
      ceph_abort_msg("deprecated");
      break;

    case Transaction::OP_COLL_MOVE_RENAME:
      {
        coll_t oldcid = i.get_cid(op->cid);
        ghobject_t oldoid = i.get_oid(op->oid);
        coll_t newcid = i.get_cid(op->dest_cid);
        ghobject_t newoid = i.get_oid(op->dest_oid);
        r = _collection_move_rename(oldcid, oldoid, newcid, newoid);
        if (r == -ENOENT) {
          r = 0;
        }
      }
      break;

    case Transaction::OP_TRY_RENAME:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oldoid = i.get_oid(op->oid);
        ghobject_t newoid = i.get_oid(op->dest_oid);
        r = _collection_move_rename(cid, oldoid, cid, newoid);
        if (r == -ENOENT) {
          r = 0;
        }
      }
      break;

    case Transaction::OP_COLL_SETATTR:
    case Transaction::OP_COLL_RMATTR:
    case Transaction::OP_COLL_RENAME:
      ceph_abort_msg("not implemented");
      break;

    case Transaction::OP_OMAP_CLEAR:
      r = _omap_clear(i.get_cid(op->cid), i.get_oid(op->oid));
      break;

    case Transaction::OP_OMAP_SETKEYS:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        bufferlist aset_bl;
        i.decode_attrset_bl(&aset_bl);
        r = _omap_setkeys(cid, oid, aset_bl);
      }
      break;

    case Transaction::OP_OMAP_RMKEYS:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        bufferlist keys_bl;
        i.decode_keyset_bl(&keys_bl);
        r = _omap_rmkeys(cid, oid, keys_bl);
      }
      break;

    case Transaction::OP_OMAP_RMKEYRANGE:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        string first = i.decode_string();
        string last = i.decode_string();
        r = _omap_rmkeyrange(cid, oid, first, last);
      }
      break;

    case Transaction::OP_OMAP_SETHEADER:
      {
        coll_t cid = i.get_cid(op->cid);
        ghobject_t oid = i.get_oid(op->oid);
        bufferlist bl;
        i.decode_bl(bl);
        r = _omap_setheader(cid, oid, bl);
      }
      break;

    case Transaction::OP_SPLIT_COLLECTION:
      ceph_abort_msg("deprecated");
      break;

    case Transaction::OP_SPLIT_COLLECTION2:
      r = _split_collection(i.get_cid(op->cid), op->split_bits,
                            op->split_rem, i.get_cid(op->dest_cid));
      break;

    case Transaction::OP_MERGE_COLLECTION:
      r = _merge_collection(i.get_cid(op->cid), op->split_bits,
                            i.get_cid(op->dest_cid));
      break;

    case Transaction::OP_SETALLOCHINT:
      break;  // files grow as written; XFS speculative preallocation helps

    case Transaction::OP_COLL_SET_BITS:
      r = _set_bits(i.get_cid(op->cid), op->split_bits);
      break;

    default:
      derr << "bad op " << op->op << dendl;
      ceph_abort();
    }

    if (r < 0) {
      bool ok = false;
      if (r == -ENOENT && !(op->op == Transaction::OP_CLONERANGE ||
                            op->op == Transaction::OP_CLONE ||
                            op->op == Transaction::OP_CLONERANGE2 ||
                            op->op == Transaction::OP_COLL_ADD)) {
        ok = true;  // -ENOENT is usually okay
      }
      if (r == -ENODATA) {
        ok = true;
      }
      if (r == -ENOENT && replaying) {
        // A clone source removed later (snapshot trim, PG deletion), with
        // the checkpoint still before the clone: the clone's target was
        // either guarded (and skipped) or went the same way. FileStore
        // tolerated ENOENT on replay for this reason.
        dout(10) << "replay: tolerating ENOENT on op " << op->op << " at "
                 << cur_spos << dendl;
        ok = true;
      }
      if (!ok) {
        const char* msg = "unexpected error code";
        if (r == -ENOENT) {
          msg = "ENOENT on clone suggests osd bug";
        } else if (r == -ENOSPC) {
          // The transaction is journaled but not acknowledged; the next
          // mount replays it once there is room.
          msg = "ENOSPC: the data filesystem is full; free space under osd "
                "data, then restart the OSD (the journal replays the "
                "transaction)";
        } else if (r == -ENOTEMPTY) {
          msg = "ENOTEMPTY suggests garbage data in osd data dir";
        } else if (r == -EIO) {
          msg = "EIO from the data filesystem";
        }
        derr << " error " << cpp_strerror(r) << " not handled on operation "
             << op->op << " (op " << op_num << ", counting from 0)" << dendl;
        derr << msg << dendl;
        JSONFormatter f(true);
        f.open_object_section("transaction");
        t.dump(&f);
        f.close_section();
        std::ostringstream ss;
        f.flush(ss);
        derr << "transaction dump:\n" << ss.str() << dendl;
        ceph_abort_msg(msg);
      }
    }
    ++op_num;
  }
}

// ---------------------------------------------------------------------------
// helpers

int MIMStore::_guard_cmp(const coll_t& cid, const ghobject_t* oid,
                         bool* born_later)
{
  if (!replaying) {
    return 1;
  }
  SequencerPosition g;
  bool in_progress = false;
  if (files->get_tombstone(cid, &g) == 0 && g >= cur_spos) {
    // merged away at g: every earlier op on it was durable then, and its
    // objects (with their omap) live on in the destination
    dout(10) << "replay: skip " << cur_spos << " on " << cid
             << ", merged away at " << g << dendl;
    return -1;
  }
  if (files->get_collection_guard(cid, &g, &in_progress) == 0 &&
      g >= cur_spos) {
    if (g == cur_spos && in_progress) {
      return 0;  // this split or merge was under way when we crashed
    }
    dout(10) << "replay: skip " << cur_spos << " on " << cid
             << ", collection guard " << g << dendl;
    return -1;
  }
  if (oid) {
    ObjectFDRef f;
    if (files->open_object(cid, *oid, false, &f) < 0) {
      return 1;
    }
    if (files->get_guard(f, &g, &in_progress) == 0) {
      if (g > cur_spos || (g == cur_spos && !in_progress)) {
        dout(10) << "replay: skip " << cur_spos << " on " << *oid
                 << ", guard " << g << dendl;
        return -1;
      }
      if (g == cur_spos) {
        return 0;  // this very op was under way when we crashed
      }
    }
    // A file created after this op: live, the op found no object (and
    // was a tolerated -ENOENT, or it would have created the file itself).
    // Applied to the later object, a truncate or zero would corrupt it.
    if (files->get_born(f, &g) == 0 && g > cur_spos) {
      dout(10) << "replay: skip " << cur_spos << " on " << *oid
               << ", created later at " << g << dendl;
      if (born_later) {
        *born_later = true;
      }
      return -1;
    }
  }
  return 1;
}

int MIMStore::_check_replay_guard(const coll_t& cid, const ghobject_t* oid)
{
  return _guard_cmp(cid, oid) > 0;
}

void MIMStore::_set_replay_guard(const ObjectFDRef& f, const ghobject_t& oid,
                                 bool in_progress)
{
  // Earlier omap/xattr changes of the target must be durable before the
  // guard is, because replay skips them on the guard's word; stamping the
  // omap header with this position makes DBObjectMap skip them too. An
  // in-progress guard skips them as well, but must not stamp: the op under
  // way still has its own omap steps to redo at this position.
  int r = in_progress ? omap->sync() : omap->sync(&oid, &cur_spos);
  if (r == 0) {
    r = files->set_guard(f, cur_spos, in_progress);
  }
  if (r < 0) {
    derr << "cannot set replay guard on " << f->path << ": "
         << cpp_strerror(r) << dendl;
    ceph_abort_msg("mimstore: replay guard write failed");
  }
}

void MIMStore::_set_collection_replay_guard(const coll_t& cid,
                                            bool in_progress)
{
  // RocksDB first; set_collection_guard syncs the data filesystem.
  int r = omap->sync();
  if (r == 0) {
    r = files->set_collection_guard(cid, cur_spos, in_progress);
  }
  if (r < 0) {
    derr << "cannot set replay guard on " << cid << ": " << cpp_strerror(r)
         << dendl;
    ceph_abort_msg("mimstore: replay guard write failed");
  }
}

int MIMStore::_collection_barrier(const coll_t& a, const coll_t& b)
{
  // FileStore synced before a split or merge guard for the same reason: the
  // guard makes replay skip every earlier op on these collections, so each
  // of them must be durable first, the merge cache's writes included (they
  // are only in memory and the journal). The guard's syncfs does the rest.
  int r = _take_cached_collection(a);
  if (r == 0) {
    r = _take_cached_collection(b);
  }
  return r;
}

void MIMStore::_debug_point(const char* where)
{
  if (debug_hook) {
    debug_hook(where);
  }
}

int MIMStore::_open(const coll_t& cid, const ghobject_t& oid, bool create,
                    ObjectFDRef* out)
{
  auto c = _get_collection(cid);
  if (!c) {
    return -ENOENT;
  }
  {
    std::shared_lock l(c->lock);
    if (!c->exists) {
      return -ENOENT;
    }
    if (!create && !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  int r = files->open_object(cid, oid, create, out, &cur_spos);
  if (r == 0 && create) {
    std::unique_lock l(c->lock);
    c->objects.insert(oid);
  }
  return r;
}

int MIMStore::_take_cached(const coll_t& cid, const string& fname,
                           bool discard)
{
  // REQUIRES: the object's stripe lock.
  string cname = cid.to_str();
  mim::ObjectState st;
  if (!htmll->take_object(cname, fname, &st)) {
    return 0;
  }
  logger->inc(l_mimstore_take_object);
  int r = 0;
  if (!discard) {
    r = _write_back_object(cname, fname, st, false);
  }
  // Whatever happened to the bytes, their sns are durable after the next
  // sync: written, or superseded by this op (which that sync covers).
  _release_after_sync(st.sns);
  return r;
}

int MIMStore::_take_cached_collection(const coll_t& cid)
{
  auto c = _get_collection(cid);
  if (!c) {
    return 0;
  }
  std::vector<ghobject_t> objs;
  {
    std::shared_lock l(c->lock);
    objs.assign(c->objects.begin(), c->objects.end());
  }
  for (auto& o : objs) {
    string fname = object_file_name(o);
    std::lock_guard ol(_obj_lock(c->name, fname));
    int r = _take_cached(cid, fname, false);
    if (r < 0) {
      return r;
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// data ops

namespace {

bool object_exists(MIMStore::Collection* c, const ghobject_t& oid)
{
  std::shared_lock l(c->lock);
  return c->exists && c->objects.count(oid);
}

}  // namespace

int MIMStore::_touch(const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  ObjectFDRef f;
  return _open(cid, oid, true, &f);
}

int MIMStore::_write(const coll_t& cid, const ghobject_t& oid, uint64_t off,
                     uint64_t len, bufferlist& bl, uint32_t fadvise_flags)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << off << "~"
           << len << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  ceph_assert(bl.length() == len);
  string cname = cid.to_str();
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(cname, fname));
  // The file always exists once an object does: the cache holds bytes,
  // never existence.
  ObjectFDRef f;
  int r = _open(cid, oid, true, &f);
  if (r < 0 || len == 0) {
    return r;
  }
  ++client_writes;
  if (conf.merge) {
    // zero-copy: the cache keeps a reference to the transaction's buffer
    if (!bl.is_contiguous()) {
      bl.rebuild();  // one contiguous buffer
    }
    const bufferptr& bp = bl.front();
    mim::DataRef ref;
    if (bp.raw_length() <= len + len / 4) {
      // zero-copy: the cache keeps a reference to the transaction's buffer
      auto holder = std::make_shared<bufferptr>(bp);
      const char* data = holder->c_str();
      ref = mim::DataRef(std::shared_ptr<const void>(holder, data), data, len);
    } else {
      // The write is a slice of a larger buffer (a whole message): keeping
      // a reference would pin all of it for as long as the bytes stay
      // cached, and the memory cap would count a fraction of what is used.
      ref = mim::DataRef::copy_of(bp.c_str(), len);
    }
    auto res = htmll->insert(cname, fname, cur_spos.seq, off, ref);
    switch (res) {
    case mim::InsertResult::MERGED:
      _hold(cur_spos.seq);
      logger->inc(l_mimstore_merged);
      return 0;
    case mim::InsertResult::DIRECT_NO_SLOT:
      logger->inc(l_mimstore_direct_no_slot);
      break;
    case mim::InsertResult::DIRECT_NO_BLOCK:
      logger->inc(l_mimstore_direct_no_block);
      break;
    case mim::InsertResult::DIRECT_BEYOND_BLOCK:
      logger->inc(l_mimstore_direct_beyond_block);
      break;
    case mim::InsertResult::DIRECT_MEMORY_CAP:
      logger->inc(l_mimstore_direct_memory_cap);
      break;
    }
    // Earlier cached bytes of this object must not land after this write.
    r = _take_cached(cid, fname, false);
    if (r < 0) {
      return r;
    }
  } else {
    logger->inc(l_mimstore_direct_nomerge);
  }
  if (cct->_conf->subsys.should_gather<ceph_subsys_mimstore, 20>()) {
    struct stat st;
    ::fstat(f->fd, &st);
    dout(20) << __func__ << " " << oid << " sn " << cur_spos << " ino "
             << st.st_ino << " fd " << f->fd << dendl;
  }
  r = files->write(f, off, bl);
  if (r == 0) {
    ++data_write_ios;
    ++dirty_ios;
    dirty_bytes += len;
    logger->inc(l_mimstore_writeback_ios);
    logger->inc(l_mimstore_writeback_bytes, len);
  }
  return r;
}

int MIMStore::_zero(const coll_t& cid, const ghobject_t& oid, uint64_t off,
                    uint64_t len)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << off << "~"
           << len << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(cid.to_str(), fname));
  ObjectFDRef f;
  int r = _open(cid, oid, true, &f);
  if (r < 0) {
    return r;
  }
  r = _take_cached(cid, fname, false);
  if (r < 0) {
    return r;
  }
  return files->zero(f, off, len);
}

int MIMStore::_truncate(const coll_t& cid, const ghobject_t& oid,
                        uint64_t size)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << size << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(cid.to_str(), fname));
  ObjectFDRef f;
  int r = _open(cid, oid, false, &f);
  if (r < 0) {
    return r;
  }
  r = _take_cached(cid, fname, false);
  if (r < 0) {
    return r;
  }
  return files->truncate(f, size);
}

int MIMStore::_remove(const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  // In replay, a remove whose file is gone, or whose name a later object
  // already holds, still clears the omap at its position: the unlink (or
  // the new file's birth mark) can be durable while RocksDB lost the clear
  // with its unsynced writes, and the old object's keys would then come
  // back. DBObjectMap skips the clear where a later guard stamped the
  // header; the new object's own omap ops come after and are replayed.
  bool born_later = false;
  if (_guard_cmp(cid, &oid, &born_later) <= 0) {
    return born_later ? _replay_omap_clear(oid) : 0;
  }
  auto c = _get_collection(cid);
  if (!c || !object_exists(c.get(), oid)) {
    if (replaying && !_object_anywhere(oid)) {
      // (an object a later split or merge moved elsewhere keeps its omap)
      int r = _replay_omap_clear(oid);
      if (r < 0) {
        return r;
      }
    }
    return -ENOENT;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(c->name, fname));
  int r = _take_cached(cid, fname, true);
  if (r < 0) {
    return r;
  }
  r = omap->clear(oid, &cur_spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = files->remove_object(cid, oid);
  if (r < 0 && !(r == -ENOENT && replaying)) {
    return r;
  }
  std::unique_lock l(c->lock);
  c->objects.erase(oid);
  return 0;
}

bool MIMStore::_object_anywhere(const ghobject_t& oid)
{
  std::shared_lock l(coll_lock);
  for (auto& [cid, c] : coll_map) {
    if (object_exists(c.get(), oid)) {
      return true;
    }
  }
  return false;
}

int MIMStore::_replay_omap_clear(const ghobject_t& oid)
{
  int r = omap->clear(oid, &cur_spos);
  if (r == 0) {
    dout(10) << "replay: cleared the omap of " << oid << " at " << cur_spos
             << dendl;
  }
  return r == -ENOENT ? 0 : r;
}

// ---------------------------------------------------------------------------
// xattrs

int MIMStore::_setattrs(const coll_t& cid, const ghobject_t& oid,
                        std::map<string, bufferptr>& aset)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  auto c = _get_collection(cid);
  if (!c || !object_exists(c.get(), oid)) {
    return -ENOENT;
  }
  std::map<string, bufferlist> to_set;
  for (auto& [k, v] : aset) {
    to_set[k].append(v);
  }
  return omap->set_xattrs(oid, to_set, &cur_spos);
}

int MIMStore::_rmattr(const coll_t& cid, const ghobject_t& oid,
                      const char* name)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << name << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  auto c = _get_collection(cid);
  if (!c || !object_exists(c.get(), oid)) {
    return -ENOENT;
  }
  return omap->remove_xattrs(oid, {string(name)}, &cur_spos);
}

int MIMStore::_rmattrs(const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_check_replay_guard(cid, &oid)) {
    return 0;
  }
  auto c = _get_collection(cid);
  if (!c || !object_exists(c.get(), oid)) {
    return -ENOENT;
  }
  std::set<string> names;
  int r = omap->get_all_xattrs(oid, &names);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  if (names.empty()) {
    return 0;
  }
  return omap->remove_xattrs(oid, names, &cur_spos);
}

// ---------------------------------------------------------------------------
// clones

namespace {

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

}  // namespace

int MIMStore::_clone(const coll_t& cid, const ghobject_t& oldoid,
                     const ghobject_t& newoid)
{
  dout(15) << __func__ << " " << cid << " " << oldoid << " -> " << newoid
           << dendl;
  if (oldoid == newoid) {
    return 0;
  }
  if (!_check_replay_guard(cid, &newoid)) {
    return 0;
  }
  string cname = cid.to_str();
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(_obj_lock(cname, ofname), _obj_lock(cname, nfname));
  ObjectFDRef of, nf;
  int r = _open(cid, oldoid, false, &of);
  if (r < 0) {
    return r;
  }
  r = _take_cached(cid, ofname, false);
  if (r == 0) {
    r = _take_cached(cid, nfname, true);  // the clone replaces it all
  }
  if (r == 0) {
    r = _open(cid, newoid, true, &nf);
  }
  if (r == 0) {
    r = files->clone(of, nf);
  }
  if (r < 0) {
    return r;
  }
  r = omap->clone(oldoid, newoid, &cur_spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  _set_replay_guard(nf, newoid);
  return 0;
}

int MIMStore::_clone_range(const coll_t& cid, const ghobject_t& oldoid,
                           const ghobject_t& newoid, uint64_t srcoff,
                           uint64_t len, uint64_t dstoff)
{
  dout(15) << __func__ << " " << cid << " " << oldoid << " -> " << newoid
           << " " << srcoff << "~" << len << " -> " << dstoff << dendl;
  if (!_check_replay_guard(cid, &newoid)) {
    return 0;
  }
  string cname = cid.to_str();
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(_obj_lock(cname, ofname), _obj_lock(cname, nfname));
  ObjectFDRef of, nf;
  int r = _open(cid, oldoid, false, &of);
  if (r < 0) {
    return r;
  }
  r = _take_cached(cid, ofname, false);
  if (r == 0 && nfname != ofname) {
    r = _take_cached(cid, nfname, false);
  }
  if (r == 0) {
    r = _open(cid, newoid, true, &nf);
  }
  if (r < 0) {
    return r;
  }
  uint64_t size;
  r = files->size(of, &size);
  if (r < 0) {
    return r;
  }
  // Like the other stores: only the source's existing bytes are copied.
  if (srcoff >= size) {
    len = 0;
  } else if (srcoff + len > size) {
    len = size - srcoff;
  }
  if (len) {
    r = files->clone_range(of, srcoff, len, nf, dstoff);
    if (r < 0) {
      return r;
    }
  }
  _set_replay_guard(nf, newoid);
  return 0;
}

// ---------------------------------------------------------------------------
// omap

#define MIM_OMAP_PRELUDE()                                          \
  if (!_check_replay_guard(cid, &oid)) {                            \
    return 0;                                                       \
  }                                                                 \
  {                                                                 \
    auto c = _get_collection(cid);                                  \
    if (!c || !object_exists(c.get(), oid)) {                       \
      return -ENOENT;                                               \
    }                                                               \
  }

int MIMStore::_omap_clear(const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  int r = omap->clear_keys_header(oid, &cur_spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_setkeys(const coll_t& cid, const ghobject_t& oid,
                            bufferlist& aset_bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  std::map<string, bufferlist> aset;
  auto p = aset_bl.cbegin();
  decode(aset, p);
  return omap->set_keys(oid, aset, &cur_spos);
}

int MIMStore::_omap_rmkeys(const coll_t& cid, const ghobject_t& oid,
                           bufferlist& keys_bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  std::set<string> keys;
  auto p = keys_bl.cbegin();
  decode(keys, p);
  int r = omap->rm_keys(oid, keys, &cur_spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_rmkeyrange(const coll_t& cid, const ghobject_t& oid,
                               const string& first, const string& last)
{
  dout(15) << __func__ << " " << cid << " " << oid << " [" << first << ", "
           << last << ")" << dendl;
  MIM_OMAP_PRELUDE();
  std::set<string> keys;
  {
    auto iter = omap->get_iterator(oid);
    if (!iter) {
      return 0;
    }
    for (iter->lower_bound(first); iter->valid() && iter->key() < last;
         iter->next()) {
      keys.insert(iter->key());
    }
  }
  if (keys.empty()) {
    return 0;
  }
  int r = omap->rm_keys(oid, keys, &cur_spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_setheader(const coll_t& cid, const ghobject_t& oid,
                              bufferlist& bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  return omap->set_header(oid, bl, &cur_spos);
}

#undef MIM_OMAP_PRELUDE

// ---------------------------------------------------------------------------
// collections

int MIMStore::_create_collection(const coll_t& cid, int bits)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << dendl;
  if (!_check_replay_guard(cid, nullptr)) {
    return 0;
  }
  int r = files->create_collection(cid, bits);
  if (r == -EEXIST && replaying) {
    r = files->set_collection_bits(cid, bits);
  }
  if (r < 0) {
    return r;
  }
  CollectionRef c;
  {
    std::unique_lock l(coll_lock);
    auto p = coll_map.find(cid);
    if (p == coll_map.end()) {
      c = ceph::make_ref<Collection>(this, cid);
      coll_map[cid] = c;
    } else {
      c = p->second;
    }
  }
  {
    std::unique_lock l(c->lock);
    if (!replaying) {
      c->objects.clear();
    }
    c->bits = bits;
    c->exists = true;
  }
  // A later remove and re-create of this collection must not let replay
  // apply this incarnation's ops to the next one.
  _set_collection_replay_guard(cid);
  return 0;
}

int MIMStore::_destroy_collection(const coll_t& cid)
{
  dout(15) << __func__ << " " << cid << dendl;
  if (!_check_replay_guard(cid, nullptr)) {
    return 0;
  }
  auto c = _get_collection(cid);
  if (!c) {
    return -ENOENT;
  }
  {
    std::shared_lock l(c->lock);
    if (!c->exists) {
      return -ENOENT;
    }
    if (!c->objects.empty()) {
      return -ENOTEMPTY;
    }
  }
  int r = files->remove_collection(cid);
  if (r < 0 && !(r == -ENOENT && replaying)) {
    return r;
  }
  {
    std::unique_lock l(c->lock);
    c->exists = false;
  }
  std::unique_lock l(coll_lock);
  coll_map.erase(cid);
  return 0;
}

int MIMStore::_collection_move_rename(const coll_t& oldcid,
                                      const ghobject_t& oldoid,
                                      const coll_t& newcid,
                                      const ghobject_t& newoid)
{
  // FileStore's protocol, on link/unlink so each step can be redone:
  //   in-progress guard on the inode, link the new name, clone the omap,
  //   unlink the old name (clearing its omap), close the guard.
  // The guard lives on the inode and so moves with the name.
  dout(15) << __func__ << " " << oldcid << " " << oldoid << " -> " << newcid
           << " " << newoid << dendl;
  if (oldcid == newcid && oldoid == newoid) {
    return 0;
  }
  auto oc = _get_collection(oldcid);
  auto nc = _get_collection(newcid);
  if (!oc) {
    return -ENOENT;
  }
  if (!nc) {
    // replay: the destination collection went away later; so must the
    // source
    return replaying ? _remove(oldcid, oldoid) : -ENOENT;
  }
  int dst = _guard_cmp(newcid, &newoid);
  if (dst < 0) {
    // done, and the target has moved on since: a source name that replay
    // re-created is stale (its own guard decides)
    return replaying ? _remove(oldcid, oldoid) : 0;
  }
  if (_guard_cmp(oldcid, &oldoid) < 0) {
    return 0;  // the source carries a newer guard: not ours to touch
  }
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(_obj_lock(oc->name, ofname), _obj_lock(nc->name, nfname));
  if (!object_exists(oc.get(), oldoid)) {
    if (!replaying) {
      return -ENOENT;
    }
    if (dst == 0) {
      // This rename was under way and its old name is gone: a sync made
      // the unlink durable, but power went before RocksDB's clone of the
      // omap and xattrs was. Redo that part (DBObjectMap skips what its
      // header says is done) and close the guard.
      ObjectFDRef f;
      int r = files->open_object(newcid, newoid, false, &f);
      if (r < 0) {
        return r;
      }
      r = omap->clone(oldoid, newoid, &cur_spos);
      if (r < 0 && r != -ENOENT) {
        return r;
      }
      r = omap->clear(oldoid, &cur_spos);
      if (r < 0 && r != -ENOENT) {
        return r;
      }
      _set_replay_guard(f, newoid);
    }
    return 0;  // moved before the crash
  }
  bool stale_dst = object_exists(nc.get(), newoid);
  if (stale_dst && !replaying) {
    return -EEXIST;  // like the other stores: never rename over an object
  }
  int r = _take_cached(oldcid, ofname, false);
  if (r == 0) {
    r = _take_cached(newcid, nfname, true);  // replaced
  }
  if (r < 0) {
    return r;
  }
  ObjectFDRef f;
  r = files->open_object(oldcid, oldoid, false, &f);
  if (r < 0) {
    return r;
  }
  if (dst > 0) {
    _set_replay_guard(f, oldoid, true);
  }
  r = files->link_object(oldcid, oldoid, newcid, newoid);
  if (r == -EEXIST && replaying) {
    // We crashed after the link: the new name already holds the object
    // (it carries this op's in-progress guard). The source name may be a
    // stale file that replaying earlier ops re-created, while the object
    // itself was already under the new name; it is unlinked below.
    r = 0;
  }
  if (r < 0) {
    return r;
  }
  _debug_point("rename:linked");
  r = omap->clone(oldoid, newoid, &cur_spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = omap->clear(oldoid, &cur_spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = files->unlink_name(oldcid, oldoid);
  if (r < 0 && !(r == -ENOENT && replaying)) {
    return r;
  }
  _debug_point("rename:unlinked");
  {
    std::unique_lock ol(oc->lock);
    oc->objects.erase(oldoid);
  }
  {
    std::unique_lock nl(nc->lock);
    nc->objects.insert(newoid);
  }
  _set_replay_guard(f, newoid);
  return 0;
}

// Split and merge move files between collection directories. Their
// protocol, FileStore's with the merge cache added:
//   1. barrier: the cached writes of both collections go to their files;
//   2. in-progress guards on both (each syncs the filesystem first), so
//      replay skips every earlier op on them (all durable by now) and
//      resumes this one if it was under way;
//   3. move the files; 4. close the guards.
// Without 1 and 2, replay re-applied an older op to an object already
// moved, re-creating a partial file in the source that the replayed move
// then renamed over the real one, and a closed destination guard made
// replay skip cached writes that had never reached the disk.

int MIMStore::_move_objects(Collection* sc, Collection* dc,
                            const std::function<bool(const ghobject_t&)>& which)
{
  std::vector<ghobject_t> moving;
  {
    std::shared_lock l(sc->lock);
    for (auto& o : sc->objects) {
      if (which(o)) {
        moving.push_back(o);
      }
    }
  }
  for (auto& o : moving) {
    int r = files->move_object(sc->cid, dc->cid, o);
    if (r < 0) {
      return r;
    }
    {
      std::unique_lock l(sc->lock);
      sc->objects.erase(o);
    }
    {
      std::unique_lock l(dc->lock);
      dc->objects.insert(o);
    }
    _debug_point("move:object");
  }
  return 0;
}

int MIMStore::_split_collection(const coll_t& cid, uint32_t bits,
                                uint32_t rem, const coll_t& dest)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << " rem " << rem
           << " -> " << dest << dendl;
  if (_guard_cmp(dest, nullptr) < 0 || _guard_cmp(cid, nullptr) < 0) {
    return 0;  // done before the crash
  }
  auto sc = _get_collection(cid);
  auto dc = _get_collection(dest);
  if (!sc || !dc) {
    return -ENOENT;
  }
  int r = _collection_barrier(cid, dest);
  if (r < 0) {
    return r;
  }
  _set_collection_replay_guard(cid, true);
  _set_collection_replay_guard(dest, true);
  _debug_point("split:guarded");
  r = _move_objects(sc.get(), dc.get(),
                    [&](const ghobject_t& o) { return o.match(bits, rem); });
  if (r < 0) {
    return r;
  }
  {
    std::unique_lock l(sc->lock);
    sc->bits = bits;
  }
  r = files->set_collection_bits(cid, bits);
  if (r < 0) {
    return r;
  }
  _debug_point("split:moved");
  _set_collection_replay_guard(dest);
  _debug_point("split:dest-closed");
  _set_collection_replay_guard(cid);
  return 0;
}

int MIMStore::_merge_collection(const coll_t& cid, uint32_t bits,
                                const coll_t& dest)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << " -> " << dest
           << dendl;
  if (_guard_cmp(dest, nullptr) < 0) {
    return 0;  // done before the crash
  }
  // Replay of a merge that had moved everything: the tombstone says so.
  SequencerPosition gone;
  bool moved = replaying && files->get_tombstone(cid, &gone) == 0 &&
    gone == cur_spos;
  if (!moved && _guard_cmp(cid, nullptr) < 0) {
    return 0;
  }
  auto sc = _get_collection(cid);
  auto dc = _get_collection(dest);
  if (!dc || (!sc && !moved)) {
    return -ENOENT;
  }
  int r;
  if (!moved) {
    r = _collection_barrier(cid, dest);
    if (r < 0) {
      return r;
    }
    _set_collection_replay_guard(cid, true);
    _set_collection_replay_guard(dest, true);
    _debug_point("merge:guarded");
    r = _move_objects(sc.get(), dc.get(),
                      [](const ghobject_t&) { return true; });
    if (r < 0) {
      return r;
    }
    {
      std::lock_guard l(tombstone_lock);
      r = files->set_tombstone(cid, cur_spos);
      if (r < 0) {
        derr << "cannot record the removal of " << cid << ": "
             << cpp_strerror(r) << dendl;
        return r;
      }
      tombstones[cid] = cur_spos.seq;
    }
    _debug_point("merge:tombstone");
  }
  {
    std::unique_lock l(dc->lock);
    dc->bits = bits;
  }
  r = files->set_collection_bits(dest, bits);
  if (r < 0) {
    return r;
  }
  if (sc) {
    r = files->remove_collection(cid);
    if (r < 0 && !(r == -ENOENT && replaying)) {
      return r;
    }
    {
      std::unique_lock l(sc->lock);
      sc->exists = false;
    }
    std::unique_lock l(coll_lock);
    coll_map.erase(cid);
  }
  _debug_point("merge:removed");
  _set_collection_replay_guard(dest);
  return 0;
}

int MIMStore::_set_bits(const coll_t& cid, int bits)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << dendl;
  auto c = _get_collection(cid);
  if (!c) {
    return -ENOENT;
  }
  {
    std::unique_lock l(c->lock);
    c->bits = bits;
  }
  return files->set_collection_bits(cid, bits);
}
