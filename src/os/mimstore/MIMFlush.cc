// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: MIM phase 2 (the full flush of a frozen HTMLL generation), the
 * freeze triggers, backpressure, and the store's side of the sync thread.
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
#include "ObjectFiles.h"
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

int trigger_counter(mim::FlushTrigger t)
{
  switch (t) {
  case mim::FlushTrigger::SPACE: return l_mimstore_flush_space;
  case mim::FlushTrigger::TIME: return l_mimstore_flush_time;
  case mim::FlushTrigger::MEMORY_CAP: return l_mimstore_flush_memory;
  case mim::FlushTrigger::INDEX_BUDGET: return l_mimstore_flush_index;
  case mim::FlushTrigger::JOURNAL_PRESSURE: return l_mimstore_flush_journal;
  default: return l_mimstore_flush_explicit;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// freezing (apply thread)

void MIMStore::_request_freeze(mim::FlushTrigger why)
{
  if (!conf.merge) {
    // Nothing cached: a checkpoint is all that helps.
    durability.request_sync();
    return;
  }
  {
    std::lock_guard l(bg_lock);
    if (freeze_queued && why != mim::FlushTrigger::EXPLICIT) {
      return;
    }
    freeze_queued = true;
  }
  sequencer.push(ApplyItem{nullptr, why});
}

void MIMStore::_maybe_freeze(mim::FlushTrigger forced)
{
  // REQUIRES: apply thread, between two transactions (so every sn's merged
  // writes are in one generation, and their holds are taken).
  auto st = htmll->stats();
  logger->set(l_mimstore_htmll_blocks, st.blocks_used);
  logger->set(l_mimstore_htmll_bytes, st.all_bytes());
  logger->set(l_mimstore_htmll_index_bytes, st.all_index_bytes());
  if (data_write_ios) {
    logger->set(l_mimstore_merge_ratio,
                client_writes * 100 / data_write_ios);
  }
  if (!conf.merge) {
    return;
  }
  std::unique_lock l(bg_lock);
  if (forced != mim::FlushTrigger::NONE) {
    freeze_queued = false;
  }
  mim::FlushTrigger trigger = forced;
  if (trigger == mim::FlushTrigger::NONE) {
    double since = std::chrono::duration<double>(
      ceph::mono_clock::now() - last_freeze).count();
    // Occupancy in block-equivalents of cached data. The paper's blocks
    // are whole object-sized buffers, so its block count measures memory;
    // ours are sparse (memory follows the bytes), and counting them would
    // flush after a few hundred scattered 4 KiB writes, before anything
    // could merge.
    uint64_t occupied = (st.bytes + conf.block_size - 1) / conf.block_size;
    trigger = policy->check(occupied, st.all_bytes(), since, st.index_bytes);
    if (trigger == mim::FlushTrigger::NONE && conf.merge_data_in_journal &&
        journal->used_since(active_gen_first_sn) >= generation_journal_bytes) {
      // The space threshold in journal bytes, padding and transaction
      // included (about twice the payload of a 4 KiB write): the journal
      // is what a generation fills here, and the next one gets the same
      // share while this one is written back.
      trigger = mim::FlushTrigger::SPACE;
    }
    if (trigger == mim::FlushTrigger::NONE || st.blocks_used == 0) {
      return;
    }
  }
  if (flush_pending) {
    // One generation is flushed at a time; new writes keep merging into the
    // active one meanwhile (double buffering). An explicit request is
    // remembered and re-queued when the running flush ends. Journal
    // pressure is not: the running flush is what frees the journal, and
    // freezing again right after it would only make the next generation
    // small, each object rewritten for a handful of writes.
    if (forced != mim::FlushTrigger::NONE &&
        forced != mim::FlushTrigger::JOURNAL_PRESSURE) {
      refreeze = forced;
    }
    return;
  }
  if (forced == mim::FlushTrigger::EXPLICIT) {
    ++explicit_handled;
  }
  if (forced == mim::FlushTrigger::JOURNAL_PRESSURE &&
      journal->used_since(active_gen_first_sn) < journal->size() / 4) {
    // The journal is held by older transactions, flushed but waiting for a
    // sync, not by this generation: a sync frees it. Freezing now would
    // only cut a small generation, each object rewritten for a handful of
    // writes, and the journal would stay just as full. Measured in journal
    // bytes, padding included: counted in payload bytes, a stream of small
    // omap-only transactions behind one cached write filled the journal
    // while this still said "small", and clients stalled until the time
    // threshold.
    durability.request_sync();
    return;
  }
  if (st.blocks_used == 0) {
    bg_cond.notify_all();
    return;
  }
  mim::FlushOrder order;
  if (!htmll->freeze(&order)) {
    return;
  }
  dout(10) << "freeze (" << mim::to_string(trigger) << "): " << order.blocks
           << " blocks, " << order.bytes << " bytes" << dendl;
  logger->inc(trigger_counter(trigger));
  _set_frozen_locked(std::move(order));
  // The transaction being applied (if any) is in the frozen generation.
  active_gen_first_sn = std::max<sn_t>(sequencer.applied_sn(), applying_sn) + 1;
  bg_cond.notify_all();
}

void MIMStore::_set_frozen_locked(mim::FlushOrder&& order)
{
  // REQUIRES: bg_lock.
  flush_order = std::move(order);
  flush_pending = true;
  last_freeze = ceph::mono_clock::now();
}

void MIMStore::_throttle_writeback()
{
  // REQUIRES: the apply thread between two transactions (merging off), or
  // the flush thread between two objects; no locks held.
  // Like FileStore's WBThrottle: bound the data written to files but not
  // yet synced. Without a bound the page cache piles up more than the disk
  // writes in minutes, a sync then takes minutes, and the checkpoint (and
  // with it the journal) stalls behind it.
  if (!durability.over_writeback_limit()) {
    return;
  }
  logger->inc(l_mimstore_wbthrottle_waits);
  durability.wait_for_next_sync();
}

// One delay of _backoff's two kinds, in its count and latency counters.
static void count_delay(PerfCounters* logger, int count, int lat,
                        double secs)
{
  if (secs > 0) {
    logger->inc(count);
    logger->tinc(lat, ceph::make_timespan(secs));
  }
}

void MIMStore::_backoff(uint64_t payload_bytes)
{
  // REQUIRES: a submitting thread, no store locks held.
  // Two delays, the longer one is served:
  // - Like the BackoffThrottle of FileStore and BlueStore: once the journal
  //   or the merge cache is more than mimstore_backoff_low full, each new
  //   transaction is delayed, quadratically more up to
  //   mimstore_backoff_max_delay at mimstore_backoff_high. Both free space
  //   in steps (a generation written back, then synced); without a delay
  //   clients run at full speed into a full journal or cache and then stop
  //   dead for the whole step.
  // - While a generation is written back, the pacer (core/journal_pacer.h)
  //   admits transactions at the rate that makes the journal space left
  //   below mimstore_backoff_high last until the write back frees it, the
  //   next generation taking at most mimstore_generation_journal_share of it
  //   (mim::pacer_room). The
  //   quadratic delay alone cannot: 20 ms per transaction still lets 8
  //   clients fill a journal that a sweep frees only after minutes.
  double quad = 0;
  double fill = double(journal->used()) / double(journal->size());
  if (conf.merge) {
    auto st = htmll->stats();
    fill = std::max(fill, double(st.all_bytes()) / double(cache_cap));
    if (conf.cache_index_max_bytes) {
      fill = std::max(fill, double(st.all_index_bytes()) /
                              double(conf.cache_index_max_bytes));
    }
  }
  if (conf.backoff_max_delay > 0 && fill > conf.backoff_low) {
    double x = std::min(1.0, (fill - conf.backoff_low) /
                               (conf.backoff_high -
                                conf.backoff_low));
    quad = conf.backoff_max_delay * x * x;
  }
  double pace = 0;
  if (conf.merge && conf.backoff_pace) {
    int64_t free = mim::pacer_room(
      int64_t(conf.backoff_high * double(journal->size())),
      int64_t(journal->used()),
      int64_t(journal->used_since(active_gen_first_sn)),
      conf.generation_journal_share);
    pace = pacer.delay(payload_bytes, free,
                       logger->get(l_mimstore_journal_bytes), _mono_secs());
    count_delay(logger, l_mimstore_pace_waits, l_mimstore_pace_lat, pace);
  }
  count_delay(logger, l_mimstore_backoffs, l_mimstore_backoff_lat, quad);
  double delay = std::max(quad, pace);
  if (delay > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  }
}

double MIMStore::_mono_secs()
{
  return ceph::to_seconds<double>(
    ceph::mono_clock::now().time_since_epoch());
}

void MIMStore::_wait_for_cache_room(uint64_t bytes)
{
  // REQUIRES: apply thread, between two transactions, no locks held.
  // Backpressure instead of direct writes: when the cache is full while a
  // flush is still writing the frozen generation back, the writer waits
  // for the room the flush frees object by object. A direct write would
  // first have to write the object's cached extents, synchronously, behind
  // the flush's backlog on the disk: much slower than waiting.
  // With the data in the journal the journal bounds the bytes (pressure,
  // pacer, backoff): only the index budget makes a writer wait. The cache
  // can be over cache_cap after a mount that kept a window larger than
  // half the journal; the MEMORY_CAP trigger freezes it at the first apply.
  // The index is checked before the transaction's records are added, so
  // it can pass the budget by one transaction's.
  if (!conf.merge || !bytes) {
    return;
  }
  const bool bytes_bound = !conf.merge_data_in_journal;
  const uint64_t cap = cache_cap, index_cap = conf.cache_index_max_bytes;
  if (!bytes_bound && !index_cap) {
    return;
  }
  mim::FlushTrigger why = mim::FlushTrigger::NONE;
  auto full = [&] {
    auto st = htmll->stats();
    if (bytes_bound && st.all_bytes() + bytes > cap) {
      why = mim::FlushTrigger::MEMORY_CAP;
    } else if (index_cap && st.all_index_bytes() >= index_cap) {
      why = mim::FlushTrigger::INDEX_BUDGET;
    } else {
      return false;
    }
    return true;
  };
  if (!full()) {
    return;
  }
  _maybe_freeze(why);
  std::unique_lock l(bg_lock);
  bool waited = false;
  while (flush_pending && full()) {
    if (!waited) {
      logger->inc(l_mimstore_cache_full_waits);
      waited = true;
    }
    room_cond.wait_for(l, std::chrono::milliseconds(100));
  }
}

// ---------------------------------------------------------------------------
// flush thread

int MIMStore::_write_back_object(const string& cname, const string& fname,
                                 mim::ObjectState& st, WritebackOf of,
                                 std::string* buf)
{
  // REQUIRES: the object's stripe lock; *buf the caller's, reused across
  // objects: a buffer of a run's size (up to an object) made and freed per
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
  // REQUIRES: the object's stripe lock. Returns 1 with the whole run in
  // *buf (the gaps read from the file, the cached bytes on top), 0 when a
  // gap's bytes are not in memory, or -errno.
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
  // REQUIRES: the object's stripe lock; [begin, end) adjacent cached pieces.
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
  // REQUIRES: the object's stripe lock; len = the iov's total length.
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
    wb_written.push_back(InFlightRun{f, off, len});
  }
  return 0;
}

void MIMStore::_start_writebacks()
{
  // REQUIRES: flush thread, no object lock held. Like FileStore's flusher:
  // hand each run to the disk as soon as it is written, and
  // (_wait_writeback_window) keep a bounded amount in flight. Left to the
  // sync, a whole generation (gigabytes) reaches the disk queue at once,
  // and whatever is queued behind it waits seconds: among it RocksDB's log
  // pages, on which the apply thread then blocks (measured: 1-3 s without a
  // completed client write at syncs during a 4 KiB random-write run).
  // Not under the object's lock: sync_file_range(WRITE) blocks while the
  // disk's queue is full (wbt_wait), and an apply to the same stripe, with
  // on_commit behind it, waited for it (docs/store.md, "The seconds at
  // zero").
  std::vector<InFlightRun> runs;
  runs.swap(wb_written);
  if (!conf.flush_writeback_window || wb_window_off) {
    return;
  }
  for (auto& run : runs) {
    int r = files->writeback(run.f, run.off, run.len, false);
    if (r == -EINVAL || r == -ENOSYS || r == -ESPIPE || r == -EOPNOTSUPP) {
      dout(1) << "sync_file_range not supported here (" << cpp_strerror(r)
              << "): writeback left to syncs" << dendl;
      wb_window_off = true;
      _end_writeback_window();
      return;
    }
    // Other errors are not handled here: a writeback error stays recorded
    // on the filesystem and the next sync reports it, which stops the store
    // before the checkpoint moves.
    logger->inc(l_mimstore_flush_runs_started);
    wb_window_bytes += run.len;
    wb_window.push_back(std::move(run));
  }
}

void MIMStore::_wait_writeback_window()
{
  // REQUIRES: flush thread, no object lock held (this waits on the disk).
  while (wb_window_bytes > conf.flush_writeback_window &&
         !wb_window.empty()) {
    auto& o = wb_window.front();
    logger->inc(l_mimstore_flush_window_waits);
    files->writeback(o.f, o.off, o.len, true);
    wb_window_bytes -= o.len;
    wb_window.pop_front();
  }
}

void MIMStore::_end_writeback_window()
{
  // REQUIRES: flush thread. What is still in flight is the sync's to wait
  // for; only the fd references go.
  wb_window.clear();
  wb_window_bytes = 0;
}

std::vector<MIMStore::FlushItem> MIMStore::_writeback_order()
{
  // REQUIRES: flush thread, no locks held (the addresses are read from the
  // filesystem; they are a hint, so an object changing meanwhile only costs
  // a seek).
  std::vector<FlushItem> items;
  items.reserve(flush_order.blocks);
  for (auto& [cname, fnames] : flush_order.collections) {
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
  std::lock_guard l(bg_lock);
  return bg_stop && conf.merge && !umount_writes_back;
}

void MIMStore::_flush_frozen()
{
  // One pass over the frozen generation in _writeback_order, each object
  // opened once, its extents sorted and coalesced by plan_writeback.
  auto start = ceph::mono_clock::now();
  uint64_t objects = 0, visited = 0, released_at = 0;
  // The generation's end: the active one began there at the freeze.
  const sn_t end_sn = active_gen_first_sn.load();
  const auto order = _writeback_order();
  pacer.sweep_started(order.size(), _mono_secs());
  for (const FlushItem& item : order) {
    if (_stop_leaves_window()) {
      // umount keeps the window: the rest of this generation stays in the
      // journal, held, for the next mount to index again (its frozen
      // generation goes with the cache).
      dout(1) << "stopping: " << order.size() - visited << " of "
              << order.size() << " objects of the generation left in the "
              << "journal" << dendl;
      _end_writeback_window();
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
        // The data is still in the journal; stopping here loses nothing,
        // carrying on in an unknown state could.
        derr << "flush failed: " << cpp_strerror(r) << "; stopping"
             << dendl;
        ceph_abort_msg("mimstore: writeback to the data filesystem failed");
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
    _wait_writeback_window();
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
  _end_writeback_window();
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
  std::unique_lock l(bg_lock);
  while (true) {
    bg_cond.wait(l, [this] { return bg_stop || flush_pending; });
    if (!flush_pending) {
      break;
    }
    l.unlock();
    _flush_frozen();
    l.lock();
    flush_pending = false;
    flush_order = mim::FlushOrder();
    room_cond.notify_all();
    mim::FlushTrigger again = refreeze;
    refreeze = mim::FlushTrigger::NONE;
    bg_cond.notify_all();
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
    int r = files->sync_all();
    if (r == 0) {
      r = omap->sync();
    }
    if (r == 0) {
      r = written_back->put(covered);
    }
    if (r < 0) {
      // LevelDB's rule: a failed sync leaves the disk in an unknown state;
      // never go on as if it had worked. The journal still holds it all.
      derr << "sync of the data filesystem failed: " << cpp_strerror(r)
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
    int r = journal->set_checkpoint(cp);
    if (r < 0) {
      derr << "cannot persist checkpoint " << cp << ": " << cpp_strerror(r)
           << dendl;
      ceph_abort_msg("mimstore: checkpoint write failed");
    }
    colls.trim_tombstones(files.get(), cp);
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

void MIMStore::_time_tick()
{
  // REQUIRES: the sync thread, no locks held. The time threshold also
  // fires when no writes arrive to check it.
  bool time_due = false;
  {
    std::lock_guard l(bg_lock);
    if (conf.merge && !flush_pending && !freeze_queued) {
      double idle = std::chrono::duration<double>(
        ceph::mono_clock::now() - last_freeze).count();
      time_due = idle >= policy->time_thresh();
    }
  }
  if (time_due && htmll->stats().blocks_used) {
    _request_freeze(mim::FlushTrigger::TIME);
  }
}

int MIMStore::_flush_everything()
{
  // Used by umount and the admin command: write every cached byte back and
  // checkpoint up to the newest applied transaction.
  sequencer.wait_applied_all();
  if (conf.merge) {
    uint64_t want;
    {
      std::unique_lock l(bg_lock);
      bg_cond.wait(l, [this] { return !flush_pending; });
      want = explicit_handled + 1;
    }
    _request_freeze(mim::FlushTrigger::EXPLICIT);
    std::unique_lock l(bg_lock);
    bg_cond.wait(l, [&] {
      return explicit_handled >= want && !flush_pending;
    });
  }
  durability.wait_for_next_sync();
  return 0;
}
