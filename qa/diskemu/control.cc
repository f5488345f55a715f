// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "control.h"

#include <cstdlib>
#include <sstream>

namespace diskemu {

static const char HELP[] =
    "commands: cut <disk>|all <seed> [torn] | restore <disk>|all | "
    "fast <disk> on|off | destage <disk> on|off | flush <disk> obey|ignore | "
    "stats <disk>|all | help";

std::string run_control(const std::vector<DiskEngine*>& disks,
                        const std::string& line, bool* ok) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) {
    w.push_back(s);
  }
  *ok = false;
  if (w.empty()) {
    *ok = true;
    return "";
  }
  auto find = [&](const std::string& name) -> DiskEngine* {
    for (DiskEngine* d : disks) {
      if (d->name() == name) {
        return d;
      }
    }
    return nullptr;
  };
  const std::string& cmd = w[0];
  if (cmd == "help") {
    *ok = true;
    return HELP;
  }
  if (cmd == "stats" && w.size() == 2 && w[1] == "all") {
    std::string out = "[";
    for (size_t i = 0; i < disks.size(); i++) {
      out += (i ? ", " : "") + disks[i]->stats_json();
    }
    *ok = true;
    return out + "]";
  }
  // cut and restore take "all": the whole machine loses power (disk i
  // with seed + i, one after the other under no common lock).
  bool all = w.size() >= 2 && w[1] == "all" && (cmd == "cut" || cmd == "restore");
  DiskEngine* d = w.size() >= 2 && !all ? find(w[1]) : nullptr;
  if (w.size() >= 2 && !all && !d) {
    return "error: no disk '" + w[1] + "'";
  }
  std::vector<DiskEngine*> targets = all ? disks : std::vector<DiskEngine*>{d};
  auto each = [&](auto op) {
    std::string errs;
    for (size_t i = 0; i < targets.size(); i++) {
      std::string e = op(targets[i], i);
      errs += e.empty() ? "" : (errs.empty() ? "" : "; ") + e;
    }
    return errs;
  };
  std::string err;
  if (cmd == "cut" && (w.size() == 3 || (w.size() == 4 && w[3] == "torn"))) {
    char* end = nullptr;
    unsigned long long seed = strtoull(w[2].c_str(), &end, 0);
    if (*end) {
      return "error: bad seed '" + w[2] + "'";
    }
    err = each([&](DiskEngine* x, size_t i) { return x->cut(seed + i, w.size() == 4); });
  } else if (cmd == "restore" && w.size() == 2) {
    err = each([](DiskEngine* x, size_t) { return x->restore(); });
  } else if (cmd == "fast" && w.size() == 3 && (w[2] == "on" || w[2] == "off")) {
    d->set_fast(w[2] == "on");
  } else if (cmd == "destage" && w.size() == 3 && (w[2] == "on" || w[2] == "off")) {
    d->set_idle_destage(w[2] == "on");
  } else if (cmd == "flush" && w.size() == 3 && (w[2] == "obey" || w[2] == "ignore")) {
    d->set_ignore_flush(w[2] == "ignore");
  } else if (cmd == "stats" && w.size() == 2) {
    *ok = true;
    return d->stats_json();
  } else {
    return std::string("error: bad command; ") + HELP;
  }
  if (!err.empty()) {
    return "error: " + err;
  }
  *ok = true;
  return "ok";
}

}  // namespace diskemu
