// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the merge cache's control. When the active HTMLL generation is
 * frozen for a flush (every trigger rule: the flush policy's space, time,
 * memory and index thresholds, the journal's share and pressure, explicit
 * requests, the time threshold when no write comes), and how writers are
 * slowed while the cache and the journal fill (the writeback throttle, the
 * backoff and the pacer, waiting for cache room). docs/store.md "MIM:
 * merging" and "Backpressure". The flush itself is MIMFlush.cc.
 */
#include "MIMStore.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/debug.h"

#include "MIMJournal.h"
#include "core/merge_rules.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using namespace mimstore;

namespace {

/// The perf counter of a freeze's trigger.
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
    mim::MutexLock l(freeze_lock);
    if (freeze_queued && why != mim::FlushTrigger::EXPLICIT) {
      return;
    }
    freeze_queued = true;
  }
  sequencer.push(ApplyItem{nullptr, why});
}

void MIMStore::_maybe_freeze(mim::FlushTrigger forced)
{
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
  mim::MutexLock l(freeze_lock);
  if (forced != mim::FlushTrigger::NONE) {
    freeze_queued = false;
  }
  mim::FreezeInputs in;
  in.forced = forced;
  in.blocks_used = st.blocks_used;
  if (forced == mim::FlushTrigger::NONE) {
    double since = std::chrono::duration<double>(
      ceph::mono_clock::now() - last_freeze).count();
    // Occupancy in block-equivalents of cached data. The paper's blocks
    // are whole object-sized buffers, so its block count measures memory;
    // ours are sparse (memory follows the bytes), and counting them would
    // flush after a few hundred scattered 4 KiB writes, before anything
    // could merge.
    uint64_t occupied = (st.bytes + conf.block_size - 1) / conf.block_size;
    in.policy = policy->check(occupied, st.all_bytes(), since, st.index_bytes);
  }
  // The generation's journal bytes only where the rule reads them (they
  // take the journal writer's lock, and this runs after every apply).
  if (forced == mim::FlushTrigger::NONE &&
      in.policy == mim::FlushTrigger::NONE && conf.merge_data_in_journal) {
    in.generation_share_reached =
      journal->used_since(active_gen_first_sn) >= generation_journal_bytes;
  }
  if (forced == mim::FlushTrigger::JOURNAL_PRESSURE) {
    // in journal bytes, padding included, not payload bytes (merge_rules.cc)
    in.generation_journal_bytes = journal->used_since(active_gen_first_sn);
  }
  in.journal_size = journal->size();
  in.flush_pending = flush_pending;
  in.refreeze = refreeze;
  const mim::FreezeDecision d = mim::decide_freeze(in);
  if (d.explicit_served) {
    ++explicit_handled;
  }
  switch (d.action) {
  case mim::FreezeAction::NONE:
    return;
  case mim::FreezeAction::REMEMBER:
    // re-queued when the running flush ends (_flush_thread)
    refreeze = d.refreeze;
    return;
  case mim::FreezeAction::SYNC:
    durability.request_sync();
    return;
  case mim::FreezeAction::NOTHING_CACHED:
    freeze_cond.notify_all();
    return;
  case mim::FreezeAction::FREEZE:
    break;
  }
  const mim::FlushTrigger trigger = d.trigger;
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
  freeze_cond.notify_all();
}

void MIMStore::_set_frozen_locked(mim::FlushOrder&& order)
{
  flush_order = std::move(order);
  flush_pending = true;
  last_freeze = ceph::mono_clock::now();
}

void MIMStore::_throttle_writeback()
{
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
  mim::HtmllStats st;
  if (conf.merge) {
    st = htmll->stats();
  }
  const double fill = mim::backoff_fill(
    journal->used(), journal->size(), conf.merge, st.all_bytes(), cache_cap,
    st.all_index_bytes(), conf.cache_index_max_bytes);
  const double quad = mim::backoff_delay(fill, conf.backoff_low,
                                         conf.backoff_high,
                                         conf.backoff_max_delay);
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
  auto full = [&] {
    auto st = htmll->stats();
    return mim::cache_room_wait(bytes_bound, st.all_bytes(), bytes, cap,
                                st.all_index_bytes(), index_cap);
  };
  const mim::FlushTrigger why = full();
  if (why == mim::FlushTrigger::NONE) {
    return;
  }
  _maybe_freeze(why);
  mim::MutexLock l(freeze_lock);
  bool waited = false;
  while (flush_pending && full() != mim::FlushTrigger::NONE) {
    if (!waited) {
      logger->inc(l_mimstore_cache_full_waits);
      waited = true;
    }
    mim::wait_for(room_cond, freeze_lock, std::chrono::milliseconds(100));
  }
}

// ---------------------------------------------------------------------------
// the time threshold and explicit requests

void MIMStore::_time_tick()
{
  if (!conf.merge) {
    return;  // nothing is cached
  }
  const uint64_t blocks = htmll->stats().blocks_used;
  bool time_due;
  {
    mim::MutexLock l(freeze_lock);
    double idle = std::chrono::duration<double>(
      ceph::mono_clock::now() - last_freeze).count();
    time_due = mim::time_freeze_due(conf.merge, flush_pending, freeze_queued,
                                    blocks, idle, policy->time_thresh());
  }
  if (time_due) {
    _request_freeze(mim::FlushTrigger::TIME);
  }
}

int MIMStore::_write_back_all()
{
  // Used by umount and the admin command: write every cached byte back and
  // checkpoint up to the newest applied transaction.
  sequencer.wait_applied_all();
  if (conf.merge) {
    uint64_t want;
    {
      mim::MutexLock l(freeze_lock);
      while (flush_pending) {
        mim::wait(freeze_cond, freeze_lock);
      }
      want = explicit_handled + 1;
    }
    _debug_point("write_back_all:want");
    _request_freeze(mim::FlushTrigger::EXPLICIT);
    _debug_point("write_back_all:queued");
    mim::MutexLock l(freeze_lock);
    while (explicit_handled < want || flush_pending) {
      mim::wait(freeze_cond, freeze_lock);
    }
  }
  durability.wait_for_next_sync();
  return 0;
}
