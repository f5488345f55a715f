// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "MIMPerf.h"

#include "common/perf_counters.h"

namespace mimstore {

namespace {

// The journal copy of merged writes (MIMJournalData.cc).
void add_journal_data_counters(PerfCountersBuilder& b)
{
  b.add_u64_counter(l_mimstore_merged_in_journal, "merged_in_journal",
                    "Merged writes whose bytes were located in the journal");
  b.add_u64_counter(l_mimstore_journal_data_verified, "journal_data_verified",
                    "Cached extents compared with their journal copy "
                    "(mimstore_debug_verify_journal_data)");
  b.add_u64_counter(l_mimstore_journal_data_reads, "journal_data_reads",
                    "Cached writes read back from the journal (reads and "
                    "write back; mimstore_merge_data_in_journal)");
  b.add_u64_counter(l_mimstore_journal_data_read_bytes,
                    "journal_data_read_bytes",
                    "Bytes of those reads (whole writes, crc checked)",
                    nullptr, 0, unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_direct_not_in_journal, "direct_not_in_journal",
                    "Writes not cached: their bytes were not found in the "
                    "journal (mimstore_merge_data_in_journal)");
}

// The delays of new transactions (MIMMergeControl.cc, _backoff).
void add_backoff_counters(PerfCountersBuilder& b)
{
  b.add_u64_counter(l_mimstore_backoffs, "backoffs",
                    "Transactions delayed because the journal or the cache is filling");
  b.add_time_avg(l_mimstore_backoff_lat, "backoff_lat",
                 "Delay of a transaction by the backoff");
  b.add_u64_counter(l_mimstore_pace_waits, "pace_waits",
                    "Transactions paced to the journal space a write back "
                    "leaves (mimstore_backoff_pace)");
  b.add_time_avg(l_mimstore_pace_lat, "pace_lat",
                 "Delay of a transaction by the pacing");
}

// The full flushes: what triggered them (MIMMergeControl.cc) and what they
// wrote (MIMFlush.cc).
void add_flush_counters(PerfCountersBuilder& b)
{
  b.add_u64_counter(l_mimstore_flush_space, "flush_space",
                    "Full flushes triggered by the space threshold");
  b.add_u64_counter(l_mimstore_flush_time, "flush_time",
                    "Full flushes triggered by the time threshold");
  b.add_u64_counter(l_mimstore_flush_memory, "flush_memory",
                    "Full flushes triggered by the memory cap");
  b.add_u64_counter(l_mimstore_flush_index, "flush_index",
                    "Full flushes triggered by the index memory budget "
                    "(mimstore_cache_index_max_bytes)");
  b.add_u64_counter(l_mimstore_flush_journal, "flush_journal",
                    "Full flushes triggered by journal pressure");
  b.add_u64_counter(l_mimstore_flush_explicit, "flush_explicit",
                    "Full flushes requested (umount, admin)");
  b.add_time_avg(l_mimstore_flush_lat, "flush_lat",
                 "Duration of a full flush", "flat",
                 PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64_counter(l_mimstore_flush_bytes, "flush_bytes",
                    "Bytes written by full flushes", nullptr, 0,
                    unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_flush_ios, "flush_ios",
                    "Write calls issued by full flushes");
  b.add_u64_counter(l_mimstore_flush_objects, "flush_objects",
                    "Objects written by full flushes");
  b.add_u64_counter(l_mimstore_flush_gaps_filled, "flush_gaps_filled",
                    "Write-back runs joined across gaps, the gaps read from "
                    "the object file");
  b.add_u64_counter(l_mimstore_flush_gaps_uncached, "flush_gaps_uncached",
                    "Write-back runs not joined because a gap was not in "
                    "memory (mimstore_flush_gap_read_disk off)");
  b.add_u64_counter(l_mimstore_flush_objects_placed, "flush_objects_placed",
                    "Objects of full flushes ordered by disk address");
  b.add_u64_counter(l_mimstore_flush_runs_started, "flush_runs_started",
                    "Flush runs handed to the disk (sync_file_range), "
                    "counted when the call returns");
}

}  // namespace

PerfCounters* build_perf_counters(CephContext* cct)
{
  PerfCountersBuilder b(cct, "mimstore", l_mimstore_first, l_mimstore_last);
  b.set_prio_default(PerfCountersBuilder::PRIO_USEFUL);
  b.add_u64_counter(l_mimstore_journal_bytes, "journal_bytes",
                    "Bytes written to the journal", "jwb",
                    PerfCountersBuilder::PRIO_CRITICAL, unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_journal_entries, "journal_entries",
                    "Transactions written to the journal", "jwe",
                    PerfCountersBuilder::PRIO_CRITICAL);
  b.add_u64_counter(l_mimstore_journal_batches, "journal_batches",
                    "Group-commit batches written to the journal");
  b.add_u64_avg(l_mimstore_journal_batch_entries, "journal_batch_entries",
                "Transactions per journal batch");
  b.add_u64_counter(l_mimstore_journal_wrap, "journal_wrap",
                    "Journal wraps");
  b.add_u64_counter(l_mimstore_journal_full_waits, "journal_full_waits",
                    "Batches that waited for journal space");
  b.add_u64(l_mimstore_journal_used_bytes, "journal_used_bytes",
            "Journal bytes between checkpoint and head", "jusd",
            PerfCountersBuilder::PRIO_INTERESTING, unit_t(UNIT_BYTES));
  b.add_u64(l_mimstore_queue_ops, "queue_ops",
            "Transactions queued, not yet applied (queue depth)");
  b.add_u64(l_mimstore_queue_bytes, "queue_bytes",
            "Bytes of transactions queued, not yet applied", nullptr, 0,
            unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_throttle_waits, "throttle_waits",
                    "queue_transactions calls that waited on the throttle");
  b.add_time_avg(l_mimstore_commit_lat, "commit_lat",
                 "Queue to journal-durable latency", "clat",
                 PerfCountersBuilder::PRIO_CRITICAL);
  b.add_time_avg(l_mimstore_apply_lat, "apply_lat",
                 "Queue to applied latency", "alat",
                 PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64_counter(l_mimstore_writeback_bytes, "writeback_bytes",
                    "Bytes written to object files", "wbb",
                    PerfCountersBuilder::PRIO_INTERESTING, unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_writeback_ios, "writeback_ios",
                    "Write calls on object files", "wbio",
                    PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64_counter(l_mimstore_merged, "merged",
                    "Writes merged into the HTMLL", "mrg",
                    PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64_counter(l_mimstore_direct_no_slot, "direct_no_slot",
                    "Writes written back directly: no free HTMLL slot");
  b.add_u64_counter(l_mimstore_direct_no_block, "direct_no_block",
                    "Writes written back directly: collection has no block");
  b.add_u64_counter(l_mimstore_direct_beyond_block, "direct_beyond_block",
                    "Writes written back directly: beyond the block window");
  b.add_u64_counter(l_mimstore_direct_memory_cap, "direct_memory_cap",
                    "Writes written back directly: memory cap reached");
  b.add_u64_counter(l_mimstore_direct_nomerge, "direct_nomerge",
                    "Writes written back directly: merging disabled");
  b.add_u64_counter(l_mimstore_take_object, "take_object",
                    "Objects written back early for a non-merged op");
  b.add_u64_counter(l_mimstore_cache_full_waits, "cache_full_waits",
                    "Transactions that waited for the flush to free cache room");
  add_backoff_counters(b);
  b.add_u64_counter(l_mimstore_wbthrottle_waits, "wbthrottle_waits",
                    "Transactions that waited for a sync of unsynced writeback");
  b.add_u64_counter(l_mimstore_flush_window_waits, "flush_window_waits",
                    "Flush waits for writeback of its oldest run in flight "
                    "(mimstore_flush_writeback_window)");
  add_flush_counters(b);
  b.add_u64(l_mimstore_htmll_blocks, "htmll_blocks",
            "HTMLL blocks in use (active generation)", "hblk",
            PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64(l_mimstore_htmll_bytes, "htmll_bytes",
            "Bytes cached in the HTMLL (both generations)", "hbyt",
            PerfCountersBuilder::PRIO_INTERESTING, unit_t(UNIT_BYTES));
  b.add_u64(l_mimstore_htmll_index_bytes, "htmll_index_bytes",
            "Heap of the HTMLL's index (both generations)", nullptr, 0,
            unit_t(UNIT_BYTES));
  b.add_u64(l_mimstore_merge_ratio, "merge_ratio_x100",
            "Client writes per object-file write call, times 100");
  b.add_time_avg(l_mimstore_sync_lat, "sync_lat",
                 "Duration of a data sync (syncfs + db sync)");
  b.add_u64_counter(l_mimstore_syncs, "syncs", "Data syncs (checkpoints)");
  b.add_u64(l_mimstore_checkpoint_lag_sns, "checkpoint_lag_sns",
            "Transactions between the checkpoint and the newest applied",
            "cplg", PerfCountersBuilder::PRIO_INTERESTING);
  b.add_u64(l_mimstore_checkpoint_lag_bytes, "checkpoint_lag_bytes",
            "Journal bytes held by the checkpoint", nullptr, 0,
            unit_t(UNIT_BYTES));
  b.add_u64_counter(l_mimstore_replayed, "replayed",
                    "Transactions replayed from the journal at mount");
  b.add_u64_counter(l_mimstore_reads_from_cache, "reads_from_cache",
                    "Reads served whole from the merge cache (no file read)");
  b.add_u64_counter(l_mimstore_replay_written_back, "replay_written_back",
                    "Replayed ops skipped: their object was written back "
                    "by a sweep before the stop (WrittenBack.h)");
  b.add_time_avg(l_mimstore_durable_lat, "durable_lat",
                 "Queue to behind the checkpoint: in the object files, "
                 "synced, its journal entry free (1 transaction in 64)");
  b.add_u64_counter(l_mimstore_csum_updates, "csum_updates",
                    "Data checksum batches: one per change of an object's "
                    "data (write, zero, truncate, clone_range, write back)");
  b.add_u64_counter(l_mimstore_csum_rmw_reads, "csum_rmw_reads",
                    "Chunks read before a partial overwrite to check their "
                    "old bytes against their checksum");
  b.add_u64_counter(l_mimstore_csum_bad_marked, "csum_bad_marked",
                    "Chunks whose old bytes failed their checksum before a "
                    "partial overwrite: marked bad (reads give -EIO)");
  b.add_u64_counter(l_mimstore_csum_replay_rebased, "csum_replay_rebased",
                    "Chunks whose checksum replay took from the file's "
                    "bytes (merged writes covering them in part)");
  b.add_u64_counter(l_mimstore_csum_verified, "csum_verified",
                    "Chunks a read checked against their data checksum");
  b.add_u64_counter(l_mimstore_csum_unverified, "csum_unverified",
                    "Chunks a read returned unchecked: written before the "
                    "store kept checksums (a store raised from format 3)");
  b.add_u64_counter(l_mimstore_csum_errors, "csum_errors",
                    "Chunks whose bytes failed their checksum on a read, "
                    "also when read again from the disk: the read returned "
                    "-EIO", "csme", PerfCountersBuilder::PRIO_CRITICAL);
  b.add_u64_counter(l_mimstore_csum_retried_ok, "csum_retried_ok",
                    "Checksum mismatches on a read that a second read from "
                    "the disk cleared (a bad page or transfer)");
  add_journal_data_counters(b);
  return b.create_perf_counters();
}

}  // namespace mimstore
