// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: transaction ops. One _verb() per Transaction op, dispatched by
 * the switch in _do_transaction(): data, xattr and clone ops here, omap ops
 * in MIMOmapOps.cc, collection ops in MIMCollOps.cc, replay guards in
 * ReplayGuards.cc. All of this runs on the apply thread (or on the mount
 * thread during replay), one transaction at a time, in sn order.
 *
 * Rules every op follows:
 *  - Replay guards: while replaying, an op whose target carries a guard at
 *    or after the op's position was already applied and durable: skip it.
 *  - An op other than a merged write first takes the object's cached
 *    extents out of the HTMLL and writes them to the file, so it sees (and
 *    orders after) every earlier write. Removed or overwritten objects drop
 *    them instead.
 *  - omap and xattrs go to OmapStore with the op's SequencerPosition, which
 *    makes them idempotent on replay.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/debug.h"
#include "common/errno.h"
#include "kv/KeyValueDB.h"

#include "Checksums.h"
#include "ObjectLocks.h"
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

void MIMStore::_do_transaction(ApplyContext& ac,
                               Transaction& t, sn_t sn, uint32_t trans_num)
{
  Transaction::iterator i = t.begin();
  uint32_t op_num = 0;

  while (i.have_op()) {
    Transaction::Op* op = i.decode_op();
    ac.spos = SequencerPosition(sn, trans_num, op_num);
    int r = _do_data_op(ac, i, op);
    if (r == NOT_MINE) {
      r = _do_omap_op(ac, i, op);
    }
    if (r == NOT_MINE) {
      r = _do_coll_op(ac, i, op);
    }
    if (r == NOT_MINE) {
      derr << "bad op " << op->op << dendl;
      ceph_abort();
    }
    if (r < 0 && !_op_error_tolerated(ac, op->op, r)) {
      _abort_on_op_error(t, op->op, op_num, r);
    }
    ++op_num;
  }
}

bool MIMStore::_op_error_tolerated(const ApplyContext& ac, uint32_t op, int r)
{
  if (r == -ENOENT && !(op == Transaction::OP_CLONERANGE ||
                        op == Transaction::OP_CLONE ||
                        op == Transaction::OP_CLONERANGE2 ||
                        op == Transaction::OP_COLL_ADD)) {
    return true;  // -ENOENT is usually okay
  }
  if (r == -ENODATA) {
    return true;
  }
  if (r == -ENOENT && ac.replaying) {
    // A clone source removed later (snapshot trim, PG deletion), with the
    // checkpoint still before the clone: the clone's target was either
    // guarded (and skipped) or went the same way. FileStore tolerated
    // ENOENT on replay for this reason.
    dout(10) << "replay: tolerating ENOENT on op " << op << " at "
             << ac.spos << dendl;
    return true;
  }
  return false;
}

void MIMStore::_abort_on_op_error(Transaction& t, uint32_t op,
                                  uint32_t op_num, int r)
{
  const char* msg = "unexpected error code";
  if (r == -ENOENT) {
    msg = "ENOENT on clone suggests osd bug";
  } else if (r == -ENOSPC) {
    // The transaction is journaled but not acknowledged; the next mount
    // replays it once there is room.
    msg = "ENOSPC: the data filesystem is full; free space under osd "
          "data, then restart the OSD (the journal replays the "
          "transaction)";
  } else if (r == -ENOTEMPTY) {
    msg = "ENOTEMPTY suggests garbage data in osd data dir";
  } else if (r == -EIO) {
    msg = "EIO from the data filesystem";
  } else if (r == -EPERM) {
    // RocksDBStore returns -1 for any failed commit (a full filesystem,
    // an I/O error), its own log line before this one says which.
    msg = "EPERM: -1 is how the omap and xattr database (RocksDB: "
          "mimstore_db_dir, else <osd data>/db) reports a failed commit, and "
          "RocksDB's message above then says why (a full filesystem: free "
          "space there, then restart the OSD; the journal replays the "
          "transaction); without one, the data filesystem refused the op";
  }
  derr << " error " << cpp_strerror(r) << " not handled on operation "
       << op << " (op " << op_num << ", counting from 0)" << dendl;
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

/// The data, xattr and clone ops of _do_transaction.
int MIMStore::_do_data_op(const ApplyContext& ac,
                          Transaction::iterator& i, Transaction::Op* op)
{
  int r = 0;
  switch (op->op) {
  case Transaction::OP_NOP:
    break;

  case Transaction::OP_TOUCH:
  case Transaction::OP_CREATE:
    r = _touch(ac, i.get_cid(op->cid), i.get_oid(op->oid));
    break;

  case Transaction::OP_WRITE:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      uint32_t fadvise_flags = i.get_fadvise_flags();
      bufferlist bl;
      i.decode_bl(bl);
      r = _write(ac, cid, oid, op->off, op->len, bl, fadvise_flags);
    }
    break;

  case Transaction::OP_ZERO:
    r = _zero(ac, i.get_cid(op->cid), i.get_oid(op->oid), op->off, op->len);
    break;

  case Transaction::OP_TRIMCACHE:
    break;  // deprecated, no-op

  case Transaction::OP_TRUNCATE:
    r = _truncate(ac, i.get_cid(op->cid), i.get_oid(op->oid), op->off);
    break;

  case Transaction::OP_REMOVE:
  case Transaction::OP_COLL_REMOVE:
    r = _remove(ac, i.get_cid(op->cid), i.get_oid(op->oid));
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
      r = _setattrs(ac, cid, oid, to_set);
    }
    break;

  case Transaction::OP_SETATTRS:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      std::map<string, bufferptr> aset;
      i.decode_attrset(aset);
      r = _setattrs(ac, cid, oid, aset);
    }
    break;

  case Transaction::OP_RMATTR:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      string name = i.decode_string();
      r = _rmattr(ac, cid, oid, name.c_str());
    }
    break;

  case Transaction::OP_RMATTRS:
    r = _rmattrs(ac, i.get_cid(op->cid), i.get_oid(op->oid));
    break;

  case Transaction::OP_CLONE:
    r = _clone(ac, i.get_cid(op->cid), i.get_oid(op->oid),
               i.get_oid(op->dest_oid));
    break;

  case Transaction::OP_CLONERANGE:
    r = _clone_range(ac, i.get_cid(op->cid), i.get_oid(op->oid),
                     i.get_oid(op->dest_oid), op->off, op->len, op->off);
    break;

  case Transaction::OP_CLONERANGE2:
    r = _clone_range(ac, i.get_cid(op->cid), i.get_oid(op->oid),
                     i.get_oid(op->dest_oid), op->off, op->len,
                     op->dest_off);
    break;

  case Transaction::OP_SETALLOCHINT:
    break;  // files grow as written; XFS speculative preallocation helps

  default:
    return NOT_MINE;
  }
  return r;
}

// ---------------------------------------------------------------------------
// helpers

void MIMStore::_debug_point(const char* where)
{
  if (!debug_hook_set) {
    return;
  }
  std::shared_ptr<const std::function<void(const char*)>> h;
  {
    mim::MutexLock l(debug_hook_lock);
    h = debug_hook;
  }
  if (h) {
    (*h)(where);
  }
}

int MIMStore::_open(const ApplyContext& ac,
                    const coll_t& cid, const ghobject_t& oid, OpenMode mode,
                    ObjectFDRef* out)
{
  const bool create = mode == OpenMode::CREATE;
  auto c = colls.get(cid);
  if (!c) {
    return -ENOENT;
  }
  {
    mim::ReadLock l(c->lock);
    if (!c->exists) {
      return -ENOENT;
    }
    if (!create && !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  int r = files->open_object(cid, oid, mode, out, &ac.spos);
  if (r == 0 && create) {
    mim::WriteLock l(c->lock);
    c->objects.insert(oid);
  }
  return r;
}

int MIMStore::_require_object(const coll_t& cid, const ghobject_t& oid)
{
  auto c = colls.get(cid);
  return c && c->has(oid) ? 0 : -ENOENT;
}

void MIMStore::_take_cached(const coll_t& cid, const string& fname,
                            Taken what)
{
  string cname = cid.to_str();
  mim::ObjectState st;
  if (!htmll->take_object(cname, fname, &st)) {
    return;
  }
  logger->inc(l_mimstore_take_object);
  if (what == Taken::WRITE_BACK) {
    std::string buf;  // rare: an op on an object with cached bytes
    int r = _write_back_object(cname, fname, st, WritebackOf::TAKEN, &buf);
    if (r < 0) {
      // The bytes are out of the cache and not in the file: released, the
      // next sync would checkpoint past them while this op fails (and the
      // store dies), or goes on where the op tolerates the error (ENODATA,
      // ENOENT). Unreleased, the journal still holds them.
      _write_back_failed("a write back before an op on the object", cname,
                         fname, r);
    }
  }
  // Their sns are durable after the next sync: written, or superseded by
  // this op (which that sync covers).
  durability.release_after_sync(st.sns);
}

void MIMStore::_take_cached_collection(const coll_t& cid)
{
  auto c = colls.get(cid);
  if (!c) {
    return;
  }
  std::vector<ghobject_t> objs;
  {
    mim::ReadLock l(c->lock);
    objs.assign(c->objects.begin(), c->objects.end());
  }
  for (auto& o : objs) {
    string fname = object_file_name(o);
    std::lock_guard ol(obj_locks.of(c->name, fname));
    _take_cached(cid, fname, Taken::WRITE_BACK);
  }
}

// ---------------------------------------------------------------------------
// data ops

int MIMStore::_touch(const ApplyContext& ac,
                     const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  ObjectFDRef f;
  return _open(ac, cid, oid, OpenMode::CREATE, &f);
}

int MIMStore::_write(const ApplyContext& ac,
                     const coll_t& cid, const ghobject_t& oid, uint64_t off,
                     uint64_t len, bufferlist& bl, uint32_t fadvise_flags)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << off << "~"
           << len << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  ceph_assert(bl.length() == len);
  string cname = cid.to_str();
  string fname = object_file_name(oid);
  if (!ac.merge) {
    std::lock_guard ol(obj_locks.of(cname, fname));
    ObjectFDRef f;
    int r = _open(ac, cid, oid, OpenMode::CREATE, &f);
    if (r < 0 || len == 0) {
      return r;
    }
    ++client_writes;
    logger->inc(l_mimstore_direct_nomerge);
    return _write_direct(ac, oid, f, off, bl);
  }
  // A merged write takes no object lock: it changes only the active
  // generation (the HTMLL locks itself), and the lock keeps out readers and
  // direct writers while the flush has an object's bytes in neither the
  // cache nor the file. The flush holds the lock across its file writes,
  // and a buffered write can wait seconds for a page the kernel is writing
  // back behind a full disk queue; under the lock the apply thread waited
  // for it on a write to any object of the stripe, and with on_commit after
  // apply every client did (docs/store.md, "The seconds at zero").
  // The file always exists once an object does (the cache holds bytes,
  // never existence); only this thread creates or removes object files.
  ObjectFDRef f;
  int r = _open(ac, cid, oid, OpenMode::CREATE, &f);
  if (r < 0 || len == 0) {
    return r;
  }
  ++client_writes;
  mim::DataRef ref;
  if (!_cached_form(ac, bl, &ref)) {
    // Kept only in the journal, and not found there: it cannot be cached.
    logger->inc(l_mimstore_direct_not_in_journal);
  } else {
    const bool located = ref.has_jpos();
    auto res = htmll->insert(cname, fname, ac.spos.seq, off, std::move(ref));
    switch (res) {
    case mim::InsertResult::MERGED:
      durability.hold(ac.spos.seq);
      logger->inc(l_mimstore_merged);
      if (located) {
        logger->inc(l_mimstore_merged_in_journal);
      }
      // Replayed: the chunks it covers in part take the file's state (a
      // write back the crash cut short may have left either ahead).
      return ac.replaying ? csums->rebase(oid, f, {off, len}) : 0;
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
  }
  std::lock_guard ol(obj_locks.of(cname, fname));
  // Earlier cached bytes of this object must not land after this write.
  _take_cached(cid, fname, Taken::WRITE_BACK);
  if (cct->_conf->subsys.should_gather<ceph_subsys_mimstore, 20>()) {
    struct stat st;
    ::fstat(f->fd, &st);
    dout(20) << __func__ << " " << oid << " sn " << ac.spos << " ino "
             << st.st_ino << " fd " << f->fd << dendl;
  }
  return _write_direct(ac, oid, f, off, bl);
}

int MIMStore::_write_direct(const ApplyContext& ac, const ghobject_t& oid,
                            const ObjectFDRef& f, uint64_t off,
                            const bufferlist& bl)
{
  uint64_t old_size = 0;
  int r = files->size(f, &old_size);
  if (r < 0) {
    return r;
  }
  const uint64_t len = bl.length(), cs = csums->chunk_size();
  r = csums->change(oid, f, {{off, len}}, old_size, Checksums::Kind::DATA,
                    !ac.replaying, [&] { return files->write(f, off, bl); },
                    UINT64_MAX, [&](uint64_t at, char* dst) {
                      if (at < off || at + cs > off + len) {
                        return false;
                      }
                      bl.begin(at - off).copy(cs, dst);
                      return true;
                    });
  if (r == 0) {
    ++data_write_ios;
    durability.note_dirty(bl.length());
    logger->inc(l_mimstore_writeback_ios);
    logger->inc(l_mimstore_writeback_bytes, bl.length());
  }
  return r;
}

int MIMStore::_zero(const ApplyContext& ac,
                    const coll_t& cid, const ghobject_t& oid, uint64_t off,
                    uint64_t len)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << off << "~"
           << len << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(obj_locks.of(cid.to_str(), fname));
  ObjectFDRef f;
  int r = _open(ac, cid, oid, OpenMode::CREATE, &f);
  if (r < 0) {
    return r;
  }
  _take_cached(cid, fname, Taken::WRITE_BACK);
  uint64_t old_size = 0;
  r = files->size(f, &old_size);
  if (r < 0) {
    return r;
  }
  return csums->change(oid, f, {{off, len}}, old_size,
                       Checksums::Kind::ZEROS, !ac.replaying,
                       [&] { return files->zero(f, off, len); });
}

int MIMStore::_truncate(const ApplyContext& ac,
                        const coll_t& cid, const ghobject_t& oid,
                        uint64_t size)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << size << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(obj_locks.of(cid.to_str(), fname));
  ObjectFDRef f;
  int r = _open(ac, cid, oid, OpenMode::EXISTING, &f);
  if (r < 0) {
    return r;
  }
  _take_cached(cid, fname, Taken::WRITE_BACK);
  uint64_t old_size = 0;
  r = files->size(f, &old_size);
  if (r < 0) {
    return r;
  }
  // Whichever way it goes (in replay the file may have its new size
  // already, its checksums not): every chunk wholly past the new end is
  // forgotten (its group's ZERO, later groups deleted), and the chunk
  // holding the end takes the file's bytes.
  const uint64_t cs = csums->chunk_size();
  std::vector<mim::Extent> end_chunk;
  if (size % cs) {
    end_chunk.push_back({size - size % cs, size % cs});
  }
  return csums->change(oid, f, end_chunk, old_size, Checksums::Kind::ZEROS,
                       !ac.replaying, [&] { return files->truncate(f, size); },
                       size);
}

int MIMStore::_remove(const ApplyContext& ac,
                      const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  // In replay, a remove whose file is gone, or whose name a later object
  // already holds, still clears the omap at its position: the unlink (or
  // the new file's birth mark) can be durable while RocksDB lost the clear
  // with its unsynced writes, and the old object's keys would then come
  // back. OmapStore skips the clear where a later guard stamped the
  // header; the new object's own omap ops come after and are replayed.
  bool born_later = false;
  if (_guard_cmp(ac, cid, &oid, &born_later) != GuardVerdict::APPLY) {
    if (!born_later) {
      return 0;
    }
    // The clear takes the later object's checksums too, and its writes
    // that a written-back record skips do not put them back.
    int r = _replay_omap_clear(ac, oid);
    return r < 0 ? r : csums->rebuild(cid, oid);
  }
  auto c = colls.get(cid);
  if (!c || !c->has(oid)) {
    if (ac.replaying && !colls.holds_anywhere(oid)) {
      // (an object a later split or merge moved elsewhere keeps its omap)
      int r = _replay_omap_clear(ac, oid);
      if (r < 0) {
        return r;
      }
    }
    return -ENOENT;
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(obj_locks.of(c->name, fname));
  _take_cached(cid, fname, Taken::DISCARD);
  int r = omap->clear(oid, &ac.spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = files->remove_object(cid, oid);
  if (r < 0 && !(r == -ENOENT && ac.replaying)) {
    return r;
  }
  mim::WriteLock l(c->lock);
  c->objects.erase(oid);
  return 0;
}

int MIMStore::_replay_omap_clear(const ApplyContext& ac, const ghobject_t& oid)
{
  int r = omap->clear(oid, &ac.spos);
  if (r == 0) {
    dout(10) << "replay: cleared the omap of " << oid << " at " << ac.spos
             << dendl;
  }
  return r == -ENOENT ? 0 : r;
}

// ---------------------------------------------------------------------------
// xattrs

int MIMStore::_setattrs(const ApplyContext& ac,
                        const coll_t& cid, const ghobject_t& oid,
                        std::map<string, bufferptr>& aset)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  int r = _require_object(cid, oid);
  if (r < 0) {
    return r;
  }
  std::map<string, bufferlist> to_set;
  for (auto& [k, v] : aset) {
    to_set[k].append(v);
  }
  return omap->set_xattrs(oid, to_set, &ac.spos);
}

int MIMStore::_rmattr(const ApplyContext& ac,
                      const coll_t& cid, const ghobject_t& oid,
                      const char* name)
{
  dout(15) << __func__ << " " << cid << " " << oid << " " << name << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  int r = _require_object(cid, oid);
  if (r < 0) {
    return r;
  }
  return omap->remove_xattrs(oid, {string(name)}, &ac.spos);
}

int MIMStore::_rmattrs(const ApplyContext& ac,
                       const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  if (!_should_apply(ac, cid, &oid)) {
    return 0;
  }
  int r = _require_object(cid, oid);
  if (r < 0) {
    return r;
  }
  r = omap->remove_all_xattrs(oid, &ac.spos);
  return r == -ENOENT ? 0 : r;
}

// ---------------------------------------------------------------------------
// clones

int MIMStore::_clone(const ApplyContext& ac,
                     const coll_t& cid, const ghobject_t& oldoid,
                     const ghobject_t& newoid)
{
  dout(15) << __func__ << " " << cid << " " << oldoid << " -> " << newoid
           << dendl;
  if (oldoid == newoid) {
    return 0;
  }
  if (!_should_apply(ac, cid, &newoid)) {
    return 0;
  }
  string cname = cid.to_str();
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(obj_locks.of(cname, ofname), obj_locks.of(cname, nfname));
  ObjectFDRef of, nf;
  int r = _open(ac, cid, oldoid, OpenMode::EXISTING, &of);
  if (r < 0) {
    return r;
  }
  _take_cached(cid, ofname, Taken::WRITE_BACK);
  _take_cached(cid, nfname, Taken::DISCARD);  // the clone replaces it all
  r = _open(ac, cid, newoid, OpenMode::CREATE, &nf);
  if (r == 0) {
    r = files->clone(of, nf);
  }
  if (r < 0) {
    return r;
  }
  r = omap->clone(oldoid, newoid, &ac.spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  if (ac.replaying) {
    // The omap clone (checksums included) is skipped when the target's
    // record is stamped at or past this op, while the writes before it
    // that the file guard did not cover were replayed onto the file and
    // put their states back: the copy's states come from its bytes.
    r = csums->rebuild(newoid, nf);
    if (r < 0) {
      return r;
    }
  }
  _set_replay_guard(ac, nf, newoid, GuardState::DONE);
  return 0;
}

int MIMStore::_clone_range(const ApplyContext& ac,
                           const coll_t& cid, const ghobject_t& oldoid,
                           const ghobject_t& newoid, uint64_t srcoff,
                           uint64_t len, uint64_t dstoff)
{
  dout(15) << __func__ << " " << cid << " " << oldoid << " -> " << newoid
           << " " << srcoff << "~" << len << " -> " << dstoff << dendl;
  if (!_should_apply(ac, cid, &newoid)) {
    return 0;
  }
  string cname = cid.to_str();
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(obj_locks.of(cname, ofname), obj_locks.of(cname, nfname));
  ObjectFDRef of, nf;
  int r = _open(ac, cid, oldoid, OpenMode::EXISTING, &of);
  if (r < 0) {
    return r;
  }
  _take_cached(cid, ofname, Taken::WRITE_BACK);
  if (nfname != ofname) {
    _take_cached(cid, nfname, Taken::WRITE_BACK);
  }
  r = _open(ac, cid, newoid, OpenMode::CREATE, &nf);
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
    // The source checked first (live, unless mimstore_csum_verify is off;
    // replay takes files as it finds them): the copy of a chunk that fails
    // is BAD, not a crc of its rot.
    std::vector<mim::Extent> rotten;
    uint64_t old_size = 0;
    r = ac.replaying || !conf.csum_verify
      ? 0 : csums->check_source(oldoid, of, srcoff, len, &rotten);
    if (r == 0) {
      r = files->size(nf, &old_size);
    }
    if (r == 0) {
      r = csums->change(newoid, nf, {{dstoff, len}}, old_size,
                        Checksums::Kind::DATA, !ac.replaying, [&] {
                          return files->clone_range(of, srcoff, len, nf,
                                                    dstoff);
                        });
    }
    for (auto& e : rotten) {
      e.off = e.off - srcoff + dstoff;
    }
    if (r == 0 && !rotten.empty()) {
      r = csums->mark_bad(newoid, rotten);
    }
    if (r < 0) {
      return r;
    }
  }
  _set_replay_guard(ac, nf, newoid, GuardState::DONE);
  return 0;
}
