// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: CheckpointTracker (sliding bitmap) against the paper's sorted
 * linked list, as writeback reordering deepens.
 *
 * sns are recorded in consecutive windows of W, shuffled within each
 * window: up to W - 1 sns wait above the checkpoint. One benchmark
 * iteration records one whole window (so every depth of the window is
 * measured), and items/s counts recorded sns.
 *
 * The list baseline takes a mutex too (the tracker does) and inserts by
 * walking from the tail, which is its best case for mostly in-order
 * writeback; a shuffled window costs it O(depth) per sn either way.
 * W = 100000 for the list takes minutes (~5e9 node visits per window), so
 * it is registered only with MIMCORE_BENCH_SLOW=1.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/checkpoint_tracker.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <mutex>
#include <numeric>
#include <random>
#include <vector>

using namespace mim;

namespace {

// The paper's structure (section 4.5): durable sns in a sorted list; the
// checkpoint advances while the head is the next expected sn.
class SortedListTracker {
 public:
  explicit SortedListTracker(sn_t first) : checkpoint_(first) {}

  void record_durable(sn_t sn) {
    std::lock_guard l(mu_);
    auto it = list_.end();
    while (it != list_.begin() && *std::prev(it) > sn) {
      --it;
    }
    list_.insert(it, sn);
    while (!list_.empty() && list_.front() == checkpoint_) {
      list_.pop_front();
      ++checkpoint_;
    }
  }
  sn_t checkpoint() const {
    std::lock_guard l(mu_);
    return checkpoint_;
  }

 private:
  mutable std::mutex mu_;
  std::list<sn_t> list_;
  sn_t checkpoint_;
};

// A few shuffled windows, cycled, so the pattern is not one fixed order.
std::vector<std::vector<uint32_t>> make_perms(size_t w)
{
  std::mt19937_64 rng(w);
  std::vector<std::vector<uint32_t>> perms(4, std::vector<uint32_t>(w));
  for (auto& p : perms) {
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
  }
  return perms;
}

template <typename Tracker>
void run_windows(benchmark::State& state)
{
  const size_t w = state.range(0);
  const auto perms = make_perms(w);
  Tracker t(1);
  sn_t base = 1;
  size_t k = 0;
  for (auto _ : state) {
    const auto& p = perms[k++ % perms.size()];
    for (uint32_t i : p) {
      t.record_durable(base + i);
    }
    base += w;
  }
  if (t.checkpoint() != base) {
    state.SkipWithError("checkpoint did not reach the end of the last window");
  }
  state.SetItemsProcessed(state.iterations() * w);
}

void BM_CheckpointBitmap(benchmark::State& state)
{
  run_windows<CheckpointTracker>(state);
}
BENCHMARK(BM_CheckpointBitmap)->ArgName("window")
  ->Arg(10)->Arg(100)->Arg(1000)->Arg(10000)->Arg(100000);

void BM_CheckpointSortedList(benchmark::State& state)
{
  run_windows<SortedListTracker>(state);
}
BENCHMARK(BM_CheckpointSortedList)->ArgName("window")
  ->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);

// The deepest window for the list only on request: it takes minutes.
const bool slow_registered = [] {
  if (const char* e = std::getenv("MIMCORE_BENCH_SLOW"); e && *e == '1') {
    benchmark::RegisterBenchmark("BM_CheckpointSortedList/window:100000",
                                 run_windows<SortedListTracker>)
      ->Arg(100000)->Iterations(1);
  }
  return true;
}();

}  // namespace
