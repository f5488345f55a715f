// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: heap bytes the HTMLL costs per cached write (issue 15, step 5
 * of docs/plan-merge-at-scale.md).
 *
 * Fills an Htmll configured like the store's (MIMMount.cc
 * _make_merge_cache with the option defaults: 4096 slots growing to 2^20,
 * 64 positions growing to 1024, 4 MiB blocks, max_bytes half a 4 GiB
 * journal) with N 4 KiB writes at uniform random 4 KiB-aligned offsets of
 * a 64 GiB image: 16,384 objects of 4 MiB in 32 collections. Each write is
 * made the way the store makes it (MIMJournalData.cc _cached_form):
 *
 *   journal   mimstore_merge_data_in_journal: a make_shared JournalSource
 *             (jpos, length, crc) and DataRef::in_journal, no bytes kept
 *   resident  the bytes in memory: DataRef::copy_of of 4 KiB, with a jpos
 *
 * and reports the growth of the heap (glibc mallinfo2: uordblks, the
 * in-use chunks with their malloc headers, plus hblkhd, the mmap()ed
 * ones) over the inserts, divided by the writes merged. What is counted is
 * everything the cache keeps for those writes: extents, sn lists, blocks,
 * slots and oid strings, table growth. Not a gtest: it prints, it does not
 * judge.
 *
 *   htmll_membench [-w write_bytes] [-o objects] [N ...]
 *
 * Defaults: 4096-byte writes, 16384 objects (64 GiB), N = 200000 and
 * 400000. Small writes into few objects (-w 512 -o 16) show the cost of
 * many extents per block: the insert rate, not the memory, is the point.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/htmll.h"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mim;

namespace {

constexpr uint64_t BLOCK = uint64_t(4) << 20;
constexpr uint32_t CIDS = 32;
constexpr uint64_t JOURNAL = uint64_t(4) << 30;

int64_t heap_bytes()
{
  const struct mallinfo2 mi = mallinfo2();
  return int64_t(mi.uordblks + mi.hblkhd);
}

HtmllConfig store_config()
{
  // mimstore.yaml.in defaults, as _make_merge_cache sets them up with
  // mimstore_merge_data_in_journal: max_bytes is half the journal.
  HtmllConfig c;
  c.slots = 4096;
  c.blocks = 64;
  c.max_slots = 1u << 20;
  c.max_blocks = 1024;
  c.block_size = BLOCK;
  c.max_bytes = JOURNAL / 2;
  return c;
}

struct Result {
  uint64_t merged = 0;
  uint64_t refused = 0;
  uint64_t extents = 0;
  uint64_t objects = 0;
  int64_t heap = 0;
  double seconds = 0;
};

Result run(uint64_t n, bool journal, uint64_t write, uint64_t objects,
           uint64_t seed)
{
  // FileStore-style names, as the store passes them (the collection's
  // directory name and the object's file name, 50-60 bytes).
  std::vector<std::string> cids, oids;
  char name[128];
  for (uint32_t c = 0; c < CIDS; ++c) {
    std::snprintf(name, sizeof(name), "2.%x_head", c);
    cids.emplace_back(name);
  }
  for (uint64_t o = 0; o < objects; ++o) {
    std::snprintf(name, sizeof(name),
                  "rbd\\udata.10226b8b4567.%016llx__head_%08X__2",
                  (unsigned long long)o, unsigned(o * 2654435761u));
    oids.emplace_back(name);
  }
  std::mt19937_64 rng(seed);
  const std::string bytes(write, 'x');

  malloc_trim(0);
  Result r;
  auto h = std::make_unique<Htmll>(store_config());
  const int64_t before = heap_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t jpos = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t obj = rng() % objects;
    const uint64_t off = (rng() % (BLOCK / write)) * write;
    DataRef ref;
    if (journal) {
      auto src = std::make_shared<JournalSource>();
      src->jpos = jpos;
      src->length = write;
      src->crc = uint32_t(i);
      ref = DataRef::in_journal(std::move(src));
    } else {
      ref = DataRef::copy_of(bytes);
      ref.jpos = jpos;
    }
    jpos += write + 512;  // the transaction around the data
    const InsertResult res =
      h->insert(cids[obj % CIDS], oids[obj], i + 1, off, std::move(ref));
    if (res == InsertResult::MERGED) {
      ++r.merged;
    } else {
      ++r.refused;
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  r.heap = heap_bytes() - before;
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  const HtmllStats s = h->stats();
  r.extents = s.extents;
  r.objects = s.slots_used;
  return r;
}

}  // namespace

int main(int argc, char** argv)
{
  std::vector<uint64_t> ns;
  uint64_t write = 4096, objects = 16384;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "-w" || a == "-o") && i + 1 < argc) {
      (a == "-w" ? write : objects) = std::strtoull(argv[++i], nullptr, 10);
    } else {
      ns.push_back(std::strtoull(argv[i], nullptr, 10));
    }
  }
  if (ns.empty()) {
    ns = {200000, 400000};
  }
  if (write == 0 || BLOCK % write != 0 || objects == 0) {
    std::fprintf(stderr, "-w must divide 4 MiB, -o must be > 0\n");
    return 2;
  }
  std::printf("%g GiB image, 4 MiB objects (%llu), %u collections, uniform "
              "%llu-byte writes\n",
              double(objects * BLOCK) / double(uint64_t(1) << 30),
              (unsigned long long)objects, CIDS, (unsigned long long)write);
  std::printf("%-9s %8s %8s %8s %8s %12s %10s %10s %8s\n", "mode", "N",
              "merged", "refused", "objects", "extents", "heap MiB",
              "B/write", "M ins/s");
  for (const bool journal : {true, false}) {
    for (uint64_t n : ns) {
      const Result r = run(n, journal, write, objects, 42);
      std::printf("%-9s %8llu %8llu %8llu %8llu %12llu %10.1f %10.1f %8.2f\n",
                  journal ? "journal" : "resident", (unsigned long long)n,
                  (unsigned long long)r.merged, (unsigned long long)r.refused,
                  (unsigned long long)r.objects, (unsigned long long)r.extents,
                  double(r.heap) / (1 << 20),
                  r.merged ? double(r.heap) / double(r.merged) : 0.0,
                  r.seconds > 0 ? double(n) / r.seconds / 1e6 : 0.0);
    }
  }
  return 0;
}
