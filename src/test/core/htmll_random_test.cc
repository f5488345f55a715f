// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: randomized differential test of the HTMLL (with plan_writeback
 * and CheckpointTracker) against a plain byte-map model.
 *
 * A store is simulated: writes go to the cache or, when the cache says
 * DIRECT_*, to a simulated backend (after the object's cached state, as the
 * store must do); reads overlay lookup() on the backend; freeze() and a
 * drain of the frozen generation via take_frozen() + plan_writeback() (gaps
 * filled from the backend) play the flush thread. Checked throughout:
 *  - reads through the cache equal the model;
 *  - after every end_flush(), backend + cache equal the model, and the
 *    backend alone equals it for objects with nothing cached;
 *  - the sns a take returns are exactly the merged, not yet taken ones;
 *  - the checkpoint is exactly the oldest sn whose data is not yet in the
 *    backend (so never past one).
 *
 * Seeds 1..8 by default; MIMCORE_SEED=<n> runs only seed n.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/checkpoint_tracker.h"
#include "core/crc32c.h"
#include "core/htmll.h"
#include "core/writeback_plan.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mim;

namespace {

// Bytes of an object, with which of them were ever written.
struct Image {
  std::string bytes;
  std::vector<uint8_t> valid;

  void write(uint64_t off, const char* p, const uint8_t* v, uint64_t len) {
    if (bytes.size() < off + len) {
      bytes.resize(off + len, 0);
      valid.resize(off + len, 0);
    }
    std::copy(p, p + len, bytes.begin() + off);
    if (v) {
      std::copy(v, v + len, valid.begin() + off);
    } else {
      std::fill(valid.begin() + off, valid.begin() + off + len, 1);
    }
  }
  // [off, off+len) as bytes and validity (zeros / invalid past the end).
  void read(uint64_t off, uint64_t len, std::string* b,
            std::vector<uint8_t>* v) const {
    b->assign(len, 0);
    v->assign(len, 0);
    if (off < bytes.size()) {
      const uint64_t n = std::min<uint64_t>(len, bytes.size() - off);
      std::copy(bytes.begin() + off, bytes.begin() + off + n, b->begin());
      std::copy(valid.begin() + off, valid.begin() + off + n, v->begin());
    }
  }
};

using Key = std::pair<std::string, std::string>;  // (cid, oid)

struct ModelObject {
  Image ref;      // what a reader must see
  Image backend;  // what the simulated backend file holds
  std::vector<sn_t> active_sns;  // merged into the active generation, not taken
  std::vector<sn_t> frozen_sns;  // in the frozen generation, not taken
};

class Sim {
 public:
  Sim(uint64_t seed, const HtmllConfig& c)
    : cfg_(c), h_(c), rng_(seed) {
    for (int i = 0; i < 4; ++i) {
      cids_.push_back("1." + std::to_string(i) + "_head");
    }
    for (int i = 0; i < 10; ++i) {
      oids_.push_back("rbd_data.10226b8b4567.00000000000000" + std::to_string(10 + i));
    }
  }

  void run(int ops) {
    for (int i = 0; i < ops && !::testing::Test::HasFatalFailure(); ++i) {
      const unsigned r = rng_() % 100;
      if (r < 55) {
        do_write();
      } else if (r < 72) {
        do_read();
      } else if (r < 76) {
        do_take_object();
      } else if (r < 80) {
        do_freeze();
      } else {
        do_drain_step();
      }
      if (i % 250 == 0) {
        check_accounting();
      }
    }
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    finish();
  }

 private:
  uint64_t rand_len() {
    switch (rng_() % 4) {
    case 0:
      return 1 + rng_() % 64;                  // tiny
    case 1:
      return 1 + rng_() % 65536;               // anything up to 64 KiB
    default:
      return 4096 * (1 + rng_() % 16);         // 4 KiB multiples
    }
  }
  uint64_t rand_off(uint64_t len) {
    if (rng_() % 10 == 0) {
      return rng_() % (cfg_.block_size + 65536);  // sometimes beyond the block
    }
    const uint64_t room = cfg_.block_size - std::min(len, cfg_.block_size);
    if (rng_() % 2 == 0) {
      return (rng_() % (room / 4096 + 1)) * 4096;  // aligned
    }
    return rng_() % (room + 1);
  }
  Key rand_key() {
    // Skewed: the first collections and objects are written more.
    const size_t c = std::min(rng_() % cids_.size(), rng_() % cids_.size());
    const size_t o = std::min(rng_() % oids_.size(), rng_() % oids_.size());
    return {cids_[c], oids_[o]};
  }

  void durable(sn_t sn) {
    ASSERT_EQ(1u, outstanding_.erase(sn)) << "sn " << sn;
    ASSERT_EQ(0, tracker_.record_durable(sn)) << "sn " << sn;
    check_checkpoint();
  }
  void check_checkpoint() {
    // Exactly the oldest sn not yet in the backend: never past it, and not
    // held back by anything else.
    const sn_t want = outstanding_.empty() ? next_sn_ + 1 : *outstanding_.begin();
    ASSERT_EQ(want, tracker_.checkpoint());
  }

  // The bytes of `d`, as the store gets them: from memory, checked against
  // the model journal at d.jpos; or, journal-only, from the model journal,
  // the whole write's crc checked first.
  void fetch(const DataRef& d, std::string* out) {
    ASSERT_TRUE(d.has_jpos());
    ASSERT_LE(d.jpos + d.length, journal_.size());
    if (d.resident()) {
      ASSERT_EQ(nullptr, d.source());
      ASSERT_EQ(0, journal_.compare(d.jpos, d.length, d.data, d.length))
        << "jpos " << d.jpos << " length " << d.length;
      out->assign(d.data, d.length);
      return;
    }
    const JournalSource* src = d.source();
    ASSERT_NE(nullptr, src);
    ASSERT_GE(d.jpos, src->jpos);
    ASSERT_LE(d.jpos + d.length, src->jpos + src->length);
    // The source is the whole write the bytes came with (the cache keeps
    // it as a record and hands out a copy), not just a range whose crc
    // happens to match.
    auto w = journal_writes_.find(src->jpos);
    ASSERT_NE(journal_writes_.end(), w) << "jpos " << src->jpos;
    ASSERT_EQ(w->second, src->length) << "jpos " << src->jpos;
    ASSERT_EQ(src->crc, crc32c(0, journal_.data() + src->jpos, src->length));
    out->assign(journal_, d.jpos, d.length);
  }

  // Write a taken state to the backend the way the flush thread does: runs
  // from plan_writeback(), gaps read back from the backend first.
  void write_back(ModelObject& m, const ObjectState& st,
                  const std::vector<sn_t>& want_sns) {
    ASSERT_EQ(want_sns, st.sns);
    for (size_t i = 1; i < st.extents.size(); ++i) {
      ASSERT_LE(st.extents[i - 1].end(), st.extents[i].offset);
    }
    const uint64_t gap_fill = rng_() % 3 == 0 ? 0 : rng_() % 32768;
    for (const WriteRun& run : plan_writeback(st.extents, gap_fill)) {
      std::string buf(run.length, 0);
      std::vector<uint8_t> valid(run.length, 1);
      for (const WritePiece& p : run.pieces) {
        const uint64_t at = p.offset - run.offset;
        if (p.is_gap()) {
          std::string b;
          std::vector<uint8_t> v;
          m.backend.read(p.offset, p.length, &b, &v);
          std::copy(b.begin(), b.end(), buf.begin() + at);
          std::copy(v.begin(), v.end(), valid.begin() + at);
        } else {
          ASSERT_EQ(p.length, p.data.length);
          std::string b;
          ASSERT_NO_FATAL_FAILURE(fetch(p.data, &b));
          std::copy(b.begin(), b.end(), buf.begin() + at);
        }
      }
      m.backend.write(run.offset, buf.data(), valid.data(), run.length);
    }
    for (sn_t sn : st.sns) {
      auto it = refs_.find(sn);
      ASSERT_NE(refs_.end(), it);
      if (--it->second == 0) {
        refs_.erase(it);
        durable(sn);
      }
    }
  }

  void do_write() {
    const Key k = rand_key();
    ModelObject& m = objs_[k];
    const uint64_t len = rand_len();
    const uint64_t off = rand_off(len);
    std::string data(len, 0);
    for (uint64_t i = 0; i < len; i += 8) {
      const uint64_t x = rng_();
      std::memcpy(&data[i], &x, std::min<uint64_t>(8, len - i));
    }
    const sn_t sn = ++next_sn_;
    outstanding_.insert(sn);
    m.ref.write(off, data.data(), nullptr, len);

    // Model of the slot rule: the oid holds a slot if any collection has an
    // active block for it.
    std::set<std::string> active_oids;
    for (const auto& [kk, mm] : objs_) {
      if (!mm.active_sns.empty()) {
        active_oids.insert(kk.second);
      }
    }
    const bool slot_ok = active_oids.count(k.second) || active_oids.size() < cfg_.slot_cap();
    const bool in_block = off + len <= cfg_.block_size;

    // The write's bytes also go to a model journal, after a few bytes of
    // other entries, and the cache is told where (DataRef::jpos): every
    // extent that comes out, cut or sliced, must still point at its bytes.
    // Half of them keep no bytes in memory at all (DataRef::in_journal).
    journal_.append(rng_() % 64, '#');
    DataRef ref;
    if (rng_() % 2) {
      ref = DataRef::copy_of(data);
      ref.jpos = journal_.size();
    } else {
      auto src = std::make_shared<JournalSource>();
      src->jpos = journal_.size();
      src->length = len;
      src->crc = crc32c(0, data.data(), len);
      journal_writes_.emplace(src->jpos, len);
      ref = DataRef::in_journal(std::move(src));
    }
    journal_ += data;

    const bool atomic_take = rng_() % 2 == 0;
    const HtmllStats before = h_.stats();
    ObjectState taken;
    const InsertResult r = atomic_take
      ? h_.insert(k.first, k.second, sn, off, ref, &taken)
      : h_.insert(k.first, k.second, sn, off, ref);
    const HtmllStats s = h_.stats();
    ASSERT_LE(s.bytes + s.frozen_bytes, cfg_.max_bytes);
    if (r == InsertResult::MERGED) {
      ASSERT_TRUE(slot_ok);
      ASSERT_TRUE(in_block);
      m.active_sns.push_back(sn);
      refs_[sn] = 1;
      return;
    }
    ASSERT_EQ(r == InsertResult::DIRECT_NO_SLOT, !slot_ok) << to_string(r);
    if (r == InsertResult::DIRECT_BEYOND_BLOCK) {
      ASSERT_FALSE(in_block);
    }
    if (r == InsertResult::DIRECT_MEMORY_CAP) {
      ASSERT_TRUE(in_block);
      ASSERT_GT(before.bytes + before.frozen_bytes + len, cfg_.max_bytes);
    }
    // Direct: first whatever is cached for the object (older), then this.
    std::vector<sn_t> want = m.frozen_sns;
    want.insert(want.end(), m.active_sns.begin(), m.active_sns.end());
    if (!atomic_take) {
      if (!h_.take_object(k.first, k.second, &taken)) {
        ASSERT_TRUE(want.empty());
      }
    }
    write_back(m, taken, want);
    m.frozen_sns.clear();
    m.active_sns.clear();
    m.backend.write(off, data.data(), nullptr, len);
    durable(sn);
  }

  // Backend overlaid with the cache, for [off, off+len).
  void read_through(const Key& k, uint64_t off, uint64_t len, std::string* b,
                    std::vector<uint8_t>* v) {
    ModelObject& m = objs_[k];
    m.backend.read(off, len, b, v);
    std::vector<CachedExtent> ext;
    h_.lookup(k.first, k.second, off, len, &ext);
    uint64_t prev_end = 0;
    for (const CachedExtent& e : ext) {
      ASSERT_GE(e.offset, off);
      ASSERT_LE(e.end(), off + len);
      ASSERT_GE(e.offset, prev_end);
      ASSERT_GT(e.data.length, 0u);
      prev_end = e.end();
      std::string bytes;
      ASSERT_NO_FATAL_FAILURE(fetch(e.data, &bytes));
      std::copy(bytes.begin(), bytes.end(), b->begin() + (e.offset - off));
      std::fill(v->begin() + (e.offset - off), v->begin() + (e.end() - off), 1);
    }
  }

  void expect_equal(const Key& k, uint64_t off, uint64_t len,
                    const std::string& b, const std::vector<uint8_t>& v) {
    std::string rb;
    std::vector<uint8_t> rv;
    objs_[k].ref.read(off, len, &rb, &rv);
    // Bytes never written are 0 everywhere (images grow zero-filled, the
    // cache holds only written bytes, gap fills copy what they read), so
    // whole-buffer equality is exact.
    if (rv == v && rb == b) {
      return;
    }
    // Report the first difference.
    for (uint64_t i = 0; i < len; ++i) {
      ASSERT_EQ(rv[i], v[i]) << k.first << "/" << k.second << " validity at " << off + i;
      if (rv[i]) {
        ASSERT_EQ(rb[i], b[i]) << k.first << "/" << k.second << " byte at " << off + i;
      }
    }
  }

  void do_read() {
    const Key k = rand_key();
    const uint64_t off = rng_() % (cfg_.block_size + 65536);
    const uint64_t len = 1 + rng_() % 131072;
    std::string b;
    std::vector<uint8_t> v;
    read_through(k, off, len, &b, &v);
    expect_equal(k, off, len, b, v);
  }

  void do_take_object() {
    const Key k = rand_key();
    ModelObject& m = objs_[k];
    std::vector<sn_t> want = m.frozen_sns;
    want.insert(want.end(), m.active_sns.begin(), m.active_sns.end());
    ObjectState st;
    const bool got = h_.take_object(k.first, k.second, &st);
    ASSERT_EQ(!want.empty(), got);
    if (got) {
      write_back(m, st, want);
    }
    m.frozen_sns.clear();
    m.active_sns.clear();
    ASSERT_FALSE(h_.contains(k.first, k.second));
  }

  void do_freeze() {
    FlushOrder order;
    const bool frozen = h_.has_frozen();
    ASSERT_EQ(!frozen, h_.freeze(&order));
    if (frozen) {
      return;
    }
    std::set<Key> want;
    for (auto& [k, m] : objs_) {
      ASSERT_TRUE(m.frozen_sns.empty());
      m.frozen_sns.swap(m.active_sns);
      if (!m.frozen_sns.empty()) {
        want.insert(k);
      }
    }
    std::set<Key> listed;
    drain_.clear();
    for (const auto& [cid, oids] : order.collections) {
      for (size_t i = 0; i < oids.size(); ++i) {
        if (i > 0) {
          ASSERT_LT(oids[i - 1], oids[i]);
        }
        ASSERT_TRUE(listed.insert({cid, oids[i]}).second);
        drain_.push_back({cid, oids[i]});
      }
    }
    ASSERT_EQ(want, listed);
    ASSERT_EQ(want.size(), order.blocks);
    ASSERT_EQ(0u, h_.stats().blocks_used);
  }

  void do_drain_step() {
    if (!h_.has_frozen()) {
      return;
    }
    if (drain_.empty()) {
      h_.end_flush();
      check_all_flushed();
      return;
    }
    const Key k = drain_.back();
    drain_.pop_back();
    ModelObject& m = objs_[k];
    ObjectState st;
    const bool got = h_.take_frozen(k.first, k.second, &st);
    ASSERT_EQ(!m.frozen_sns.empty(), got);  // false when take_object got it first
    if (got) {
      write_back(m, st, m.frozen_sns);
      m.frozen_sns.clear();
    }
  }

  // After a flush: backend + cache == model everywhere, backend alone ==
  // model where nothing is cached.
  void check_all_flushed() {
    for (auto& [k, m] : objs_) {
      ASSERT_TRUE(m.frozen_sns.empty());
      const uint64_t len = m.ref.bytes.size();
      if (m.active_sns.empty()) {
        ASSERT_FALSE(h_.contains(k.first, k.second));
        ASSERT_EQ(len, m.backend.bytes.size());
        expect_equal(k, 0, len, m.backend.bytes, m.backend.valid);
      } else {
        std::string b;
        std::vector<uint8_t> v;
        read_through(k, 0, len + 1, &b, &v);
        expect_equal(k, 0, len + 1, b, v);
      }
    }
  }

  // The byte counters equal what lookup() shows when one generation is
  // cached; never less than it otherwise.
  void check_accounting() {
    uint64_t shown = 0;
    std::vector<CachedExtent> ext;
    for (const auto& [k, m] : objs_) {
      h_.lookup(k.first, k.second, 0, UINT64_MAX, &ext);
      for (const auto& e : ext) {
        shown += e.data.length;
      }
      ASSERT_EQ(!m.active_sns.empty() || !m.frozen_sns.empty(),
                h_.contains(k.first, k.second));
    }
    const HtmllStats s = h_.stats();
    if (!h_.has_frozen()) {
      ASSERT_EQ(shown, s.bytes);
    } else {
      ASSERT_LE(shown, s.bytes + s.frozen_bytes);
    }
    ASSERT_LE(s.bytes + s.frozen_bytes, cfg_.max_bytes);
    ASSERT_EQ(s.inserts, s.merged + s.direct_no_slot + s.direct_no_block +
                         s.direct_beyond_block + s.direct_memory_cap);
  }

  // Drain everything; then the backend alone is the model and every sn is
  // durable.
  void finish() {
    if (h_.has_frozen()) {
      while (!drain_.empty() && !::testing::Test::HasFatalFailure()) {
        do_drain_step();
      }
      do_drain_step();  // end_flush + check
    }
    for (auto& [k, m] : objs_) {
      ObjectState st;
      std::vector<sn_t> want = m.active_sns;
      if (h_.take_object(k.first, k.second, &st)) {
        write_back(m, st, want);
      } else {
        ASSERT_TRUE(want.empty());
      }
      m.active_sns.clear();
      ASSERT_EQ(m.ref.bytes.size(), m.backend.bytes.size());
      expect_equal(k, 0, m.ref.bytes.size(), m.backend.bytes, m.backend.valid);
    }
    const HtmllStats s = h_.stats();
    EXPECT_EQ(0u, s.bytes);
    EXPECT_EQ(0u, s.slots_used);
    EXPECT_TRUE(outstanding_.empty());
    EXPECT_EQ(next_sn_ + 1, tracker_.checkpoint());
    EXPECT_EQ(0u, tracker_.pending());
    stats_ = s;
  }

 public:
  HtmllStats stats_;

 private:
  HtmllConfig cfg_;
  Htmll h_;
  std::mt19937_64 rng_;
  std::vector<std::string> cids_, oids_;
  std::map<Key, ModelObject> objs_;
  std::vector<Key> drain_;  // frozen objects not yet drained
  std::string journal_;  // every write's bytes, at the jpos it was given
  std::map<uint64_t, uint64_t> journal_writes_;  // journal-only writes: jpos -> length
  sn_t next_sn_ = 0;
  std::set<sn_t> outstanding_;    // sns whose data is not in the backend yet
  std::map<sn_t, uint32_t> refs_;  // merged sns -> takes still to come
  CheckpointTracker tracker_;
};

// ThreadSanitizer makes the model's byte copies ~40x slower, and this test
// is single-threaded: keep it short there (the threaded tests are what a
// TSAN run is for).
#if defined(__SANITIZE_THREAD__)
constexpr int OPS_PER_SEED = 600;
#else
constexpr int OPS_PER_SEED = 3000;
#endif

std::vector<uint64_t> seeds()
{
  if (const char* e = std::getenv("MIMCORE_SEED")) {
    return {std::strtoull(e, nullptr, 0)};
  }
  return {1, 2, 3, 4, 5, 6, 7, 8};
}

}  // namespace

TEST(HtmllRandom, DifferentialAgainstByteModel)
{
  HtmllStats sum;
  for (uint64_t seed : seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MIMCORE_SEED=" +
                 std::to_string(seed) + ")");
    // Small tables so every DIRECT_* reason shows up; the shape varies
    // with the seed.
    std::mt19937_64 pick(seed * 0x9e3779b97f4a7c15ull);
    HtmllConfig c;
    c.slots = std::vector<uint32_t>{3, 6, 64}[pick() % 3];
    c.blocks = std::vector<uint32_t>{1, 2, 4}[pick() % 3];
    c.block_size = 256 << 10;
    c.max_bytes = std::vector<uint64_t>{256 << 10, 1 << 20, 64 << 20}[pick() % 3];
    // Half the shapes grow their geometry (past the 10 oids and 4 cids
    // the simulation uses, or not), half keep it fixed.
    if (pick() % 2) {
      c.max_slots = c.slots * 3;
      c.max_blocks = c.blocks * 2;
    }
    Sim sim(seed, c);
    sim.run(OPS_PER_SEED);
    if (HasFatalFailure()) {
      return;
    }
    sum.merged += sim.stats_.merged;
    sum.direct_no_slot += sim.stats_.direct_no_slot;
    sum.direct_no_block += sim.stats_.direct_no_block;
    sum.direct_beyond_block += sim.stats_.direct_beyond_block;
    sum.direct_memory_cap += sim.stats_.direct_memory_cap;
    sum.freezes += sim.stats_.freezes;
    sum.table_grows += sim.stats_.table_grows;
    sum.position_grows += sim.stats_.position_grows;
  }
  if (seeds().size() > 1) {
    // Every path must have been exercised.
    EXPECT_GT(sum.merged, 0u);
    EXPECT_GT(sum.direct_no_slot, 0u);
    EXPECT_GT(sum.direct_no_block, 0u);
    EXPECT_GT(sum.direct_beyond_block, 0u);
    EXPECT_GT(sum.direct_memory_cap, 0u);
    EXPECT_GT(sum.freezes, 0u);
    EXPECT_GT(sum.table_grows, 0u);
    EXPECT_GT(sum.position_grows, 0u);
  }
  std::printf("merged %" PRIu64 ", direct: no_slot %" PRIu64 " no_block %" PRIu64
              " beyond %" PRIu64 " memory_cap %" PRIu64 "; freezes %" PRIu64 "\n",
              sum.merged, sum.direct_no_slot, sum.direct_no_block,
              sum.direct_beyond_block, sum.direct_memory_cap, sum.freezes);
}
