// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: byte layout of the write-ahead journal, Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 *
 * The full description, with the rules for validity, wrap, torn tails and
 * generations, is docs/journal-format.md. Short grammar (all integers
 * little-endian, offsets in bytes from the start of the journal):
 *
 *   journal  := slot_a slot_b area
 *   slot_X   := header zero*                      block_size bytes each
 *   header   := magic:u64 version:u32 header_len:u32 fsid:16 generation:u64
 *               block_size:u32 flags:u32 journal_size:u64 header_seq:u64
 *               start_off:u64 start_sn:u64 committed_up_to:u64 crc:u32
 *               (92 bytes; crc = crc32c(0, header[0, header_len - 4)))
 *   area     := [2*block_size, align_down(journal_size, block_size)), circular
 *   batch    := entry+                            starts and ends block aligned
 *   entry    := ehdr payload zero{pad_len}        (48+payload+pad) % 8 == 0
 *   ehdr     := magic:u32 type:u16 flags:u16 sn:u64 generation:u64
 *               committed_up_to:u64 payload_len:u32 pad_len:u32
 *               reserved:u32(=0) crc:u32
 *               (48 bytes; crc = crc32c(crc32c(0, ehdr[0, 44)), payload))
 *   wrap     := ehdr{type=WRAP, payload_len=0, pad_len=block_size-48}
 *               at a block-aligned offset; the next entry is at area start
 *
 * header magic 0x314C4E524A4D494D ("MIMJRNL1"), entry magic 0x454D494D
 * ("MIME"). Header slot for header_seq s is s % 2 (A even, B odd).
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types.h"

namespace mim {

// ---- constants -------------------------------------------------------------

constexpr uint64_t JOURNAL_MAGIC = 0x314C4E524A4D494DULL;  // "MIMJRNL1"
constexpr uint32_t JOURNAL_VERSION = 1;
constexpr uint32_t JOURNAL_HEADER_LEN = 92;  ///< v1 header incl. its crc
constexpr uint32_t JOURNAL_FLAG_CLEAN = 1u << 0;
constexpr uint32_t JOURNAL_KNOWN_FLAGS = JOURNAL_FLAG_CLEAN;
constexpr uint32_t JOURNAL_MIN_BLOCK_SIZE = 512;
constexpr uint32_t JOURNAL_DEFAULT_BLOCK_SIZE = 4096;
/// The largest block size mimstore makes a journal with (the opener looks
/// for a header at every power of two up to this).
constexpr uint32_t JOURNAL_MAX_BLOCK_SIZE = 65536;

constexpr uint32_t ENTRY_MAGIC = 0x454D494D;  // "MIME"
constexpr size_t ENTRY_HEADER_SIZE = 48;
constexpr size_t ENTRY_CRC_OFFSET = 44;       ///< crc is the last u32
constexpr size_t ENTRY_ALIGN = 8;             ///< every entry starts 8-aligned
constexpr uint16_t ENTRY_TXN = 1;
constexpr uint16_t ENTRY_WRAP = 2;

using fsid_t = std::array<uint8_t, 16>;

// ---- header ----------------------------------------------------------------

struct JournalHeader {
  uint32_t version = JOURNAL_VERSION;
  fsid_t fsid{};                 ///< the store's uuid
  uint64_t generation = 0;       ///< salt; new at mkjournal and at every mount
  uint32_t block_size = JOURNAL_DEFAULT_BLOCK_SIZE;
  uint32_t flags = 0;            ///< JOURNAL_FLAG_*
  uint64_t journal_size = 0;     ///< bytes of the file or device in use
  uint64_t header_seq = 0;       ///< +1 at every header write
  uint64_t start_off = 0;        ///< first entry to replay (block aligned)
  sn_t start_sn = 1;             ///< sn expected at start_off (the checkpoint)
  sn_t committed_up_to = 0;      ///< every sn <= this was durable

  bool operator==(const JournalHeader&) const = default;
};

/// Offset of the slot that header_seq is written to: even -> A, odd -> B.
inline uint64_t header_slot_offset(uint64_t header_seq, uint32_t block_size)
{
  return (header_seq & 1) * uint64_t(block_size);
}

/// Write `h` into `slot`, which is h.block_size bytes; everything after the
/// 92 header bytes is zeroed.
/// REQUIRES: h.block_size >= JOURNAL_HEADER_LEN.
void encode_header(const JournalHeader& h, char* slot);

/// Whether the 8 bytes at `p` are the header magic, whatever the rest of the
/// slot holds (valid, torn, another store's): mkjournal replaces no device
/// that has it where a header slot is.
bool has_header_magic(const char* p);

/// Decode and validate one slot of `len` bytes.
/// Returns 0, or
///  -EINVAL          bad magic ("not a mimstore journal") or fields that make
///                   no sense (block size, sizes, start_off); *err says which
///  -EPROTONOSUPPORT unknown version or flags; *err names them
///  -EBADMSG         crc mismatch (e.g. a torn header write)
int decode_header(const char* slot, size_t len, JournalHeader* out,
                  std::string* err);

/// Decode both slots and return the valid one with the highest header_seq.
/// `block_size` is what the caller read the slots with; a valid header that
/// records another block size is refused (*err names it, so the caller can
/// re-read with that size). Both slots valid but for different stores or
/// geometries: -EINVAL (mkjournal must zero both slots before writing).
/// Neither valid: the error of slot A (-EINVAL/-EPROTONOSUPPORT/-EBADMSG)
/// and *err describes both. *which_slot is 0 for A, 1 for B.
int pick_header(const char* slot_a, const char* slot_b, size_t block_size,
                JournalHeader* out, int* which_slot, std::string* err);

// ---- geometry --------------------------------------------------------------

struct JournalGeometry {
  uint32_t block_size = 0;
  uint64_t area_start = 0;       ///< 2 * block_size
  uint64_t area_end = 0;         ///< align_down(journal_size, block_size)

  JournalGeometry() = default;
  JournalGeometry(uint64_t journal_size, uint32_t bs);
  explicit JournalGeometry(const JournalHeader& h)
    : JournalGeometry(h.journal_size, h.block_size) {}

  uint64_t area_len() const { return area_end - area_start; }
  /// The most entries the area holds at once (each takes at least its
  /// header): a bound on the sns live in the journal.
  uint64_t max_live_sns() const { return area_len() / ENTRY_HEADER_SIZE + 1; }
  /// area_end is the same position as area_start (implicit wrap).
  uint64_t normalize(uint64_t off) const {
    return off == area_end ? area_start : off;
  }
};

inline uint64_t area_start(const JournalHeader& h)
{
  return JournalGeometry(h).area_start;
}
inline uint64_t area_end(const JournalHeader& h)
{
  return JournalGeometry(h).area_end;
}

/// Where a batch of `bytes` (a multiple of block_size) goes if the head is
/// at `head`.
struct BatchPlacement {
  uint64_t off = 0;        ///< where the batch is written
  bool wrap = false;       ///< a WRAP block must be written at wrap_off
  uint64_t wrap_off = 0;
  uint64_t consumed = 0;   ///< area bytes used incl. wrap waste
  uint64_t next_head = 0;  ///< head after the batch (normalized)
};

/// -EINVAL if bytes is 0, not block aligned or longer than the area, or
/// head is not a block-aligned offset in [area_start, area_end].
int place_batch(const JournalGeometry& g, uint64_t head, uint64_t bytes,
                BatchPlacement* out);

/// Bytes in use between the replay start `tail` and the write `head`
/// (both in [area_start, area_end]); tail == head means empty.
uint64_t area_used(const JournalGeometry& g, uint64_t tail, uint64_t head);

/// True if [off, off + len) lies in the live part of the area: from `tail`
/// (replay start) up to `head`, going round the wrap. A range that crosses
/// area_end is never live (a batch never spans the wrap). len == 0 is not.
bool area_contains(const JournalGeometry& g, uint64_t tail, uint64_t head,
                   uint64_t off, uint64_t len);

/// True if a batch of `bytes` placed at `head` leaves head != tail, i.e.
/// never overwrites the entry at `tail` nor makes a full area look empty.
bool batch_fits(const JournalGeometry& g, uint64_t tail, uint64_t head,
                uint64_t bytes);

// ---- entries ---------------------------------------------------------------

struct EntryHeader {
  uint16_t type = 0;
  uint16_t flags = 0;
  sn_t sn = 0;
  uint64_t generation = 0;
  sn_t committed_up_to = 0;
  uint32_t payload_len = 0;
  uint32_t pad_len = 0;
  uint32_t reserved = 0;         ///< bytes [40, 44): zero in version 1
  uint32_t crc = 0;
};

/// A payload given as a list of (pointer, length) segments, e.g. the
/// buffers of a Ceph bufferlist.
using Segments = std::vector<std::pair<const char*, size_t>>;

/// Zero bytes that bring an entry with this payload to an 8-byte boundary.
inline uint32_t entry_pad(uint64_t payload_len)
{
  return static_cast<uint32_t>((ENTRY_ALIGN - payload_len % ENTRY_ALIGN) %
                               ENTRY_ALIGN);
}

/// Size of an entry inside a batch (not the last one): 48 + payload + pad.
inline uint64_t entry_size(uint64_t payload_len)
{
  return ENTRY_HEADER_SIZE + payload_len + entry_pad(payload_len);
}

/// Serialize the 48 header bytes as given, crc field included.
void encode_entry_header(const EntryHeader& eh, char* dst);

/// Parse the 48 header bytes. Returns false (and leaves *out alone) if the
/// magic does not match. Does not check the crc.
bool decode_entry_header(const char* src, EntryHeader* out);

/// The entry crc: crc32c over the first 44 header bytes, continued over the
/// payload.
uint32_t entry_crc(const char* ehdr, std::string_view payload);

/// Write header + payload + pad_len zero bytes into dst; returns the bytes
/// written (48 + payload + pad_len).
/// REQUIRES: (48 + payload + pad_len) % 8 == 0, payload < 4 GiB (checked
/// in every build).
size_t encode_entry(char* dst, uint16_t type, sn_t sn, uint64_t generation,
                    sn_t committed_up_to, const Segments& payload,
                    uint32_t pad_len);

/// Write a WRAP entry filling one block: `next_sn` is the sn of the entry
/// that follows at the area start (not consumed). Returns block_size.
size_t encode_wrap(char* dst, uint32_t block_size, uint64_t generation,
                   sn_t next_sn, sn_t committed_up_to);

// ---- batches ---------------------------------------------------------------

/// Packs consecutive TXN entries into one buffer that is ready for an
/// O_DIRECT write: the buffer is block_size aligned (posix_memalign), every
/// entry starts 8-aligned, and the last entry's pad_len runs to the next
/// block boundary so the batch ends block aligned.
///
/// Use: add_txn() for each transaction in sn order, finish(), write the
/// returned bytes at place_batch(...).off, reset() for the next batch. The
/// buffer is reused across reset()s. Not thread-safe.
class BatchEncoder {
 public:
  BatchEncoder(uint32_t block_size, uint64_t generation,
               size_t initial_capacity = 0);
  ~BatchEncoder();
  BatchEncoder(const BatchEncoder&) = delete;
  BatchEncoder& operator=(const BatchEncoder&) = delete;

  /// Append a TXN entry. committed_up_to: the durable prefix of the journal
  /// as of now (see the doc); it may differ between entries of a batch.
  /// Returns where the payload starts, from the start of the batch (the
  /// batch is written unchanged, so + its device offset is where the
  /// payload's bytes will be on the device).
  /// REQUIRES: not finished; sn == last_sn() + 1 unless empty (checked in
  /// every build: a violation aborts).
  uint64_t add_txn(sn_t sn, sn_t committed_up_to, const Segments& payload);
  uint64_t add_txn(sn_t sn, sn_t committed_up_to, std::string_view payload) {
    return add_txn(sn, committed_up_to,
                   Segments{{payload.data(), payload.size()}});
  }

  /// Bytes the batch takes if finished now (a multiple of block_size; 0 if
  /// empty).
  size_t size() const;
  /// Bytes the batch would take after adding one more payload of this size.
  size_t size_with(uint64_t payload_len) const;

  size_t entries() const { return entries_; }
  bool empty() const { return entries_ == 0; }
  sn_t first_sn() const { return first_sn_; }
  sn_t last_sn() const { return last_sn_; }
  uint32_t block_size() const { return block_size_; }
  uint64_t generation() const { return generation_; }

  /// Seal the batch. Returns the block-aligned buffer and its length, a
  /// multiple of block_size. Valid until reset() or destruction.
  /// REQUIRES: !empty().
  std::pair<const char*, size_t> finish();

  /// Start a new batch (optionally with a new generation, after a mount).
  void reset();
  void reset(uint64_t generation) { reset(); generation_ = generation; }

 private:
  void reserve(size_t n);
  void seal_open_entry(uint32_t pad_len);

  // Constant after construction.
  const uint32_t block_size_;

  uint64_t generation_;
  char* buf_ = nullptr;     ///< block_size_ aligned
  size_t cap_ = 0;
  size_t len_ = 0;          ///< used, up to the open entry's payload end
  size_t open_off_ = 0;     ///< offset of the last (unsealed) entry
  size_t entries_ = 0;
  sn_t first_sn_ = 0;
  sn_t last_sn_ = 0;
  bool finished_ = false;
};

}  // namespace mim
