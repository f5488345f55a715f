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

double pct(uint64_t part, uint64_t whole)
{
  return whole ? 100.0 * double(part) / double(whole) : 0;
}

}  // namespace

std::vector<HealthAlert> HealthMonitor::update(const HealthSample& s)
{
  std::vector<HealthAlert> out;
  if (!primed) {
    primed = true;
    full_waits_seen = s.journal_full_waits;
    checkpoint_seen = s.checkpoint_sn;
    checkpoint_still_since = s.now;
  }

  // A counter that went down is a new count (a remount's); take it as is.
  if (s.journal_full_waits != full_waits_seen) {
    const uint64_t n = s.journal_full_waits > full_waits_seen
      ? s.journal_full_waits - full_waits_seen : 0;
    full_waits_seen = s.journal_full_waits;
    if (n) {
      if (!in_episode) {
        full_waits_episode = 0;
      }
      in_episode = true;
      full_waits_episode += n;
      last_full_wait = s.now;
    }
  }
  if (in_episode && s.now - last_full_wait >= lim.journal_full_window) {
    in_episode = false;
  }
  if (in_episode) {
    out.push_back({"MIMSTORE_JOURNAL_FULL",
        fmt("writers waited %llu times for journal room, the last %.0f s ago "
            "(journal %.0f%% used of %llu MiB): the write back is slower "
            "than the clients; a larger journal or fewer clients per OSD",
            (unsigned long long)full_waits_episode, s.now - last_full_wait,
            pct(s.journal_used, s.journal_size),
            (unsigned long long)(s.journal_size >> 20))});
  }

  if (s.checkpoint_sn != checkpoint_seen || s.lag_sns == 0) {
    checkpoint_seen = s.checkpoint_sn;
    checkpoint_still_since = s.now;
  }
  const double still = s.now - checkpoint_still_since;
  if (s.lag_sns && still >= lim.checkpoint_age) {
    out.push_back({"MIMSTORE_WRITEBACK_LAG",
        fmt("the journal's checkpoint has not moved for %.0f s with %llu "
            "transactions (%llu MiB) beyond it: the write back is stalled "
            "or slower than the writes, and a restart now replays all of it",
            still, (unsigned long long)s.lag_sns,
            (unsigned long long)(s.journal_used >> 20))});
  }

  if (s.data_inodes &&
      double(s.data_inodes_free) < lim.inodes_free_ratio * double(s.data_inodes)) {
    out.push_back({"MIMSTORE_DATA_FS_INODES",
        fmt("the data filesystem has %llu of %llu inodes free (%.1f%%): "
            "object creates will fail with ENOSPC before the space is used",
            (unsigned long long)s.data_inodes_free,
            (unsigned long long)s.data_inodes,
            pct(s.data_inodes_free, s.data_inodes))});
  }

  if (s.db_bytes &&
      double(s.db_bytes_free) < lim.db_free_ratio * double(s.db_bytes)) {
    out.push_back({"MIMSTORE_DB_FS_FULL",
        fmt("the DB's filesystem has %llu of %llu MiB free (%.1f%%): omap "
            "and xattr writes stop the OSD when it fills",
            (unsigned long long)(s.db_bytes_free >> 20),
            (unsigned long long)(s.db_bytes >> 20),
            pct(s.db_bytes_free, s.db_bytes))});
  }

  if (s.fsck_errors > 0) {
    out.push_back({"MIMSTORE_FSCK_ERRORS",
        fmt("the last fsck (%s) found %lld errors: run "
            "ceph-objectstore-tool --op fsck on the stopped OSD for the "
            "list, then repair or redeploy it",
            s.fsck_when.empty() ? "time unknown" : s.fsck_when.c_str(),
            (long long)s.fsck_errors)});
  }
  return out;
}

}  // namespace mim
