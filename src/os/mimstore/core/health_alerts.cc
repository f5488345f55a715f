// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the store's health alerts (see health_alerts.h).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/health_alerts.h"

#include <cstdarg>
#include <cstdio>

namespace mim {

namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return buf;
}

}  // namespace

std::vector<HealthAlert> HealthMonitor::update(const HealthSample& s)
{
  std::vector<HealthAlert> out;
  if (!primed) {
    primed = true;
    full_waits_seen = s.journal_full_waits;
    progress_seen = s.progress;
    still_since = s.now;
  }

  // A wait under way, or one begun since the last sample. A counter that
  // went down is a remount's: taken as the new base.
  uint64_t begun = s.journal_full_waits > full_waits_seen
    ? s.journal_full_waits - full_waits_seen : 0;
  full_waits_seen = s.journal_full_waits;
  if (begun || s.journal_waiting > 0) {
    if (!in_episode) {
      full_waits_episode = 0;
      in_episode = true;
    }
    // a wait under way that began before this episode counts once
    full_waits_episode += begun ? begun : (full_waits_episode ? 0 : 1);
    last_full_wait = s.now;
  } else if (in_episode && s.now - last_full_wait >= lim.journal_full_window) {
    in_episode = false;
  }
  if (in_episode) {
    out.push_back({"MIMSTORE_JOURNAL_FULL",
        s.journal_waiting > 0
        ? fmt("writers are waiting for journal room: the journal (%llu MiB) "
              "is full, the write back slower than the clients; a larger "
              "journal, fewer clients per OSD, or a failing data disk?",
              (unsigned long long)(s.journal_size >> 20))
        : fmt("writers waited for journal room %llu time(s) in the last "
              "%.0f s: the journal (%llu MiB) filled, the write back slower "
              "than the clients; a larger journal, fewer clients per OSD, "
              "or a failing data disk?",
              (unsigned long long)full_waits_episode, lim.journal_full_window,
              (unsigned long long)(s.journal_size >> 20))});
  }

  if (s.progress != progress_seen || s.lag_sns == 0) {
    progress_seen = s.progress;
    still_since = s.now;
  }
  if (s.lag_sns && s.now - still_since >= lim.stall_age) {
    out.push_back({"MIMSTORE_WRITEBACK_STALLED",
        fmt("nothing was applied, written back or checkpointed for more "
            "than %.0f s with %llu transactions (%llu MiB of journal) beyond "
            "the checkpoint: the data disk or its filesystem hangs (see the "
            "OSD's log and the kernel's); a restart replays all of them",
            lim.stall_age, (unsigned long long)s.lag_sns,
            (unsigned long long)(s.lag_bytes >> 20))});
  }

  if (s.data_inodes &&
      double(s.data_inodes_free) < lim.inodes_free_ratio * double(s.data_inodes)) {
    out.push_back({"MIMSTORE_DATA_FS_INODES",
        fmt("the data filesystem has under %.0f%% of its inodes free "
            "(%llu of %llu): object creates will fail with ENOSPC while "
            "space is left; raise XFS's inode share (xfs_growfs -m)",
            100 * lim.inodes_free_ratio,
            (unsigned long long)s.data_inodes_free,
            (unsigned long long)s.data_inodes)});
  }

  if (s.db_bytes &&
      double(s.db_bytes_free) < lim.db_free_ratio * double(s.db_bytes)) {
    out.push_back({"MIMSTORE_DB_FS_FULL",
        fmt("the omap DB's filesystem has under %.0f%% free (%llu of %llu "
            "MiB): RocksDB needs room to compact, and omap and xattr "
            "writes stop the OSD when it fills",
            100 * lim.db_free_ratio,
            (unsigned long long)(s.db_bytes_free >> 20),
            (unsigned long long)(s.db_bytes >> 20))});
  }

  if (s.fsck_errors > 0) {
    out.push_back({"MIMSTORE_FSCK_ERRORS",
        fmt("the last fsck (%s) found %lld error(s): on the stopped OSD, "
            "ceph-objectstore-tool --op repair mends those it can and "
            "counts the rest (redeploy the OSD for those)",
            s.fsck_when.empty() ? "time unknown" : s.fsck_when.c_str(),
            (long long)s.fsck_errors)});
  }

  // Not primed by the first sample (an error before it is one all the
  // same): the base is the counter when the monitor was made. One that
  // went down is a new count's.
  uint64_t bad = s.csum_errors > csum_seen ? s.csum_errors - csum_seen : 0;
  csum_seen = s.csum_errors;
  if (bad) {
    if (!csum_episode || s.now - last_csum_error >= lim.csum_error_window) {
      csum_episode = 0;
    }
    csum_episode += bad;
    last_csum_error = s.now;
  } else if (csum_episode && s.now - last_csum_error >= lim.csum_error_window) {
    csum_episode = 0;
  }
  if (csum_episode) {
    out.push_back({"MIMSTORE_CSUM_ERRORS",
        fmt("%llu chunk(s) of data failed their checksum, the last %.0f s "
            "ago (%s): the data disk returns bad data. A read of such a "
            "chunk gets -EIO and the OSD repairs the object from another "
            "copy (a deep scrub marks its PG inconsistent). See the OSD log "
            "(\"checksum error\") and the disk's SMART data; this clears "
            "%.0f s after the last error",
            (unsigned long long)csum_episode, s.now - last_csum_error,
            s.csum_last.empty() ? "last unknown" : s.csum_last.c_str(),
            lim.csum_error_window)});
  }
  return out;
}

}  // namespace mim
