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

#include "common/ceph_mutex.h"
#include "include/buffer.h"
#include "include/uuid.h"

#include "JournalDevice.h"
#include "JournalWriter.h"
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

  /// Read `len` bytes at device offset `off` (a payload offset from a
  /// submit() callback plus an offset inside the payload) into `dst`.
  /// -ERANGE if the range is not live (the tail has passed it: a caller
  /// bug), else 0 or the read's error. Synchronous; block-aligned through a
  /// bounce buffer, because the device is opened O_DIRECT.
  int read_extent(uint64_t off, uint64_t len, char* dst);

  uint64_t size() const { return dev.geo().area_len(); }
  uint32_t block_size() const { return dev.block_size(); }
  uint64_t used() const { return writer.used(); }
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
  ceph::mutex header_lock = ceph::make_mutex("MIMJournal::header_lock");
  mim::JournalHeader header;  ///< GUARDED_BY(header_lock)

  // Set by replay(), used by start(). Mount thread only.
  mim::ScanResult replay_result;
  bool replay_result_valid = false;
  uint64_t replay_end_off = 0;
};

}  // namespace mimstore
