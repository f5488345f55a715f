// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: options, read once at mkfs/mount and validated.
 *
 * Every mimstore_* option is checked here; a bad value fails mkfs or mount
 * with a message that names the option and says what is allowed, instead
 * of falling back to a default.
 */
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "include/common_fwd.h"

namespace mimstore {

struct MIMConfig {
  // MIM
  bool merge = true;
  uint32_t htmll_slots = 0;
  uint32_t htmll_blocks = 0;
  uint32_t htmll_max_slots = 0;     ///< 0: the table stays at htmll_slots
  uint32_t htmll_max_blocks = 0;    ///< 0: positions stay at htmll_blocks
  uint64_t block_size = 0;
  uint64_t cache_max_bytes = 0;
  uint64_t cache_index_max_bytes = 0;  ///< 0: no index budget
  double max_flush_interval = 0;
  uint64_t journal_throughput = 0;  ///< 0: use the value measured at mkfs
  uint32_t flush_replicas = 0;      ///< resolved: never 0 after load()
  uint32_t flush_nodes = 0;         ///< resolved: never 0 after load()
  uint64_t flush_gap_fill = 0;
  bool flush_gap_read_disk = false;  ///< join gaps not in the page cache too
  bool flush_physical_order = true;

  // journal
  std::string journal_path;
  uint64_t journal_size_mb = 0;     ///< osd_journal_size, for journal files
  bool journal_dio = true;
  bool journal_aio = true;
  uint64_t journal_block_size = 0;  ///< 0: the device's physical block size
  uint64_t journal_max_batch_bytes = 0;
  uint32_t journal_max_batch_entries = 0;
  uint32_t journal_max_inflight = 0;
  double journal_pressure_ratio = 0;
  double backoff_low = 0;
  double backoff_high = 0;
  double backoff_max_delay = 0;   ///< seconds; 0 = off
  bool backoff_pace = false;      ///< JournalPacer while a generation is written back
  double generation_journal_share = 0; ///< of the journal below backoff_high, one generation's
  bool journal_ignore_corruption = false;
  bool journal_lost = false;  ///< mkjournal may replace a non-empty journal

  // apply, sync, backend
  uint64_t wbthrottle_ios = 0;
  uint64_t wbthrottle_bytes = 0;
  uint64_t flush_writeback_window = 0;  ///< bytes; 0 = off
  uint64_t queue_max_ops = 0;
  uint64_t queue_max_bytes = 0;
  double sync_interval = 0;
  double min_sync_interval = 0;
  std::string db_dir;
  std::string rocksdb_options;
  uint64_t db_cache_bytes = 0;
  uint32_t fd_cache_size = 0;
  bool fsck_on_mount = false;
  bool fsck_on_mount_deep = false;

  // health warnings (core/health_alerts.h)
  double warn_journal_full_window = 0;  ///< seconds
  double warn_writeback_stall_age = 0;  ///< seconds beyond time_thresh
  double warn_inodes_free_ratio = 0;    ///< 0: off
  double warn_db_free_ratio = 0;        ///< 0: off
  double warn_csum_error_window = 0;    ///< seconds
  std::string debug_fault;
  bool debug_verify_journal_data = false;
  bool csum_verify = true;
  bool debug_verify_csums = false;
  bool merge_data_in_journal = false;

  /// Read and validate every option. Returns 0, or -EINVAL with one line per
  /// bad option written to `err`.
  static int load(CephContext* cct, const std::string& journal_path,
                  MIMConfig* out, std::ostream& err);
};

/// Smallest journal mimstore accepts, for a given batch size: room for
/// several batches in flight plus the two header blocks.
uint64_t min_journal_bytes(const MIMConfig& c);

}  // namespace mimstore
