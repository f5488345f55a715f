// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: byte layout of the write-ahead journal, Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/journal_format.h"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/crc32c.h"

namespace mim {

namespace {

// Always on, like ceph_assert: for caller contract violations that would
// otherwise put a corrupt entry into the journal. Internal invariants use
// assert().
#define JOURNAL_CHECK(cond)                                               \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,         \
                   __LINE__, #cond);                                      \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

// ---- explicit little-endian packing (no struct memcpy) ----

inline void put_u16(char* p, uint16_t v)
{
  p[0] = char(v);
  p[1] = char(v >> 8);
}

inline void put_u32(char* p, uint32_t v)
{
  for (int i = 0; i < 4; ++i) {
    p[i] = char(v >> (8 * i));
  }
}

inline void put_u64(char* p, uint64_t v)
{
  for (int i = 0; i < 8; ++i) {
    p[i] = char(v >> (8 * i));
  }
}

inline uint16_t get_u16(const char* p)
{
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint16_t(u[0] | (u[1] << 8));
}

inline uint32_t get_u32(const char* p)
{
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | u[i];
  }
  return v;
}

inline uint64_t get_u64(const char* p)
{
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | u[i];
  }
  return v;
}

inline bool is_pow2(uint64_t v)
{
  return v != 0 && (v & (v - 1)) == 0;
}

inline uint64_t align_up(uint64_t v, uint64_t a)
{
  return (v + a - 1) / a * a;
}

// Header field offsets.
constexpr size_t H_MAGIC = 0;
constexpr size_t H_VERSION = 8;
constexpr size_t H_HEADER_LEN = 12;
constexpr size_t H_FSID = 16;
constexpr size_t H_GENERATION = 32;
constexpr size_t H_BLOCK_SIZE = 40;
constexpr size_t H_FLAGS = 44;
constexpr size_t H_JOURNAL_SIZE = 48;
constexpr size_t H_HEADER_SEQ = 56;
constexpr size_t H_START_OFF = 64;
constexpr size_t H_START_SN = 72;
constexpr size_t H_COMMITTED = 80;
constexpr size_t H_CRC = 88;
static_assert(H_CRC + 4 == JOURNAL_HEADER_LEN);

// Entry header field offsets.
constexpr size_t E_MAGIC = 0;
constexpr size_t E_TYPE = 4;
constexpr size_t E_FLAGS = 6;
constexpr size_t E_SN = 8;
constexpr size_t E_GENERATION = 16;
constexpr size_t E_COMMITTED = 24;
constexpr size_t E_PAYLOAD_LEN = 32;
constexpr size_t E_PAD_LEN = 36;
constexpr size_t E_CRC = 40 + 4;
static_assert(E_CRC == ENTRY_CRC_OFFSET);
static_assert(E_CRC + 4 == ENTRY_HEADER_SIZE);
static_assert(ENTRY_HEADER_SIZE % ENTRY_ALIGN == 0);

// E_PAD_LEN + 4 == 40: bytes [40, 44) are reserved and always zero; they
// keep the crc at the end of a 48-byte (8-aligned) header.
constexpr size_t E_RESERVED = 40;

}  // anonymous namespace

// ---- header ----------------------------------------------------------------

void encode_header(const JournalHeader& h, char* slot)
{
  JOURNAL_CHECK(h.block_size >= JOURNAL_HEADER_LEN);
  std::memset(slot, 0, h.block_size);
  put_u64(slot + H_MAGIC, JOURNAL_MAGIC);
  put_u32(slot + H_VERSION, h.version);
  put_u32(slot + H_HEADER_LEN, JOURNAL_HEADER_LEN);
  std::memcpy(slot + H_FSID, h.fsid.data(), h.fsid.size());
  put_u64(slot + H_GENERATION, h.generation);
  put_u32(slot + H_BLOCK_SIZE, h.block_size);
  put_u32(slot + H_FLAGS, h.flags);
  put_u64(slot + H_JOURNAL_SIZE, h.journal_size);
  put_u64(slot + H_HEADER_SEQ, h.header_seq);
  put_u64(slot + H_START_OFF, h.start_off);
  put_u64(slot + H_START_SN, h.start_sn);
  put_u64(slot + H_COMMITTED, h.committed_up_to);
  put_u32(slot + H_CRC, crc32c(0, slot, H_CRC));
}

bool has_header_magic(const char* p)
{
  return get_u64(p + H_MAGIC) == JOURNAL_MAGIC;
}

int decode_header(const char* slot, size_t len, JournalHeader* out,
                  std::string* err)
{
  std::string scratch;
  std::string& e = err ? *err : scratch;
  if (len < 16 || !has_header_magic(slot)) {
    e = "not a mimstore journal (bad header magic)";
    return -EINVAL;
  }
  uint32_t version = get_u32(slot + H_VERSION);
  if (version != JOURNAL_VERSION) {
    e = "unsupported journal version " + std::to_string(version) +
        " (this build reads version " + std::to_string(JOURNAL_VERSION) + ")";
    return -EPROTONOSUPPORT;
  }
  // Version 1 fixes the header length; check the crc over that length
  // first, so a torn or garbled header reads as a crc mismatch rather than
  // as a strange length.
  if (len < JOURNAL_HEADER_LEN) {
    e = "journal header slot too short (" + std::to_string(len) + " bytes)";
    return -EINVAL;
  }
  uint32_t stored = get_u32(slot + H_CRC);
  uint32_t actual = crc32c(0, slot, H_CRC);
  if (stored != actual) {
    char buf[96];
    snprintf(buf, sizeof(buf),
             "journal header crc mismatch (stored 0x%08x, computed 0x%08x)",
             stored, actual);
    e = buf;
    return -EBADMSG;
  }
  uint32_t header_len = get_u32(slot + H_HEADER_LEN);
  if (header_len != JOURNAL_HEADER_LEN) {
    e = "bad journal header length " + std::to_string(header_len) +
        " (version 1 headers are " + std::to_string(JOURNAL_HEADER_LEN) +
        " bytes)";
    return -EINVAL;
  }
  JournalHeader h;
  h.version = version;
  std::memcpy(h.fsid.data(), slot + H_FSID, h.fsid.size());
  h.generation = get_u64(slot + H_GENERATION);
  h.block_size = get_u32(slot + H_BLOCK_SIZE);
  h.flags = get_u32(slot + H_FLAGS);
  h.journal_size = get_u64(slot + H_JOURNAL_SIZE);
  h.header_seq = get_u64(slot + H_HEADER_SEQ);
  h.start_off = get_u64(slot + H_START_OFF);
  h.start_sn = get_u64(slot + H_START_SN);
  h.committed_up_to = get_u64(slot + H_COMMITTED);

  if (h.flags & ~JOURNAL_KNOWN_FLAGS) {
    char buf[80];
    snprintf(buf, sizeof(buf), "unsupported journal header flags 0x%x",
             h.flags & ~JOURNAL_KNOWN_FLAGS);
    e = buf;
    return -EPROTONOSUPPORT;
  }
  if (!is_pow2(h.block_size) || h.block_size < JOURNAL_MIN_BLOCK_SIZE) {
    e = "bad journal block size " + std::to_string(h.block_size);
    return -EINVAL;
  }
  // Two header blocks plus at least two blocks of entry area (one batch and
  // the block that must stay free so head != tail).
  JournalGeometry g(h.journal_size, h.block_size);
  if (h.journal_size / h.block_size < 4) {
    e = "journal size " + std::to_string(h.journal_size) +
        " too small for block size " + std::to_string(h.block_size);
    return -EINVAL;
  }
  if (h.start_off % h.block_size != 0 || h.start_off < g.area_start ||
      h.start_off >= g.area_end) {
    e = "journal start offset " + std::to_string(h.start_off) +
        " outside the entry area [" + std::to_string(g.area_start) + ", " +
        std::to_string(g.area_end) + ") or not block aligned";
    return -EINVAL;
  }
  if (h.start_sn == 0) {
    e = "journal start sn is 0 (sns start at 1)";
    return -EINVAL;
  }
  *out = h;
  return 0;
}

int pick_header(const char* slot_a, const char* slot_b, size_t block_size,
                JournalHeader* out, int* which_slot, std::string* err)
{
  const char* slots[2] = {slot_a, slot_b};
  JournalHeader h[2];
  int r[2];
  std::string why[2];
  for (int i = 0; i < 2; ++i) {
    r[i] = decode_header(slots[i], block_size, &h[i], &why[i]);
    if (r[i] == 0 && h[i].block_size != block_size) {
      why[i] = "header records block size " +
               std::to_string(h[i].block_size) + ", read with " +
               std::to_string(block_size);
      r[i] = -EINVAL;
    }
    if (r[i] == 0 && (h[i].header_seq & 1) != uint64_t(i)) {
      // Invariant: header_seq s is only ever written to slot s % 2.
      why[i] = "header_seq " + std::to_string(h[i].header_seq) +
               " found in the wrong slot (misdirected write?)";
      r[i] = -EINVAL;
    }
  }
  std::string scratch;
  std::string& e = err ? *err : scratch;
  if (r[0] != 0 && r[1] != 0) {
    e = "no valid journal header: slot A: " + why[0] + "; slot B: " + why[1];
    return r[0];
  }
  int pick;
  if (r[0] == 0 && r[1] == 0) {
    if (h[0].fsid != h[1].fsid || h[0].journal_size != h[1].journal_size ||
        h[0].block_size != h[1].block_size) {
      e = "journal header slots A and B belong to different journals "
          "(fsid or geometry differ); was mkjournal interrupted?";
      return -EINVAL;
    }
    pick = h[1].header_seq > h[0].header_seq ? 1 : 0;
    e.clear();
  } else {
    pick = r[0] == 0 ? 0 : 1;
    e = std::string("using slot ") + (pick == 0 ? "A" : "B") +
        "; the other slot is not valid: " + why[1 - pick];
  }
  *out = h[pick];
  if (which_slot) {
    *which_slot = pick;
  }
  return 0;
}

// ---- geometry --------------------------------------------------------------

JournalGeometry::JournalGeometry(uint64_t journal_size, uint32_t bs)
  : block_size(bs),
    area_start(2 * uint64_t(bs)),
    area_end(bs ? journal_size / bs * bs : 0)
{
  if (area_end < area_start) {
    area_end = area_start;
  }
}

int place_batch(const JournalGeometry& g, uint64_t head, uint64_t bytes,
                BatchPlacement* out)
{
  const uint64_t bs = g.block_size;
  if (bytes == 0 || bytes % bs != 0 || bytes > g.area_len() ||
      head % bs != 0 || head < g.area_start || head > g.area_end) {
    return -EINVAL;
  }
  BatchPlacement p;
  head = g.normalize(head);  // exactly at the end: implicit wrap, no waste
  if (head + bytes <= g.area_end) {
    p.off = head;
    p.consumed = bytes;
  } else {
    // Invariant: head < area_end and both are block aligned, so a one-block
    // WRAP entry always fits at head.
    assert(head + bs <= g.area_end);
    p.wrap = true;
    p.wrap_off = head;
    p.off = g.area_start;
    p.consumed = (g.area_end - head) + bytes;
  }
  p.next_head = g.normalize(p.off + bytes);
  *out = p;
  return 0;
}

uint64_t area_used(const JournalGeometry& g, uint64_t tail, uint64_t head)
{
  tail = g.normalize(tail);
  head = g.normalize(head);
  if (head >= tail) {
    return head - tail;
  }
  return g.area_len() - (tail - head);
}

bool area_contains(const JournalGeometry& g, uint64_t tail, uint64_t head,
                   uint64_t off, uint64_t len)
{
  if (len == 0 || off < g.area_start || off >= g.area_end ||
      len > g.area_end - off) {
    return false;
  }
  tail = g.normalize(tail);
  head = g.normalize(head);
  const uint64_t end = off + len;
  if (tail <= head) {  // tail == head: empty
    return tail <= off && end <= head;
  }
  return (tail <= off) || (end <= head);  // [tail, area_end) or [start, head)
}

bool batch_fits(const JournalGeometry& g, uint64_t tail, uint64_t head,
                uint64_t bytes)
{
  BatchPlacement p;
  if (place_batch(g, head, bytes, &p) != 0) {
    return false;
  }
  // Strictly less: a completely full area would have head == tail, which
  // reads as empty.
  return area_used(g, tail, head) + p.consumed < g.area_len();
}

// ---- entries ---------------------------------------------------------------

void encode_entry_header(const EntryHeader& eh, char* dst)
{
  put_u32(dst + E_MAGIC, ENTRY_MAGIC);
  put_u16(dst + E_TYPE, eh.type);
  put_u16(dst + E_FLAGS, eh.flags);
  put_u64(dst + E_SN, eh.sn);
  put_u64(dst + E_GENERATION, eh.generation);
  put_u64(dst + E_COMMITTED, eh.committed_up_to);
  put_u32(dst + E_PAYLOAD_LEN, eh.payload_len);
  put_u32(dst + E_PAD_LEN, eh.pad_len);
  put_u32(dst + E_RESERVED, eh.reserved);
  put_u32(dst + E_CRC, eh.crc);
}

bool decode_entry_header(const char* src, EntryHeader* out)
{
  if (get_u32(src + E_MAGIC) != ENTRY_MAGIC) {
    return false;
  }
  out->type = get_u16(src + E_TYPE);
  out->flags = get_u16(src + E_FLAGS);
  out->sn = get_u64(src + E_SN);
  out->generation = get_u64(src + E_GENERATION);
  out->committed_up_to = get_u64(src + E_COMMITTED);
  out->payload_len = get_u32(src + E_PAYLOAD_LEN);
  out->pad_len = get_u32(src + E_PAD_LEN);
  out->reserved = get_u32(src + E_RESERVED);
  out->crc = get_u32(src + E_CRC);
  return true;
}

uint32_t entry_crc(const char* ehdr, std::string_view payload)
{
  uint32_t c = crc32c(0, ehdr, ENTRY_CRC_OFFSET);
  return crc32c(c, payload.data(), payload.size());
}

size_t encode_entry(char* dst, uint16_t type, sn_t sn, uint64_t generation,
                    sn_t committed_up_to, const Segments& payload,
                    uint32_t pad_len)
{
  uint64_t plen = 0;
  for (const auto& s : payload) {
    plen += s.second;
  }
  JOURNAL_CHECK(plen <= UINT32_MAX);
  // Entries start 8-aligned, so each one must end 8-aligned.
  JOURNAL_CHECK((ENTRY_HEADER_SIZE + plen + pad_len) % ENTRY_ALIGN == 0);
  EntryHeader eh;
  eh.type = type;
  eh.sn = sn;
  eh.generation = generation;
  eh.committed_up_to = committed_up_to;
  eh.payload_len = static_cast<uint32_t>(plen);
  eh.pad_len = pad_len;
  encode_entry_header(eh, dst);
  char* p = dst + ENTRY_HEADER_SIZE;
  uint32_t c = crc32c(0, dst, ENTRY_CRC_OFFSET);
  for (const auto& s : payload) {
    if (s.second) {
      std::memcpy(p, s.first, s.second);
      c = crc32c(c, p, s.second);
      p += s.second;
    }
  }
  put_u32(dst + E_CRC, c);
  std::memset(p, 0, pad_len);
  return ENTRY_HEADER_SIZE + plen + pad_len;
}

size_t encode_wrap(char* dst, uint32_t block_size, uint64_t generation,
                   sn_t next_sn, sn_t committed_up_to)
{
  return encode_entry(dst, ENTRY_WRAP, next_sn, generation, committed_up_to,
                      Segments{}, block_size - ENTRY_HEADER_SIZE);
}

// ---- BatchEncoder ----------------------------------------------------------

BatchEncoder::BatchEncoder(uint32_t block_size, uint64_t generation,
                           size_t initial_capacity)
  : block_size_(block_size), generation_(generation)
{
  JOURNAL_CHECK(is_pow2(block_size) && block_size >= JOURNAL_MIN_BLOCK_SIZE);
  reserve(initial_capacity ? initial_capacity : block_size);
}

BatchEncoder::~BatchEncoder()
{
  free(buf_);
}

void BatchEncoder::reserve(size_t n)
{
  n = align_up(n, block_size_);
  if (n <= cap_) {
    return;
  }
  size_t ncap = cap_ ? cap_ : block_size_;
  while (ncap < n) {
    ncap *= 2;
  }
  void* p = nullptr;
  if (posix_memalign(&p, block_size_, ncap) != 0) {
    throw std::bad_alloc();
  }
  if (len_) {
    std::memcpy(p, buf_, len_);
  }
  free(buf_);
  buf_ = static_cast<char*>(p);
  cap_ = ncap;
}

void BatchEncoder::seal_open_entry(uint32_t pad_len)
{
  char* e = buf_ + open_off_;
  size_t plen = len_ - open_off_ - ENTRY_HEADER_SIZE;
  put_u32(e + E_PAD_LEN, pad_len);
  std::memset(buf_ + len_, 0, pad_len);
  put_u32(e + E_CRC,
          entry_crc(e, std::string_view(e + ENTRY_HEADER_SIZE, plen)));
  len_ += pad_len;
  // Invariant: a sealed entry ends 8-aligned.
  assert(len_ % ENTRY_ALIGN == 0);
}

uint64_t BatchEncoder::add_txn(sn_t sn, sn_t committed_up_to,
                               const Segments& payload)
{
  JOURNAL_CHECK(!finished_);
  // The scanner requires consecutive sns.
  JOURNAL_CHECK(entries_ == 0 || sn == last_sn_ + 1);
  uint64_t plen = 0;
  for (const auto& s : payload) {
    plen += s.second;
  }
  JOURNAL_CHECK(plen <= UINT32_MAX - block_size_);
  if (entries_) {
    seal_open_entry(entry_pad(len_ - open_off_ - ENTRY_HEADER_SIZE));
  }
  // Room for this entry and the largest possible final pad.
  reserve(len_ + ENTRY_HEADER_SIZE + plen + block_size_);
  open_off_ = len_;
  EntryHeader eh;
  eh.type = ENTRY_TXN;
  eh.sn = sn;
  eh.generation = generation_;
  eh.committed_up_to = committed_up_to;
  eh.payload_len = static_cast<uint32_t>(plen);
  encode_entry_header(eh, buf_ + open_off_);  // pad_len, crc set when sealed
  char* p = buf_ + open_off_ + ENTRY_HEADER_SIZE;
  for (const auto& s : payload) {
    if (s.second) {
      std::memcpy(p, s.first, s.second);
      p += s.second;
    }
  }
  len_ = p - buf_;
  if (entries_ == 0) {
    first_sn_ = sn;
  }
  last_sn_ = sn;
  ++entries_;
  return open_off_ + ENTRY_HEADER_SIZE;
}

size_t BatchEncoder::size() const
{
  return entries_ ? align_up(len_, block_size_) : 0;
}

size_t BatchEncoder::size_with(uint64_t payload_len) const
{
  size_t l = len_;
  if (entries_) {
    l += entry_pad(len_ - open_off_ - ENTRY_HEADER_SIZE);
  }
  return align_up(l + ENTRY_HEADER_SIZE + payload_len, block_size_);
}

std::pair<const char*, size_t> BatchEncoder::finish()
{
  JOURNAL_CHECK(entries_ > 0);
  if (!finished_) {
    // The last entry's pad runs to the block boundary, so the next batch
    // starts block aligned.
    seal_open_entry(static_cast<uint32_t>(align_up(len_, block_size_) - len_));
    finished_ = true;
  }
  // Invariant: a finished batch is a whole number of blocks.
  assert(len_ % block_size_ == 0);
  return {buf_, len_};
}

void BatchEncoder::reset()
{
  len_ = 0;
  open_off_ = 0;
  entries_ = 0;
  first_sn_ = 0;
  last_sn_ = 0;
  finished_ = false;
}

}  // namespace mim
