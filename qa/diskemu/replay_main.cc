// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu-replay: replay a request trace on the drive model (virtual clock)
 * and print the service time as JSON. See replay.h for formats and modes.
 */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "opts.h"
#include "replay.h"

using namespace diskemu;

static void usage(FILE* f) {
  fprintf(f,
    "usage: diskemu-replay --size SIZE [options] TRACE|-\n"
    "  --size SIZE           emulated disk size (K/M/G/T suffix), required\n"
    "  --model NAME          preset (hdd7200, hdd10k, nvme; default hdd7200)\n"
    "  --set KEY=VALUE       change a datasheet figure (repeatable): %s\n"
    "  --format csv|tracefs  trace format (default: guessed from the content)\n"
    "  --dev MAJ,MIN         tracefs: the device to replay (default: the only one)\n"
    "  --mode open|closed    open: requests arrive at their trace times;\n"
    "                        closed: --depth outstanding, back-to-back (open)\n"
    "  --depth N             closed-loop outstanding requests (1)\n"
    "  --info                print the model's derived figures and exit\n"
    "%s",
    spec_keys_help(), drive_options_help());
}

// What validation compares against: the figures the model derives from
// the datasheet (seek averages over a span, revolution, zone rates).
static void print_info(const DiskSpec& spec, uint64_t size, const DriveOptions& o) {
  HddModel m(spec, size, o.capacity_bytes, o.seq_window);
  const SeekCurve& w = m.seek_curve(OpKind::WRITE);
  const SeekCurve& r = m.seek_curve(OpKind::READ);
  printf("{\"model\": \"%s\", \"rotational\": %s, \"revolution_ms\": %.4f, "
         "\"overhead_ms\": %.3f, \"fixed_latency_us\": %.1f, "
         "\"outer_mb_s\": %.1f, \"inner_mb_s\": %.1f, \"interface_mb_s\": %.1f, "
         "\"cache_bytes\": %llu, \"cylinders\": %llu, "
         "\"write_seek\": {\"knee_ms\": %.4f, \"avg_full_ms\": %.4f, \"avg_1pct_ms\": %.4f}, "
         "\"read_seek\": {\"knee_ms\": %.4f, \"avg_full_ms\": %.4f, \"avg_1pct_ms\": %.4f}, "
         "\"source\": \"%s\"}\n",
         spec.name.c_str(), spec.rotational ? "true" : "false", m.revolution() / 1e6,
         spec.overhead_ms, spec.fixed_latency_us, spec.outer_mb_s, spec.inner_mb_s,
         spec.interface_mb_s, (unsigned long long)(o.cache_bytes ? o.cache_bytes : spec.cache_bytes),
         (unsigned long long)spec.cylinders, w.knee_ms(), w.pair_average_ms(),
         w.span_average_ms(size / (double)std::max<uint64_t>(o.capacity_bytes, size) * 0.01),
         r.knee_ms(), r.pair_average_ms(),
         r.span_average_ms(size / (double)std::max<uint64_t>(o.capacity_bytes, size) * 0.01),
         spec.source.c_str());
}

int main(int argc, char** argv) {
  std::string model = "hdd7200", format, dev, path, mode = "open";
  uint64_t size = 0;
  uint32_t depth = 1;
  bool info = false;
  DriveOptions dopt;
  DiskSpec spec;
  std::vector<std::pair<std::string, std::string>> sets;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    }
    if (a == "--info") {
      info = true;
      continue;
    }
    if (a.rfind("--", 0) != 0 || a == "-") {
      path = a;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "diskemu-replay: %s needs a value\n", a.c_str());
      return 2;
    }
    std::string v = argv[++i], err;
    if (a == "--size") {
      if (!parse_size(v, &size)) { fprintf(stderr, "bad --size\n"); return 2; }
    } else if (a == "--model") {
      model = v;
    } else if (a == "--set") {
      size_t eq = v.find('=');
      if (eq == std::string::npos) { fprintf(stderr, "--set wants KEY=VALUE\n"); return 2; }
      sets.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--format") {
      format = v;
    } else if (a == "--dev") {
      dev = v;
    } else if (a == "--mode") {
      mode = v;
    } else if (a == "--depth") {
      depth = static_cast<uint32_t>(atoi(v.c_str()));
    } else if (parse_drive_option(a, v, &dopt, &err)) {
      if (!err.empty()) { fprintf(stderr, "diskemu-replay: %s\n", err.c_str()); return 2; }
    } else {
      fprintf(stderr, "diskemu-replay: unknown option %s\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  const DiskSpec* p = find_preset(model);
  if (!p || !size || (path.empty() && !info) || (mode != "open" && mode != "closed")) {
    usage(stderr);
    return 2;
  }
  spec = *p;
  for (auto& kv : sets) {
    std::string err;
    if (!set_spec_value(&spec, kv.first, kv.second, &err)) {
      fprintf(stderr, "diskemu-replay: %s\n", err.c_str());
      return 2;
    }
  }
  if (info) {
    print_info(spec, size, dopt);
    return 0;
  }
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream f(path);
    if (!f) { fprintf(stderr, "diskemu-replay: cannot open %s\n", path.c_str()); return 1; }
    text << f.rdbuf();
  }
  if (format.empty()) {
    format = text.str().find("block_rq_issue") != std::string::npos ? "tracefs" : "csv";
  }
  std::vector<TraceReq> trace;
  std::string err, used;
  bool ok = format == "tracefs" ? parse_tracefs_trace(text, dev, &trace, &used, &err)
                                : parse_csv_trace(text, &trace, &err);
  if (!ok) {
    fprintf(stderr, "diskemu-replay: %s: %s\n", path.c_str(), err.c_str());
    return 1;
  }
  ReplayResult r = replay(spec, size, dopt, trace,
                          mode == "open" ? ReplayMode::OPEN : ReplayMode::CLOSED, depth);
  double service_ms = (r.stats.busy_actuator) / 1e6;
  printf("{\"trace\": \"%s\", \"format\": \"%s\", \"device\": \"%s\", \"requests\": %zu, "
         "\"mode\": \"%s\", \"depth\": %u, \"makespan_ms\": %.3f, "
         "\"service_ms\": %.3f, \"interface_ms\": %.3f, \"stats\": %s}\n",
         path.c_str(), format.c_str(), used.c_str(), trace.size(), mode.c_str(), depth,
         r.makespan / 1e6, service_ms, r.stats.busy_interface / 1e6, r.stats_json.c_str());
  return 0;
}
