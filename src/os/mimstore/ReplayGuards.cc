// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: replay guards, FileStore's scheme. A guard is the
 * SequencerPosition of the last op applied and made durable on an object
 * (an xattr of its file) or a collection (an xattr of its directory). While
 * replaying, an op at or before its target's guard was already applied:
 * it is skipped. A guard "in progress" marks a multi-step op (split, merge,
 * rename) that replay must finish instead of skip. A file's birth mark (the
 * position of the op that created it) makes replay skip the ops that came
 * before the create, on an earlier incarnation of the name.
 */
#include "MIMStore.h"

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

GuardVerdict MIMStore::_guard_cmp(const ApplyContext& ac,
                                  const coll_t& cid, const ghobject_t* oid,
                                  bool* born_later)
{
  if (!ac.replaying) {
    return GuardVerdict::APPLY;
  }
  SequencerPosition g;
  bool in_progress = false;
  if (files->get_tombstone(cid, &g) == 0 && g >= ac.spos) {
    // merged away at g: every earlier op on it was durable then, and its
    // objects (with their omap) live on in the destination
    dout(10) << "replay: skip " << ac.spos << " on " << cid
             << ", merged away at " << g << dendl;
    return GuardVerdict::SKIP;
  }
  if (files->get_collection_guard(cid, &g, &in_progress) == 0 &&
      g >= ac.spos) {
    if (g == ac.spos && in_progress) {
      // this split or merge was under way when we crashed
      return GuardVerdict::RESUME;
    }
    dout(10) << "replay: skip " << ac.spos << " on " << cid
             << ", collection guard " << g << dendl;
    return GuardVerdict::SKIP;
  }
  if (oid) {
    ObjectFDRef f;
    int r = files->open_object(cid, *oid, OpenMode::EXISTING, &f);
    if (r == -ENOENT) {
      // No file: a record of the name was of a file a later op removed or
      // moved away; what replay makes of it now is not that file.
      _forget_written_back(cid, *oid);
      return GuardVerdict::APPLY;
    }
    ReplayMarks m;
    if (r == 0) {
      r = files->get_marks(f, &m);
    }
    if (r < 0) {
      _marks_unreadable(cid.to_str(), object_file_name(*oid), r);
      ceph_abort_msg("mimstore: replay cannot read an object's replay marks");
    }
    if (m.guarded) {
      if (m.guard > ac.spos || (m.guard == ac.spos && !m.in_progress)) {
        dout(10) << "replay: skip " << ac.spos << " on " << *oid
                 << ", guard " << m.guard << dendl;
        return GuardVerdict::SKIP;
      }
      if (m.guard == ac.spos) {
        // this very op was under way when we crashed
        return GuardVerdict::RESUME;
      }
    }
    if (_cut_short(m)) {
      // Before the records: a create cut short came after every sync, so
      // after the file a record describes (that one's mark was durable).
      f.reset();
      _drop_incomplete_create(cid, *oid);
      _forget_written_back(cid, *oid);
      return GuardVerdict::APPLY;
    }
    if (written_back->loaded_objects() &&
        written_back->covers(cid.to_str(), object_file_name(*oid),
                             ac.spos.seq)) {
      // A sweep wrote the object back after this op, and a sync after
      // that made every op below the record durable (WrittenBack.h).
      dout(20) << "replay: skip " << ac.spos << " on " << *oid
               << ", written back before the stop" << dendl;
      ++skipped_written_back;
      return GuardVerdict::SKIP;
    }
    // A file created after this op: live, the op found no object (and
    // was a tolerated -ENOENT, or it would have created the file itself).
    // Applied to the later object, a truncate or zero would corrupt it.
    if (m.born && m.born_at > ac.spos) {
      dout(10) << "replay: skip " << ac.spos << " on " << *oid
               << ", created later at " << m.born_at << dendl;
      if (born_later) {
        *born_later = true;
      }
      return GuardVerdict::SKIP;
    }
  }
  return GuardVerdict::APPLY;
}

bool MIMStore::_cut_short(const ReplayMarks& m) const
{
  // Every create sets the birth mark right after it (format 2 on), and a
  // guard only goes on a file that was created: neither is a create the
  // crash cut short (_drop_incomplete_create).
  return births_complete && !m.born && !m.guarded;
}

void MIMStore::_marks_unreadable(const std::string& cname,
                                 const std::string& fname, int r) const
{
  // Taken for a missing mark, an unreadable one would make replay redo
  // ops already done on the file, or remove it as a create cut short, and
  // forget its written-back record for good.
  derr << "replay: cannot open " << files->object_path(cname, fname)
       << " or read its replay marks (xattrs user.mim.born and "
       << "user.mim.guard): " << cpp_strerror(r) << "; replay stops rather "
       << "than guess which of its ops are done. Nothing is lost: the "
       << "journal is kept, and the next mount replays from the same "
       << "checkpoint (as after a crash during replay). Mend the data disk "
       << "or filesystem first (dmesg, xfs_repair -n say what failed)"
       << dendl;
}

void MIMStore::_forget_written_back(const coll_t& cid, const ghobject_t& oid)
{
  if (!written_back->loaded_objects()) {
    return;
  }
  int r = written_back->forget(cid.to_str(), object_file_name(oid));
  if (r < 0) {
    derr << "replay: cannot delete the written-back record of " << cid
         << "/" << oid << " from the omap and xattr database: "
         << cpp_strerror(r) << " (RocksDB's message above says why)"
         << dendl;
    ceph_abort_msg("mimstore: replay cannot forget a written-back record");
  }
}

void MIMStore::_drop_incomplete_create(const coll_t& cid,
                                       const ghobject_t& oid)
{
  // Every create sets the birth mark right after it, before anything else
  // touches the file (ObjectFiles::open_path; in every store of format 2
  // and later, births_complete). A file without one is a
  // create that power cut short: its name was durable, its mark was not
  // (two metadata ops; XFS may keep the first alone). The mark goes out
  // with the next log force, and every sync and checkpoint forces the log,
  // so the create came after the checkpoint and replay makes it again, at
  // its own position. Kept, the file would take ops that came before its
  // create: a truncate that found no object (tolerated) would resize it.
  dout(1) << "replay: " << cid << "/" << oid << " has no birth mark: a "
          << "create cut short by the crash; removed, replay makes it again"
          << dendl;
  int r = files->remove_object(cid, oid);
  if (r < 0 && r != -ENOENT) {
    derr << "replay: cannot remove the incomplete create " << cid << "/"
         << oid << ": " << cpp_strerror(r) << dendl;
    ceph_abort_msg("mimstore: replay cannot remove an incomplete create");
  }
  if (auto c = colls.get(cid)) {
    mim::WriteLock l(c->lock);
    c->objects.erase(oid);
  }
}

bool MIMStore::_should_apply(const ApplyContext& ac,
                             const coll_t& cid, const ghobject_t* oid)
{
  return _guard_cmp(ac, cid, oid) == GuardVerdict::APPLY;
}

void MIMStore::_set_replay_guard(const ApplyContext& ac,
                                 const ObjectFDRef& f, const ghobject_t& oid,
                                 GuardState state)
{
  // Earlier omap/xattr changes of the target must be durable before the
  // guard is, because replay skips them on the guard's word; stamping the
  // object's omap record with this position makes OmapStore skip them too. An
  // in-progress guard skips them as well, but must not stamp: the op under
  // way still has its own omap steps to redo at this position.
  int r = state == GuardState::IN_PROGRESS ? omap->sync()
                                           : omap->sync(oid, ac.spos);
  if (r == 0) {
    _debug_point("guard:omap_synced");
    r = files->set_guard(f, ac.spos, state);
  }
  if (r < 0) {
    derr << "cannot set replay guard on " << f->path << ": "
         << cpp_strerror(r) << dendl;
    ceph_abort_msg("mimstore: replay guard write failed");
  }
}

void MIMStore::_set_collection_replay_guard(const ApplyContext& ac,
                                            const coll_t& cid,
                                            GuardState state)
{
  // RocksDB first; set_collection_guard syncs the data filesystem.
  int r = omap->sync();
  if (r == 0) {
    r = files->set_collection_guard(cid, ac.spos, state);
  }
  if (r < 0) {
    derr << "cannot set replay guard on " << cid << ": " << cpp_strerror(r)
         << dendl;
    ceph_abort_msg("mimstore: replay guard write failed");
  }
}

void MIMStore::_collection_barrier(const coll_t& a, const coll_t& b)
{
  // FileStore synced before a split or merge guard for the same reason: the
  // guard makes replay skip every earlier op on these collections, so each
  // of them must be durable first, the merge cache's writes included (they
  // are only in memory and the journal). The guard's syncfs does the rest.
  _take_cached_collection(a);
  _take_cached_collection(b);
}
