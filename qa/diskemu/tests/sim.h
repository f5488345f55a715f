// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// Test helpers: a Drive run on a virtual clock, with an in-memory platter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "drive.h"

namespace diskemu {
namespace test {

/// splitmix64: deterministic on every platform, unlike std distributions.
inline uint64_t rnd(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct Sim {
  Drive drive;
  std::vector<char> platter;     ///< what destages wrote (small disks only)
  std::vector<Action> inflight;
  ns_t now = 0;

  Sim(const DiskSpec& spec, uint64_t size, const DriveOptions& o)
      : drive(spec, size, o), platter(size <= (256ull << 20) ? size : 0, 0) {}

  void submit(HostReq* r, ns_t t) {
    r->arrival = t;
    drive.submit(r);
  }
  /// Start what can start, then finish the earliest action. False if idle.
  bool step() {
    Action a;
    while (drive.plan(&a)) {
      inflight.push_back(a);
    }
    if (inflight.empty()) {
      return false;
    }
    auto it = std::min_element(inflight.begin(), inflight.end(),
                               [](const Action& x, const Action& y) { return x.end < y.end; });
    Action f = *it;
    inflight.erase(it);
    now = std::max(now, f.end);
    std::vector<HostReq*> done;
    std::vector<PlatterWrite> pw;
    drive.finish(f, &done, &pw);
    apply(pw);
    return true;
  }
  void apply(const std::vector<PlatterWrite>& pw) {
    for (auto& w : pw) {
      if (w.data && !platter.empty()) {
        std::copy(w.data, w.data + w.len, platter.begin() + w.off);
      }
    }
  }
  void run_until(const std::function<bool()>& pred) {
    while (!pred() && step()) {
    }
  }
  void run_all() {
    while (step()) {
    }
  }
  /// Power cut now; in-flight actions are forgotten.
  void cut(uint64_t seed, bool torn) {
    std::vector<HostReq*> failed;
    std::vector<PlatterWrite> pw;
    drive.cut(seed, torn, &failed, &pw);
    apply(pw);
    inflight.clear();
  }
};

inline Payload fill(size_t len, char c) {
  return std::make_shared<const std::vector<char>>(len, c);
}

}  // namespace test
}  // namespace diskemu
