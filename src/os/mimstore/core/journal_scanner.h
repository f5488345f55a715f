// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: replay-side scan of the write-ahead journal, Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 *
 * scan_journal() walks the entry area from the header's checkpoint
 * (start_off, start_sn), hands every valid TXN entry to a callback in sn
 * order, and says why it stopped. An entry at offset p is taken iff (see
 * docs/journal-format.md, "When an entry is valid"):
 *   its 48 header bytes lie in the area, magic matches, generation ==
 *   header.generation, 48+payload_len+pad_len is 8-aligned and fits before
 *   the area end, crc matches, type is TXN or WRAP, flags and reserved are
 *   0, sn == the expected sn.
 * Then it checks that the stop is not in the middle of acknowledged data.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/journal_format.h"
#include "core/types.h"

namespace mim {

class IoEnv;

struct ScanResult {
  enum End {
    /// Zeros, data without an entry magic, an entry of another generation
    /// or an entry of an earlier lap (sn < expected): the journal ends here.
    CLEAN_END,
    /// An entry of this generation with a bad crc, impossible lengths,
    /// unknown type/flags or an unexpected sn: a torn tail after a crash.
    /// Normal after a crash; nothing after it is replayed.
    TORN_OR_CORRUPT,
    /// The stop point is before an sn that was already durable (and thus
    /// maybe acknowledged): the header's committed_up_to, or a valid entry
    /// of this generation elsewhere in the area, covers it. Mount must
    /// refuse rather than silently lose acknowledged transactions.
    CORRUPT_ACKED,
  };
  static constexpr uint64_t EVIDENCE_IN_HEADER = UINT64_MAX;

  End end = CLEAN_END;
  End stop = CLEAN_END;      ///< classification of the stop point itself
  uint64_t end_off = 0;      ///< where the scan stopped (normalized): the
                             ///< next entry goes here
  sn_t next_sn = 0;          ///< sn expected at end_off (first not replayed)
  uint64_t entries = 0;      ///< TXN entries handed to on_entry and accepted
  uint64_t wraps = 0;        ///< WRAP entries and implicit wraps followed
  bool stopped_by_callback = false;
  std::string detail;        ///< human-readable reason, for the log

  // Valid if end == CORRUPT_ACKED: the evidence.
  uint64_t corrupt_acked_off = 0;  ///< evidence entry, or EVIDENCE_IN_HEADER
  sn_t corrupt_acked_sn = 0;       ///< evidence entry's sn (0 for header)
  sn_t acked_up_to = 0;            ///< its committed_up_to (>= next_sn)

  /// Whether the area beyond the end was searched (opts.check_acked and
  /// the header's committed_up_to below next_sn), and what it found:
  /// the block-aligned offsets of crc-valid entries of this generation with
  /// sn >= next_sn, from batches that were in flight at a crash and landed
  /// after one that did not. See keeps_generation().
  bool searched_beyond_end = false;
  std::vector<uint64_t> in_flight_offs;
};

/// Whether the next writer may go on in this generation from where the
/// scan ended, so that the replayed entries stay replayable (the window a
/// mount keeps, docs/journal-format.md "Generations"): the area beyond the
/// end was searched, nothing acknowledged is missing, and the end is at a
/// block boundary (a batch torn between two of its entries ends inside a
/// block, where no batch can start). The writer must first erase the
/// entries at in_flight_offs (a zero block at each).
bool keeps_generation(const ScanResult& r, uint32_t block_size);

/// Reads [off, off+len) of the journal into buf. The scanner only asks for
/// block-aligned off and len into a block-aligned buf, so an O_DIRECT fd
/// can be read directly. Returns 0 if all len bytes were read, else -errno
/// (a short read, e.g. a journal file shorter than its header says, must be
/// reported as an error: read_fn_for() uses -ENODATA).
using ReadFn = std::function<int(uint64_t off, size_t len, char* buf)>;

/// Called for each valid TXN entry in sn order; `payload` is valid only
/// during the call. A nonzero return stops the scan (the entry counts as
/// not replayed) and is returned by scan_journal().
using EntryFn =
  std::function<int(sn_t sn, uint64_t off, std::string_view payload)>;

struct ScanOptions {
  size_t read_chunk = 1 << 20;  ///< bytes per read (rounded to blocks)
  /// Look through the whole area for entries proving acknowledged data
  /// beyond the stop point. Reads the whole area once; do not turn off
  /// outside tests and tools.
  bool check_acked = true;
};

/// Scan from h.start_off expecting h.start_sn.
/// Returns 0 when the scan ran to its end (see out->end), a negative errno
/// if a read failed or the header is unusable (out->detail says where; out
/// is then only partly filled), or on_entry's nonzero value
/// (out->stopped_by_callback).
/// The header must come from decode_header()/pick_header().
int scan_journal(const JournalHeader& h, const ReadFn& read_fn,
                 const EntryFn& on_entry, ScanResult* out,
                 const ScanOptions& opts = ScanOptions());

/// A ReadFn over an fd opened through `env` (O_DIRECT or not). A read that
/// returns fewer bytes than asked (end of file) yields -ENODATA.
ReadFn read_fn_for(IoEnv* env, int fd);

const char* scan_end_name(ScanResult::End e);

/// The header to write after a replay once everything replayed is durable
/// in the data store: new generation, replay starts where the scan ended,
/// CLEAN cleared, header_seq + 1, start_off the scan's end rounded up to a
/// block (a torn batch can end the scan between two of its entries). See
/// "Generations" in docs/journal-format.md: without the
/// new generation, entries of an in-flight batch that landed after a torn
/// one could later be replayed as if they were new entries.
JournalHeader header_after_replay(const JournalHeader& h, const ScanResult& r,
                                  uint64_t new_generation);

}  // namespace mim
