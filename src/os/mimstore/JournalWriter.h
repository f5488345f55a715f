// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal's writer. submit() queues an encoded transaction;
 * the writer thread packs what is queued into one batch (group commit),
 * places it in the circular area (wrapping with a WRAP block), and writes
 * it with O_DIRECT | O_DSYNC, asynchronously (libaio), up to max_inflight
 * batches at once. The reaper thread completes batches in sn order and
 * calls each entry's callback once it is durable.
 *
 * Space: entries between the tail (the checkpoint) and the head are live;
 * a batch that does not fit waits until set_tail() moves the tail (an
 * unreclaimed entry is never overwritten). While it waits, and when the
 * area is fuller than mimstore_journal_pressure_ratio, the pressure
 * callback asks the store to flush and checkpoint.
 *
 * The header is not the writer's: MIMJournal writes it, asking trim() where
 * replay would start and calling set_tail() once the header is durable.
 *
 * Locking: `lock` protects everything the threads share (queue, placement,
 * in-flight list, entry index, head and tail). MIMJournal's header_lock is
 * taken before it. Callbacks (on_durable, pressure) run without it. A
 * Batch in `inflight` is also only touched under it (its completion state:
 * ios_left, error, done); the annotations cannot say so for a member of a
 * struct, clang checks the rest (qa/lock-annotations.sh --store).
 */
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "include/buffer.h"

#include "JournalDevice.h"
#include "MIMConfig.h"
#include "core/batch_index.h"
#include "core/io_env.h"
#include "core/journal_format.h"
#include "core/thread_annotations.h"

#include "include/common_fwd.h"

namespace mimstore {

class JournalWriter {
 public:
  using sn_t = mim::sn_t;
  /// Called once the entry is durable, in sn order, from the reaper thread,
  /// with the device offset of the entry's payload (its bytes stay there,
  /// readable with JournalDevice::read_at, until the tail passes them).
  using Callback = std::function<void(uint64_t payload_off)>;

  /// `dev` must be open whenever the writer runs; it outlives the writer.
  JournalWriter(CephContext* cct, mim::IoEnv* io, const MIMConfig& conf,
                PerfCounters* logger, JournalDevice& dev);
  ~JournalWriter();  ///< REQUIRES: stopped (or never started)
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  void set_pressure_callback(std::function<void()> f) {
    on_pressure = std::move(f);
  }
  /// Tests: called at named points of a wrap on the writer thread
  /// ("journal:wrap_submitted" after the WRAP block's write is issued and
  /// before its batch's, "journal:wrap_batch_submitted" after both), so a
  /// crash test can cut power between the two. Set before start().
  void set_debug_point(std::function<void(const char*)> f) {
    debug_point = std::move(f);
  }

  /// Start writing entries of generation `gen` from sn `next_sn` on at
  /// `head`; the entries from `tail` to `head` are live, their batches in
  /// `live` (none when tail == head). Sets up aio and starts the threads.
  int start(uint64_t gen, uint64_t tail, uint64_t head, sn_t next_sn,
            mim::BatchIndex live);
  /// Queue one transaction; never blocks (the writer thread waits for
  /// journal space, the store's throttle bounds the queue).
  void submit(sn_t sn, ceph::bufferlist&& payload, Callback on_durable);
  /// Stop the threads once every submitted entry completed.
  void stop();
  bool running() const { return writer.joinable(); }

  /// Where replay starts once everything below `checkpoint` is durable
  /// elsewhere; entries below it leave the index.
  struct Trim {
    uint64_t new_tail;   ///< the batch holding the checkpoint, or the head
    sn_t start_sn;       ///< that batch's first sn
    sn_t committed_up_to;
  };
  Trim trim(sn_t checkpoint);
  /// The header records the new tail: its space may be reused.
  void set_tail(uint64_t new_tail);
  /// True when nothing written awaits a checkpoint (no live entry, tail at
  /// the head): a clean close may mark the header CLEAN. *committed: the
  /// last durable sn (0 if none was written).
  bool drained(sn_t* committed) const;

  uint64_t used() const;
  /// Seconds the writer has been waiting for room (the journal full), 0
  /// when it is not (the health alert MIMSTORE_JOURNAL_FULL).
  double space_wait_seconds() const {
    const int64_t since = space_wait_since_ns.load();
    return since ? double(now_ns() - since) / 1e9 : 0;
  }
  /// Whether [off, off + len) lies between the tail and the head: written
  /// (or being written) and not reclaimed.
  bool is_live(uint64_t off, uint64_t len) const {
    mim::MutexLock l(lock);
    return mim::area_contains(dev.geo(), tail, head, off, len);
  }
  /// Bytes from the batch holding `sn` to the head, padding included (all
  /// of used() if sn is older than the tail).
  uint64_t used_since(sn_t sn) const;
  /// Entries between the checkpoint and the head (diagnostics).
  uint64_t live_entries() const {
    mim::MutexLock l(lock);
    return index.live_entries();
  }
  /// Heap bytes of the index of live batches (diagnostics).
  uint64_t index_bytes() const {
    mim::MutexLock l(lock);
    return index.bytes();
  }

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
    std::vector<uint64_t> payload_offs;  ///< each entry's, from `off`
    sn_t first_sn = 0, last_sn = 0;
    uint64_t off = 0;             ///< where the batch starts
    uint64_t end = 0;             ///< head after it
    int ios_left = 0;             ///< aio completions outstanding
    int error = 0;
    bool done = false;
  };

  void writer_loop() MIM_EXCLUDES(lock);
  // writer_loop's steps.
  /// Work for the writer: a batch may go, or it is stopping and drained.
  bool writer_has_work_locked() const MIM_REQUIRES(lock);
  std::unique_ptr<Batch> form_batch_locked() MIM_REQUIRES(lock);
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  /// When the current wait for room began (steady clock, ns); 0: none.
  /// Written under the lock, read without it (space_wait_seconds).
  std::atomic<int64_t> space_wait_since_ns{0};
  /// Wait (dropping the lock meanwhile) until `len` bytes fit between the
  /// head and the tail. false: a sticky error, nothing more is written.
  bool wait_for_space_locked(uint64_t len) MIM_REQUIRES(lock);
  Batch* place_batch_locked(std::unique_ptr<Batch> batch,
                            mim::BatchPlacement* pl, bool* pressure)
    MIM_REQUIRES(lock);
  /// Write the placed batch (the wrap block first): synchronously, or
  /// submitted to aio for the reaper. Without the lock: bp is in
  /// `inflight` and not done, so nothing frees it meanwhile.
  void issue_batch(Batch* bp, const mim::BatchPlacement& pl)
    MIM_EXCLUDES(lock);
  void reaper_loop() MIM_EXCLUDES(lock);
  /// One of bp's writes ended with `res` (< 0: its error).
  void io_finished_locked(Batch* bp, int64_t res) MIM_REQUIRES(lock);
  /// Complete the finished batches at the front, in sn order; callbacks
  /// run with the lock dropped. Called by one thread only (the reaper
  /// with aio, else the writer), or callbacks could overlap.
  void complete_ready() MIM_REQUIRES(lock);

  CephContext* const cct;
  mim::IoEnv* const io;
  const MIMConfig& conf;  ///< MIMJournal's copy
  PerfCounters* const logger;
  JournalDevice& dev;
  std::function<void()> on_pressure;  ///< set before start()
  std::function<void(const char*)> debug_point;  ///< set before start()

  /// Protects everything below.
  mutable mim::Mutex lock;
  std::condition_variable writer_cond;  ///< work queued, space freed, stop
  std::condition_variable reaper_cond;  ///< a batch was submitted, stop
  std::deque<Pending> queue MIM_GUARDED_BY(lock);
  /// In sn order.
  std::deque<std::unique_ptr<Batch>> inflight MIM_GUARDED_BY(lock);
  uint64_t generation MIM_GUARDED_BY(lock) = 0;
  uint64_t head MIM_GUARDED_BY(lock) = 0;  ///< next write offset
  uint64_t tail MIM_GUARDED_BY(lock) = 0;  ///< replay start
  sn_t committed_up_to MIM_GUARDED_BY(lock) = 0;
  /// The live entries, a record per batch: where each sn's batch starts
  /// (replay must start at a batch, which is block aligned).
  mim::BatchIndex index MIM_GUARDED_BY(lock);
  bool stopping MIM_GUARDED_BY(lock) = false;
  int sticky_error MIM_GUARDED_BY(lock) = 0;
  /// The reaper stops only after the writer.
  bool writer_running MIM_GUARDED_BY(lock) = false;
  /// Encoders of completed batches, reused.
  std::vector<std::unique_ptr<mim::BatchEncoder>> free_encoders
    MIM_GUARDED_BY(lock);

  std::thread writer;
  std::thread reaper;
};

}  // namespace mimstore
