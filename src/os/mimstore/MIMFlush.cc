// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: MIM phase 2 (the full flush of a frozen HTMLL generation) and
 * the store's side of the sync thread. When a generation is frozen, and how
 * writers are slowed meanwhile, is MIMMergeControl.cc.
 *
 * Durability accounting (which sn is durable, when the checkpoint moves,
 * the sync thread) is core/durability.h; this file supplies its hooks: the
 * data sync (syncfs + RocksDB), persisting the checkpoint in the journal
 * header, the counters, and the time threshold checked on each wake-up.
 */
#include "MIMStore.h"

#include <malloc.h>

#include <algorithm>

#include "common/debug.h"
#include "common/errno.h"
#include "perfglue/heap_profiler.h"

#include "MIMJournal.h"
#include "Checksums.h"
#include "ObjectFiles.h"
#include "ObjectName.h"
#include "core/writeback_plan.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using namespace mimstore;

// tcmalloc's C API, declared weak: binaries built without tcmalloc (some
// test programs) still link, and skip the call.
extern "C" void MallocExtension_MarkThreadIdle(void) __attribute__((weak));

namespace {

/// Objects written back between two returns of free memory to the kernel.
constexpr uint64_t RELEASE_EVERY_OBJECTS = 256;

/// Give what the flush thread freed back to the kernel. The sweep frees
/// every extent record and bounce buffer of a generation, most of them
/// allocated by other threads; tcmalloc keeps such memory in this thread's
/// cache and in its page heap as a high-water mark of the OSD's RSS. At 64
/// GiB (docs/results/20261125-64G-all) merging on ended with 48 MiB more in
/// tcmalloc's free lists than merging off: 19 MiB page heap, 15 MiB thread
/// caches, 10 MiB central lists.
void give_back_free_memory()
{
  if (MallocExtension_MarkThreadIdle) {
    MallocExtension_MarkThreadIdle();  // this thread's cache to the central lists
  }
  ceph_heap_release_free_memory();  // tcmalloc's free pages; no-op otherwise
#ifdef __GLIBC__
  malloc_trim(0);  // glibc's arenas, when the build uses its malloc
#endif
}

}  // namespace

// ---------------------------------------------------------------------------
// flush thread

void MIMStore::_write_back_failed(const char* what, const string& cname,
                                  const string& fname, int r)
{
  // Before the sns of the taken bytes are released: the data is still in
  // the journal, so stopping here loses nothing; carrying on in an unknown
  // state could.
  derr << what << " failed: write back of " << fname << " in " << cname
       << ": " << cpp_strerror(r) << "; stopping. "
       << "Every merged write is still in the journal: fix the cause "
       << "(ENOSPC: free space under osd data; EIO: check the data "
       << "disk, and the journal device the merged bytes are read "
       << "from), then restart the OSD, whose mount replays them" << dendl;
  _debug_point("write_back:failed");
  ceph_abort_msg("mimstore: writeback to the data filesystem failed");
}

namespace {

/// The object a file holds (the flush knows objects by file name): a long
/// name from its xattr; -EINVAL if the name is not an object's.
int oid_of_file(const string& fname, const ObjectFDRef& f, ghobject_t* oid)
{
  string full = fname;
  if (is_long_file_name(fname)) {
    int r = f->io->fgetxattr(f->fd, long_name_xattr(fname), &full);
    if (r < 0) {
      return r;
    }
  }
  if (!decode_object_name(full, oid) || object_file_name(*oid) != fname) {
    return -EINVAL;
  }
  return 0;
}

}  // namespace

int MIMStore::_write_back_object(const string& cname, const string& fname,
                                 mim::ObjectState& st, WritebackOf of,
                                 std::string* buf)
{
  // *buf is reused across objects: a buffer of a run's size (up to an object) made and freed per
  // object, between the index's small allocations of other threads, left
  // tcmalloc's page heap tens of MiB of free spans it could not give back.
  ObjectFDRef f;
  int r = files->open_by_name(cname, fname, &f);
  if (r < 0) {
    derr << "write back " << cname << "/" << fname << ": open failed: "
         << cpp_strerror(r) << dendl;
    return r;
  }
  if (conf.debug_verify_journal_data) {
    for (const auto& e : st.extents) {
      _verify_journal_copy(e.data, "write back");
    }
  }
  ghobject_t oid;
  r = oid_of_file(fname, f, &oid);
  uint64_t old_size = 0;
  if (r == 0) {
    r = files->size(f, &old_size);
  }
  if (r < 0) {
    derr << "write back " << cname << "/" << fname << ": cannot name or "
         << "size the object: " << cpp_strerror(r) << dendl;
    return r;
  }
  std::vector<mim::Extent> changed;
  for (const auto& e : st.extents) {
    changed.push_back({e.offset, e.data.length});
  }
  // The file writes inside the checksum change (Checksums.h): the chunks
  // the extents cover take their states from the file after the writes,
  // under this stripe lock.
  return csums->change(oid, f, changed, old_size, Checksums::Kind::DATA,
                       true, [&] { return _write_runs(f, st, of, buf); });
}

int MIMStore::_write_runs(const ObjectFDRef& f, const mim::ObjectState& st,
                          WritebackOf of, std::string* buf)
{
  int r = 0;
  auto runs = mim::plan_writeback(st.extents, conf.flush_gap_fill);
  for (auto& run : runs) {
    bool gaps = std::any_of(run.pieces.begin(), run.pieces.end(),
                            [](const mim::WritePiece& p) {
                              return p.is_gap();
                            });
    if (gaps) {
      r = _fill_run(f, run, buf);
      if (r < 0) {
        return r;
      }
      if (r > 0) {
        r = _write_run(f, run.offset, run.length,
                       {{buf->data(), run.length}}, of);
        if (r < 0) {
          return r;
        }
        continue;
      }
      // A gap is not in memory: each stretch of cached bytes is its own
      // write, as if the gaps had not been joined.
    }
    auto p = run.pieces.begin();
    while (p != run.pieces.end()) {
      if (p->is_gap()) {
        ++p;
        continue;
      }
      auto q = std::find_if(p, run.pieces.end(),
                            [](const mim::WritePiece& x) {
                              return x.is_gap();
                            });
      r = _write_pieces(f, p, q, buf, of);
      if (r < 0) {
        return r;
      }
      p = q;
    }
  }
  return 0;
}

int MIMStore::_fill_run(const ObjectFDRef& f, const mim::WriteRun& run,
                        std::string* buf)
{
  // The gaps are read from the file, the cached bytes go on top.
  // A gap joined from memory costs only its transfer, which a separate
  // write in the same sweep waits for anyway (the platter turns under the
  // head), and saves a request. A gap read from the disk costs a
  // positioned read in the flush thread, more than the separate write:
  // measured at 64 GiB, joining wrote 2.6 MB per object for 17 cached
  // writes and read most of it first (docs/store.md, "Gap filling").
  buf->resize(run.length);
  for (auto& p : run.pieces) {
    if (!p.is_gap()) {
      continue;
    }
    char* at = buf->data() + (p.offset - run.offset);
    int r = files->read_cached_into(f, p.offset, p.length, at);
    if (r == -EAGAIN && !conf.flush_gap_read_disk) {
      logger->inc(l_mimstore_flush_gaps_uncached);
      return 0;
    }
    if (r == -EAGAIN || r == -EOPNOTSUPP) {
      r = files->read_into(f, p.offset, p.length, at);
    }
    if (r < 0) {
      return r;
    }
    if (uint64_t(r) < p.length) {
      memset(at + r, 0, p.length - r);  // beyond the end of the file
    }
  }
  for (auto& p : run.pieces) {
    if (!p.is_gap()) {
      int r = _fetch(p.data, buf->data() + (p.offset - run.offset));
      if (r < 0) {
        return r;
      }
    }
  }
  logger->inc(l_mimstore_flush_gaps_filled);
  return 1;
}

int MIMStore::_write_pieces(const ObjectFDRef& f, PieceIter begin,
                            PieceIter end, std::string* buf, WritebackOf of)
{
  uint64_t off = begin->offset, len = 0;
  bool in_journal = false;
  for (auto p = begin; p != end; ++p) {
    len += p->length;
    in_journal |= !p->data.resident();
  }
  std::vector<struct iovec> iov;
  if (in_journal) {
    buf->resize(len);
    for (auto p = begin; p != end; ++p) {
      int r = _fetch(p->data, buf->data() + (p->offset - off));
      if (r < 0) {
        return r;
      }
    }
    iov.push_back({buf->data(), len});
  } else {
    for (auto p = begin; p != end; ++p) {
      iov.push_back({const_cast<char*>(p->data.data), p->length});
    }
  }
  return _write_run(f, off, len, iov, of);
}

int MIMStore::_write_run(const ObjectFDRef& f, uint64_t off, uint64_t len,
                         const std::vector<struct iovec>& iov, WritebackOf of)
{
  int r = files->write_iov(f, off, iov);
  if (r < 0) {
    derr << "write back " << f->path << " " << off << "~" << len
         << " failed: " << cpp_strerror(r) << dendl;
    return r;
  }
  ++data_write_ios;
  durability.note_dirty(len);
  logger->inc(l_mimstore_writeback_ios);
  logger->inc(l_mimstore_writeback_bytes, len);
  if (of == WritebackOf::FROZEN) {
    logger->inc(l_mimstore_flush_ios);
    logger->inc(l_mimstore_flush_bytes, len);
    wb_window.written(f, off, len);
  }
  return 0;
}

void MIMStore::_start_writebacks()
{
  // Like FileStore's flusher (core/writeback_window.h): a generation left
  // to the sync reaches the disk queue at once, and RocksDB's log pages
  // queued behind it held the apply thread 1-3 s (measured at syncs during
  // a 4 KiB random-write run). Called with no object lock held:
  // sync_file_range(WRITE) blocks while the disk's queue is full (wbt_wait),
  // and an apply to the same stripe, with on_commit behind it, waited for it
  // (docs/store.md, "The seconds at zero").
  auto s = wb_window.start_written();
  if (s.unsupported) {
    dout(1) << "sync_file_range not supported here ("
            << cpp_strerror(s.unsupported) << "): writeback left to syncs"
            << dendl;
  }
  wb_window.wait_for_room();
}

std::vector<MIMStore::FlushItem> MIMStore::_writeback_order(
  const mim::FlushOrder& order)
{
  // The addresses are a hint, so an object changing meanwhile only costs
  // a seek.
  std::vector<FlushItem> items;
  items.reserve(order.blocks);
  for (auto& [cname, fnames] : order.collections) {
    for (auto& fname : fnames) {
      items.push_back(FlushItem{&cname, &fname, UNPLACED});
    }
  }
  if (!conf.flush_physical_order) {
    return items;
  }
  uint64_t placed = 0;
  for (auto& it : items) {
    uint64_t phys;
    int r = files->physical_offset(*it.cname, *it.fname, 0, &phys);
    if (r == -EOPNOTSUPP) {
      dout(10) << "no disk addresses on this filesystem: flushing in "
               << "collection order" << dendl;
      return items;
    }
    if (r == 0) {
      it.phys = phys;
      ++placed;
    }
  }
  // Stable: the unplaced keep collection order, after the placed ones.
  std::stable_sort(items.begin(), items.end(),
                   [](const FlushItem& a, const FlushItem& b) {
                     return a.phys < b.phys;
                   });
  logger->inc(l_mimstore_flush_objects_placed, placed);
  dout(10) << "writeback order: " << placed << " of " << items.size()
           << " objects by disk address" << dendl;
  return items;
}

bool MIMStore::_stop_leaves_window()
{
  mim::MutexLock l(freeze_lock);
  return flush_stop && conf.merge && !umount_writes_back;
}

void MIMStore::_flush_frozen(const mim::FlushOrder& gen)
{
  // One pass over the frozen generation in _writeback_order, each object
  // opened once, its extents sorted and coalesced by plan_writeback.
  auto start = ceph::mono_clock::now();
  uint64_t objects = 0, visited = 0, released_at = 0;
  // The generation's end: the active one began there at the freeze.
  const sn_t end_sn = active_gen_first_sn.load();
  const auto order = _writeback_order(gen);
  pacer.sweep_started(order.size(), _mono_secs());
  for (const FlushItem& item : order) {
    if (_stop_leaves_window()) {
      // umount keeps the window: the rest of this generation stays in the
      // journal, held, for the next mount to index again (its frozen
      // generation goes with the cache).
      dout(1) << "stopping: " << order.size() - visited << " of "
              << order.size() << " objects of the generation left in the "
              << "journal" << dendl;
      pacer.sweep_abandoned();  // writers after a remount are not paced
      wb_window.end();
      return;
    }
    pacer.sweep_progress(visited++);
    {
      mim::ObjectState st;
      std::lock_guard ol(obj_locks.of(*item.cname, *item.fname));
      if (!htmll->take_frozen(*item.cname, *item.fname, &st)) {
        continue;  // taken early by an op on the object
      }
      int r = _write_back_object(*item.cname, *item.fname, st,
                                 WritebackOf::FROZEN, &flush_buf);
      if (r < 0) {
        _write_back_failed("flush", *item.cname, *item.fname, r);
      }
      durability.release_after_sync(st.sns);
      written_back->written_back(end_sn, *item.cname, *item.fname);
      ++objects;
    }
    _debug_point("flush:object");  // no object lock held
    // room in the cache for a writer waiting in _wait_for_cache_room
    room_cond.notify_all();
    // no object lock held while the disk's queue is waited on
    _start_writebacks();
    _throttle_writeback();
    // As the sweep goes, not only at its end: a sweep of a large image's
    // generation takes minutes. A few ms each time, for 256 objects
    // (about 10 s of writeback on a 7200 rpm disk).
    if (objects - released_at >= RELEASE_EVERY_OBJECTS) {
      give_back_free_memory();
      released_at = objects;
    }
  }
  pacer.sweep_finished(_mono_secs());
  wb_window.end();  // what is still in flight is the sync's to wait for
  htmll->end_flush();
  // The generation's index was freed at once.
  give_back_free_memory();
  logger->inc(l_mimstore_flush_objects, objects);
  logger->tinc(l_mimstore_flush_lat, ceph::mono_clock::now() - start);
  dout(10) << "flushed " << objects << " objects in "
           << std::chrono::duration<double>(
                ceph::mono_clock::now() - start).count() << " s" << dendl;
}

void MIMStore::_flush_thread()
{
  mim::UniqueLock l(freeze_lock);
  while (true) {
    while (!flush_stop && !flush_pending) {
      freeze_cond.wait(l.get());
    }
    if (!flush_pending) {
      break;
    }
    // Taken, not copied: nothing else reads flush_order while
    // flush_pending is set, and a new freeze waits for it to clear.
    mim::FlushOrder gen = std::move(flush_order);
    flush_order = mim::FlushOrder();
    l.unlock();
    _flush_frozen(gen);
    gen = mim::FlushOrder();  // the generation's names, freed before waking
    l.lock();
    flush_pending = false;
    room_cond.notify_all();
    mim::FlushTrigger again = refreeze;
    refreeze = mim::FlushTrigger::NONE;
    freeze_cond.notify_all();
    l.unlock();
    durability.request_sync();
    if (again != mim::FlushTrigger::NONE) {
      _request_freeze(again);
    }
    l.lock();
  }
}

// ---------------------------------------------------------------------------
// the sync thread's hooks (core/durability.h runs the thread)

mim::DurabilityHooks MIMStore::_durability_hooks()
{
  mim::DurabilityHooks h;
  h.sync_data = [this] {
    // The objects written back before this sync: recorded after it
    // (WrittenBack.h), never ahead of their data.
    auto covered = written_back->take_unsynced();
    const char* what = "the data filesystem (osd data)";
    int r = files->sync_all();
    if (r == 0) {
      what = "the omap and xattr database (RocksDB: mimstore_db_dir, else "
             "<osd data>/db)";
      r = omap->sync();
    }
    if (r == 0) {
      r = written_back->put(covered);
    }
    if (r < 0) {
      // LevelDB's rule: a failed sync leaves the disk in an unknown state;
      // never go on as if it had worked. The journal still holds it all.
      derr << "sync of " << what << " failed: " << cpp_strerror(r)
           << (r == -EPERM ? " (RocksDB reports its failures as -1, its own "
                             "message above says why)" : "")
           << ". The journal holds every transaction since the checkpoint: "
           << "fix the cause (a full filesystem: free space on it; EIO: the "
           << "disk), then restart the OSD, whose mount replays them"
           << dendl;
      ceph_abort_msg("mimstore: sync failed");
    }
  };
  h.synced = [this](double secs) {
    logger->tinc(l_mimstore_sync_lat, ceph::make_timespan(secs));
    pacer.sync_took(secs);
    logger->inc(l_mimstore_syncs);
  };
  h.checkpoint_moved = [this](sn_t cp) {
    _debug_point("sync:checkpoint");  // before the journal's tail moves
    int r = journal->set_checkpoint(cp);
    if (r < 0) {
      derr << "cannot persist checkpoint " << cp << ": " << cpp_strerror(r)
           << dendl;
      ceph_abort_msg("mimstore: checkpoint write failed");
    }
    durable_clock.passed(cp, _mono_secs(), [this](double secs) {
      logger->tinc(l_mimstore_durable_lat, ceph::make_timespan(secs));
    });
    // Replay starts at the header's start_sn: the first sn of the batch
    // holding cp (JournalWriter::trim), which may be below cp. A tombstone
    // between the two is still needed by a replay from there.
    colls.trim_tombstones(files.get(), journal->first_live_sn());
    r = written_back->trim(cp);
    if (r < 0) {
      // Left in the DB, they are deleted at the next mount.
      derr << "cannot delete written-back records below " << cp << ": "
           << cpp_strerror(r) << dendl;
    }
  };
  h.after_sync = [this](sn_t cp) {
    logger->set(l_mimstore_checkpoint_lag_sns,
                sequencer.applied_sn() + 1 - cp);
    logger->set(l_mimstore_checkpoint_lag_bytes, journal->used());
    logger->set(l_mimstore_journal_used_bytes, journal->used());
  };
  h.tick = [this] { _time_tick(); };
  return h;
}
