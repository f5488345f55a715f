// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the store's health alerts, the warnings `ceph health detail`
 * shows for an OSD (MIMSTORE_*), decided from what the store samples at
 * each statfs (the OSD asks once per tick and reports the alerts with its
 * statistics; the mgr turns each key into a health check).
 *
 *   MIMSTORE_JOURNAL_FULL       writers are waiting for journal room (the
 *                               journal is full), or waited within the
 *                               last journal_full_window seconds: the
 *                               write back is slower than the clients
 *   MIMSTORE_WRITEBACK_STALLED  nothing was applied, written back or
 *                               checkpointed for stall_age seconds while
 *                               transactions lie beyond the checkpoint:
 *                               the data disk or its filesystem hangs,
 *                               and a restart would replay all of them
 *   MIMSTORE_DATA_FS_INODES     the data filesystem's free inodes below
 *                               inodes_free_ratio (free space is the
 *                               OSD's own OSD_NEARFULL/FULL)
 *   MIMSTORE_DB_FS_FULL         the DB's own filesystem (mimstore_db_dir
 *                               on another device) below db_free_ratio
 *                               free: omap and xattr writes would fail
 *   MIMSTORE_FSCK_ERRORS        the last fsck (at mount, or
 *                               ceph-objectstore-tool's) found errors;
 *                               cleared by a clean one
 *   MIMSTORE_CSUM_ERRORS        reads found data that failed its checksum
 *                               (-EIO; the OSD repaired it from a peer)
 *                               within the last csum_error_window seconds:
 *                               the data disk returns bad data
 *
 * Each alert is a level (it clears when its cause goes) except
 * MIMSTORE_JOURNAL_FULL and MIMSTORE_CSUM_ERRORS, kept for a window after
 * the last wait or error. The
 * messages change only when what they report changes (not every tick).
 *
 * Not thread-safe: one caller (the store serializes statfs).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mim {

/// What the store reads at one statfs.
struct HealthSample {
  double now = 0;                   ///< seconds, monotonic clock
  uint64_t journal_full_waits = 0;  ///< counter: waits for journal room begun
  double journal_waiting = 0;       ///< seconds the current wait has lasted; 0: none
  uint64_t journal_size = 0;
  uint64_t lag_sns = 0;             ///< transactions given an sn, not yet durable
  uint64_t lag_bytes = 0;           ///< the journal they take
  /// Any count that moves while the store makes progress towards the
  /// checkpoint: the checkpoint itself, transactions applied, write-back
  /// I/Os done.
  uint64_t progress = 0;
  uint64_t data_inodes = 0;         ///< f_files of the data filesystem; 0: not reported
  uint64_t data_inodes_free = 0;    ///< f_ffree
  uint64_t db_bytes = 0;            ///< the DB's filesystem, if its own; 0: none
  uint64_t db_bytes_free = 0;       ///< f_bavail * f_frsize
  int64_t fsck_errors = -1;         ///< the last fsck's errors; -1: none recorded
  std::string fsck_when;            ///< when it ran, and its kind (for the message)
  uint64_t csum_errors = 0;         ///< counter: chunks reads found bad
  std::string csum_last;            ///< the last one (object, bytes), for the message
};

struct HealthLimits {
  double journal_full_window = 600;  ///< s
  double stall_age = 120;            ///< s
  double inodes_free_ratio = 0.05;
  double db_free_ratio = 0.15;
  double csum_error_window = 86400;  ///< s
};

struct HealthAlert {
  std::string key;      ///< the health check's name
  std::string message;  ///< one line of `ceph health detail`
  bool operator==(const HealthAlert&) const = default;
};

class HealthMonitor {
 public:
  /// csum_errors_base: the checksum error counter when the monitor is
  /// made (a store's counters outlive a remount in one process).
  explicit HealthMonitor(const HealthLimits& l, uint64_t csum_errors_base = 0)
    : lim(l), csum_seen(csum_errors_base) {}
  /// The alerts that hold at s.now, in the order of the table above.
  /// Samples come in time order; the first one only primes the counters
  /// (waits before it were counted by an earlier mount).
  std::vector<HealthAlert> update(const HealthSample& s);

 private:
  const HealthLimits lim;
  bool primed = false;
  uint64_t full_waits_seen = 0;
  /// Waits begun since the episode's first, and when one was last seen.
  uint64_t full_waits_episode = 0;
  double last_full_wait = 0;
  bool in_episode = false;
  /// The progress count last seen, and since when it has not moved with
  /// transactions beyond the checkpoint.
  uint64_t progress_seen = 0;
  double still_since = 0;
  /// Checksum errors: the counter last seen, those since the episode
  /// began, and when the last was seen.
  uint64_t csum_seen = 0;
  uint64_t csum_episode = 0;
  double last_csum_error = 0;
};

}  // namespace mim
