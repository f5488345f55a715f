// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: collection ops: create, destroy, move_rename, split and merge.
 * The replay protocol of split and merge is written above _move_objects.
 */
#include "MIMStore.h"

#include "common/debug.h"
#include "common/errno.h"
#include "kv/KeyValueDB.h"

#include "ObjectLocks.h"
#include "Checksums.h"
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

/// The collection ops of _do_transaction.
int MIMStore::_do_coll_op(const ApplyContext& ac,
                          Transaction::iterator& i, Transaction::Op* op)
{
  int r = 0;
  switch (op->op) {
  case Transaction::OP_MKCOLL:
    r = _create_collection(ac, i.get_cid(op->cid), op->split_bits);
    break;

  case Transaction::OP_COLL_HINT:
    {
      bufferlist hint;
      i.decode_bl(hint);  // expected object counts: nothing to prepare
    }
    break;

  case Transaction::OP_RMCOLL:
    r = _destroy_collection(ac, i.get_cid(op->cid));
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
      r = _collection_move_rename(ac, oldcid, oldoid, newcid, newoid);
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
      r = _collection_move_rename(ac, cid, oldoid, cid, newoid);
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

  case Transaction::OP_SPLIT_COLLECTION:
    ceph_abort_msg("deprecated");
    break;

  case Transaction::OP_SPLIT_COLLECTION2:
    r = _split_collection(ac, i.get_cid(op->cid), op->split_bits,
                          op->split_rem, i.get_cid(op->dest_cid));
    break;

  case Transaction::OP_MERGE_COLLECTION:
    r = _merge_collection(ac, i.get_cid(op->cid), op->split_bits,
                          i.get_cid(op->dest_cid));
    break;

  case Transaction::OP_COLL_SET_BITS:
    r = _set_bits(ac, i.get_cid(op->cid), op->split_bits);
    break;

  default:
    return NOT_MINE;
  }
  return r;
}

int MIMStore::_create_collection(const ApplyContext& ac,
                                 const coll_t& cid, int bits)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << dendl;
  if (!_should_apply(ac, cid, nullptr)) {
    return 0;
  }
  int r = files->create_collection(cid, bits);
  if (r == -EEXIST && ac.replaying) {
    r = files->set_collection_bits(cid, bits);
  }
  if (r < 0) {
    return r;
  }
  CollectionRef c = colls.get_or_create(this, cid);
  {
    mim::WriteLock l(c->lock);
    if (!ac.replaying) {
      c->objects.clear();
    }
    c->bits = bits;
    c->exists = true;
  }
  // A later remove and re-create of this collection must not let replay
  // apply this incarnation's ops to the next one.
  _set_collection_replay_guard(ac, cid, GuardState::DONE);
  return 0;
}

int MIMStore::_destroy_collection(const ApplyContext& ac, const coll_t& cid)
{
  dout(15) << __func__ << " " << cid << dendl;
  if (!_should_apply(ac, cid, nullptr)) {
    return 0;
  }
  auto c = colls.get(cid);
  if (!c) {
    return -ENOENT;
  }
  {
    mim::ReadLock l(c->lock);
    if (!c->exists) {
      return -ENOENT;
    }
    if (!c->objects.empty()) {
      return -ENOTEMPTY;
    }
  }
  int r = files->remove_collection(cid);
  if (r < 0 && !(r == -ENOENT && ac.replaying)) {
    return r;
  }
  {
    mim::WriteLock l(c->lock);
    c->exists = false;
  }
  colls.drop(cid);
  return 0;
}

int MIMStore::_collection_move_rename(const ApplyContext& ac,
                                      const coll_t& oldcid,
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
  auto oc = colls.get(oldcid);
  auto nc = colls.get(newcid);
  if (!oc) {
    return -ENOENT;
  }
  if (!nc) {
    // replay: the destination collection went away later; so must the
    // source
    return ac.replaying ? _remove(ac, oldcid, oldoid) : -ENOENT;
  }
  const GuardVerdict dst = _guard_cmp(ac, newcid, &newoid);
  if (dst == GuardVerdict::SKIP) {
    // done, and the target has moved on since: a source name that replay
    // re-created is stale (its own guard decides)
    return ac.replaying ? _remove(ac, oldcid, oldoid) : 0;
  }
  if (_guard_cmp(ac, oldcid, &oldoid) == GuardVerdict::SKIP) {
    return 0;  // the source carries a newer guard: not ours to touch
  }
  string ofname = object_file_name(oldoid);
  string nfname = object_file_name(newoid);
  TwoLocks l(obj_locks.of(oc->name, ofname),
             obj_locks.of(nc->name, nfname));
  if (!oc->has(oldoid)) {
    if (!ac.replaying) {
      return -ENOENT;
    }
    if (dst == GuardVerdict::RESUME) {
      // This rename was under way and its old name is gone: a sync made
      // the unlink durable, but power went before RocksDB's clone of the
      // omap and xattrs was. Redo that part (OmapStore skips what its
      // header says is done) and close the guard.
      ObjectFDRef f;
      int r = files->open_object(newcid, newoid, OpenMode::EXISTING, &f);
      if (r < 0) {
        return r;
      }
      r = omap->clone(oldoid, newoid, &ac.spos);
      if (r < 0 && r != -ENOENT) {
        return r;
      }
      r = omap->clear(oldoid, &ac.spos);
      if (r < 0 && r != -ENOENT) {
        return r;
      }
      _set_replay_guard(ac, f, newoid, GuardState::DONE);
    }
    return 0;  // moved before the crash
  }
  bool stale_dst = nc->has(newoid);
  if (stale_dst && !ac.replaying) {
    return -EEXIST;  // like the other stores: never rename over an object
  }
  _take_cached(oldcid, ofname, Taken::WRITE_BACK);
  _take_cached(newcid, nfname, Taken::DISCARD);  // replaced
  ObjectFDRef f;
  int r = files->open_object(oldcid, oldoid, OpenMode::EXISTING, &f);
  if (r < 0) {
    return r;
  }
  if (dst == GuardVerdict::APPLY) {
    _set_replay_guard(ac, f, oldoid, GuardState::IN_PROGRESS);
  }
  r = files->link_object(oldcid, oldoid, newcid, newoid);
  if (r == -EEXIST && ac.replaying) {
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
  r = omap->clone(oldoid, newoid, &ac.spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  if (ac.replaying) {
    // Ops replayed before this one may have made the old name a stale
    // file again and put its checksums in the record just copied; the new
    // name's file is the object's, so its checksums come from it.
    r = csums->rebuild(newcid, newoid);
    if (r < 0) {
      return r;
    }
  }
  r = omap->clear(oldoid, &ac.spos);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = files->unlink_name(oldcid, oldoid);
  if (r < 0 && !(r == -ENOENT && ac.replaying)) {
    return r;
  }
  _debug_point("rename:unlinked");
  {
    mim::WriteLock ol(oc->lock);
    oc->objects.erase(oldoid);
  }
  {
    mim::WriteLock nl(nc->lock);
    nc->objects.insert(newoid);
  }
  _set_replay_guard(ac, f, newoid, GuardState::DONE);
  return 0;
}

// Split and merge move files between collection directories. Their
// protocol, FileStore's with the merge cache added:
//   1. barrier: the cached writes of both collections go to their files;
//   2. in-progress guards on both (each syncs the filesystem first), so
//      replay skips every earlier op on them (all durable by now) and
//      resumes this one if it was under way;
//   (1 and 2: _begin_move) 3. move the files; 4. close the guards.
// Without 1 and 2, replay re-applied an older op to an object already
// moved, re-creating a partial file in the source that the replayed move
// then renamed over the real one, and a closed destination guard made
// replay skip cached writes that had never reached the disk.

void MIMStore::_begin_move(const ApplyContext& ac,
                           const coll_t& cid, const coll_t& dest,
                           const char* point)
{
  _collection_barrier(cid, dest);
  _set_collection_replay_guard(ac, cid, GuardState::IN_PROGRESS);
  _set_collection_replay_guard(ac, dest, GuardState::IN_PROGRESS);
  _debug_point(point);
}

int MIMStore::_move_objects(Collection* sc, Collection* dc,
                            const std::function<bool(const ghobject_t&)>& which)
{
  std::vector<ghobject_t> moving;
  {
    mim::ReadLock l(sc->lock);
    for (auto& o : sc->objects) {
      if (which(o)) {
        moving.push_back(o);
      }
    }
  }
  for (auto& o : moving) {
    // (replay) another file goes to the name: a record of it no longer
    // applies. Forgotten first: a kill between the move and the record's
    // deletion would leave the record beside the moved file.
    _forget_written_back(dc->cid, o);
    int r = files->move_object(sc->cid, dc->cid, o);
    if (r < 0) {
      return r;
    }
    {
      mim::WriteLock l(sc->lock);
      sc->objects.erase(o);
    }
    {
      mim::WriteLock l(dc->lock);
      dc->objects.insert(o);
    }
    _debug_point("move:object");
  }
  return 0;
}

int MIMStore::_split_collection(const ApplyContext& ac,
                                const coll_t& cid, uint32_t bits,
                                uint32_t rem, const coll_t& dest)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << " rem " << rem
           << " -> " << dest << dendl;
  if (_guard_cmp(ac, dest, nullptr) == GuardVerdict::SKIP ||
      _guard_cmp(ac, cid, nullptr) == GuardVerdict::SKIP) {
    return 0;  // done before the crash
  }
  auto sc = colls.get(cid);
  auto dc = colls.get(dest);
  if (!sc || !dc) {
    return -ENOENT;
  }
  _begin_move(ac, cid, dest, "split:guarded");
  int r = _move_objects(sc.get(), dc.get(),
                    [&](const ghobject_t& o) { return o.match(bits, rem); });
  if (r < 0) {
    return r;
  }
  r = _write_bits(sc.get(), bits);
  if (r < 0) {
    return r;
  }
  _debug_point("split:moved");
  _set_collection_replay_guard(ac, dest, GuardState::DONE);
  _debug_point("split:dest-closed");
  _set_collection_replay_guard(ac, cid, GuardState::DONE);
  return 0;
}

int MIMStore::_merge_collection(const ApplyContext& ac,
                                const coll_t& cid, uint32_t bits,
                                const coll_t& dest)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << " -> " << dest
           << dendl;
  if (_guard_cmp(ac, dest, nullptr) == GuardVerdict::SKIP) {
    return 0;  // done before the crash
  }
  // Replay of a merge that had moved everything: the tombstone says so.
  SequencerPosition gone;
  bool moved = ac.replaying && files->get_tombstone(cid, &gone) == 0 &&
    gone == ac.spos;
  if (!moved && _guard_cmp(ac, cid, nullptr) == GuardVerdict::SKIP) {
    return 0;
  }
  auto sc = colls.get(cid);
  auto dc = colls.get(dest);
  if (!dc || (!sc && !moved)) {
    return -ENOENT;
  }
  int r;
  if (!moved) {
    _begin_move(ac, cid, dest, "merge:guarded");
    r = _move_objects(sc.get(), dc.get(),
                      [](const ghobject_t&) { return true; });
    if (r < 0) {
      return r;
    }
    r = colls.record_tombstone(files.get(), cid, ac.spos);
    if (r < 0) {
      derr << "cannot record the removal of " << cid << ": "
           << cpp_strerror(r) << dendl;
      return r;
    }
    _debug_point("merge:tombstone");
  }
  r = _write_bits(dc.get(), bits);
  if (r < 0) {
    return r;
  }
  if (sc) {
    r = files->remove_collection(cid);
    if (r < 0 && !(r == -ENOENT && ac.replaying)) {
      return r;
    }
    {
      mim::WriteLock l(sc->lock);
      sc->exists = false;
    }
    colls.drop(cid);
  }
  _debug_point("merge:removed");
  _set_collection_replay_guard(ac, dest, GuardState::DONE);
  return 0;
}

int MIMStore::_set_bits(const ApplyContext& ac, const coll_t& cid, int bits)
{
  dout(15) << __func__ << " " << cid << " bits " << bits << dendl;
  // The merge before it (PG::merge_from sets the bits after
  // merge_collection) may be skipped as done, and a later split or
  // re-create have set other bits: replayed blindly, these would win.
  if (!_should_apply(ac, cid, nullptr)) {
    return 0;
  }
  auto c = colls.get(cid);
  if (!c) {
    return -ENOENT;
  }
  return _write_bits(c.get(), bits);
}

int MIMStore::_write_bits(Collection* c, int bits)
{
  {
    mim::WriteLock l(c->lock);
    c->bits = bits;
  }
  return files->set_collection_bits(c->cid, bits);
}
