// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: microbenchmarks of the HTMLL.
 *
 * BM_HtmllInsert: merge inserts per second, bookkeeping only: the DataRefs
 * are built before the timed loop (a pool of buffers, shared), so no byte
 * is copied; what is timed is hashing, slot and position lookup, the
 * extent map update, reference counts and the mutex. Uniform or skewed
 * (Zipf, s = 1.2) choice of object and of (size-aligned) offset. Every
 * FLUSH_EVERY inserts the cache is frozen and drained with the timer
 * paused, as the flush thread would, so the timed inserts see a cache that
 * fills up from empty again and again instead of a steady state of exact
 * overwrites.
 *
 * BM_HtmllFlushPlan: a full flush: freeze + take_frozen of every object +
 * plan_writeback (64 KiB gap fill) + end_flush, over a cache filled (timer
 * paused) with 4 KiB random writes. Reported in cached MB/s and objects/s.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/htmll.h"
#include "core/writeback_plan.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace mim;

namespace {

constexpr uint64_t BLOCK = 4 << 20;       // 4 MiB objects, Ceph's default
constexpr int CIDS = 4;
constexpr int OIDS_PER_CID = 256;         // 1024 objects
constexpr size_t OPS = 1 << 16;           // pre-generated choices, cycled
constexpr uint64_t FLUSH_EVERY = 1 << 16;

// Zipf(s) over [0, n): the CDF once, then a binary search per draw.
class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += 1.0 / std::pow(double(i + 1), s);
      cdf_[i] = sum;
    }
    for (double& c : cdf_) {
      c /= sum;
    }
  }
  size_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
  }

 private:
  std::vector<double> cdf_;
};

struct Op {
  uint32_t cid;
  uint32_t oid;
  uint64_t off;
  uint32_t ref;
};

struct Workload {
  std::vector<std::string> cids, oids;
  std::vector<Op> ops;
  std::vector<DataRef> refs;
};

// Ceph-like names: PG collections, RBD data objects (~40 bytes).
Workload make_workload(uint64_t size, bool skewed, uint64_t seed)
{
  Workload w;
  for (int c = 0; c < CIDS; ++c) {
    w.cids.push_back("2." + std::to_string(c * 7 + 3) + "_head");
  }
  char name[64];
  for (int o = 0; o < CIDS * OIDS_PER_CID; ++o) {
    std::snprintf(name, sizeof(name), "rbd_data.10226b8b4567.%016x", o);
    w.oids.push_back(name);
  }
  for (int i = 0; i < 16; ++i) {
    w.refs.push_back(DataRef::copy_of(std::string(size, 'a' + i)));
  }
  std::mt19937_64 rng(seed);
  const size_t objects = CIDS * OIDS_PER_CID;
  const size_t positions = BLOCK / size;
  // Hot objects and offsets scattered, not the first ones.
  std::vector<uint32_t> obj_perm(objects), pos_perm(positions);
  std::iota(obj_perm.begin(), obj_perm.end(), 0);
  std::iota(pos_perm.begin(), pos_perm.end(), 0);
  std::shuffle(obj_perm.begin(), obj_perm.end(), rng);
  std::shuffle(pos_perm.begin(), pos_perm.end(), rng);
  Zipf zobj(objects, 1.2), zpos(positions, 1.2);
  for (size_t i = 0; i < OPS; ++i) {
    const uint32_t obj = obj_perm[skewed ? zobj(rng) : rng() % objects];
    const uint64_t pos = pos_perm[skewed ? zpos(rng) : rng() % positions];
    // Object obj lives in collection obj % CIDS.
    w.ops.push_back(Op{obj % CIDS, obj, pos * size, uint32_t(rng() % w.refs.size())});
  }
  return w;
}

HtmllConfig bench_config()
{
  HtmllConfig c;
  c.slots = 2048;
  c.blocks = 8;
  c.block_size = BLOCK;
  // Accounting only: the refs share 16 buffers, so the cap never binds.
  c.max_bytes = uint64_t(1) << 40;
  return c;
}

// Freeze and drain everything, as the flush thread would (untimed).
void drain(Htmll& h)
{
  FlushOrder order;
  if (!h.freeze(&order)) {
    return;
  }
  ObjectState st;
  for (const auto& [cid, oids] : order.collections) {
    for (const auto& oid : oids) {
      h.take_frozen(cid, oid, &st);
    }
  }
  h.end_flush();
}

void BM_HtmllInsert(benchmark::State& state)
{
  const uint64_t size = state.range(0);
  const bool skewed = state.range(1) != 0;
  const Workload w = make_workload(size, skewed, 42);
  Htmll h(bench_config());
  size_t i = 0;
  sn_t sn = 0;
  uint64_t merged = 0;
  for (auto _ : state) {
    const Op& op = w.ops[i % OPS];
    const InsertResult r = h.insert(w.cids[op.cid], w.oids[op.oid], ++sn, op.off,
                                    w.refs[op.ref]);
    merged += (r == InsertResult::MERGED);
    if (++i % FLUSH_EVERY == 0) {
      state.PauseTiming();
      drain(h);
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["merged_pct"] = 100.0 * merged / std::max<uint64_t>(1, i);
  state.SetLabel(std::string(skewed ? "zipf1.2" : "uniform") + " " +
                 std::to_string(size >> 10) + "KiB");
}
BENCHMARK(BM_HtmllInsert)
  ->ArgNames({"size", "skewed"})
  ->ArgsProduct({{4096, 8192, 65536}, {0, 1}});

void BM_HtmllFlushPlan(benchmark::State& state)
{
  // 256 objects, 4 KiB writes at random aligned offsets in the first MiB of
  // each: enough writes to cover ~63% of that, so runs form and gaps are
  // filled, as after a flush interval of random microwrites.
  constexpr int OBJECTS = 256;
  constexpr uint64_t SPAN = 1 << 20;
  constexpr uint64_t WSIZE = 4096;
  constexpr size_t WRITES = OBJECTS * (SPAN / WSIZE);
  const Workload w = make_workload(WSIZE, false, 7);
  std::mt19937_64 rng(11);
  Htmll h(bench_config());
  uint64_t bytes = 0, objects = 0, runs = 0, extents = 0;
  sn_t sn = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t k = 0; k < WRITES; ++k) {
      const uint32_t obj = rng() % OBJECTS;
      h.insert(w.cids[obj % CIDS], w.oids[obj], ++sn, (rng() % (SPAN / WSIZE)) * WSIZE,
               w.refs[k % w.refs.size()]);
    }
    state.ResumeTiming();

    FlushOrder order;
    h.freeze(&order);
    ObjectState st;
    for (const auto& [cid, oids] : order.collections) {
      for (const auto& oid : oids) {
        if (h.take_frozen(cid, oid, &st)) {
          extents += st.extents.size();
          std::vector<WriteRun> plan = plan_writeback(st.extents, 64 << 10);
          runs += plan.size();
          benchmark::DoNotOptimize(plan.data());
          ++objects;
        }
      }
    }
    bytes += order.bytes;
    h.end_flush();
  }
  state.SetBytesProcessed(bytes);
  state.counters["objects_per_s"] = benchmark::Counter(objects, benchmark::Counter::kIsRate);
  state.counters["extents_per_s"] = benchmark::Counter(extents, benchmark::Counter::kIsRate);
  state.counters["runs_per_obj"] = double(runs) / std::max<uint64_t>(1, objects);
  state.counters["extents_per_obj"] = double(extents) / std::max<uint64_t>(1, objects);
}
BENCHMARK(BM_HtmllFlushPlan)->Unit(benchmark::kMillisecond);

}  // namespace
