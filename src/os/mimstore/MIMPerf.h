// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's perf counters: the indices (l_mimstore_*, shared by the store,
 * the journal and the tests) and the one place that names and describes
 * them. The names are an interface ("ceph daemon osd.N perf dump"), so
 * they never change; new counters go before l_mimstore_last.
 */
#pragma once

#include "include/common_fwd.h"

enum {
  l_mimstore_first = 933000,
  l_mimstore_journal_bytes,
  l_mimstore_journal_entries,
  l_mimstore_journal_batches,
  l_mimstore_journal_batch_entries,   ///< average entries per batch
  l_mimstore_journal_wrap,
  l_mimstore_journal_full_waits,      ///< submits that waited for journal space
  l_mimstore_journal_used_bytes,
  l_mimstore_queue_ops,               ///< queued, not yet applied
  l_mimstore_queue_bytes,
  l_mimstore_throttle_waits,
  l_mimstore_commit_lat,              ///< queue -> journal durable
  l_mimstore_apply_lat,               ///< queue -> applied
  l_mimstore_writeback_bytes,
  l_mimstore_writeback_ios,
  l_mimstore_merged,
  l_mimstore_direct_no_slot,
  l_mimstore_direct_no_block,
  l_mimstore_direct_beyond_block,
  l_mimstore_direct_memory_cap,
  l_mimstore_direct_nomerge,          ///< writes with mimstore_merge = false
  l_mimstore_take_object,             ///< non-write op flushed an object early
  l_mimstore_cache_full_waits,        ///< transactions that waited for cache room
  l_mimstore_backoffs,        ///< transactions delayed: journal or cache filling
  l_mimstore_backoff_lat,     ///< their delay
  l_mimstore_pace_waits,      ///< transactions paced to the journal space a write back leaves
  l_mimstore_pace_lat,        ///< their delay
  l_mimstore_wbthrottle_waits,        ///< transactions that waited for a sync
  l_mimstore_flush_window_waits,      ///< flush waits for its oldest in-flight run
  l_mimstore_flush_space,
  l_mimstore_flush_time,
  l_mimstore_flush_memory,
  l_mimstore_flush_index,             ///< frozen for the index budget
  l_mimstore_flush_journal,
  l_mimstore_flush_explicit,
  l_mimstore_flush_lat,
  l_mimstore_flush_bytes,
  l_mimstore_flush_ios,
  l_mimstore_flush_objects,
  l_mimstore_flush_gaps_filled,      ///< runs written whole, their gaps read
  l_mimstore_flush_gaps_uncached,    ///< runs split: a gap was not in memory
  l_mimstore_htmll_blocks,
  l_mimstore_htmll_bytes,
  l_mimstore_htmll_index_bytes,       ///< the index's heap, both generations
  l_mimstore_merge_ratio,             ///< client writes per data write I/O, x100
  l_mimstore_sync_lat,
  l_mimstore_syncs,
  l_mimstore_checkpoint_lag_sns,
  l_mimstore_checkpoint_lag_bytes,
  l_mimstore_replayed,
  l_mimstore_reads_from_cache,        ///< reads the merge cache covered whole
  l_mimstore_flush_objects_placed,    ///< flushed in disk-address order
  l_mimstore_flush_runs_started,      ///< runs handed to the disk (writeback window)
  l_mimstore_merged_in_journal,       ///< merged writes located in the journal
  l_mimstore_journal_data_verified,   ///< extents checked against the journal
  l_mimstore_journal_data_reads,      ///< cached bytes read back from the journal
  l_mimstore_journal_data_read_bytes,
  l_mimstore_direct_not_in_journal,   ///< could not be kept in the journal
  l_mimstore_replay_written_back,     ///< replayed ops a written-back record skipped
  l_mimstore_durable_lat,             ///< queue -> behind the checkpoint (sampled)
  l_mimstore_csum_updates,            ///< checksum batches (one per change)
  l_mimstore_csum_rmw_reads,          ///< old chunks read to verify a partial overwrite
  l_mimstore_csum_bad_marked,         ///< chunks found rotten and marked bad
  l_mimstore_csum_replay_rebased,     ///< chunks whose state replay took from the file
  l_mimstore_csum_verified,           ///< chunks a read checked
  l_mimstore_csum_unverified,         ///< chunks a read could not check (no state)
  l_mimstore_csum_errors,             ///< chunks a read found wrong: -EIO
  l_mimstore_csum_retried_ok,         ///< mismatches a read from the disk cleared
  l_mimstore_last
};

namespace mimstore {

/// A new "mimstore" counter set, every counter described; not yet added
/// to cct's collection (the caller adds it at each mount).
PerfCounters* build_perf_counters(CephContext* cct);

}  // namespace mimstore
