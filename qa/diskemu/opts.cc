// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "opts.h"

#include <cstdlib>

namespace diskemu {

static bool number(const std::string& v, double* out) {
  char* end = nullptr;
  *out = strtod(v.c_str(), &end);
  return !v.empty() && *end == '\0' && *out >= 0;
}

bool parse_drive_key(const std::string& key, const std::string& value,
                     DriveOptions* o, std::string* err) {
  double x = 0;
  auto bad = [&]() {
    *err = "bad value '" + value + "' for " + key;
    return true;    // handled, but *err says it failed
  };
  if (key == "qd") {
    if (!number(value, &x) || x < 1 || x > 1024) return bad();
    o->queue_depth = static_cast<uint32_t>(x);
  } else if (key == "sched") {
    if (!parse_policy(value, &o->policy)) return bad();
  } else if (key == "aging_ms") {
    if (!number(value, &x)) return bad();
    o->aging = static_cast<ns_t>(x * NS_PER_MS);
  } else if (key == "wc") {
    if (value != "on" && value != "off") return bad();
    o->write_cache = value == "on";
  } else if (key == "cache_bytes") {
    if (!parse_size(value, &o->cache_bytes)) return bad();
  } else if (key == "destage_window") {
    if (!number(value, &x) || x < 1) return bad();
    o->destage_window = static_cast<uint32_t>(x);
  } else if (key == "seq_window_us") {
    if (!number(value, &x)) return bad();
    o->seq_window = static_cast<ns_t>(x * 1000);
  } else if (key == "capacity") {
    if (!parse_size(value, &o->capacity_bytes)) return bad();
  } else if (key == "fw_margin_us") {
    if (!number(value, &x)) return bad();
    o->fw_margin = static_cast<ns_t>(x * 1000);
  } else if (key == "fw_lookahead") {
    if (!number(value, &x)) return bad();
    o->fw_lookahead = static_cast<uint32_t>(x);
  } else if (key == "seek_err") {
    if (!number(value, &x) || x >= 1) return bad();
    o->seek_err = x;
  } else if (key == "seed") {
    if (!number(value, &x)) return bad();
    o->seed = static_cast<uint64_t>(x);
  } else if (key == "stage_window") {
    if (!number(value, &x) || x < 1) return bad();
    o->stage_window = static_cast<uint32_t>(x);
  } else {
    return false;
  }
  return true;
}

bool parse_drive_option(const std::string& flag, const std::string& value,
                        DriveOptions* o, std::string* err) {
  static const struct { const char* flag; const char* key; } map[] = {
    {"--queue-depth", "qd"}, {"--sched", "sched"}, {"--aging-ms", "aging_ms"},
    {"--write-cache", "wc"}, {"--cache", "cache_bytes"},
    {"--destage-window", "destage_window"}, {"--seq-window-us", "seq_window_us"},
    {"--capacity", "capacity"}, {"--fw-margin-us", "fw_margin_us"},
    {"--fw-lookahead", "fw_lookahead"}, {"--seek-err", "seek_err"},
    {"--seed", "seed"}, {"--stage-window", "stage_window"},
  };
  for (auto& m : map) {
    if (flag == m.flag) {
      return parse_drive_key(m.key, value, o, err);
    }
  }
  return false;
}

const char* drive_options_help() {
  return
    "  --queue-depth N       commands the drive holds and reorders (32)\n"
    "  --sched fw|sptf|clook|fifo  reordering (fw: as firmware does, with a\n"
    "                        margin and seek variation; sptf: ideal)\n"
    "  --aging-ms N          a command older than this goes first (1000; 0 off)\n"
    "  --write-cache on|off  volatile write cache (off)\n"
    "  --cache SIZE          its size (the model's datasheet figure)\n"
    "  --destage-window N    oldest dirty writes the drive reorders (32)\n"
    "  --seq-window-us N     how late a sequential command may arrive and\n"
    "                        still continue without a rotation (1000)\n"
    "  --capacity SIZE       the emulated disk is the first SIZE bytes' worth of\n"
    "                        a drive this big (default: spans the whole stroke)\n"
    "  --fw-margin-us N      fw: rotational slack it insists on (300)\n"
    "  --fw-lookahead N      fw: oldest commands it rates (0: all)\n"
    "  --seek-err X          fw: executed seeks vary within +-X of the curve (0.03)\n"
    "  --seed N              fw: the seek variation's seed (1)\n"
    "  --stage-window N      staged writes the media cache's destage\n"
    "                        reorders over (64)\n";
}

}  // namespace diskemu
