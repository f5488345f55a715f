// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for the journal byte layout, encoders and geometry.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/journal_format.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/crc32c.h"
#include "core/journal_scanner.h"

using namespace mim;

namespace {

JournalHeader sample_header(uint32_t bs = 4096)
{
  JournalHeader h;
  for (int i = 0; i < 16; ++i) {
    h.fsid[i] = uint8_t(0xa0 + i);
  }
  h.generation = 0x1122334455667788ULL;
  h.block_size = bs;
  h.flags = 0;
  h.journal_size = 1 << 20;
  h.header_seq = 6;
  h.start_off = 5 * uint64_t(bs);
  h.start_sn = 1000;
  h.committed_up_to = 1007;
  return h;
}

uint64_t le64_at(const char* p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | uint8_t(p[i]);
  }
  return v;
}

uint32_t le32_at(const char* p)
{
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | uint8_t(p[i]);
  }
  return v;
}

/// Re-seal a header slot after a test changed a field.
void reseal(char* slot)
{
  uint32_t c = crc32c(0, slot, 88);
  for (int i = 0; i < 4; ++i) {
    slot[88 + i] = char(c >> (8 * i));
  }
}

}  // anonymous namespace

// ---- header ----------------------------------------------------------------

TEST(JournalHeader, RoundTrip)
{
  JournalHeader h = sample_header();
  h.flags = JOURNAL_FLAG_CLEAN;
  std::vector<char> slot(h.block_size, 'x');
  encode_header(h, slot.data());
  JournalHeader d;
  std::string err;
  ASSERT_EQ(0, decode_header(slot.data(), slot.size(), &d, &err)) << err;
  EXPECT_EQ(h, d);
}

TEST(JournalHeader, ByteLayoutIsAsDocumented)
{
  JournalHeader h = sample_header();
  std::vector<char> slot(h.block_size, 'x');
  encode_header(h, slot.data());
  const char* s = slot.data();
  EXPECT_EQ(0, memcmp(s, "MIMJRNL1", 8));
  EXPECT_EQ(1u, le32_at(s + 8));
  EXPECT_EQ(92u, le32_at(s + 12));
  EXPECT_EQ(0xa0, uint8_t(s[16]));
  EXPECT_EQ(0xaf, uint8_t(s[31]));
  EXPECT_EQ(h.generation, le64_at(s + 32));
  EXPECT_EQ(4096u, le32_at(s + 40));
  EXPECT_EQ(0u, le32_at(s + 44));
  EXPECT_EQ(h.journal_size, le64_at(s + 48));
  EXPECT_EQ(h.header_seq, le64_at(s + 56));
  EXPECT_EQ(h.start_off, le64_at(s + 64));
  EXPECT_EQ(h.start_sn, le64_at(s + 72));
  EXPECT_EQ(h.committed_up_to, le64_at(s + 80));
  EXPECT_EQ(crc32c(0, s, 88), le32_at(s + 88));
  for (size_t i = 92; i < slot.size(); ++i) {
    ASSERT_EQ(0, s[i]) << "slot not zero-filled at " << i;
  }
}

TEST(JournalHeader, BadMagic)
{
  std::vector<char> slot(4096, 0);
  JournalHeader d;
  std::string err;
  EXPECT_EQ(-EINVAL, decode_header(slot.data(), slot.size(), &d, &err));
  EXPECT_NE(std::string::npos, err.find("not a mimstore journal")) << err;
}

// The magic alone marks a journal, whatever the slot's state: mkjournal
// leaves a damaged header (or another store's) alone because of it.
TEST(JournalHeader, MagicMarksAJournalValidOrNot)
{
  JournalHeader h = sample_header();
  std::vector<char> slot(h.block_size, 0);
  EXPECT_FALSE(has_header_magic(slot.data()));
  encode_header(h, slot.data());
  EXPECT_TRUE(has_header_magic(slot.data()));
  slot[40] ^= 0x04;  // crc mismatch: still a journal's header
  JournalHeader d;
  ASSERT_EQ(-EBADMSG, decode_header(slot.data(), slot.size(), &d, nullptr));
  EXPECT_TRUE(has_header_magic(slot.data()));
  slot[0] ^= 0x01;
  EXPECT_FALSE(has_header_magic(slot.data()));
}

TEST(JournalHeader, UnknownVersionIsNamed)
{
  JournalHeader h = sample_header();
  h.version = 7;
  std::vector<char> slot(h.block_size);
  encode_header(h, slot.data());
  JournalHeader d;
  std::string err;
  EXPECT_EQ(-EPROTONOSUPPORT,
            decode_header(slot.data(), slot.size(), &d, &err));
  EXPECT_NE(std::string::npos, err.find("version 7")) << err;
}

TEST(JournalHeader, UnknownFlagsRefused)
{
  JournalHeader h = sample_header();
  h.flags = 0x10;
  std::vector<char> slot(h.block_size);
  encode_header(h, slot.data());
  JournalHeader d;
  std::string err;
  EXPECT_EQ(-EPROTONOSUPPORT,
            decode_header(slot.data(), slot.size(), &d, &err));
  EXPECT_NE(std::string::npos, err.find("0x10")) << err;
}

TEST(JournalHeader, CrcMismatch)
{
  JournalHeader h = sample_header();
  std::vector<char> slot(h.block_size);
  for (size_t byte : {16, 40, 70, 85, 90}) {
    encode_header(h, slot.data());
    slot[byte] ^= 0x04;
    JournalHeader d;
    std::string err;
    EXPECT_EQ(-EBADMSG, decode_header(slot.data(), slot.size(), &d, &err))
      << "flip at " << byte;
    EXPECT_NE(std::string::npos, err.find("crc")) << err;
  }
}

TEST(JournalHeader, NonsenseFieldsRefused)
{
  struct Case {
    const char* what;
    void (*mutate)(JournalHeader*);
  } cases[] = {
    {"block size not a power of two", [](JournalHeader* h) {
       h->block_size = 3000; }},
    {"block size too small", [](JournalHeader* h) { h->block_size = 256; }},
    {"journal too small", [](JournalHeader* h) {
       h->journal_size = 3 * 4096; h->start_off = 2 * 4096; }},
    {"start_off in header slots", [](JournalHeader* h) { h->start_off = 0; }},
    {"start_off unaligned", [](JournalHeader* h) {
       h->start_off = 3 * 4096 + 8; }},
    {"start_off past the area", [](JournalHeader* h) {
       h->start_off = h->journal_size; }},
    {"start_sn 0", [](JournalHeader* h) { h->start_sn = 0; }},
  };
  for (auto& c : cases) {
    JournalHeader h = sample_header();
    c.mutate(&h);
    std::vector<char> slot(8192);
    encode_header(h, slot.data());
    JournalHeader d;
    std::string err;
    EXPECT_EQ(-EINVAL, decode_header(slot.data(), 4096, &d, &err)) << c.what;
    EXPECT_FALSE(err.empty());
  }
}

TEST(JournalHeader, WrongHeaderLenWithGoodCrc)
{
  JournalHeader h = sample_header();
  std::vector<char> slot(h.block_size);
  encode_header(h, slot.data());
  slot[12] = 100;
  reseal(slot.data());
  JournalHeader d;
  std::string err;
  EXPECT_EQ(-EINVAL, decode_header(slot.data(), slot.size(), &d, &err));
  EXPECT_NE(std::string::npos, err.find("length")) << err;
}

TEST(JournalHeader, SlotAlternatesWithSeq)
{
  EXPECT_EQ(0u, header_slot_offset(0, 4096));
  EXPECT_EQ(4096u, header_slot_offset(1, 4096));
  EXPECT_EQ(0u, header_slot_offset(2, 4096));
  EXPECT_EQ(8192u, header_slot_offset(7, 8192));
}

class JournalPickHeader : public ::testing::Test {
 protected:
  void SetUp() override {
    a.assign(4096, 0);
    b.assign(4096, 0);
  }
  void put(std::vector<char>* slot, uint64_t seq, uint64_t start_sn) {
    JournalHeader h = sample_header();
    h.header_seq = seq;
    h.start_sn = start_sn;
    encode_header(h, slot->data());
  }
  int pick() {
    return pick_header(a.data(), b.data(), 4096, &out, &which, &err);
  }
  std::vector<char> a, b;
  JournalHeader out;
  int which = -1;
  std::string err;
};

TEST_F(JournalPickHeader, NewestValidWins)
{
  put(&a, 10, 100);
  put(&b, 11, 200);
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(1, which);
  EXPECT_EQ(11u, out.header_seq);
  EXPECT_EQ(200u, out.start_sn);
  put(&a, 12, 300);
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(0, which);
  EXPECT_EQ(300u, out.start_sn);
}

TEST_F(JournalPickHeader, TornNewerSlotFallsBackToOlder)
{
  put(&a, 10, 100);
  put(&b, 11, 200);
  // Only the first sector of B's rewrite (seq 13) landed: say half of it.
  put(&b, 13, 400);
  memset(b.data() + 60, 0, 40);
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(0, which);
  EXPECT_EQ(10u, out.header_seq);
  EXPECT_NE(std::string::npos, err.find("crc")) << err;
}

TEST_F(JournalPickHeader, OnlyOneSlotWrittenAfterMkjournal)
{
  put(&a, 0, 1);
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(0, which);
  EXPECT_EQ(0u, out.header_seq);
}

TEST_F(JournalPickHeader, NeitherValid)
{
  EXPECT_EQ(-EINVAL, pick());
  EXPECT_NE(std::string::npos, err.find("no valid journal header")) << err;
  put(&a, 0, 1);
  a[20] ^= 1;
  EXPECT_EQ(-EBADMSG, pick());
}

TEST_F(JournalPickHeader, SeqInWrongSlotIsRefused)
{
  put(&a, 10, 100);
  put(&b, 12, 200);  // even seq belongs in A
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(0, which);
  EXPECT_NE(std::string::npos, err.find("wrong slot")) << err;
}

TEST_F(JournalPickHeader, SlotsOfDifferentJournalsRefused)
{
  put(&a, 10, 100);
  JournalHeader h = sample_header();
  h.header_seq = 11;
  h.fsid[0] ^= 1;
  encode_header(h, b.data());
  EXPECT_EQ(-EINVAL, pick());
  EXPECT_NE(std::string::npos, err.find("different journals")) << err;
}

TEST_F(JournalPickHeader, DifferentGenerationsAreFine)
{
  // A new generation is written at every mount.
  put(&a, 10, 100);
  JournalHeader h = sample_header();
  h.header_seq = 11;
  h.generation ^= 0xffff;
  encode_header(h, b.data());
  ASSERT_EQ(0, pick()) << err;
  EXPECT_EQ(h.generation, out.generation);
}

TEST_F(JournalPickHeader, BlockSizeMismatchNamed)
{
  JournalHeader h = sample_header(8192);
  std::vector<char> big(8192);
  encode_header(h, big.data());
  memcpy(a.data(), big.data(), 4096);
  EXPECT_NE(0, pick());
  EXPECT_NE(std::string::npos, err.find("block size 8192")) << err;
}

TEST(JournalHeader, AfterReplay)
{
  JournalHeader h = sample_header();
  h.flags = JOURNAL_FLAG_CLEAN;
  ScanResult r;
  r.end_off = h.journal_size;  // exactly at the area end
  r.next_sn = 1234;
  JournalHeader n = header_after_replay(h, r, 42);
  EXPECT_EQ(42u, n.generation);
  EXPECT_EQ(0u, n.flags);
  EXPECT_EQ(h.header_seq + 1, n.header_seq);
  EXPECT_EQ(area_start(h), n.start_off);
  EXPECT_EQ(1234u, n.start_sn);
  EXPECT_EQ(1233u, n.committed_up_to);
  EXPECT_EQ(h.fsid, n.fsid);
}

// ---- entries ---------------------------------------------------------------

TEST(JournalEntry, RoundTripAndLayout)
{
  std::vector<char> buf(256, 'z');
  std::string p1 = "hello, ", p2 = "journal";
  size_t n = encode_entry(buf.data(), ENTRY_TXN, 77, 0xabcdef, 70,
                          {{p1.data(), p1.size()}, {p2.data(), p2.size()}},
                          entry_pad(14));
  EXPECT_EQ(48u + 14 + 2, n);
  const char* e = buf.data();
  EXPECT_EQ(0, memcmp(e, "MIME", 4));
  EXPECT_EQ(1, e[4]);
  EXPECT_EQ(77u, le64_at(e + 8));
  EXPECT_EQ(0xabcdefu, le64_at(e + 16));
  EXPECT_EQ(70u, le64_at(e + 24));
  EXPECT_EQ(14u, le32_at(e + 32));
  EXPECT_EQ(2u, le32_at(e + 36));
  EXPECT_EQ(0u, le32_at(e + 40));
  EXPECT_EQ(0, memcmp(e + 48, "hello, journal", 14));
  EXPECT_EQ(0, e[62]);
  EXPECT_EQ(0, e[63]);
  EXPECT_EQ('z', e[64]);

  EntryHeader eh;
  ASSERT_TRUE(decode_entry_header(e, &eh));
  EXPECT_EQ(ENTRY_TXN, eh.type);
  EXPECT_EQ(0, eh.flags);
  EXPECT_EQ(77u, eh.sn);
  EXPECT_EQ(0xabcdefu, eh.generation);
  EXPECT_EQ(70u, eh.committed_up_to);
  EXPECT_EQ(14u, eh.payload_len);
  EXPECT_EQ(2u, eh.pad_len);
  EXPECT_EQ(0u, eh.reserved);
  // crc = crc32c over header[0,44) continued over the payload.
  uint32_t c = crc32c(crc32c(0, e, 44), "hello, journal", 14);
  EXPECT_EQ(c, eh.crc);
  EXPECT_EQ(c, entry_crc(e, std::string_view(e + 48, 14)));

  EntryHeader again = eh;
  std::vector<char> hdr(48);
  encode_entry_header(again, hdr.data());
  EXPECT_EQ(0, memcmp(hdr.data(), e, 48));
}

TEST(JournalEntry, CrcCoversHeaderAndPayloadNotPad)
{
  std::vector<char> buf(128);
  std::string p = "payload!!";
  size_t n = encode_entry(buf.data(), ENTRY_TXN, 5, 9, 4,
                          {{p.data(), p.size()}}, entry_pad(p.size()));
  EntryHeader eh;
  ASSERT_TRUE(decode_entry_header(buf.data(), &eh));
  for (size_t i = 0; i < n; ++i) {
    if (i >= 44 && i < 48) {
      continue;  // the crc itself
    }
    buf[i] ^= 0x20;
    bool match = entry_crc(buf.data(), std::string_view(buf.data() + 48,
                                                        p.size())) == eh.crc;
    if (i < 48 + p.size()) {
      EXPECT_FALSE(match) << "byte " << i << " not covered";
    } else {
      EXPECT_TRUE(match) << "pad byte " << i << " covered";
    }
    buf[i] ^= 0x20;
  }
}

TEST(JournalEntry, SegmentsEqualOneBuffer)
{
  std::string s = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::vector<char> one(128), many(128);
  encode_entry(one.data(), ENTRY_TXN, 1, 2, 0, {{s.data(), s.size()}},
               entry_pad(s.size()));
  Segments segs = {{s.data(), 3}, {s.data() + 3, 0}, {s.data() + 3, 20},
                   {s.data() + 23, s.size() - 23}};
  encode_entry(many.data(), ENTRY_TXN, 1, 2, 0, segs, entry_pad(s.size()));
  EXPECT_EQ(one, many);
}

TEST(JournalEntry, MagicMismatch)
{
  std::vector<char> buf(48, 0);
  EntryHeader eh;
  eh.sn = 99;
  EXPECT_FALSE(decode_entry_header(buf.data(), &eh));
  EXPECT_EQ(99u, eh.sn);  // untouched
}

TEST(JournalEntry, WrapFillsOneBlock)
{
  std::vector<char> blk(4096, 'q');
  EXPECT_EQ(4096u, encode_wrap(blk.data(), 4096, 7, 55, 50));
  EntryHeader eh;
  ASSERT_TRUE(decode_entry_header(blk.data(), &eh));
  EXPECT_EQ(ENTRY_WRAP, eh.type);
  EXPECT_EQ(55u, eh.sn);
  EXPECT_EQ(0u, eh.payload_len);
  EXPECT_EQ(4096u - 48, eh.pad_len);
  EXPECT_EQ(entry_crc(blk.data(), {}), eh.crc);
  for (size_t i = 48; i < blk.size(); ++i) {
    ASSERT_EQ(0, blk[i]);
  }
}

TEST(JournalEntry, SizeHelpers)
{
  EXPECT_EQ(0u, entry_pad(0));
  EXPECT_EQ(7u, entry_pad(1));
  EXPECT_EQ(0u, entry_pad(8));
  EXPECT_EQ(3u, entry_pad(13));
  EXPECT_EQ(48u, entry_size(0));
  EXPECT_EQ(64u, entry_size(13));
}

// ---- BatchEncoder ----------------------------------------------------------

namespace {

/// Walk a finished batch and check the invariants the scanner relies on.
void check_batch(const char* buf, size_t len, uint32_t bs, uint64_t gen,
                 const std::vector<std::string>& payloads, sn_t first_sn,
                 sn_t cut)
{
  ASSERT_EQ(0u, reinterpret_cast<uintptr_t>(buf) % bs) << "buffer alignment";
  ASSERT_EQ(0u, len % bs) << "batch length";
  size_t off = 0;
  for (size_t i = 0; i < payloads.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    ASSERT_EQ(0u, off % ENTRY_ALIGN);
    EntryHeader eh;
    ASSERT_TRUE(decode_entry_header(buf + off, &eh));
    EXPECT_EQ(ENTRY_TXN, eh.type);
    EXPECT_EQ(first_sn + i, eh.sn);
    EXPECT_EQ(gen, eh.generation);
    EXPECT_EQ(cut, eh.committed_up_to);
    ASSERT_EQ(payloads[i].size(), eh.payload_len);
    std::string_view p(buf + off + 48, eh.payload_len);
    EXPECT_EQ(payloads[i], p);
    EXPECT_EQ(entry_crc(buf + off, p), eh.crc);
    for (size_t k = 0; k < eh.pad_len; ++k) {
      ASSERT_EQ(0, buf[off + 48 + eh.payload_len + k]) << "pad not zero";
    }
    uint64_t total = 48 + eh.payload_len + eh.pad_len;
    EXPECT_EQ(0u, total % ENTRY_ALIGN);
    if (i + 1 < payloads.size()) {
      EXPECT_EQ(entry_pad(eh.payload_len), eh.pad_len);
    }
    off += total;
  }
  EXPECT_EQ(len, off) << "the last entry must pad to the block end";
}

}  // anonymous namespace

TEST(JournalBatch, AlignmentInvariants)
{
  std::mt19937 rng(3);
  for (uint32_t bs : {512u, 4096u, 65536u}) {
    BatchEncoder enc(bs, 0x5eed);
    for (int round = 0; round < 30; ++round) {
      SCOPED_TRACE("bs " + std::to_string(bs) + " round " +
                   std::to_string(round));
      enc.reset();
      std::vector<std::string> payloads;
      std::vector<uint64_t> at;  // where add_txn said each payload is
      int n = 1 + rng() % 10;
      sn_t first = 100 + round * 20;
      for (int i = 0; i < n; ++i) {
        std::string p(rng() % (round % 3 == 0 ? 20000 : 300), '\0');
        for (auto& c : p) {
          c = char('a' + rng() % 26);
        }
        size_t predicted = enc.size_with(p.size());
        at.push_back(enc.add_txn(first + i, first - 1, p));
        EXPECT_EQ(predicted, enc.size());
        payloads.push_back(p);
      }
      size_t before = enc.size();
      auto [buf, len] = enc.finish();
      for (int i = 0; i < n; ++i) {
        ASSERT_LE(at[i] + payloads[i].size(), len);
        EXPECT_EQ(payloads[i], std::string(buf + at[i], payloads[i].size()));
      }
      EXPECT_EQ(before, len);
      EXPECT_EQ(first, enc.first_sn());
      EXPECT_EQ(first + n - 1, enc.last_sn());
      EXPECT_EQ(size_t(n), enc.entries());
      check_batch(buf, len, bs, 0x5eed, payloads, first, first - 1);
      // finish() twice is harmless.
      auto again = enc.finish();
      EXPECT_EQ(len, again.second);
    }
  }
}

TEST(JournalBatch, ExactBlockFitNeedsNoExtraPad)
{
  BatchEncoder enc(4096, 1);
  std::string p(4096 - 48, 'x');
  enc.add_txn(1, 0, p);
  auto [buf, len] = enc.finish();
  EXPECT_EQ(4096u, len);
  EntryHeader eh;
  ASSERT_TRUE(decode_entry_header(buf, &eh));
  EXPECT_EQ(0u, eh.pad_len);
}

TEST(JournalBatch, GrowsAndKeepsContent)
{
  BatchEncoder enc(4096, 1, 4096);
  std::vector<std::string> payloads;
  for (int i = 0; i < 50; ++i) {
    payloads.push_back(std::string(1000 + i, char('A' + i % 26)));
    enc.add_txn(i + 1, 0, payloads.back());
  }
  auto [buf, len] = enc.finish();
  check_batch(buf, len, 4096, 1, payloads, 1, 0);
}

TEST(JournalBatch, EmptyPayloadsAndResetGeneration)
{
  BatchEncoder enc(512, 1);
  enc.add_txn(1, 0, std::string_view());
  enc.add_txn(2, 0, std::string_view());
  auto [buf, len] = enc.finish();
  EXPECT_EQ(512u, len);
  check_batch(buf, len, 512, 1, {"", ""}, 1, 0);
  enc.reset(99);
  EXPECT_TRUE(enc.empty());
  EXPECT_EQ(0u, enc.size());
  enc.add_txn(3, 2, "x");
  auto r = enc.finish();
  check_batch(r.first, r.second, 512, 99, {"x"}, 3, 2);
}

// ---- geometry --------------------------------------------------------------

TEST(JournalGeometry, AreaBounds)
{
  JournalGeometry g(1000000, 4096);
  EXPECT_EQ(8192u, g.area_start);
  EXPECT_EQ(1000000u / 4096 * 4096, g.area_end);
  EXPECT_EQ(g.area_start, g.normalize(g.area_end));
  JournalHeader h = sample_header();
  EXPECT_EQ(8192u, area_start(h));
  EXPECT_EQ(uint64_t(1) << 20, area_end(h));
}

TEST(JournalGeometry, PlaceBatch)
{
  JournalGeometry g(2 * 4096 + 10 * 4096, 4096);  // area: 10 blocks
  const uint64_t B = 4096;
  BatchPlacement p;
  ASSERT_EQ(0, place_batch(g, g.area_start, 3 * B, &p));
  EXPECT_EQ(g.area_start, p.off);
  EXPECT_FALSE(p.wrap);
  EXPECT_EQ(3 * B, p.consumed);
  EXPECT_EQ(g.area_start + 3 * B, p.next_head);

  // Fits exactly to the end: no wrap, next head is the area start.
  ASSERT_EQ(0, place_batch(g, g.area_end - 2 * B, 2 * B, &p));
  EXPECT_FALSE(p.wrap);
  EXPECT_EQ(g.area_start, p.next_head);

  // Does not fit: WRAP block at head, batch at area start.
  ASSERT_EQ(0, place_batch(g, g.area_end - 2 * B, 3 * B, &p));
  EXPECT_TRUE(p.wrap);
  EXPECT_EQ(g.area_end - 2 * B, p.wrap_off);
  EXPECT_EQ(g.area_start, p.off);
  EXPECT_EQ(5 * B, p.consumed);
  EXPECT_EQ(g.area_start + 3 * B, p.next_head);

  // Head exactly at the end: implicit wrap, no waste.
  ASSERT_EQ(0, place_batch(g, g.area_end, B, &p));
  EXPECT_FALSE(p.wrap);
  EXPECT_EQ(g.area_start, p.off);
  EXPECT_EQ(B, p.consumed);

  EXPECT_EQ(-EINVAL, place_batch(g, g.area_start, 100, &p));
  EXPECT_EQ(-EINVAL, place_batch(g, g.area_start, 0, &p));
  EXPECT_EQ(-EINVAL, place_batch(g, g.area_start, 11 * B, &p));
  EXPECT_EQ(-EINVAL, place_batch(g, g.area_start + 8, B, &p));
  EXPECT_EQ(-EINVAL, place_batch(g, 0, B, &p));
}

TEST(JournalGeometry, UsedAndFits)
{
  JournalGeometry g(2 * 4096 + 10 * 4096, 4096);
  const uint64_t B = 4096, S = g.area_start, E = g.area_end;
  EXPECT_EQ(0u, area_used(g, S + 3 * B, S + 3 * B));
  EXPECT_EQ(2 * B, area_used(g, S + 3 * B, S + 5 * B));
  EXPECT_EQ(8 * B, area_used(g, S + 5 * B, S + 3 * B));
  EXPECT_EQ(B, area_used(g, E - B, E));
  EXPECT_EQ(B, area_used(g, E - B, S));

  // Empty area: a batch of the whole area would make head == tail.
  EXPECT_TRUE(batch_fits(g, S, S, 9 * B));
  EXPECT_FALSE(batch_fits(g, S, S, 10 * B));
  // tail at S, head at E - B: one block left, filling it makes head == tail.
  EXPECT_FALSE(batch_fits(g, S, E - B, B));
  // Wrap waste counts: tail at S+4B, head at E-2B, 6 blocks free, one must
  // stay free. 3 blocks need a wrap and cost 2 + 3; 4 blocks cost 2 + 4.
  EXPECT_TRUE(batch_fits(g, S + 4 * B, E - 2 * B, 3 * B));
  EXPECT_FALSE(batch_fits(g, S + 4 * B, E - 2 * B, 4 * B));
  // Never overwrite the entry at the tail.
  EXPECT_FALSE(batch_fits(g, S + 4 * B, S + 2 * B, 2 * B));
  EXPECT_TRUE(batch_fits(g, S + 4 * B, S + 2 * B, B));
}

TEST(JournalGeometry, AreaContains)
{
  JournalGeometry g(2 * 4096 + 10 * 4096, 4096);
  const uint64_t B = 4096, S = g.area_start, E = g.area_end;
  // Not wrapped: [S+2B, S+5B) is live.
  EXPECT_TRUE(area_contains(g, S + 2 * B, S + 5 * B, S + 2 * B, 3 * B));
  EXPECT_TRUE(area_contains(g, S + 2 * B, S + 5 * B, S + 3 * B + 100, 48));
  EXPECT_FALSE(area_contains(g, S + 2 * B, S + 5 * B, S + 2 * B - 1, 2));
  EXPECT_FALSE(area_contains(g, S + 2 * B, S + 5 * B, S + 5 * B - 1, 2));
  EXPECT_FALSE(area_contains(g, S + 2 * B, S + 5 * B, S + 6 * B, 1));
  EXPECT_FALSE(area_contains(g, S + 2 * B, S + 5 * B, S + 3 * B, 0));
  // Empty (tail == head): nothing is live.
  EXPECT_FALSE(area_contains(g, S + 3 * B, S + 3 * B, S + 3 * B, 1));
  // Wrapped: [S+8B, E) and [S, S+2B) are live, the middle is not.
  EXPECT_TRUE(area_contains(g, S + 8 * B, S + 2 * B, S + 9 * B, B));
  EXPECT_TRUE(area_contains(g, S + 8 * B, S + 2 * B, S, 2 * B));
  EXPECT_FALSE(area_contains(g, S + 8 * B, S + 2 * B, S + 5 * B, 10));
  EXPECT_FALSE(area_contains(g, S + 8 * B, S + 2 * B, S + 2 * B, 1));
  // Crossing area_end, or outside the area, is never live.
  EXPECT_FALSE(area_contains(g, S + 8 * B, S + 2 * B, E - 10, 20));
  EXPECT_FALSE(area_contains(g, S + 8 * B, S + 2 * B, E, 1));
  EXPECT_FALSE(area_contains(g, S, E - B, S - 1, 1));
  // head at area_end is the same as head at area_start.
  EXPECT_TRUE(area_contains(g, S + 8 * B, E, E - B, B));
}

TEST(JournalBatchDeathTest, ContractViolationsAbortInEveryBuild)
{
  // Checked always (not assert()): a wrong sn order would write a journal
  // the scanner stops reading in the middle.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH({
    BatchEncoder enc(4096, 1);
    enc.add_txn(5, 0, "a");
    enc.add_txn(7, 0, "b");
  }, "check failed");
  EXPECT_DEATH({
    BatchEncoder enc(4096, 1);
    enc.finish();
  }, "check failed");
  EXPECT_DEATH({
    std::vector<char> buf(128);
    encode_entry(buf.data(), ENTRY_TXN, 1, 1, 0, {{"abc", 3}}, 0);
  }, "check failed");
}
