// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the ObjectStore facade (construction, counters), the
 * collection registry, and the queue and apply path with its threads.
 * Elsewhere: lifecycle in MIMMount.cc, what the store tells the OSD about
 * itself (statfs, health alerts, devices, metadata) in MIMStatus.cc,
 * reads in MIMRead.cc, transaction
 * ops in MIMOps.cc (and its family files), replay in MIMReplay.cc, freeze
 * triggers and backpressure in MIMMergeControl.cc, the merge cache flush
 * and the sync thread's hooks in MIMFlush.cc, admin commands in
 * MIMAdmin.cc.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "common/Thread.h"
#include "common/admin_socket.h"
#include "common/debug.h"
#include "common/errno.h"
#include "common/safe_io.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#include "Checksums.h"
#include "CrashRocksEnv.h"
#include "MIMJournal.h"
#include "ObjectFiles.h"
#include "ObjectName.h"
#include "TxnCodec.h"
#include "core/fault_io_env.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using ceph::bufferptr;

using namespace mimstore;

// ---------------------------------------------------------------------------
// Collection

mimstore::Collection::Collection(MIMStore* s, const coll_t& c)
  : CollectionImpl(s->cct, c), store(s), name(c.to_str())
{
}

void mimstore::Collection::flush()
{
  store->_wait_applied(this);
}

bool mimstore::Collection::flush_commit(Context* c)
{
  return store->sequencer.flush_commit(last_queued_sn, c);
}

// ---------------------------------------------------------------------------
// construction

MIMStore::MIMStore(CephContext* cct, const string& path,
                   const string& journal_path)
  : ObjectStore(cct, path),
    journal_path(journal_path),
    finisher(cct, "mimstore-finisher", "mimfin"),
    // (files and logger are made at mount, before the flush thread
    // starts). Counted per run, as it happens: the bench's per-second
    // sampler sees a long wait while it lasts.
    wb_window(
      [this](const ObjectFDRef& f, uint64_t off, uint64_t len) {
        int r = files->writeback(f, off, len, false);
        if (!mim::WritebackWindow<ObjectFDRef>::unsupported(r)) {
          logger->inc(l_mimstore_flush_runs_started);
        }
        return r;
      },
      [this](const ObjectFDRef& f, uint64_t off, uint64_t len) {
        logger->inc(l_mimstore_flush_window_waits);
        files->writeback(f, off, len, true);
      })
{
}

MIMStore::~MIMStore()
{
  if (mounted) {
    derr << "destroyed while mounted: unmounting" << dendl;
    umount();
  }
  if (logger) {
    delete logger;
  }
}

void MIMStore::_create_logger()
{
  if (!logger) {
    logger = mimstore::build_perf_counters(cct);
  }
  cct->get_perfcounters_collection()->add(logger);
  logger_registered = true;
}

objectstore_perf_stat_t MIMStore::get_cur_stats()
{
  objectstore_perf_stat_t s;
  if (logger) {
    // (count, total ns) -> average ns
    auto avg = [this](int idx) {
      auto [n, total] = logger->get_tavg_ns(idx);
      return n ? total / n : 0;
    };
    s.os_commit_latency_ns = avg(l_mimstore_commit_lat);
    s.os_apply_latency_ns = avg(l_mimstore_apply_lat);
  }
  return s;
}

// ---------------------------------------------------------------------------
// collections

ObjectStore::CollectionHandle MIMStore::open_collection(const coll_t& c)
{
  return colls.get(c);
}

ObjectStore::CollectionHandle MIMStore::create_new_collection(const coll_t& c)
{
  // The handle exists at once (transactions are queued on it); the
  // directory is made when the create op is applied.
  return colls.get_or_create(this, c);
}

void MIMStore::set_collection_commit_queue(const coll_t& cid,
                                           ContextQueue* commit_queue)
{
  if (auto c = colls.get(cid)) {
    c->commit_queue = commit_queue;
  }
}

int MIMStore::list_collections(std::vector<coll_t>& ls)
{
  colls.for_each([&](const coll_t& cid, const CollectionRef& c) {
    mim::ReadLock cl(c->lock);
    if (c->exists) {
      ls.push_back(cid);
    }
  });
  return 0;
}

bool MIMStore::collection_exists(const coll_t& c)
{
  auto ref = colls.get(c);
  if (!ref) {
    return false;
  }
  _wait_applied(ref.get());
  mim::ReadLock l(ref->lock);
  return ref->exists;
}

int MIMStore::collection_empty(CollectionHandle& ch, bool* empty)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  mim::ReadLock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  *empty = c->objects.empty();
  return 0;
}

int MIMStore::collection_bits(CollectionHandle& ch)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  mim::ReadLock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  return c->bits;
}

int MIMStore::collection_list(CollectionHandle& ch, const ghobject_t& start,
                              const ghobject_t& end, int max,
                              std::vector<ghobject_t>* ls, ghobject_t* next)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  mim::ReadLock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  auto p = c->objects.lower_bound(start);
  while (p != c->objects.end() && ls->size() < unsigned(max) && *p < end) {
    ls->push_back(*p);
    ++p;
  }
  if (next) {
    *next = p == c->objects.end() ? ghobject_t::get_max() : *p;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// queue and apply

int MIMStore::_validate(std::vector<Transaction>& tls)
{
  sequencer.wait_applied_all();
  std::map<coll_t, std::set<ghobject_t>> objs;
  auto get = [&](const coll_t& cid) -> std::set<ghobject_t>& {
    auto p = objs.find(cid);
    if (p == objs.end()) {
      p = objs.emplace(cid, std::set<ghobject_t>()).first;
      if (auto c = colls.get(cid)) {
        mim::ReadLock l(c->lock);
        p->second = c->objects;
      }
    }
    return p->second;
  };
  for (auto& t : tls) {
    for (auto i = t.begin(); i.have_op();) {
      Transaction::Op* op = i.decode_op();
      switch (op->op) {
      case Transaction::OP_TOUCH:
      case Transaction::OP_CREATE:
      case Transaction::OP_WRITE:
      case Transaction::OP_ZERO:
        get(i.get_cid(op->cid)).insert(i.get_oid(op->oid));
        break;
      case Transaction::OP_CLONE:
      case Transaction::OP_CLONERANGE:
      case Transaction::OP_CLONERANGE2:
        get(i.get_cid(op->cid)).insert(i.get_oid(op->dest_oid));
        break;
      case Transaction::OP_REMOVE:
        get(i.get_cid(op->cid)).erase(i.get_oid(op->oid));
        break;
      case Transaction::OP_COLL_MOVE_RENAME:
        if (get(i.get_cid(op->cid)).erase(i.get_oid(op->oid))) {
          get(i.get_cid(op->dest_cid)).insert(i.get_oid(op->dest_oid));
        }
        break;
      case Transaction::OP_TRY_RENAME:
        if (get(i.get_cid(op->cid)).erase(i.get_oid(op->oid))) {
          get(i.get_cid(op->cid)).insert(i.get_oid(op->dest_oid));
        }
        break;
      case Transaction::OP_MKCOLL:
        get(i.get_cid(op->cid)).clear();
        break;
      case Transaction::OP_SPLIT_COLLECTION2:
      case Transaction::OP_MERGE_COLLECTION:
        return 0;  // not simulated: apply decides
      case Transaction::OP_RMCOLL:
        if (!get(i.get_cid(op->cid)).empty()) {
          derr << "refusing a transaction that removes non-empty collection "
               << i.get_cid(op->cid) << dendl;
          return -ENOTEMPTY;
        }
        break;
      default:
        break;
      }
    }
  }
  return 0;
}

int MIMStore::queue_transactions(CollectionHandle& ch,
                                 std::vector<Transaction>& tls,
                                 TrackedOpRef op,
                                 ThreadPool::TPHandle* handle)
{
  // One pass over the ops: the bytes written (cache room), and whether a
  // collection is removed (only those transactions pay for _validate).
  OpScan scan = scan_ops(tls);
  // A transaction that must fail is refused before it reaches the journal:
  // journaled, it would fail at apply and again at every replay.
  if (scan.removes_collection) {
    int r = _validate(tls);
    if (r < 0) {
      if (cct->_conf.get_val<bool>("objectstore_debug_throw_on_failed_txc")) {
        throw r;
      }
      ceph_abort_msg("mimstore: transaction removes a non-empty collection");
    }
  }
  auto txc = new TransContext;
  txc->write_bytes = scan.write_bytes;
  txc->ch = static_cast<Collection*>(ch.get());
  Transaction::collect_contexts(tls, &txc->on_applied, &txc->on_commit,
                                &txc->on_applied_sync);
  bufferlist bl = encode_payload(tls);
  if (conf.merge) {
    // The payload shares the write buffers (no copy), and txc->tls keeps
    // them alive until applied: record where each of its segments is.
    for (const auto& b : bl.buffers()) {
      txc->payload_index.add(b.c_str(), b.length());
    }
    txc->payload_keep = bl;  // shares the buffers, copies nothing
  }
  txc->tls = std::move(tls);
  txc->bytes = bl.length();
  txc->op = op;
  txc->queued_at = ceph::mono_clock::now();

  _backoff(txc->bytes);
  sequencer.admit(txc->bytes, [&](sn_t sn) {
    // (under the submission lock: the journal sees sn order)
    txc->sn = sn;
    durable_clock.queued(
      sn, ceph::to_seconds<double>(txc->queued_at.time_since_epoch()));
    txc->ch->note_queued(sn, scan.object_hashes, scan.collection_wide);
    dout(20) << "queue_transactions sn " << sn << " " << txc->bytes
             << " bytes" << dendl;
    journal->submit(sn, std::move(bl), [this, txc](uint64_t payload_off) {
      txc->payload_off = payload_off;
      _journaled(txc);
    });
  });
  return 0;
}

void MIMStore::_journaled(TransContext* txc)
{
  logger->tinc(l_mimstore_commit_lat,
               ceph::mono_clock::now() - txc->queued_at);
  sequencer.push(ApplyItem{txc, mim::FlushTrigger::NONE});
}

void MIMStore::_apply_thread()
{
  ApplyItem item;
  while (sequencer.pop(&item)) {
    if (!item.txc) {
      _maybe_freeze(item.freeze);
      continue;
    }
    TransContext* txc = item.txc;
    if (!conf.merge) {
      _throttle_writeback();  // with merging, the flush thread throttles
    }
    _wait_for_cache_room(txc->write_bytes);
    if (_fence_sn(txc->sn) < 0) {
      // Applied without it, its sn could be handed out again after a lost
      // journal, and the op that got it skipped as done (MIMStore.h).
      ceph_abort_msg("mimstore: cannot record the sn fence in the data "
                     "directory");
    }
    // The sn is durable once its direct part (this hold) has been synced
    // and every write merged for it (a hold each, taken in _write) has been
    // flushed and synced.
    durability.hold(txc->sn);
    applying_sn = txc->sn;
    ApplyContext ac;
    ac.merge = conf.merge;
    ac.txc = txc;
    uint32_t trans_num = 0;
    for (auto& t : txc->tls) {
      _do_transaction(ac, t, txc->sn, trans_num++);
    }
    durability.release_after_sync(txc->sn);
    _maybe_freeze(mim::FlushTrigger::NONE);
    sequencer.set_applied(txc->sn);
    _finish(txc);
  }
}

void MIMStore::_finish(TransContext* txc)
{
  logger->tinc(l_mimstore_apply_lat, ceph::mono_clock::now() - txc->queued_at);
  if (txc->on_applied_sync) {
    txc->on_applied_sync->complete(0);
  }
  if (txc->on_applied) {
    finisher.queue(txc->on_applied);
  }
  // A flush_commit waiter waits for its collection's last sn, so the
  // waiters taken here are this collection's: they go after on_commit on
  // the same queue (the OSD's shard runs it in order), else a PG's
  // IntervalFlush could run before that transaction's commit callback.
  std::list<Context*> done;
  if (txc->on_commit) {
    done.push_back(txc->on_commit);
  }
  sequencer.take_commit_waiters(txc->sn, &done);
  if (!done.empty()) {
    ContextQueue* q = txc->ch->commit_queue;
    if (q) {
      q->queue(done);
    } else {
      finisher.queue(done);
    }
  }
  sequencer.release(txc->bytes);
  delete txc;
}

void MIMStore::_wait_applied(Collection* c)
{
  sequencer.wait_applied(c->last_queued_sn);
}

void MIMStore::_start_threads()
{
  sequencer.start();
  {
    mim::MutexLock l(freeze_lock);
    flush_stop = false;
    last_freeze = ceph::mono_clock::now();
  }
  wb_window.set_cap(conf.flush_writeback_window);
  // named for top -H and gdb; 15 characters at most
  apply_thread = make_named_thread("mim_apply", [this] { _apply_thread(); });
  flush_thread = make_named_thread("mim_flush", [this] { _flush_thread(); });
  mim::DurabilityLimits limits;
  limits.interval = conf.sync_interval;
  limits.min_interval = conf.min_sync_interval;
  limits.writeback_ios = conf.wbthrottle_ios;
  limits.writeback_bytes = conf.wbthrottle_bytes;
  durability.configure(limits, _durability_hooks());
  sync_thread = make_named_thread("mim_sync", [this] { durability.run(); });
}

void MIMStore::_stop_threads()
{
  sequencer.stop();
  apply_thread.join();
  {
    mim::MutexLock l(freeze_lock);
    flush_stop = true;
    freeze_cond.notify_all();
  }
  // Both stop flags are set before either join: a flush finishing its
  // generation may wait for a sync, and that wait ends at the stop.
  durability.stop();
  flush_thread.join();
  sync_thread.join();
}
