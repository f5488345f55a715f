// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the write-ahead journal on osd_journal (an NVMe partition or a
 * file). Byte format: core/journal_format.h and docs/journal-format.md.
 *
 * Writing: submit() queues an encoded transaction; the writer thread packs
 * what is queued into one batch (group commit), places it in the circular
 * area (wrapping with a WRAP block), and writes it with O_DIRECT | O_DSYNC,
 * asynchronously (libaio), up to max_inflight batches at once. The reaper
 * thread completes batches in sn order and calls each entry's callback once
 * it is durable.
 *
 * Space: entries between the checkpoint (tail) and the head are live; a
 * batch that does not fit waits until set_checkpoint() moves the tail (an
 * unreclaimed entry is never overwritten). While it waits, the pressure
 * callback asks the store to flush and checkpoint.
 *
 * Locking: `lock` protects the queue, placement, in-flight list and the
 * entry index; `header_lock` serializes header writes and is taken before
 * `lock` when both are needed. Callbacks are called without either lock
 * held.
 */
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/ceph_mutex.h"
#include "include/buffer.h"
#include "include/uuid.h"

#include "JournalDevice.h"
#include "MIMConfig.h"
#include "core/io_env.h"
#include "core/journal_format.h"
#include "core/journal_scanner.h"

#include "include/common_fwd.h"

namespace mimstore {

class MIMJournal {
 public:
  using sn_t = mim::sn_t;
  /// Called once the entry is durable, in sn order, from the reaper thread.
  using Callback = std::function<void()>;

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
  /// Replay from the header's checkpoint, calling apply(sn, payload) for
  /// each entry in order. Refuses (-EIO, message in err) when corruption
  /// hides acknowledged entries, unless ignore_corruption.
  int replay(const std::function<int(sn_t, ceph::bufferlist&)>& apply,
             sn_t* next_sn, std::ostream& err);
  /// After replay, once everything replayed is durable in the data store:
  /// new generation, empty journal starting at next_sn; start the threads.
  int start(sn_t next_sn);
  /// Queue one transaction; never blocks (the writer thread waits for
  /// journal space, the store's throttle bounds the queue).
  void submit(sn_t sn, ceph::bufferlist&& payload, Callback on_durable);
  /// Everything below `checkpoint` is durable elsewhere: persist it in the
  /// header and reclaim the space. Called by the store's sync thread.
  int set_checkpoint(sn_t checkpoint);
  /// Stop the threads (after all submitted entries completed). With
  /// `clean`, the header records that nothing needs replay.
  int close(bool clean);

  /// Set the function the journal calls when it needs space (fill ratio
  /// above mimstore_journal_pressure_ratio, or a batch waiting for room).
  void set_pressure_callback(std::function<void()> f) {
    on_pressure = std::move(f);
  }

  uint64_t size() const { return dev.geo().area_len(); }
  uint64_t used() const;
  /// Bytes from the batch holding `sn` to the head, padding included (all
  /// of used() if sn is older than the tail).
  uint64_t used_since(sn_t sn) const;
  /// Entries between the checkpoint and the head (diagnostics).
  uint64_t live_entries() const {
    std::lock_guard l(lock);
    return index.size();
  }
  /// Human-readable dump of the live entries (ceph-osd --dump-journal).
  int dump(std::ostream& out);

 private:
  struct Pending {
    sn_t sn;
    ceph::bufferlist payload;
    Callback cb;
  };
  struct Batch {
    std::unique_ptr<mim::BatchEncoder> enc;
    const char* buf = nullptr;    ///< the encoded batch (enc's buffer)
    size_t len = 0;
    char* wrap_buf = nullptr;     ///< aligned WRAP block, when wrapping
    std::vector<Callback> cbs;
    sn_t first_sn = 0, last_sn = 0;
    uint64_t off = 0;             ///< where the batch starts
    uint64_t end = 0;             ///< head after it
    int ios_left = 0;             ///< aio completions outstanding
    int error = 0;
    bool done = false;
  };

  void writer_loop();
  // writer_loop's steps. *_locked: REQUIRES lock. issue_batch is entered
  // without it and returns holding it (l).
  std::unique_ptr<Batch> form_batch_locked();
  /// false: a sticky error, nothing more is written.
  bool wait_for_space_locked(std::unique_lock<ceph::mutex>& l, uint64_t len);
  Batch* place_batch_locked(std::unique_ptr<Batch> batch,
                            mim::BatchPlacement* pl, bool* pressure);
  void issue_batch(std::unique_lock<ceph::mutex>& l, Batch* bp,
                   const mim::BatchPlacement& pl);
  void reaper_loop();
  void complete_ready(std::unique_lock<ceph::mutex>& l);

  CephContext* const cct;
  mim::IoEnv* const io;
  const MIMConfig conf;
  PerfCounters* const logger;
  std::function<void()> on_pressure;

  JournalDevice dev;  ///< constant between open() and close(): no lock

  /// Serializes header writes; header is the last header written.
  ceph::mutex header_lock = ceph::make_mutex("MIMJournal::header_lock");
  mim::JournalHeader header;  ///< GUARDED_BY(header_lock)

  /// Protects everything below.
  mutable ceph::mutex lock = ceph::make_mutex("MIMJournal::lock");
  ceph::condition_variable writer_cond;  ///< work queued, space freed, stop
  ceph::condition_variable reaper_cond;  ///< a batch was submitted, stop
  std::deque<Pending> queue;             ///< GUARDED_BY(lock)
  std::deque<std::unique_ptr<Batch>> inflight;  ///< GUARDED_BY(lock) sn order
  uint64_t generation = 0;               ///< GUARDED_BY(lock)
  uint64_t head = 0;                     ///< GUARDED_BY(lock) next write offset
  uint64_t tail = 0;                     ///< GUARDED_BY(lock) replay start
  sn_t committed_up_to = 0;              ///< GUARDED_BY(lock)
  /// Every live entry in sn order, with where its batch starts (replay
  /// must start at a batch, which is block aligned).
  struct IndexEntry {
    sn_t sn;
    uint64_t batch_off;
    sn_t batch_first_sn;
  };
  std::deque<IndexEntry> index;          ///< GUARDED_BY(lock)
  bool stopping = false;                 ///< GUARDED_BY(lock)
  int sticky_error = 0;                  ///< GUARDED_BY(lock)
  bool writer_running = false;           ///< GUARDED_BY(lock) reaper waits for it
  /// Encoders of completed batches, reused. GUARDED_BY(lock)
  std::vector<std::unique_ptr<mim::BatchEncoder>> free_encoders;

  // Set by replay(), used by start(). Mount thread only.
  mim::ScanResult replay_result;
  bool replay_result_valid = false;
  uint64_t replay_end_off = 0;

  std::thread writer;
  std::thread reaper;
};

}  // namespace mimstore
