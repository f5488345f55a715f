// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the write-ahead journal on osd_journal (an NVMe partition or a
 * file). Byte format: core/journal_format.h and docs/journal-format.md.
 *
 * Three parts: JournalDevice (open, geometry, header and synchronous I/O),
 * JournalWriter (the queue, group commit, placement in the circular area,
 * the writer and reaper threads, the pressure signal), and this class, the
 * journal proper: the header and the journal's life (create, open, replay,
 * start, checkpoint, close, dump).
 *
 * Space: entries between the checkpoint (tail) and the head are live; a
 * batch that does not fit waits until set_checkpoint() has written the
 * header with the new tail (an unreclaimed entry is never overwritten).
 *
 * Locking: `header_lock` serializes header writes and is taken before the
 * writer's lock when both are needed (set_checkpoint, close). Callbacks are
 * called without either lock held.
 */
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "include/buffer.h"
#include "include/uuid.h"

#include "JournalDevice.h"
#include "JournalWriter.h"
#include "MIMConfig.h"
#include "core/batch_index.h"
#include "core/io_env.h"
#include "core/journal_format.h"
#include "core/journal_scanner.h"
#include "core/thread_annotations.h"

#include "include/common_fwd.h"

namespace mimstore {

class MIMJournal {
 public:
  using sn_t = mim::sn_t;
  /// Called once the entry is durable, in sn order, from the reaper thread.
  using Callback = JournalWriter::Callback;

  MIMJournal(CephContext* cct, mim::IoEnv* io, const MIMConfig& conf,
             PerfCounters* logger);
  ~MIMJournal();

  /// Make a fresh journal for `fsid` whose replay starts at `start_sn`.
  /// The size is the device's, or osd_journal_size for a file (created or
  /// extended). Refuses a journal smaller than min_journal_bytes().
  int create(const uuid_d& fsid, sn_t start_sn, std::ostream& err);
  /// Measure sequential append throughput (bytes/s) with batch-sized
  /// O_DIRECT writes over the area. Only before the journal holds data.
  int measure_throughput(uint64_t* bytes_per_sec) {
    return dev.measure_throughput(bytes_per_sec);
  }

  /// Open for mount: lock the device, read and check the header (fsid,
  /// version, geometry). `clean` is set if the last unmount was clean.
  int open(const uuid_d& fsid, bool* clean, std::ostream& err);
  /// After an open() that failed: whether the device holds a journal
  /// header, valid or not (JournalDevice::find_header_magic).
  int find_header_magic(bool* found, std::ostream& err) {
    return dev.find_header_magic(found, err);
  }
  /// After an open() that failed with the device open: whether a valid
  /// header of this store's, marked clean, is there all the same.
  bool header_is_clean_of(const uuid_d& fsid);
  /// Called for each replayed entry: its sn, the device offset of its
  /// payload (read_extent() reads there while the entry is live) and the
  /// payload, one contiguous buffer.
  using ApplyFn =
    std::function<int(sn_t sn, uint64_t payload_off, ceph::bufferlist& bl)>;
  /// Scan the live entries without applying them: where a replay ends and
  /// whether start_keeping() can keep them (*keepable). Refuses (-EIO,
  /// message in err) when corruption hides acknowledged entries, unless
  /// ignore_corruption. A clean journal has nothing to keep.
  int check(bool* keepable, std::ostream& err);
  /// Replay from the header's checkpoint, calling apply for each entry in
  /// order. Refuses like check(); after check(), the area beyond the end is
  /// not searched again, and a replay that ends elsewhere is refused.
  int replay(const ApplyFn& apply, sn_t* next_sn, std::ostream& err);
  /// After replay, once everything replayed is durable in the data store:
  /// new generation, empty journal starting at next_sn; start the threads.
  /// next_sn may be above the replay's end (a salvage mount skips the sns
  /// the damaged entries may have applied: MIMStore::_replay_journal).
  int start(sn_t next_sn);
  /// After replay(): the sn the evidence says was durable, and maybe
  /// acknowledged, beyond the replay's end when mount went on past damage
  /// (mimstore_journal_ignore_corruption); 0 when nothing was skipped.
  sn_t replay_skipped_acked_up_to() const {
    return replay_result_valid &&
        replay_result.end == mim::ScanResult::CORRUPT_ACKED
      ? replay_result.acked_up_to : 0;
  }
  /// After replay, REQUIRES: check() found the journal keepable. The
  /// replayed entries stay live (the tail does not move): the writer goes
  /// on in the same generation at the replay's end, after erasing the
  /// entries of batches in flight at a crash that landed beyond it
  /// (docs/journal-format.md "Keeping the window"). Start the threads.
  int start_keeping(sn_t next_sn);
  /// The sn of the first live entry (the header's start_sn): the first sn
  /// a replay would apply.
  sn_t first_live_sn() const {
    mim::MutexLock l(header_lock);
    return header.start_sn;
  }
  /// Queue one transaction; never blocks (the writer thread waits for
  /// journal space, the store's throttle bounds the queue).
  void submit(sn_t sn, ceph::bufferlist&& payload, Callback on_durable) {
    writer.submit(sn, std::move(payload), std::move(on_durable));
  }
  /// Everything below `checkpoint` is durable elsewhere: persist it in the
  /// header and reclaim the space. Called by the store's sync thread.
  int set_checkpoint(sn_t checkpoint);
  /// Stop the threads (after all submitted entries completed). With
  /// `clean`, the header records that nothing needs replay.
  int close(bool clean);

  /// Set the function the journal calls when it needs space (fill ratio
  /// above mimstore_journal_pressure_ratio, or a batch waiting for room).
  void set_pressure_callback(std::function<void()> f) {
    writer.set_pressure_callback(std::move(f));
  }
  /// Tests: the writer's named points (JournalWriter::set_debug_point).
  void set_debug_point(std::function<void(const char*)> f) {
    writer.set_debug_point(std::move(f));
  }

  /// Read `len` bytes at device offset `off` (a payload offset from a
  /// submit() callback plus an offset inside the payload) into `dst`.
  /// -ERANGE if the range is not live (the tail has passed it: a caller
  /// bug), else 0 or the read's error. Synchronous; block-aligned through a
  /// bounce buffer, because the device is opened O_DIRECT.
  int read_extent(uint64_t off, uint64_t len, char* dst);

  uint64_t size() const { return dev.geo().area_len(); }
  /// The most entries the journal holds at once (the checkpoint window).
  uint64_t max_live_sns() const { return dev.geo().max_live_sns(); }
  uint32_t block_size() const { return dev.block_size(); }
  uint64_t used() const { return writer.used(); }
  double space_wait_seconds() const { return writer.space_wait_seconds(); }
  /// Bytes from the batch holding `sn` to the head, padding included (all
  /// of used() if sn is older than the tail).
  uint64_t used_since(sn_t sn) const { return writer.used_since(sn); }
  /// Entries between the checkpoint and the head (diagnostics).
  uint64_t live_entries() const { return writer.live_entries(); }
  uint64_t index_bytes() const { return writer.index_bytes(); }
  /// Human-readable dump of the live entries (ceph-osd --dump-journal).
  int dump(std::ostream& out);

 private:
  CephContext* const cct;
  mim::IoEnv* const io;
  const MIMConfig conf;

  JournalDevice dev;  ///< constant between open() and close(): no lock
  JournalWriter writer;  ///< after dev, which it uses

  /// Serializes header writes; header is the last header written.
  mutable mim::Mutex header_lock;
  mim::JournalHeader header MIM_GUARDED_BY(header_lock);

  /// The end of a scan (check() or replay()) refused or logged; 0 or -EIO.
  int judge_scan_end(const mim::ScanResult& res, std::ostream& err);

  // Set by check() and replay(), used by start*(). Mount thread only.
  mim::ScanResult checked;       ///< check()'s result
  bool checked_valid = false;
  mim::ScanResult replay_result;
  bool replay_result_valid = false;
  uint64_t replay_end_off = 0;
  /// The replayed entries' batches (an entry at a block boundary starts
  /// one: replay can start there), for start_keeping().
  mim::BatchIndex replayed;
  /// During replay(): read_extent() serves the entries being replayed
  /// before the writer knows them. Mount thread only.
  bool replaying = false;
};

}  // namespace mimstore
