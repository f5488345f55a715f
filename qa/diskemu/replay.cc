// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "replay.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace diskemu {

static bool parse_op(const std::string& s, OpKind* op) {
  if (s == "R" || s == "r") { *op = OpKind::READ; return true; }
  if (s == "W" || s == "w") { *op = OpKind::WRITE; return true; }
  if (s == "F" || s == "f") { *op = OpKind::FLUSH; return true; }
  return false;
}

bool parse_csv_trace(std::istream& in, std::vector<TraceReq>* out, std::string* err) {
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty() || !isdigit(static_cast<unsigned char>(line[0]))) {
      continue;
    }
    std::stringstream ss(line);
    std::string f[4];
    for (auto& x : f) {
      if (!std::getline(ss, x, ',')) {
        *err = "line " + std::to_string(lineno) + ": want t_us,op,offset,len";
        return false;
      }
    }
    TraceReq r;
    char* end = nullptr;
    double t_us = strtod(f[0].c_str(), &end);
    if (*end || !parse_op(f[1], &r.op)) {
      *err = "line " + std::to_string(lineno) + ": bad time or op";
      return false;
    }
    r.t = static_cast<ns_t>(std::llround(t_us * 1000));
    r.off = strtoull(f[2].c_str(), &end, 10);
    r.len = strtoull(f[3].c_str(), &end, 10);
    out->push_back(r);
  }
  return true;
}

bool parse_tracefs_trace(std::istream& in, const std::string& dev,
                         std::vector<TraceReq>* out, std::string* dev_used,
                         std::string* err) {
  static const char EV[] = ": block_rq_issue: ";
  std::string line;
  std::set<std::string> devs;
  std::vector<std::pair<std::string, TraceReq>> all;
  while (std::getline(in, line)) {
    size_t p = line.find(EV);
    if (p == std::string::npos) {
      continue;
    }
    // The timestamp is the token just before the event name.
    size_t ts_end = p, ts_begin = line.rfind(' ', ts_end - 1);
    ts_begin = ts_begin == std::string::npos ? 0 : ts_begin + 1;
    double ts = strtod(line.substr(ts_begin, ts_end - ts_begin).c_str(), nullptr);
    // "7,0 WS 4096 () 123456 + 8 be,0,4 [comm]" (the bytes field is optional)
    const char* s = line.c_str() + p + strlen(EV);
    unsigned maj, min;
    char rwbs[16];
    int n = 0;
    if (sscanf(s, "%u,%u %15s %n", &maj, &min, rwbs, &n) != 3) {
      continue;
    }
    s += n;
    while (*s && *s != '(') {   // skip the optional byte count
      s++;
    }
    const char* close = strchr(s, ')');
    if (!close) {
      continue;
    }
    unsigned long long sector;
    unsigned nr;
    if (sscanf(close + 1, " %llu + %u", &sector, &nr) != 2) {
      continue;
    }
    std::string d = std::to_string(maj) + "," + std::to_string(min);
    devs.insert(d);
    std::string rw(rwbs);
    if (rw.find('D') != std::string::npos) {
      continue;    // discard: no media work on an HDD
    }
    TraceReq r;
    r.t = static_cast<ns_t>(std::llround(ts * 1e9));
    r.off = sector * 512;
    r.len = static_cast<uint64_t>(nr) * 512;
    if (rw[0] == 'F') {
      TraceReq f = r;
      f.op = OpKind::FLUSH;
      f.len = 0;
      all.emplace_back(d, f);
      if (nr == 0) {
        continue;
      }
    }
    if (nr == 0) {
      continue;
    }
    r.op = rw.find('W') != std::string::npos ? OpKind::WRITE : OpKind::READ;
    all.emplace_back(d, r);
  }
  std::string want = dev;
  if (want.empty()) {
    if (devs.size() != 1) {
      *err = devs.empty() ? "no block_rq_issue lines"
                          : "several devices in the trace, pick one with --dev";
      return false;
    }
    want = *devs.begin();
  }
  *dev_used = want;
  for (auto& kv : all) {
    if (kv.first == want) {
      out->push_back(kv.second);
    }
  }
  return true;
}

ReplayResult replay(const DiskSpec& spec, uint64_t disk_bytes,
                    const DriveOptions& opts, const std::vector<TraceReq>& trace_in,
                    ReplayMode mode, uint32_t depth) {
  // Issue order: by time, stable; results stay indexed like trace_in.
  std::vector<size_t> order(trace_in.size());
  for (size_t i = 0; i < order.size(); i++) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return trace_in[a].t < trace_in[b].t; });
  std::vector<TraceReq> trace(order.size());
  for (size_t i = 0; i < order.size(); i++) {
    trace[i] = trace_in[order[i]];
  }
  Drive drive(spec, disk_bytes, opts);
  size_t n = trace.size();
  std::vector<HostReq> reqs(n);
  ReplayResult res;
  res.arrival.assign(n, 0);
  res.completion.assign(n, 0);
  const ns_t INF = std::numeric_limits<ns_t>::max();
  size_t next = 0;
  auto issue = [&](ns_t t) {
    HostReq& r = reqs[next];
    r.op = trace[next].op;
    r.off = trace[next].off;
    r.len = trace[next].len;
    r.arrival = t;
    r.user = reinterpret_cast<void*>(order[next]);
    res.arrival[order[next]] = t;
    next++;
    drive.submit(&r);
  };
  if (mode == ReplayMode::CLOSED) {
    for (uint32_t i = 0; i < std::max<uint32_t>(depth, 1) && next < n; i++) {
      issue(0);
    }
  }
  std::vector<Action> inflight;
  std::vector<HostReq*> done;
  std::vector<PlatterWrite> platter;
  ns_t now = 0;
  for (;;) {
    Action a;
    while (drive.plan(&a, now)) {
      inflight.push_back(a);
    }
    ns_t t_fin = INF;
    for (const Action& x : inflight) {
      t_fin = std::min(t_fin, x.end);
    }
    ns_t t_arr = mode == ReplayMode::OPEN && next < n ? trace[next].t : INF;
    ns_t t = std::min(t_fin, t_arr);
    if (t == INF) {
      // Nothing in flight or coming: an idle media-cache destage may still
      // be due (run them all: the stats count the drive's whole work).
      t = drive.wake_at();
      if (t == INF || t <= now) {
        break;    // (due by now and not planned: nothing more will start)
      }
      now = t;
      continue;
    }
    now = t;
    // Everything that happens at t before the drive plans again: first the
    // completions (a closed-loop client issues its next request then), then
    // the arrivals. So an open-loop replay of a closed-loop stream sees the
    // same queue at every decision.
    for (;;) {
      auto it = std::find_if(inflight.begin(), inflight.end(),
                             [&](const Action& x) { return x.end == t; });
      if (it == inflight.end()) {
        break;
      }
      Action f = *it;
      inflight.erase(it);
      done.clear();
      platter.clear();
      drive.finish(f, &done, &platter);
      for (HostReq* r : done) {
        res.completion[reinterpret_cast<size_t>(r->user)] = r->completion;
        if (mode == ReplayMode::CLOSED && next < n) {
          issue(r->completion);
        }
      }
    }
    while (mode == ReplayMode::OPEN && next < n && trace[next].t == t) {
      issue(t);
    }
  }
  if (n) {
    ns_t t0 = *std::min_element(res.arrival.begin(), res.arrival.end());
    ns_t t1 = *std::max_element(res.completion.begin(), res.completion.end());
    res.makespan = t1 - t0;
  }
  res.stats = drive.stats();
  res.stats_json = drive.stats_json("replay");
  return res;
}

}  // namespace diskemu
