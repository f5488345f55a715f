// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the merge control's rules, as pure functions of what the store
 * knows at the moment it asks (the store's MIMMergeControl.cc gathers the
 * inputs under freeze_lock and carries the answer out):
 *
 *   decide_freeze     the apply thread, after each transaction and for each
 *                     queued freeze request: freeze the active generation,
 *                     remember the request for when the running flush ends,
 *                     ask for a sync instead, or nothing
 *   cache_room_wait   a writer before it is applied: must it wait for the
 *                     running flush to free merge-cache room, and why
 *   backoff_fill,     the BackoffThrottle-like delay of a new transaction
 *   backoff_delay     from how full the journal and the cache are
 *   time_freeze_due   the time threshold when no write comes
 *
 * docs/store.md "MIM: merging" and "Backpressure" say why each rule is as it
 * is; src/test/core/merge_rules_test.cc holds them as tables.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>

#include "core/flush_policy.h"

namespace mim {

/// What decide_freeze looks at.
struct FreezeInputs {
  /// A queued request's trigger (time, journal pressure, explicit, a writer
  /// out of cache room), or NONE after applying a transaction.
  FlushTrigger forced = FlushTrigger::NONE;
  /// FlushPolicy::check for the active generation; read only when forced
  /// is NONE.
  FlushTrigger policy = FlushTrigger::NONE;
  /// With the data in the journal: the journal bytes written since the
  /// active generation began reached its share (generation_journal_bytes).
  /// Read only when forced and policy are NONE.
  bool generation_share_reached = false;
  uint64_t blocks_used = 0;          ///< cached blocks, both generations
  bool flush_pending = false;        ///< a frozen generation is being flushed
  FlushTrigger refreeze = FlushTrigger::NONE;  ///< remembered so far
  /// Journal used since the active generation began; read only for
  /// JOURNAL_PRESSURE.
  uint64_t generation_journal_bytes = 0;
  uint64_t journal_size = 0;
};

enum class FreezeAction {
  NONE,            ///< nothing to do
  REMEMBER,        ///< a flush runs: set refreeze to `refreeze`
  SYNC,            ///< journal pressure from flushed transactions: a sync frees it
  NOTHING_CACHED,  ///< nothing to freeze: wake whoever waits for a freeze
  FREEZE,          ///< freeze the active generation for `trigger`
};

struct FreezeDecision {
  FreezeAction action = FreezeAction::NONE;
  FlushTrigger trigger = FlushTrigger::NONE;   ///< why (FREEZE, counters)
  FlushTrigger refreeze = FlushTrigger::NONE;  ///< REMEMBER: the new refreeze
  /// An explicit request is served here (explicit_handled += 1), even when
  /// nothing is cached or the freeze finds nothing.
  bool explicit_served = false;
};

/// The freeze rule. One generation is flushed at a time; while it is, new
/// writes keep merging into the active one (double buffering), and a
/// request is remembered (an explicit one is never replaced: only its own
/// freeze counts for its waiter) unless it is journal pressure, which the
/// running flush itself relieves.
FreezeDecision decide_freeze(const FreezeInputs& in);

/// Must a writer of `bytes` wait for merge-cache room, and for which
/// trigger (MEMORY_CAP, INDEX_BUDGET), or NONE. `bytes_bound`: the cache
/// holds the data (not the journal), so its bytes are bounded by `cap`;
/// `index_cap` 0: no index budget. The index is checked before the
/// transaction's records are added, so it can pass the budget by one
/// transaction's.
FlushTrigger cache_room_wait(bool bytes_bound, uint64_t cached_bytes,
                             uint64_t bytes, uint64_t cap,
                             uint64_t index_bytes, uint64_t index_cap);

/// How full the store is for the backoff: the fullest of the journal, the
/// cache against its cap and the index against its budget (the latter two
/// only with merging; an index budget of 0 means none and is not counted).
double backoff_fill(uint64_t journal_used, uint64_t journal_size, bool merge,
                    uint64_t cached_bytes, uint64_t cache_cap,
                    uint64_t index_bytes, uint64_t index_cap);

/// The quadratic delay of FileStore's and BlueStore's BackoffThrottle: 0 up
/// to `low`, max_delay * x^2 with x = (fill - low) / (high - low), capped
/// at max_delay from `high` on. Seconds; 0 when max_delay <= 0.
double backoff_delay(double fill, double low, double high, double max_delay);

/// The time threshold: due when nothing is being flushed or queued for a
/// freeze, something is cached, and the last freeze is time_thresh ago.
bool time_freeze_due(bool merge, bool flush_pending, bool freeze_queued,
                     uint64_t blocks_used, double since_last_freeze,
                     double time_thresh);

}  // namespace mim
