// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: replay-side scan of the write-ahead journal, Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/journal_scanner.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

#include "core/io_env.h"

namespace mim {

namespace {

inline uint64_t align_up(uint64_t v, uint64_t a)
{
  return (v + a - 1) / a * a;
}

inline uint64_t align_down(uint64_t v, uint64_t a)
{
  return v / a * a;
}

std::string errstr(int err)
{
  return std::string(strerror(-err)) + " (" + std::to_string(err) + ")";
}

/// A read-ahead window over the entry area. All reads it issues are
/// block-aligned, into a block-aligned buffer, and never cross area_end.
class AreaReader {
 public:
  AreaReader(const JournalGeometry& g, const ReadFn& read_fn, size_t chunk)
    : g_(g), read_fn_(read_fn),
      chunk_(std::max<size_t>(align_up(chunk, g.block_size), g.block_size)) {}

  /// Make [off, off+len) available and point *p at it.
  /// REQUIRES: area_start <= off, off + len <= area_end.
  int get(uint64_t off, size_t len, const char** p, std::string* err) {
    assert(off >= g_.area_start && off + len <= g_.area_end);
    if (off >= win_off_ && off + len <= win_off_ + win_len_) {
      *p = buf_.get() + (off - win_off_);
      return 0;
    }
    uint64_t start = align_down(off, g_.block_size);
    uint64_t end = std::max<uint64_t>(align_up(off + len, g_.block_size),
                                      start + chunk_);
    end = std::min(end, g_.area_end);
    size_t n = end - start;
    if (n > cap_) {
      void* m = nullptr;
      if (posix_memalign(&m, g_.block_size, n) != 0) {
        throw std::bad_alloc();
      }
      buf_.reset(static_cast<char*>(m));
      cap_ = n;
    }
    win_len_ = 0;
    int r = read_fn_(start, n, buf_.get());
    if (r < 0) {
      *err = "journal read of " + std::to_string(n) + " bytes at offset " +
             std::to_string(start) + " failed: " + errstr(r);
      return r;
    }
    win_off_ = start;
    win_len_ = n;
    *p = buf_.get() + (off - win_off_);
    return 0;
  }

 private:
  struct Free {
    void operator()(char* p) const { free(p); }
  };

  const JournalGeometry g_;
  const ReadFn& read_fn_;
  const size_t chunk_;
  std::unique_ptr<char, Free> buf_;
  size_t cap_ = 0;
  uint64_t win_off_ = 0;
  size_t win_len_ = 0;
};

bool all_zero(const char* p, size_t n)
{
  for (size_t i = 0; i < n; ++i) {
    if (p[i]) {
      return false;
    }
  }
  return true;
}

/// Look at every block-aligned offset beyond the live range, from `from`
/// up to the tail (h.start_off), for crc-valid entries of this generation.
/// One whose committed_up_to covers `expected` is evidence that
/// acknowledged data cannot be replayed (returns 1 and fills out for the
/// first). One with sn >= expected was in flight at a crash and landed
/// beyond the end (out->in_flight_offs): a writer that keeps this
/// generation erases it first. The live range [tail, from) is not looked
/// at: every block of it was written in this lap by the replayed entries,
/// so nothing there is evidence, and a block that looks like an entry
/// there (inside a payload) must never be erased. Returns 1 if evidence
/// was found, 0 if not, <0 on error.
int search_beyond_end(const JournalHeader& h, const JournalGeometry& g,
                      AreaReader& rd, uint64_t from, sn_t expected,
                      ScanResult* out)
{
  const uint64_t bs = g.block_size;
  int found = 0;
  uint64_t q = g.normalize(align_up(from, bs));
  const uint64_t n = g.area_len() / bs;
  // from == tail: nothing live, the whole lap is beyond the end.
  const uint64_t blocks =
    q == h.start_off ? n
                     : (h.start_off + g.area_len() - q) % g.area_len() / bs;
  for (uint64_t i = 0; i < blocks; ++i, q = g.normalize(q + bs)) {
    const char* hp;
    int r = rd.get(q, ENTRY_HEADER_SIZE, &hp, &out->detail);
    if (r < 0) {
      return r;
    }
    EntryHeader eh;
    if (!decode_entry_header(hp, &eh) || eh.generation != h.generation ||
        (eh.committed_up_to < expected && eh.sn < expected) ||
        (eh.type != ENTRY_TXN && eh.type != ENTRY_WRAP)) {
      continue;
    }
    uint64_t total = ENTRY_HEADER_SIZE + uint64_t(eh.payload_len) + eh.pad_len;
    if (q + total > g.area_end) {
      continue;
    }
    r = rd.get(q, ENTRY_HEADER_SIZE + eh.payload_len, &hp, &out->detail);
    if (r < 0) {
      return r;
    }
    std::string_view payload(hp + ENTRY_HEADER_SIZE, eh.payload_len);
    if (entry_crc(hp, payload) != eh.crc) {
      continue;
    }
    if (eh.sn >= expected) {
      out->in_flight_offs.push_back(q);
    }
    if (eh.committed_up_to >= expected && !found) {
      out->corrupt_acked_off = q;
      out->corrupt_acked_sn = eh.sn;
      out->acked_up_to = eh.committed_up_to;
      found = 1;
    }
  }
  out->searched_beyond_end = true;
  return found;
}

}  // anonymous namespace

bool keeps_generation(const ScanResult& r, uint32_t block_size)
{
  return r.searched_beyond_end && r.end != ScanResult::CORRUPT_ACKED &&
         !r.stopped_by_callback && r.end_off % block_size == 0;
}

const char* scan_end_name(ScanResult::End e)
{
  switch (e) {
  case ScanResult::CLEAN_END:
    return "clean end";
  case ScanResult::TORN_OR_CORRUPT:
    return "torn or corrupt tail";
  case ScanResult::CORRUPT_ACKED:
    return "corrupt acknowledged data";
  }
  return "?";
}

namespace {

/// Where and why a walk of the entry area stops before the callback does.
struct Stop {
  ScanResult::End end;
  std::string why;
};

/// The checks an entry header passes before its payload is read: this
/// journal's generation (else: old data of an earlier journal) and a length
/// that stays inside the area.
std::optional<Stop> check_header(const JournalHeader& h,
                                 const JournalGeometry& g, uint64_t p,
                                 const EntryHeader& eh)
{
  if (eh.generation != h.generation) {
    return Stop{ScanResult::CLEAN_END,
                "entry of another generation " +
                  std::to_string(eh.generation) +
                  " (old data of an earlier journal on this device)"};
  }
  uint64_t total = ENTRY_HEADER_SIZE + uint64_t(eh.payload_len) + eh.pad_len;
  if (p + total > g.area_end || total % ENTRY_ALIGN != 0) {
    return Stop{ScanResult::TORN_OR_CORRUPT,
                "impossible entry length (payload " +
                  std::to_string(eh.payload_len) + ", pad " +
                  std::to_string(eh.pad_len) + ")"};
  }
  return std::nullopt;
}

/// The checks a whole entry passes: crc, a known type and no unknown
/// flags, the expected sn (a lower one is an earlier lap: the clean end), and
/// for a wrap entry its fixed form.
std::optional<Stop> check_entry(const JournalHeader& h,
                                const JournalGeometry& g, uint64_t p,
                                const EntryHeader& eh, const char* hp,
                                std::string_view payload, sn_t expected)
{
  if (entry_crc(hp, payload) != eh.crc) {
    return Stop{ScanResult::TORN_OR_CORRUPT, "entry crc mismatch"};
  }
  if (eh.type != ENTRY_TXN && eh.type != ENTRY_WRAP) {
    return Stop{ScanResult::TORN_OR_CORRUPT,
                "unknown entry type " + std::to_string(eh.type)};
  }
  if (eh.flags != 0 || eh.reserved != 0) {
    return Stop{ScanResult::TORN_OR_CORRUPT, "unknown entry flags"};
  }
  if (eh.sn < expected) {
    return Stop{ScanResult::CLEAN_END,
                "entry sn " + std::to_string(eh.sn) + " of an earlier lap"};
  }
  if (eh.sn > expected) {
    return Stop{ScanResult::TORN_OR_CORRUPT,
                "entry sn " + std::to_string(eh.sn) + " where sn " +
                  std::to_string(expected) + " was expected"};
  }
  uint64_t total = ENTRY_HEADER_SIZE + uint64_t(eh.payload_len) + eh.pad_len;
  if (eh.type == ENTRY_WRAP &&
      (p % h.block_size != 0 || eh.payload_len != 0 ||
       total != h.block_size || p == g.area_start)) {
    return Stop{ScanResult::TORN_OR_CORRUPT, "malformed wrap entry"};
  }
  return std::nullopt;
}

/// Fills in where and why the walk stopped at offset p, and whether that
/// is short of entries already acknowledged (the header's committed_up_to,
/// or with opts.check_acked a later entry's). The search for those starts
/// at search_from (p, or past a WRAP block the journal ends at).
int finish_scan(const JournalHeader& h, const JournalGeometry& g,
                AreaReader& rd, uint64_t p, uint64_t search_from,
                sn_t expected, const Stop& stop, const ScanOptions& opts,
                ScanResult* out)
{
  out->stop = out->end = stop.end;
  out->end_off = g.normalize(p);
  out->next_sn = expected;
  out->detail = std::string(scan_end_name(stop.end)) + " at offset " +
                std::to_string(out->end_off) + ", sn " +
                std::to_string(expected) + ": " + stop.why;

  // Did we stop short of data that was already durable?
  if (h.committed_up_to >= expected) {
    out->end = ScanResult::CORRUPT_ACKED;
    out->corrupt_acked_off = ScanResult::EVIDENCE_IN_HEADER;
    out->corrupt_acked_sn = 0;
    out->acked_up_to = h.committed_up_to;
  } else if (opts.check_acked) {
    int r = search_beyond_end(h, g, rd, search_from, expected, out);
    if (r < 0) {
      return r;
    }
    if (r > 0) {
      out->end = ScanResult::CORRUPT_ACKED;
    }
  }
  if (out->end == ScanResult::CORRUPT_ACKED) {
    std::string src =
      out->corrupt_acked_off == ScanResult::EVIDENCE_IN_HEADER
        ? std::string("the journal header")
        : "the entry at offset " + std::to_string(out->corrupt_acked_off) +
            " (sn " + std::to_string(out->corrupt_acked_sn) + ")";
    out->detail += "; but " + src + " records that sns up to " +
                   std::to_string(out->acked_up_to) +
                   " were durable: the journal is damaged and sns " +
                   std::to_string(expected) + ".." +
                   std::to_string(out->acked_up_to) +
                   " (possibly acknowledged) cannot be replayed";
  }
  return 0;
}

}  // anonymous namespace

int scan_journal(const JournalHeader& h, const ReadFn& read_fn,
                 const EntryFn& on_entry, ScanResult* out,
                 const ScanOptions& opts)
{
  *out = ScanResult();
  const JournalGeometry g(h);
  const uint64_t bs = h.block_size;
  if (bs < JOURNAL_MIN_BLOCK_SIZE || g.area_len() < 2 * bs ||
      h.start_off < g.area_start || h.start_off >= g.area_end ||
      h.start_off % bs != 0) {
    out->detail = "journal header geometry is not usable";
    return -EINVAL;
  }
  AreaReader rd(g, read_fn, opts.read_chunk);

  uint64_t p = h.start_off;
  sn_t expected = h.start_sn;
  uint64_t consumed = 0;  // area bytes walked, wrap waste included
  // The WRAP entry followed last, while no entry after it was taken.
  std::optional<uint64_t> wrap_off;
  std::optional<Stop> stop;
  while (!stop) {
    if (p == g.area_end) {
      // Implicit wrap: a batch ended exactly at the area end.
      p = g.area_start;
      ++out->wraps;
    }
    if (consumed >= g.area_len()) {
      // Cannot happen with a correct writer (it keeps head != tail); a
      // guard against walking in circles.
      stop = Stop{ScanResult::TORN_OR_CORRUPT,
                  "walked a whole lap of the entry area"};
      break;
    }
    if (p + ENTRY_HEADER_SIZE > g.area_end) {
      // Batches end block aligned, so only a bad length in the previous
      // entry can put us here.
      stop = Stop{ScanResult::TORN_OR_CORRUPT,
                  "entry header would cross the end of the area"};
      break;
    }
    const char* hp;
    int r = rd.get(p, ENTRY_HEADER_SIZE, &hp, &out->detail);
    if (r < 0) {
      out->end_off = p;
      out->next_sn = expected;
      return r;
    }
    EntryHeader eh;
    if (!decode_entry_header(hp, &eh)) {
      stop = Stop{ScanResult::CLEAN_END,
                  all_zero(hp, ENTRY_HEADER_SIZE) ? "zeros"
                                                  : "no entry magic (old data)"};
      break;
    }
    if ((stop = check_header(h, g, p, eh))) {
      break;
    }
    r = rd.get(p, ENTRY_HEADER_SIZE + eh.payload_len, &hp, &out->detail);
    if (r < 0) {
      out->end_off = p;
      out->next_sn = expected;
      return r;
    }
    std::string_view payload(hp + ENTRY_HEADER_SIZE, eh.payload_len);
    if ((stop = check_entry(h, g, p, eh, hp, payload, expected))) {
      break;
    }
    uint64_t total = ENTRY_HEADER_SIZE + uint64_t(eh.payload_len) + eh.pad_len;
    if (eh.type == ENTRY_WRAP) {
      wrap_off = p;
      consumed += g.area_end - p;
      p = g.area_start;
      ++out->wraps;
      continue;
    }
    r = on_entry(eh.sn, p, payload);
    if (r != 0) {
      out->stopped_by_callback = true;
      out->end = out->stop = ScanResult::CLEAN_END;
      out->end_off = p;
      out->next_sn = expected;
      out->detail = "stopped by the entry callback (" + std::to_string(r) +
                    ") at sn " + std::to_string(expected);
      return r;
    }
    ++out->entries;
    ++expected;
    p += total;
    consumed += total;
    wrap_off.reset();
  }
  uint64_t search_from = p;
  if (wrap_off) {
    // The WRAP block and its batch are two writes (docs/journal-format.md,
    // "Edge cases"): a WRAP whose batch did not land is the end of the
    // journal. The next writer starts at the WRAP block and overwrites it;
    // ending at the area start instead would leave the WRAP behind, where
    // a writer keeping this generation would have to erase it, and with it
    // the way from the replayed window to the batches after it.
    stop->why += " (after the wrap entry at offset " +
                 std::to_string(*wrap_off) +
                 ", whose batch did not land: the journal ends there)";
    p = *wrap_off;
    search_from = p + bs;
    --out->wraps;
  }
  return finish_scan(h, g, rd, p, search_from, expected, *stop, opts, out);
}

ReadFn read_fn_for(IoEnv* env, int fd)
{
  return [env, fd](uint64_t off, size_t len, char* buf) -> int {
    ssize_t r = env->pread(fd, buf, len, off);
    if (r < 0) {
      return static_cast<int>(r);
    }
    if (static_cast<size_t>(r) != len) {
      return -ENODATA;
    }
    return 0;
  };
}

JournalHeader header_after_replay(const JournalHeader& h, const ScanResult& r,
                                  uint64_t new_generation)
{
  JournalHeader n = h;
  n.generation = new_generation;
  n.flags &= ~JOURNAL_FLAG_CLEAN;
  n.header_seq = h.header_seq + 1;
  // A batch torn between two of its entries ends the scan inside it, at an
  // 8-aligned offset: the rest of that block was never acknowledged, and
  // batches (so start_off and the writer's head) start block aligned.
  const JournalGeometry g(h);
  n.start_off = g.normalize(align_up(r.end_off, g.block_size));
  n.start_sn = r.next_sn;
  n.committed_up_to = r.next_sn - 1;
  return n;
}

}  // namespace mim
