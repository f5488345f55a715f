// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "ncq.h"

#include <algorithm>
#include <limits>

namespace diskemu {

bool parse_policy(const std::string& s, Policy* out) {
  if (s == "fifo") { *out = Policy::FIFO; return true; }
  if (s == "sptf") { *out = Policy::SPTF; return true; }
  if (s == "clook") { *out = Policy::CLOOK; return true; }
  if (s == "fw") { *out = Policy::FW; return true; }
  return false;
}

const char* policy_name(Policy p) {
  switch (p) {
  case Policy::FIFO: return "fifo";
  case Policy::SPTF: return "sptf";
  case Policy::CLOOK: return "clook";
  case Policy::FW: return "fw";
  }
  return "?";
}

static size_t oldest(const std::vector<Candidate>& c) {
  size_t best = 0;
  for (size_t i = 1; i < c.size(); i++) {
    if (c[i].arrival < c[best].arrival) {
      best = i;
    }
  }
  return best;
}

size_t pick_next(Policy p, const HddModel& m, const std::vector<Candidate>& c,
                 ns_t now, ns_t aging, const FwParams& fw) {
  size_t old = oldest(c);
  if (p == Policy::FIFO || c.size() == 1) {
    return old;
  }
  if (aging > 0 && now - c[old].arrival > aging) {
    return old;
  }
  if (p == Policy::CLOOK) {
    // Commands that need no arm movement go first, as with sptf.
    for (size_t i = 0; i < c.size(); i++) {
      if (c[i].fixed_cost >= 0) {
        return i;
      }
    }
    uint64_t head = m.head_known() ? m.head_offset() : 0;
    size_t ahead = c.size(), lowest = 0;
    for (size_t i = 0; i < c.size(); i++) {
      if (c[i].off >= head && (ahead == c.size() || c[i].off < c[ahead].off)) {
        ahead = i;
      }
      if (c[i].off < c[lowest].off) {
        lowest = i;
      }
    }
    return ahead != c.size() ? ahead : lowest;
  }
  // FW rates only the `lookahead` oldest: the arrival a candidate must not
  // be newer than.
  ns_t newest = std::numeric_limits<ns_t>::max();
  if (p == Policy::FW && fw.lookahead > 0 && fw.lookahead < c.size()) {
    std::vector<ns_t> arr;
    arr.reserve(c.size());
    for (const Candidate& x : c) {
      arr.push_back(x.arrival);
    }
    std::nth_element(arr.begin(), arr.begin() + (fw.lookahead - 1), arr.end());
    newest = arr[fw.lookahead - 1];
  }
  // SPTF (and FW on its estimates); ties go to the older command.
  size_t best = old;
  ns_t best_t = std::numeric_limits<ns_t>::max();
  for (size_t i = 0; i < c.size(); i++) {
    if (c[i].arrival > newest) {
      continue;
    }
    ns_t t = c[i].fixed_cost;
    if (t < 0) {
      Cost k = m.cost(c[i].op, c[i].off, 0, now, c[i].arrival);
      t = k.overhead + k.seek + k.rotation;
      if (p == Policy::FW && !k.sequential && k.rotation < fw.margin) {
        t += m.revolution();
      }
    }
    if (t < best_t || (t == best_t && c[i].arrival < c[best].arrival)) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

}  // namespace diskemu
