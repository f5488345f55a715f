// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the order of transactions.
 *
 * queue_transactions admits a transaction through the queue throttle,
 * which gives it the next sequence number (sn) and submits it to the
 * journal in the same critical section, so journal order is sn order. The
 * journal calls back in sn order; the callback pushes the transaction on
 * the apply queue, which the one apply thread drains in that order
 * (freeze requests are queued between transactions the same way). Once a
 * transaction is applied, applied_sn moves: readers, collection flushes and
 * flush_commit wait for it. The throttle's room comes back when the
 * transaction's callbacks are queued (release).
 *
 * Locks:
 *   submit_lock  next_sn and the throttle's counts. Held across admit's
 *                submit callback: outer to the journal's locks.
 *   apply_lock   the apply queue, the stop flag and the flush_commit
 *                waiters. A leaf.
 * applied_sn is atomic: written under apply_lock, read without a lock.
 * The GUARDED_BY annotations are checked by clang in the Ceph tier
 * (qa/lock-annotations.sh --store).
 */
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <vector>

#include "common/Finisher.h"
#include "common/TrackedOp.h"
#include "common/perf_counters.h"
#include "os/Transaction.h"

#include "Collection.h"
#include "core/flush_policy.h"
#include "core/payload_index.h"
#include "core/thread_annotations.h"
#include "core/types.h"

namespace mimstore {

/// One queued transaction batch (the tls of one queue_transactions call).
struct TransContext {
  mim::sn_t sn = 0;
  CollectionRef ch;
  std::vector<ceph::os::Transaction> tls;
  Context* on_commit = nullptr;
  Context* on_applied = nullptr;
  Context* on_applied_sync = nullptr;
  uint64_t bytes = 0;        ///< the journal payload (throttle)
  uint64_t write_bytes = 0;  ///< data of its OP_WRITEs (cache room)
  /// The journal payload's memory segments (merging on), so a merged write
  /// can be found in the journal (DataRef::jpos); set before submission.
  mim::PayloadIndex payload_index;
  /// The payload's buffers, kept until applied (merging on): while every
  /// segment of payload_index stays allocated, no other buffer can take an
  /// address it records, so a match by address is always the same memory.
  ceph::bufferlist payload_keep;
  /// Device offset of the payload, from the journal's callback (before the
  /// apply thread sees the transaction); mim::NO_JPOS until then.
  uint64_t payload_off = mim::NO_JPOS;
  ceph::mono_clock::time_point queued_at;
  TrackedOpRef op;
};

/// An apply-queue item: a transaction, or a request to freeze the HTMLL
/// (from the sync thread, journal pressure or umount) that must be handled
/// between two transactions.
struct ApplyItem {
  TransContext* txc = nullptr;
  mim::FlushTrigger freeze = mim::FlushTrigger::NONE;
};

class Sequencer {
 public:
  using sn_t = mim::sn_t;

  /// Mount, before any thread runs: the next sn to give is `next_sn` and
  /// everything before it is applied. `logger` (may be null) gets the
  /// throttle's counters.
  void reset(sn_t next_sn, uint64_t max_ops, uint64_t max_bytes,
             PerfCounters* logger);
  /// The next sn to give (umount's record of it).
  sn_t next_sn() const;
  /// The same without the lock, which admit holds while it waits for
  /// room (statfs's health sample must not wait behind a full queue).
  sn_t next_sn_relaxed() const { return next_relaxed; }

  /// Wait while the queue is full, give the transaction of `bytes` the
  /// next sn and call submit(sn) with the submission lock held. Returns
  /// the sn.
  sn_t admit(uint64_t bytes, const std::function<void(sn_t)>& submit);
  /// An admitted transaction of `bytes` left the queue: room for more.
  void release(uint64_t bytes);

  /// Queue an item for the apply thread.
  void push(const ApplyItem& item);
  /// Apply thread: the next item, waiting for one; false once stopped
  /// and drained.
  bool pop(ApplyItem* item);
  void start();
  void stop();  ///< pop returns false once the queue is empty

  /// Every sn up to `sn` is applied.
  void set_applied(sn_t sn);
  sn_t applied_sn() const { return applied; }
  void wait_applied(sn_t want);
  /// Wait for everything admitted so far.
  void wait_applied_all();
  /// flush_commit: true if `want` is applied; otherwise c waits for the
  /// transaction of sn `want` (take_commit_waiters).
  bool flush_commit(sn_t want, Context* c);
  /// Append the flush_commit waiters up to `sn` to `out`. Called as the
  /// transaction of `sn` finishes, with its on_commit already in `out`:
  /// they follow it, on the same queue (as BlueStore's oncommits).
  void take_commit_waiters(sn_t sn, std::list<Context*>* out);

  /// Admin socket.
  size_t queue_length() const;
  size_t waiters() const;

 private:
  /// The throttle has room for a transaction of `bytes`.
  bool room_locked(uint64_t bytes) const MIM_REQUIRES(submit_lock);

  mutable mim::Mutex submit_lock;
  std::condition_variable submit_cond;  ///< throttle waiters
  sn_t next MIM_GUARDED_BY(submit_lock) = 1;
  std::atomic<sn_t> next_relaxed{1};  ///< next, written under submit_lock
  uint64_t queued_ops MIM_GUARDED_BY(submit_lock) = 0;
  uint64_t queued_bytes MIM_GUARDED_BY(submit_lock) = 0;
  uint64_t max_ops MIM_GUARDED_BY(submit_lock) = 0;
  uint64_t max_bytes MIM_GUARDED_BY(submit_lock) = 0;
  PerfCounters* logger MIM_GUARDED_BY(submit_lock) = nullptr;

  mutable mim::Mutex apply_lock;
  std::condition_variable apply_cond;    ///< apply thread: work arrived
  std::condition_variable applied_cond;  ///< readers: applied moved
  std::deque<ApplyItem> queue MIM_GUARDED_BY(apply_lock);
  bool stopping MIM_GUARDED_BY(apply_lock) = false;
  /// Every sn <= this is applied. Written under apply_lock (so a waiter
  /// cannot miss the notify), read without it.
  std::atomic<sn_t> applied{0};
  /// flush_commit waiters by the sn they wait for.
  std::multimap<sn_t, Context*> commit_waiters MIM_GUARDED_BY(apply_lock);
};

}  // namespace mimstore
