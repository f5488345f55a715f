// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: pacing clients to the journal space a write-back sweep leaves.
 *
 * The journal is freed only as the checkpoint moves, and the checkpoint
 * passes a frozen generation only when all of it is written back and
 * synced: a sweep in disk order frees its journal space at the end, in one
 * step. Until then every new transaction takes journal space that nothing
 * gives back. If clients write faster than
 *
 *     rate = free journal space / time the sweep still needs
 *
 * the journal fills before the sweep ends and every client write stops
 * until it does: minutes, when a generation of gigabytes goes to an HDD
 * (docs/results/20261124-64G-journal-data-long). The pacer admits
 * transactions at that rate instead, so the free space lasts exactly as
 * long as the sweep, and clients slow down smoothly to the write-back rate.
 *
 *   remaining  = objects left * seconds per object + the last sync's time
 *                seconds per object: measured in this sweep once it has done
 *                min_progress_objects and min_elapsed; before that, the last
 *                sweep's figure; with neither, no pacing (nothing measured)
 *   rate       = free / remaining                           journal bytes/s
 *   a transaction's journal bytes = its payload bytes * the measured ratio
 *                of journal bytes appended to payload bytes admitted (entry
 *                headers, batch padding), remeasured every ratio_window
 *                payload bytes
 *   admission  = a virtual clock: each transaction is admitted at
 *                max(now - credit, next), next += its bytes / rate; it waits
 *                until then, at most max_delay (past that the backlog is
 *                dropped: the journal's own full-wait takes over)
 *   credit     = max(burst, burst_share * remaining) seconds at the rate:
 *                clients that were idle may take up to burst_share of the
 *                free space at once (the rate is then recomputed from what
 *                is left, so the space still lasts the sweep)
 *
 * The burst credit is for a burst after a quiet spell: Reef's OSD writes
 * 400 MB at boot to measure the disk (the mClock capacity bench), and
 * paced from its first byte that took 68 s of a 99 s start while a sweep
 * ran (docs/results/20261126-64G-term-replay-freeze). Under steady load
 * the virtual clock is ahead of now and the credit never applies.
 *
 * The free space is shared between the two generations (pacer_room): the
 * active one, filled while the frozen one is swept, may take at most
 * `share` of the limit. Without it a short sweep's short remaining time let
 * clients fill most of the journal into the active generation; its own
 * sweep then had almost no free space over a long remaining time and paced
 * clients to a tenth of the write-back rate for minutes
 * (docs/results/20261125-64G-after-lockfix). With a share each generation
 * is at most about half the journal and the next one is paced to fill its
 * half in the time the sweep needs.
 *
 * Times are seconds on a monotonic clock, passed in (tests drive a virtual
 * one). Thread safety: every member is protected by `lock`, a leaf lock
 * (no other lock is taken under it); the flush thread reports progress, the
 * sync thread sync times, submitting threads ask for delays.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>

#include "core/thread_annotations.h"

namespace mim {

struct JournalPacerConfig {
  double max_delay = 1.0;              ///< longest wait of one transaction, s
  double burst = 0.05;                 ///< least admission credit, s of the rate
  double burst_share = 0.25;           ///< admission credit, share of the free space
  uint64_t min_progress_objects = 16;  ///< before this sweep's rate is trusted
  double min_elapsed = 1.0;            ///< s, likewise
  uint64_t ratio_window = 32ull << 20; ///< payload bytes per ratio update
  double initial_ratio = 2.0;          ///< journal bytes per payload byte, unmeasured
};

/// Journal bytes the active generation may still take: the space below
/// `limit` (the journal bytes at which clients stop being admitted), and at
/// most `share` (0-1] of `limit` for the active generation, which holds
/// `active_used` of the `used` bytes. Negative when over either bound.
int64_t pacer_room(int64_t limit, int64_t used, int64_t active_used,
                   double share);

class JournalPacer {
 public:
  explicit JournalPacer(const JournalPacerConfig& c = JournalPacerConfig())
    : conf(c), ratio(c.initial_ratio) {}

  /// Flush thread: a sweep of `objects` objects starts at `now`.
  void sweep_started(uint64_t objects, double now);
  /// Flush thread: `done` objects of the sweep are written back (or
  /// skipped: taken early by another op).
  void sweep_progress(uint64_t done);
  /// Flush thread: the sweep is over; its seconds per object are kept for
  /// the start of the next one.
  void sweep_finished(double now);
  /// Flush thread: the sweep stopped part way (umount keeps the rest in
  /// the journal): no sweep runs, and its partial rate is not kept.
  void sweep_abandoned();
  /// Sync thread: a sync took `secs` (the checkpoint moves after one).
  void sync_took(double secs);

  /// Seconds the running sweep still needs until its journal space is
  /// free, or a negative value when no sweep runs or nothing is measured.
  double remaining(double now) const;

  /// Submitting thread: how long a transaction of `payload` bytes waits,
  /// with `free` journal bytes left before the limit the sweep must not
  /// cross and `appended` the journal's running count of bytes appended.
  double delay(uint64_t payload, int64_t free, uint64_t appended, double now);

  /// Journal bytes per payload byte, as last measured.
  double journal_ratio() const;

 private:
  double remaining_locked(double now) const MIM_REQUIRES(lock);
  void measure_ratio_locked(uint64_t payload, uint64_t appended)
    MIM_REQUIRES(lock);

  const JournalPacerConfig conf;
  mutable Mutex lock;
  bool sweeping MIM_GUARDED_BY(lock) = false;
  uint64_t total MIM_GUARDED_BY(lock) = 0;  ///< objects in this sweep
  uint64_t done MIM_GUARDED_BY(lock) = 0;
  double started MIM_GUARDED_BY(lock) = 0;
  double last_spo MIM_GUARDED_BY(lock) = -1;  ///< s per object, last sweep
  double last_sync MIM_GUARDED_BY(lock) = 0;
  double next MIM_GUARDED_BY(lock) = 0;  ///< virtual admission clock
  double ratio MIM_GUARDED_BY(lock);
  uint64_t admitted MIM_GUARDED_BY(lock) = 0;  ///< payload since mark
  uint64_t appended_mark MIM_GUARDED_BY(lock) = 0;
  bool have_mark MIM_GUARDED_BY(lock) = false;
};

}  // namespace mim
