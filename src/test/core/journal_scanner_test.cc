// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for the journal scanner, over an in-memory journal.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/journal_scanner.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/journal_format.h"

using namespace mim;

namespace {

/// A journal in a std::string, with a writer that follows the writer rules
/// of docs/journal-format.md (batches, WRAP, committed_up_to).
class MemJournal {
 public:
  MemJournal(uint64_t journal_size, uint32_t bs, uint64_t generation = 0x77)
    : dev(journal_size, '\0') {
    h.fsid[0] = 1;
    h.generation = generation;
    h.block_size = bs;
    h.journal_size = journal_size;
    h.header_seq = 0;
    g = JournalGeometry(h);
    h.start_off = g.area_start;
    h.start_sn = 1;
    h.committed_up_to = 0;
    head = g.area_start;
    next_sn = 1;
  }

  /// Append one batch; returns its offset. `cut` < 0: use the durable prefix
  /// (everything written so far).
  uint64_t write_batch(const std::vector<std::string>& payloads,
                       int64_t cut = -1) {
    sn_t c = cut < 0 ? next_sn - 1 : sn_t(cut);
    BatchEncoder enc(h.block_size, h.generation);
    for (const auto& p : payloads) {
      enc.add_txn(next_sn++, c, p);
      sn_payload[enc.last_sn()] = p;
    }
    auto [buf, len] = enc.finish();
    BatchPlacement pl;
    EXPECT_EQ(0, place_batch(g, head, len, &pl));
    if (pl.wrap) {
      std::vector<char> blk(h.block_size);
      encode_wrap(blk.data(), h.block_size, h.generation, enc.first_sn(), c);
      memcpy(&dev[pl.wrap_off], blk.data(), blk.size());
      last_wrap_off = pl.wrap_off;
    }
    memcpy(&dev[pl.off], buf, len);
    batch_off[enc.first_sn()] = pl.off;
    head = pl.next_head;
    return pl.off;
  }

  /// Offset of the entry with this sn (walks its batch).
  uint64_t entry_off(sn_t sn) {
    auto it = batch_off.upper_bound(sn);
    --it;
    uint64_t off = it->second;
    for (sn_t s = it->first; s < sn; ++s) {
      EntryHeader eh;
      EXPECT_TRUE(decode_entry_header(&dev[off], &eh));
      off += 48 + eh.payload_len + eh.pad_len;
    }
    return off;
  }

  ReadFn reader() {
    return [this](uint64_t off, size_t len, char* buf) -> int {
      // The scanner's contract: block-aligned, for O_DIRECT.
      EXPECT_EQ(0u, off % h.block_size);
      EXPECT_EQ(0u, len % h.block_size);
      EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(buf) % h.block_size);
      ++reads;
      if (fail_at_or_after != UINT64_MAX && off + len > fail_at_or_after) {
        return -EIO;
      }
      if (off + len > dev.size()) {
        return -ENODATA;  // a journal file shorter than the header says
      }
      memcpy(buf, dev.data() + off, len);
      return 0;
    };
  }

  int scan(ScanResult* r, ScanOptions opts = ScanOptions()) {
    replayed.clear();
    offsets.clear();
    return scan_journal(
      h, reader(),
      [this](sn_t sn, uint64_t off, std::string_view p) {
        replayed.emplace_back(sn, std::string(p));
        offsets.push_back(off);
        return 0;
      },
      r, opts);
  }

  /// Check that exactly sns [from, to] were replayed with their payloads.
  void expect_replayed(sn_t from, sn_t to) {
    ASSERT_EQ(to + 1 - from, replayed.size());
    for (size_t i = 0; i < replayed.size(); ++i) {
      EXPECT_EQ(from + i, replayed[i].first);
      EXPECT_EQ(sn_payload[from + i], replayed[i].second);
    }
  }

  void checkpoint(sn_t sn) {
    h.start_sn = sn;
    h.start_off = batch_off.at(sn);  // checkpoints are batch starts here
  }

  std::string dev;
  JournalHeader h;
  JournalGeometry g;
  uint64_t head;
  sn_t next_sn;
  uint64_t last_wrap_off = 0;
  uint64_t fail_at_or_after = UINT64_MAX;
  int reads = 0;
  std::map<sn_t, uint64_t> batch_off;   ///< first sn -> offset
  std::map<sn_t, std::string> sn_payload;
  std::vector<std::pair<sn_t, std::string>> replayed;
  std::vector<uint64_t> offsets;
};

std::vector<std::string> payloads(int n, size_t len, char fill)
{
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(std::string(len + i, char(fill + i)));
  }
  return v;
}

constexpr uint64_t KB = 1024;

/// Sns 1..3, then a batch of sns 4..6 (2000-byte payloads, two blocks)
/// whose second block never landed: the scan ends inside that batch, after
/// sn 4, at an offset that is not block aligned. Returns the batch's offset.
uint64_t write_torn_between_entries(MemJournal& j)
{
  j.write_batch(payloads(3, 100, 'a'));
  const uint64_t off4 = j.write_batch(payloads(3, 2000, 'k'), 3);
  memset(&j.dev[off4 + 4096], 0, 4096);
  return off4;
}

}  // anonymous namespace

TEST(JournalScan, EmptyJournalIsCleanEnd)
{
  MemJournal j(64 * KB, 4096);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end);
  EXPECT_EQ(j.g.area_start, r.end_off);
  EXPECT_EQ(1u, r.next_sn);
  EXPECT_EQ(0u, r.entries);
  EXPECT_NE(std::string::npos, r.detail.find("zeros")) << r.detail;
}

TEST(JournalScan, ReplaysInOrder)
{
  MemJournal j(256 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));
  j.write_batch(payloads(1, 5000, 'k'));  // one entry over two blocks
  j.write_batch(payloads(5, 7, 'p'));
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  j.expect_replayed(1, 9);
  EXPECT_EQ(9u, r.entries);
  EXPECT_EQ(10u, r.next_sn);
  EXPECT_EQ(j.head, r.end_off);
  for (sn_t sn = 1; sn <= 9; ++sn) {
    EXPECT_EQ(j.entry_off(sn), j.offsets[sn - 1]);
  }
}

TEST(JournalScan, StartsAtCheckpoint)
{
  MemJournal j(256 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));
  j.write_batch(payloads(2, 100, 'k'));
  j.write_batch(payloads(2, 100, 'p'));
  j.checkpoint(4);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end);
  j.expect_replayed(4, 7);
}

namespace {

/// One entry whose batch is 4 blocks.
std::vector<std::string> four_blocks(char c)
{
  return std::vector<std::string>(1, std::string(4 * 4096 - 48 - 100, c));
}

/// Sns 1..3 in 4-block batches over a 14-block area, checkpoint at 3: the
/// next 4-block batch does not fit in the two blocks left.
void three_batches_then_checkpoint(MemJournal& j)
{
  j.write_batch(four_blocks('a'));
  j.write_batch(four_blocks('b'));
  j.write_batch(four_blocks('c'));
  j.checkpoint(3);
}

}  // anonymous namespace

TEST(JournalScan, WrapWithWrapEntry)
{
  // Area of 14 blocks; 4-block batches: the fourth does not fit in the two
  // blocks left and goes to the area start after a WRAP block.
  MemJournal j(16 * 4096, 4096);
  three_batches_then_checkpoint(j);
  ASSERT_TRUE(batch_fits(j.g, j.h.start_off, j.head, 4 * 4096));
  uint64_t off4 = j.write_batch(four_blocks('d'));
  EXPECT_EQ(j.g.area_start, off4);
  EXPECT_EQ(j.g.area_end - 2 * 4096, j.last_wrap_off);
  j.write_batch(payloads(2, 10, 'x'));  // 5..6, over the start of sn 2
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  j.expect_replayed(3, 6);
  EXPECT_EQ(1u, r.wraps);
  EXPECT_EQ(j.g.area_start, j.offsets[1]);
  // Stopped at the head, inside the old payload of sn 2.
  EXPECT_EQ(j.head, r.end_off);
  EXPECT_EQ(7u, r.next_sn);
}

TEST(JournalScan, ImplicitWrapAtExactEnd)
{
  MemJournal j(16 * 4096, 4096);
  // 14-block area: 7 + 7 blocks fill it exactly.
  auto seven = [](char c) { return std::vector<std::string>(
    1, std::string(7 * 4096 - 48 - 8, c)); };
  j.write_batch(seven('a'));
  j.write_batch(seven('b'));
  EXPECT_EQ(j.g.area_start, j.head);
  j.checkpoint(2);
  j.write_batch(payloads(2, 10, 'x'));  // overwrites the start of batch 1
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  j.expect_replayed(2, 4);
  EXPECT_EQ(1u, r.wraps);
  EXPECT_EQ(j.g.area_start, j.offsets[1]);
  // Behind the new batch lies the rest of sn 1's payload: no magic.
  EXPECT_NE(std::string::npos, r.detail.find("no entry magic")) << r.detail;
}

TEST(JournalScan, StaleEntriesOfEarlierLapAreCleanEnd)
{
  MemJournal j(32 * 4096, 4096);
  // Lap 1: fill most of the area with one-block batches.
  for (int i = 0; i < 25; ++i) {
    j.write_batch(payloads(2, 1000, 'a'));
  }
  j.checkpoint(41);
  // Lap 2 after the wrap: a few batches, then the old lap's batches follow.
  for (int i = 0; i < 8; ++i) {
    j.write_batch(payloads(2, 1000, 'n'));
  }
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  j.expect_replayed(41, 66);
  EXPECT_NE(std::string::npos, r.detail.find("earlier lap")) << r.detail;
}

TEST(JournalScan, OtherGenerationNeverApplied)
{
  // A reused partition: the old journal's entries are intact and even have
  // the sns the new journal expects.
  MemJournal old(64 * KB, 4096, 0x01d);
  old.write_batch(payloads(3, 100, 'o'));
  MemJournal j(64 * KB, 4096, 0x4e3);
  j.dev = old.dev;
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end);
  EXPECT_EQ(0u, r.entries);
  EXPECT_TRUE(j.replayed.empty());
  EXPECT_NE(std::string::npos, r.detail.find("another generation"))
    << r.detail;
}

TEST(JournalScan, BitFlipInLastBatchIsTorn)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));
  j.write_batch(payloads(3, 100, 'k'));  // sns 4..6
  uint64_t off5 = j.entry_off(5);
  j.dev[off5 + 48 + 10] ^= 0x01;
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end) << r.detail;
  EXPECT_EQ(off5, r.end_off);
  EXPECT_EQ(5u, r.next_sn);
  j.expect_replayed(1, 4);  // nothing after the flip
}

TEST(JournalScan, BitFlipCoveredByLaterCommittedUpToIsCorruptAcked)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));        // 1..3
  j.write_batch(payloads(3, 100, 'k'));        // 4..6, cut 3
  uint64_t off7 = j.write_batch(payloads(3, 100, 'p'));  // 7..9, cut 6
  j.write_batch(payloads(1, 100, 'z'));        // 10, cut 9
  uint64_t off5 = j.entry_off(5);
  j.dev[off5 + 48 + 5] ^= 0x40;                // in the payload of sn 5
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CORRUPT_ACKED, r.end) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.stop);
  EXPECT_EQ(off5, r.end_off);
  EXPECT_EQ(5u, r.next_sn);
  EXPECT_EQ(off7, r.corrupt_acked_off);
  EXPECT_EQ(7u, r.corrupt_acked_sn);
  EXPECT_EQ(6u, r.acked_up_to);
  EXPECT_NE(std::string::npos, r.detail.find("damaged")) << r.detail;
  j.expect_replayed(1, 4);
}

TEST(JournalScan, ZeroedMiddleBatchCoveredLaterIsCorruptAcked)
{
  // A whole acknowledged batch reads back as zeros (lost write): the stop
  // looks clean, the later batch proves it is not.
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(2, 100, 'a'));
  uint64_t off3 = j.write_batch(payloads(2, 100, 'k'));  // 3..4
  j.write_batch(payloads(2, 100, 'p'));                  // 5..6, cut 4
  memset(&j.dev[off3], 0, 4096);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.stop);
  EXPECT_EQ(ScanResult::CORRUPT_ACKED, r.end) << r.detail;
  EXPECT_EQ(3u, r.next_sn);
}

TEST(JournalScan, HeaderCommittedUpToCoversStopIsCorruptAcked)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(2, 100, 'a'));
  uint64_t off3 = j.write_batch(payloads(2, 100, 'k'));  // 3..4
  j.h.committed_up_to = 4;  // header written after sn 4 was durable
  memset(&j.dev[off3], 0, 4096);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CORRUPT_ACKED, r.end) << r.detail;
  EXPECT_EQ(ScanResult::EVIDENCE_IN_HEADER, r.corrupt_acked_off);
  EXPECT_EQ(4u, r.acked_up_to);
  EXPECT_NE(std::string::npos, r.detail.find("journal header")) << r.detail;
}

TEST(JournalScan, TornBatchWithLaterLandedBatchIsNotCorruptAcked)
{
  // Two batches in flight: the first tore, the second landed. The second's
  // committed_up_to predates the first, so nothing acknowledged is lost.
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));              // 1..3
  uint64_t off4 = j.write_batch(payloads(3, 2000, 'k'), 3);  // 4..6, 2 blocks
  j.write_batch(payloads(3, 100, 'p'), 3);           // 7..9: cut still 3
  memset(&j.dev[off4 + 4096], 0, 4096);              // 2nd block never landed
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end) << r.detail;
  // sn 4 (2048 bytes) lies wholly in the first block and is valid; sn 5
  // crosses into the lost block.
  j.expect_replayed(1, 4);
  EXPECT_EQ(5u, r.next_sn);
  EXPECT_EQ(off4 + 2048, r.end_off);
}

TEST(JournalScan, RestartAfterATornBatchIsBlockAligned)
{
  // A batch torn between two of its entries ends the scan inside the batch,
  // at an 8-aligned offset. The next mount's header and writer must start
  // at a block boundary (decode_header refuses any other start_off, and
  // place_batch any other head), past the torn bytes, which were never
  // acknowledged.
  MemJournal j(128 * KB, 4096);
  const uint64_t off4 = write_torn_between_entries(j);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  ASSERT_EQ(off4 + 2048, r.end_off);
  JournalHeader n = header_after_replay(j.h, r, 0x99);
  EXPECT_EQ(off4 + 4096, n.start_off);
  EXPECT_EQ(5u, n.start_sn);
  std::vector<char> slot(4096);
  encode_header(n, slot.data());
  JournalHeader back;
  std::string err;
  ASSERT_EQ(0, decode_header(slot.data(), slot.size(), &back, &err)) << err;

  // The next mount writes there and a later scan finds exactly its entries.
  MemJournal m = j;
  m.h = n;
  m.head = n.start_off;
  m.next_sn = n.start_sn;
  m.write_batch({"new5", "new6"});
  ScanResult r2;
  ASSERT_EQ(0, m.scan(&r2)) << r2.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r2.end) << r2.detail;
  ASSERT_EQ(2u, r2.entries);
  EXPECT_EQ("new5", m.replayed[0].second);
}

TEST(JournalScan, UnexpectedHigherSnIsTorn)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(2, 100, 'a'));
  j.next_sn = 10;  // a writer bug: skipped sns
  j.write_batch(payloads(2, 100, 'k'), 2);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end) << r.detail;
  EXPECT_NE(std::string::npos, r.detail.find("where sn 3 was expected"))
    << r.detail;
  j.expect_replayed(1, 2);
}

TEST(JournalScan, TruncatedJournalFileIsAnError)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(3, 100, 'a'));
  j.dev.resize(64 * KB);  // the file is shorter than the header says
  ScanResult r;
  int ret = j.scan(&r);
  EXPECT_EQ(-ENODATA, ret) << r.detail;
  EXPECT_NE(std::string::npos, r.detail.find("failed")) << r.detail;
}

TEST(JournalScan, ReadErrorIsAnErrorNotACleanEnd)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(2, 100, 'a'));
  uint64_t off3 = j.write_batch(payloads(2, 100, 'b'));
  j.write_batch(payloads(2, 100, 'c'));
  j.fail_at_or_after = off3 + 1;
  ScanResult r;
  ScanOptions o;
  o.read_chunk = 4096;
  EXPECT_EQ(-EIO, j.scan(&r, o));
  EXPECT_NE(std::string::npos, r.detail.find(std::to_string(off3)))
    << r.detail;
  EXPECT_EQ(2u, r.entries);
  // A read error in the corruption check is an error too.
  MemJournal k(128 * KB, 4096);
  k.write_batch(payloads(2, 100, 'a'));
  k.fail_at_or_after = 100 * KB;
  EXPECT_EQ(-EIO, k.scan(&r, o));
}

TEST(JournalScan, CallbackStopsEarly)
{
  MemJournal j(128 * KB, 4096);
  j.write_batch(payloads(5, 100, 'a'));
  ScanResult r;
  int ret = scan_journal(
    j.h, j.reader(),
    [](sn_t sn, uint64_t, std::string_view) { return sn == 3 ? -EDOM : 0; },
    &r);
  EXPECT_EQ(-EDOM, ret);
  EXPECT_TRUE(r.stopped_by_callback);
  EXPECT_EQ(2u, r.entries);
  EXPECT_EQ(3u, r.next_sn);
  EXPECT_EQ(j.entry_off(3), r.end_off);
}

TEST(JournalScan, SmallReadChunksAndLargeEntries)
{
  MemJournal j(512 * KB, 4096);
  j.write_batch({std::string(100 * KB, 'x'), std::string(3, 'y')});
  j.write_batch(payloads(40, 50, 'a'));
  j.write_batch({std::string(70 * KB + 3, 'z')});
  for (size_t chunk : {size_t(1), size_t(4096), size_t(8192),
                       size_t(1 << 20)}) {
    ScanResult r;
    ScanOptions o;
    o.read_chunk = chunk;
    ASSERT_EQ(0, j.scan(&r, o)) << r.detail;
    EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
    j.expect_replayed(1, 43);
  }
}

TEST(JournalScan, BlockSize512And64K)
{
  for (uint32_t bs : {512u, 65536u}) {
    MemJournal j(128 * uint64_t(bs), bs);
    for (int i = 0; i < 20; ++i) {
      j.write_batch(payloads(1 + i % 3, 100 + i * 37, 'a'));
    }
    ScanResult r;
    ASSERT_EQ(0, j.scan(&r)) << r.detail;
    EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
    EXPECT_EQ(j.next_sn - 1, r.entries);
  }
}

// ---- LevelDB log_test-style cases ------------------------------------------

TEST(JournalScan, ChecksumMismatch)
{
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  j.dev[j.g.area_start + 44] ^= 0x10;  // the crc field itself
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  EXPECT_NE(std::string::npos, r.detail.find("crc mismatch")) << r.detail;
  EXPECT_EQ(0u, r.entries);
}

TEST(JournalScan, BadRecordType)
{
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  uint64_t off2 = j.write_batch(payloads(1, 100, 'b'));
  // A crc-valid entry of an unknown type (e.g. from a newer writer).
  std::string p(100, 'b');
  encode_entry(&j.dev[off2], 7, 2, j.h.generation, 1, {{p.data(), p.size()}},
               4096 - 48 - 100);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  EXPECT_NE(std::string::npos, r.detail.find("unknown entry type 7"))
    << r.detail;
  j.expect_replayed(1, 1);
}

TEST(JournalScan, ImpossibleLengthIsTorn)
{
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  uint64_t off2 = j.write_batch(payloads(1, 100, 'b'));
  j.dev[off2 + 35] = 0x7f;  // payload_len's top byte: past the area end
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  EXPECT_NE(std::string::npos, r.detail.find("impossible entry length"))
    << r.detail;
  j.expect_replayed(1, 1);
}

TEST(JournalScan, TruncatedTrailingRecordIsIgnored)
{
  // The last entry's header landed but its payload did not.
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  uint64_t off2 = j.write_batch({std::string(3000, 'b')});
  memset(&j.dev[off2 + 512], 0, 4096 - 512);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  EXPECT_EQ(off2, r.end_off);
  j.expect_replayed(1, 1);
}

TEST(JournalScan, PartialLastIsIgnored)
{
  // Only the first sector of the last batch landed: entries that lie wholly
  // in it are valid and replayed, the rest ends the scan.
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  uint64_t off2 = j.write_batch(payloads(8, 100, 'b'));  // 2..9, ~152B each
  memset(&j.dev[off2 + 512], 0, 4096 - 512);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  // 48+100+4=152, 48+101+3=152, 48+102+2=152 -> sns 2..4 end at 456 < 512.
  j.expect_replayed(1, 4);
  EXPECT_EQ(j.entry_off(5), r.end_off);
}

TEST(JournalScan, MalformedWrapIsTorn)
{
  MemJournal j(64 * KB, 4096);
  j.write_batch(payloads(1, 100, 'a'));
  uint64_t off = j.head;
  // A WRAP entry with a payload is not a WRAP entry; one at the area start
  // would send the scan in circles.
  std::string p(8, 'p');
  encode_entry(&j.dev[off], ENTRY_WRAP, 2, j.h.generation, 1,
               {{p.data(), p.size()}}, 4096 - 48 - 8);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
  EXPECT_NE(std::string::npos, r.detail.find("malformed wrap")) << r.detail;

  MemJournal k(64 * KB, 4096);
  encode_wrap(&k.dev[k.g.area_start], 4096, k.h.generation, 1, 0);
  ASSERT_EQ(0, k.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::TORN_OR_CORRUPT, r.end);
}

// ---- generations: why a mount must start a new one -------------------------

TEST(JournalScan, InFlightBatchOfPreviousMountIsNotReplayedAfterRegeneration)
{
  // Mount 1 crashes with batch B2 torn and B3 (sent after it) landed.
  MemJournal j(128 * KB, 4096, 0x111);
  j.write_batch(payloads(2, 100, 'a'));                  // 1..2
  uint64_t off3 = j.write_batch(payloads(2, 100, 'b'));  // 3..4 (torn)
  j.write_batch(payloads(2, 100, 'c'), 2);               // 5..6 landed
  memset(&j.dev[off3], 0, 512);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  ASSERT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  ASSERT_EQ(off3, r.end_off);
  ASSERT_EQ(3u, r.next_sn);

  // Mount 2: writes new, different transactions 3..4 at the same place,
  // then crashes before writing 5.
  auto remount = [&](uint64_t gen) {
    MemJournal m = j;
    m.h = header_after_replay(j.h, r, gen);
    m.head = r.end_off;
    m.next_sn = r.next_sn;
    m.write_batch({"new3", "new4"});
    return m;
  };

  // Without a new generation, B3 of mount 1 would be replayed as sns 5..6:
  // the flaw that header_after_replay's new generation closes.
  MemJournal same = remount(0x111);
  ScanResult rs;
  ASSERT_EQ(0, same.scan(&rs)) << rs.detail;
  EXPECT_EQ(4u, rs.entries) << "stale sns 5..6 taken for new ones";

  MemJournal fresh = remount(0x222);
  ScanResult rf;
  ASSERT_EQ(0, fresh.scan(&rf)) << rf.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, rf.end) << rf.detail;
  EXPECT_EQ(2u, rf.entries);
  EXPECT_EQ("new3", fresh.replayed[0].second);
  EXPECT_EQ(5u, rf.next_sn);
}

namespace {

// What a mount keeping the window does after scan r of m: a zero block over
// each in-flight entry, then new transactions 3..4 from the end. Returns
// the scan of the result.
ScanResult erase_then_write_new(MemJournal& m, const ScanResult& r)
{
  for (uint64_t off : r.in_flight_offs) {
    memset(&m.dev[off], 0, 4096);
  }
  m.head = r.end_off;
  m.next_sn = r.next_sn;
  m.write_batch({"new3", "new4"});
  ScanResult out;
  EXPECT_EQ(0, m.scan(&out)) << out.detail;
  return out;
}

}  // namespace

TEST(JournalScan, KeptGenerationErasesInFlightBatchesFirst)
{
  // The window a mount keeps: the next writer goes on in the same
  // generation after the replayed entries, which stay replayable. The
  // batch that landed after the torn one is found beyond the end and
  // erased before the first new write; without that, it is replayed as
  // sns 5..6 (the flaw of InFlightBatchOfPreviousMountIsNotReplayed...).
  MemJournal j(128 * KB, 4096, 0x111);
  j.write_batch(payloads(2, 100, 'a'));                  // 1..2
  uint64_t off3 = j.write_batch(payloads(2, 100, 'b'));  // 3..4 (torn)
  uint64_t off5 = j.write_batch(payloads(2, 100, 'c'), 2);  // 5..6 landed
  j.write_batch(payloads(1, 5000, 'd'), 2);  // 7, two blocks, landed
  memset(&j.dev[off3], 0, 512);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  ASSERT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  ASSERT_TRUE(keeps_generation(r, 4096));
  ASSERT_EQ(2u, r.in_flight_offs.size());
  EXPECT_EQ(off5, r.in_flight_offs[0]);

  MemJournal m = j;
  ScanResult r2 = erase_then_write_new(m, r);
  EXPECT_EQ(ScanResult::CLEAN_END, r2.end) << r2.detail;
  ASSERT_EQ(4u, r2.entries);  // 1..2 kept, then the new 3..4
  EXPECT_EQ("new3", m.replayed[2].second);
  EXPECT_EQ(5u, r2.next_sn);
  EXPECT_TRUE(r2.in_flight_offs.empty());
}

// The erase is one O_DSYNC block write per in-flight entry, before any new
// batch: power lost part way (after any number of them, or inside one, torn
// at a 512-byte sector) leaves a journal whose next scan ends at the same
// place, keeps the generation, and lists what is still to erase; nothing
// of it is replayed.
TEST(JournalScan, PowerCutDuringTheEraseLeavesTheSameEnd)
{
  MemJournal j(128 * KB, 4096, 0x111);
  j.write_batch(payloads(2, 100, 'a'));                  // 1..2
  uint64_t off3 = j.write_batch(payloads(2, 100, 'b'));  // 3..4 (torn)
  // Each in-flight batch longer than a sector, so a torn erase breaks it
  // (one within the first sector would stay whole and be erased again).
  j.write_batch(payloads(2, 600, 'c'), 2);               // 5..6 landed
  j.write_batch(payloads(1, 5000, 'd'), 2);              // 7, landed
  j.write_batch(payloads(3, 700, 'e'), 2);               // 8..10, landed
  memset(&j.dev[off3], 0, 512);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  ASSERT_TRUE(keeps_generation(r, 4096));
  const std::vector<uint64_t> offs = r.in_flight_offs;
  ASSERT_EQ(3u, offs.size());
  // Cut after `done` whole erases, then inside the next one: none of it
  // (the block as it was), its first sector zeroed, or all but its first.
  for (size_t done = 0; done <= offs.size(); ++done) {
    for (int tear = 0; tear < 3; ++tear) {
      if (done == offs.size() && tear > 0) {
        continue;
      }
      SCOPED_TRACE("erased " + std::to_string(done) + ", tear " +
                   std::to_string(tear));
      MemJournal m = j;
      for (size_t i = 0; i < done; ++i) {
        memset(&m.dev[offs[i]], 0, 4096);
      }
      if (tear == 1) {
        memset(&m.dev[offs[done]], 0, 512);
      } else if (tear == 2) {
        memset(&m.dev[offs[done] + 512], 0, 4096 - 512);
      }
      // The next mount: the same end, the generation kept, and the
      // entries still whole listed for erasing.
      ScanResult r2;
      ASSERT_EQ(0, m.scan(&r2)) << r2.detail;
      ASSERT_EQ(ScanResult::CLEAN_END, r2.end) << r2.detail;
      EXPECT_EQ(r.end_off, r2.end_off);
      EXPECT_EQ(r.next_sn, r2.next_sn);
      EXPECT_EQ(2u, r2.entries);
      ASSERT_TRUE(keeps_generation(r2, 4096));
      const size_t whole = offs.size() - done - (tear ? 1 : 0);
      ASSERT_EQ(whole, r2.in_flight_offs.size());
      for (size_t i = 0; i < whole; ++i) {
        EXPECT_EQ(offs[offs.size() - whole + i], r2.in_flight_offs[i]);
      }
      // It erases those and writes new transactions 3..4: only they
      // follow. A torn erase's block is no entry; where the new batch ends
      // just before it, its header may still name the next sn, and the
      // scan calls the end torn, as after any torn write: a kept end, and
      // nothing of it replayed.
      ScanResult r3 = erase_then_write_new(m, r2);
      EXPECT_TRUE(r3.end == ScanResult::CLEAN_END ||
                  (tear && r3.end == ScanResult::TORN_OR_CORRUPT)) << r3.detail;
      EXPECT_TRUE(keeps_generation(r3, 4096));
      ASSERT_EQ(4u, r3.entries);
      EXPECT_EQ("new3", m.replayed[2].second);
      EXPECT_EQ(5u, r3.next_sn);
    }
  }
}

TEST(JournalScan, GenerationIsNotKeptWhereTheScanEndsInsideABlock)
{
  MemJournal j(128 * KB, 4096);
  write_torn_between_entries(j);
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_FALSE(keeps_generation(r, 4096));
  ScanOptions unchecked;
  unchecked.check_acked = false;
  MemJournal k(64 * KB, 4096);
  k.write_batch(payloads(2, 100, 'a'));
  ASSERT_EQ(0, k.scan(&r, unchecked)) << r.detail;
  EXPECT_FALSE(keeps_generation(r, 4096)) << "nothing searched beyond";
  ASSERT_EQ(0, k.scan(&r)) << r.detail;
  EXPECT_TRUE(keeps_generation(r, 4096));
}

// ---- a writer over many laps, scanned at random points ---------------------

TEST(JournalScan, RandomizedLapsReplayExactlyFromCheckpoint)
{
  std::mt19937 rng(4);
  MemJournal j(64 * 4096, 4096);
  const uint64_t bs = 4096;
  // Unreclaimed batches: (first sn, offset); the checkpoint is the oldest.
  std::vector<std::pair<sn_t, uint64_t>> live;
  for (int step = 0; step < 600; ++step) {
    std::vector<std::string> ps;
    int n = 1 + rng() % 6;
    for (int i = 0; i < n; ++i) {
      ps.push_back(std::string(rng() % 3000, char('a' + rng() % 26)));
    }
    BatchEncoder probe(bs, 1);
    for (int i = 0; i < n; ++i) {
      probe.add_txn(i + 1, 0, ps[i]);
    }
    size_t len = probe.finish().second;
    uint64_t tail = live.empty() ? j.head : live.front().second;
    while (!batch_fits(j.g, tail, j.head, len)) {
      ASSERT_FALSE(live.empty());
      live.erase(live.begin());  // writeback done: advance the checkpoint
      tail = live.empty() ? j.head : live.front().second;
    }
    sn_t first = j.next_sn;
    uint64_t off = j.write_batch(ps);
    live.emplace_back(first, off);
    if (rng() % 2 && live.size() > 1) {
      live.erase(live.begin());
    }
    if (step % 7 == 0) {
      j.h.start_sn = live.front().first;
      j.h.start_off = live.front().second;
      j.h.committed_up_to = j.h.start_sn - 1;
      ScanResult r;
      ASSERT_EQ(0, j.scan(&r)) << r.detail;
      ASSERT_EQ(ScanResult::CLEAN_END, r.end) << "step " << step << ": "
                                              << r.detail;
      j.expect_replayed(live.front().first, j.next_sn - 1);
      ASSERT_EQ(j.head, r.end_off);
    }
  }
}

// ---- a WRAP whose batch did not land ---------------------------------------

namespace {

/// three_batches_then_checkpoint(), then
/// batch 4 wraps: its WRAP block lands at the old head and the batch at the
/// area start does not (`how`: 0 nothing of it, 1 its first sector, 2 a
/// flipped payload byte). Returns the WRAP's offset.
uint64_t write_wrap_without_batch(MemJournal& j, int how)
{
  three_batches_then_checkpoint(j);
  const std::string before = j.dev;
  const uint64_t off4 = j.write_batch(four_blocks('d'));
  EXPECT_EQ(j.g.area_start, off4);
  if (how == 0) {
    memcpy(&j.dev[off4], &before[off4], 4 * 4096);
  } else if (how == 1) {
    memcpy(&j.dev[off4 + 512], &before[off4 + 512], 4 * 4096 - 512);
  } else {
    j.dev[off4 + 3000] ^= 1;
  }
  return j.last_wrap_off;
}

}  // anonymous namespace

// The scan ends at the WRAP, not at the area start after it: the next
// writer overwrites the WRAP block, and a mount that keeps the generation
// erases nothing of the replayed window. Before, the scan ended at the
// area start and listed the WRAP as in flight; the keeping mount zeroed
// it, and the next scan stopped there and erased the new batches behind it
// as "in flight" (or refused the journal once one was acknowledged).
TEST(JournalScan, WrapWhoseBatchDidNotLandIsTheEnd)
{
  for (int how = 0; how < 3; ++how) {
    SCOPED_TRACE("batch after the wrap: " + std::to_string(how));
    MemJournal j(16 * 4096, 4096, 0x111);
    const uint64_t wrap = write_wrap_without_batch(j, how);
    ScanResult r;
    ASSERT_EQ(0, j.scan(&r)) << r.detail;
    EXPECT_NE(ScanResult::CORRUPT_ACKED, r.end) << r.detail;
    j.expect_replayed(3, 3);
    EXPECT_EQ(wrap, r.end_off) << r.detail;
    EXPECT_EQ(4u, r.next_sn);
    EXPECT_EQ(0u, r.wraps);
    EXPECT_TRUE(r.in_flight_offs.empty()) << r.in_flight_offs.front();
    ASSERT_TRUE(keeps_generation(r, 4096));

    // Second life: keeps the window, writes 4..5 from the end. Third life:
    // scans again, keeps again, writes two more.
    MemJournal m = j;
    ScanResult r2 = erase_then_write_new(m, r);
    EXPECT_EQ(ScanResult::CLEAN_END, r2.end) << r2.detail;
    ASSERT_EQ(3u, r2.entries) << r2.detail;
    EXPECT_EQ("new3", m.replayed[1].second);
    EXPECT_EQ(6u, r2.next_sn);
    ASSERT_TRUE(keeps_generation(r2, 4096));
    // (Its end, the area start, holds what landed of batch 4: a torn
    // entry of an earlier life's sn, a kept end.)
    ScanResult r3 = erase_then_write_new(m, r2);
    EXPECT_NE(ScanResult::CORRUPT_ACKED, r3.end) << r3.detail;
    EXPECT_TRUE(keeps_generation(r3, 4096));
    EXPECT_EQ(5u, r3.entries) << r3.detail;
    EXPECT_EQ(8u, r3.next_sn);

    // A mount that starts a new generation starts at the WRAP too.
    JournalHeader n = header_after_replay(j.h, r, 0x222);
    EXPECT_EQ(wrap, n.start_off);
    EXPECT_EQ(4u, n.start_sn);
  }
}

// The checkpoint at the WRAP itself (its batch is the first not written
// back) and nothing replayed: the end is the tail, so the writer starts
// with an empty window where it ended (before, the end was the area start
// while the tail stayed at the WRAP, and JournalWriter::start asserted).
TEST(JournalScan, WrapAtTheCheckpointWhoseBatchDidNotLand)
{
  MemJournal j(16 * 4096, 4096, 0x111);
  const uint64_t wrap = write_wrap_without_batch(j, 0);
  j.h.start_off = wrap;
  j.h.start_sn = 4;
  j.h.committed_up_to = 3;
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(0u, r.entries);
  EXPECT_EQ(wrap, r.end_off) << r.detail;
  EXPECT_EQ(j.h.start_off, r.end_off);
  EXPECT_TRUE(r.in_flight_offs.empty());
  ASSERT_TRUE(keeps_generation(r, 4096));
  MemJournal m = j;
  ScanResult r2 = erase_then_write_new(m, r);
  ASSERT_EQ(2u, r2.entries) << r2.detail;
  EXPECT_EQ("new3", m.replayed[0].second);
}

// A block inside a live payload that looks like an entry of this
// generation (a client's data that holds a copy of journal blocks) is
// neither evidence of lost data nor an in-flight entry to erase: the
// search beyond the end does not look inside the live range.
TEST(JournalScan, LookalikeEntryInsideALivePayloadIsIgnored)
{
  MemJournal j(64 * KB, 4096, 0x111);
  BatchEncoder fake(4096, 0x111);
  fake.add_txn(1000, 999, std::string("not a journal entry"));
  auto [fbuf, flen] = fake.finish();
  ASSERT_EQ(4096u, flen);
  // One entry whose payload puts the fake at the second block of the area.
  std::string p(3 * 4096, 'x');
  memcpy(&p[4096 - 48], fbuf, flen);
  j.write_batch({p});
  ScanResult r;
  ASSERT_EQ(0, j.scan(&r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end) << r.detail;
  j.expect_replayed(1, 1);
  EXPECT_TRUE(r.in_flight_offs.empty()) << r.in_flight_offs.front();
  EXPECT_TRUE(keeps_generation(r, 4096));
}
