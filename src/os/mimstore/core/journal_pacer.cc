// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: pacing clients to the journal space a sweep leaves (see the
 * header for the rule).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/journal_pacer.h"

#include <algorithm>

namespace mim {

int64_t pacer_room(int64_t limit, int64_t used, int64_t active_used,
                   double share)
{
  int64_t mine = int64_t(std::clamp(share, 0.0, 1.0) * double(limit));
  return std::min(limit - used, mine - active_used);
}

void JournalPacer::sweep_started(uint64_t objects, double now)
{
  MutexLock l(lock);
  sweeping = objects > 0;
  total = objects;
  done = 0;
  started = now;
}

void JournalPacer::sweep_progress(uint64_t d)
{
  MutexLock l(lock);
  done = std::min(d, total);
}

void JournalPacer::sweep_finished(double now)
{
  MutexLock l(lock);
  if (sweeping && now > started) {
    last_spo = (now - started) / double(total);  // all of them are done
  }
  sweeping = false;
}

void JournalPacer::sweep_abandoned()
{
  MutexLock l(lock);
  sweeping = false;
}

void JournalPacer::sync_took(double secs)
{
  MutexLock l(lock);
  last_sync = std::max(0.0, secs);
}

double JournalPacer::remaining(double now) const
{
  MutexLock l(lock);
  return remaining_locked(now);
}

double JournalPacer::remaining_locked(double now) const
{
  if (!sweeping) {
    return -1;
  }
  double elapsed = now - started;
  double spo = last_spo;
  if (done >= conf.min_progress_objects && elapsed >= conf.min_elapsed) {
    spo = elapsed / double(done);
  }
  if (spo < 0) {
    return -1;
  }
  return double(total - done) * spo + last_sync;
}

void JournalPacer::measure_ratio_locked(uint64_t payload, uint64_t appended)
{
  if (!have_mark || appended < appended_mark) {
    have_mark = true;  // (a counter that went back: a new journal)
    appended_mark = appended;
    admitted = 0;
    return;
  }
  admitted += payload;
  if (admitted >= conf.ratio_window) {
    double r = double(appended - appended_mark) / double(admitted);
    // Appends lag admissions by the queue; a window is long enough that
    // the lag is noise, the clamp keeps a stalled journal from reading as
    // a ratio of 0.
    ratio = std::clamp(r, 1.0, 16.0);
    appended_mark = appended;
    admitted = 0;
  }
}

double JournalPacer::delay(uint64_t payload, int64_t free, uint64_t appended,
                           double now)
{
  MutexLock l(lock);
  measure_ratio_locked(payload, appended);
  double rem = remaining_locked(now);
  if (rem < 0) {
    next = now;
    return 0;
  }
  double cost = double(payload) * ratio;
  if (free <= 0) {
    next = now + conf.max_delay;
    return conf.max_delay;
  }
  double rate = double(free) / std::max(rem, 1e-3);
  // burst_share of the free space, in seconds at this rate.
  double credit =
    std::max(conf.burst, std::clamp(conf.burst_share, 0.0, 1.0) * rem);
  double at = std::max(now - credit, next);
  next = at + cost / rate;
  double wait = at - now;
  if (wait <= 0) {
    return 0;
  }
  if (wait > conf.max_delay) {
    // Do not let a backlog grow without bound: a later, better estimate
    // (or a freed journal) must take effect within max_delay.
    next = now + conf.max_delay;
    return conf.max_delay;
  }
  return wait;
}

double JournalPacer::journal_ratio() const
{
  MutexLock l(lock);
  return ratio;
}

}  // namespace mim
