// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the fault spec (mimstore_debug_fault) parser. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/fault_io_env.h"

#include <cerrno>
#include <cstring>

namespace mim {

namespace {

bool parse_u64(const std::string& s, uint64_t* v)
{
  if (s.empty() || s.size() > 20) {
    return false;
  }
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    uint64_t d = c - '0';
    if (r > (UINT64_MAX - d) / 10) {
      return false;
    }
    r = r * 10 + d;
  }
  *v = r;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep)
{
  std::vector<std::string> out;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? e : e - b));
    if (e == std::string::npos) {
      return out;
    }
    b = e + 1;
  }
}


std::string trim(const std::string& s)
{
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) {
    return "";
  }
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

/// The spec's op names; the first name of a bit is the one printed.
const std::pair<const char*, uint32_t> OP_NAMES[] = {
  {"read", FAULT_OP_READ}, {"write", FAULT_OP_WRITE},
  {"aio", FAULT_OP_AIO}, {"sync", FAULT_OP_SYNC},
  {"fsync", FAULT_OP_SYNC}, {"trunc", FAULT_OP_TRUNC},
  {"open", FAULT_OP_OPEN}, {"meta", FAULT_OP_META},
  {"xattr", FAULT_OP_XATTR}, {"clone", FAULT_OP_CLONE},
  {"submit", FAULT_OP_SUBMIT}, {"any", FAULT_OP_ANY},
  {"dbwrite", FAULT_OP_DB_WRITE}, {"dbsync", FAULT_OP_DB_SYNC},
};

int parse_ops(const std::string& s, uint32_t* ops)
{
  uint32_t r = 0;
  for (const auto& one : split(s, '|')) {
    bool found = false;
    for (const auto& [n, bit] : OP_NAMES) {
      if (one == n) {
        r |= bit;
        found = true;
      }
    }
    if (!found) {
      return -EINVAL;
    }
  }
  *ops = r;
  return 0;
}

int parse_errno(const std::string& s, int* err)
{
  static const std::pair<const char*, int> names[] = {
    {"eio", EIO}, {"enospc", ENOSPC}, {"edquot", EDQUOT},
    {"erofs", EROFS}, {"efbig", EFBIG}, {"enoent", ENOENT},
    {"enodata", ENODATA},
  };
  for (const auto& [n, e] : names) {
    if (s == n) {
      *err = e;
      return 0;
    }
  }
  uint64_t v;
  if (parse_u64(s, &v) && v > 0 && v < 4096) {
    *err = static_cast<int>(v);
    return 0;
  }
  return -EINVAL;
}

/// "A:B:C@N[+]": the three fields, N (> 0) and whether "+" follows.
bool split_rule(const std::string& s, std::vector<std::string>* fields,
                uint64_t* nth, bool* and_after)
{
  size_t at = s.rfind('@');
  if (at == std::string::npos) {
    return false;
  }
  *fields = split(s.substr(0, at), ':');
  std::string n = s.substr(at + 1);
  *and_after = !n.empty() && n.back() == '+';
  if (*and_after) {
    n.pop_back();
  }
  return fields->size() == 3 && parse_u64(n, nth) && *nth > 0;
}

int parse_rule(const std::string& s, fail_rule_t* r)
{
  std::vector<std::string> f;
  if (!split_rule(s, &f, &r->nth, &r->and_after) ||
      parse_ops(f[0], &r->ops) < 0 || parse_errno(f[2], &r->err) < 0) {
    return -EINVAL;
  }
  r->path = f[1];
  return 0;
}

int parse_delay(const std::string& s, delay_rule_t* r)
{
  std::vector<std::string> f;
  uint64_t ms;
  if (!split_rule(s, &f, &r->nth, &r->and_after) ||
      (f[0] != "read" && f[0] != "write" && f[0] != "writeback") ||
      !parse_u64(f[2], &ms) || ms == 0 || ms > 3600 * 1000) {
    return -EINVAL;
  }
  r->op = f[0] == "read" ? delay_op_t::READ
    : f[0] == "write" ? delay_op_t::WRITE : delay_op_t::WRITEBACK;
  r->ms = static_cast<uint32_t>(ms);
  r->path = f[1];
  return 0;
}

int parse_corrupt(const std::string& s, corrupt_rule_t* r)
{
  std::vector<std::string> f;
  if (!split_rule(s, &f, &r->nth, &r->and_after) || f[0] != "read" ||
      !parse_u64(f[2], &r->off)) {
    return -EINVAL;
  }
  r->path = f[1];
  return 0;
}

}  // anonymous namespace

int parse_fault_spec(const std::string& spec, fault_spec_t* out,
                     std::string* err)
{
  fault_spec_t s;
  for (const auto& raw : split(spec, ',')) {
    std::string item = trim(raw);
    if (item.empty()) {
      continue;
    }
    size_t eq = item.find('=');
    std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
    bool ok = false;
    if (key == "crash_at") {
      ok = parse_u64(val, &s.crash_at);
    } else if (key == "seed") {
      ok = parse_u64(val, &s.seed);
    } else if (key == "mode") {
      ok = true;
      if (val == "random") {
        s.mode = crash_mode_t::RANDOM;
      } else if (val == "drop") {
        s.mode = crash_mode_t::DROP;
      } else if (val == "keep") {
        s.mode = crash_mode_t::KEEP;
      } else if (val == "tear") {
        s.mode = crash_mode_t::TEAR;
      } else {
        ok = false;
      }
    } else if (key == "meta") {
      ok = true;
      if (val == "xfs") {
        s.meta = meta_model_t::XFS;
      } else if (val == "off") {
        s.meta = meta_model_t::OFF;
      } else {
        ok = false;
      }
    } else if (key == "fail") {
      fail_rule_t r;
      ok = parse_rule(val, &r) == 0;
      if (ok) {
        s.fails.push_back(r);
      }
    } else if (key == "delay") {
      delay_rule_t r;
      ok = parse_delay(val, &r) == 0;
      if (ok) {
        s.delays.push_back(r);
      }
    } else if (key == "corrupt") {
      corrupt_rule_t r;
      ok = parse_corrupt(val, &r) == 0;
      if (ok) {
        s.corrupts.push_back(r);
      }
    }
    if (!ok) {
      if (err) {
        *err = "bad fault injection item '" + item + "' (expected crash_at=N, "
               "seed=N, mode=random|drop|keep|tear, meta=xfs|off, "
               "fail=OPS:[PATH]:ERR@N[+], delay=read|write|writeback:[PATH]:MS@N[+] with "
               "MS 1..3600000, or corrupt=read:[PATH]:OFF@N[+])";
      }
      return -EINVAL;
    }
  }
  *out = std::move(s);
  return 0;
}

const char* fault_op_name(uint32_t op)
{
  for (const auto& [n, bit] : OP_NAMES) {
    if (op == bit) {
      return n;
    }
  }
  return "?";
}

const char* meta_kind_name(meta_kind_t k)
{
  switch (k) {
  case meta_kind_t::CREATE:
    return "create";
  case meta_kind_t::MKDIR:
    return "mkdir";
  case meta_kind_t::RMDIR:
    return "rmdir";
  case meta_kind_t::UNLINK:
    return "unlink";
  case meta_kind_t::RENAME:
    return "rename";
  case meta_kind_t::LINK:
    return "link";
  case meta_kind_t::SETXATTR:
    return "setxattr";
  case meta_kind_t::REMOVEXATTR:
    return "removexattr";
  case meta_kind_t::CLONE:
    return "clone";
  }
  return "?";
}

}  // namespace mim
