// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the merge control's rules. See the header.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/merge_rules.h"

#include <algorithm>

namespace mim {

FreezeDecision decide_freeze(const FreezeInputs& in)
{
  FreezeDecision d;
  FlushTrigger trigger = in.forced;
  if (trigger == FlushTrigger::NONE) {
    trigger = in.policy;
    if (trigger == FlushTrigger::NONE && in.generation_share_reached) {
      // The space threshold in journal bytes: the journal is what a
      // generation fills when it holds the data, and the next one gets the
      // same share while this one is written back.
      trigger = FlushTrigger::SPACE;
    }
    if (trigger == FlushTrigger::NONE || in.blocks_used == 0) {
      return d;
    }
  }
  if (in.flush_pending) {
    // Journal pressure is not remembered: the running flush is what frees
    // the journal, and freezing again right after it would cut a small
    // generation, each object rewritten for a handful of writes.
    if (in.forced != FlushTrigger::NONE &&
        in.forced != FlushTrigger::JOURNAL_PRESSURE &&
        in.refreeze != FlushTrigger::EXPLICIT) {
      d.action = FreezeAction::REMEMBER;
      d.refreeze = in.forced;
    }
    return d;
  }
  d.explicit_served = in.forced == FlushTrigger::EXPLICIT;
  if (in.forced == FlushTrigger::JOURNAL_PRESSURE &&
      in.generation_journal_bytes < in.journal_size / 4) {
    // The journal is held by older transactions, flushed but waiting for a
    // sync, not by this generation: a sync frees it. Counted in journal
    // bytes, padding included: in payload bytes a stream of small
    // omap-only transactions filled the journal while this still said
    // "small".
    d.action = FreezeAction::SYNC;
    return d;
  }
  if (in.blocks_used == 0) {
    d.action = FreezeAction::NOTHING_CACHED;
    return d;
  }
  d.action = FreezeAction::FREEZE;
  d.trigger = trigger;
  return d;
}

FlushTrigger cache_room_wait(bool bytes_bound, uint64_t cached_bytes,
                             uint64_t bytes, uint64_t cap,
                             uint64_t index_bytes, uint64_t index_cap)
{
  if (bytes_bound && cached_bytes + bytes > cap) {
    return FlushTrigger::MEMORY_CAP;
  }
  if (index_cap && index_bytes >= index_cap) {
    return FlushTrigger::INDEX_BUDGET;
  }
  return FlushTrigger::NONE;
}

double backoff_fill(uint64_t journal_used, uint64_t journal_size, bool merge,
                    uint64_t cached_bytes, uint64_t cache_cap,
                    uint64_t index_bytes, uint64_t index_cap)
{
  double fill = journal_size ? double(journal_used) / double(journal_size) : 0;
  if (merge) {
    if (cache_cap) {
      fill = std::max(fill, double(cached_bytes) / double(cache_cap));
    }
    if (index_cap) {
      fill = std::max(fill, double(index_bytes) / double(index_cap));
    }
  }
  return fill;
}

double backoff_delay(double fill, double low, double high, double max_delay)
{
  if (max_delay <= 0 || !(fill > low)) {
    return 0;
  }
  double x = high > low ? std::min(1.0, (fill - low) / (high - low)) : 1.0;
  return max_delay * x * x;
}

bool time_freeze_due(bool merge, bool flush_pending, bool freeze_queued,
                     uint64_t blocks_used, double since_last_freeze,
                     double time_thresh)
{
  return merge && !flush_pending && !freeze_queued && blocks_used > 0 &&
         since_last_freeze >= time_thresh;
}

}  // namespace mim
