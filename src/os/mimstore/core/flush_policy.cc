// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: when to run a full HTMLL flush (MIM paper, section 4.4).
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/flush_policy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>

namespace mim {

const char* to_string(FlushTrigger t)
{
  switch (t) {
  case FlushTrigger::NONE:
    return "none";
  case FlushTrigger::SPACE:
    return "space";
  case FlushTrigger::TIME:
    return "time";
  case FlushTrigger::MEMORY_CAP:
    return "memory_cap";
  case FlushTrigger::INDEX_BUDGET:
    return "index_budget";
  case FlushTrigger::JOURNAL_PRESSURE:
    return "journal_pressure";
  case FlushTrigger::EXPLICIT:
    return "explicit";
  }
  return "unknown";
}

namespace {

// 0 if v is a usable positive, finite number; else -EINVAL and a message.
int check_positive(const char* name, double v, std::string* err)
{
  if (std::isnan(v)) {
    *err = std::string(name) + " is NaN";
    return -EINVAL;
  }
  if (std::isinf(v)) {
    *err = std::string(name) + " is infinite";
    return -EINVAL;
  }
  if (v <= 0) {
    *err = std::string(name) + " must be > 0 (got " + std::to_string(v) + ")";
    return -EINVAL;
  }
  return 0;
}

int check_nonzero(const char* name, uint64_t v, std::string* err)
{
  if (v == 0) {
    *err = std::string(name) + " must be > 0";
    return -EINVAL;
  }
  return 0;
}

}  // namespace

int FlushPolicy::create(const FlushPolicyConfig& c,
                        std::unique_ptr<FlushPolicy>* out, std::string* err)
{
  std::string scratch;
  if (!err) {
    err = &scratch;
  }
  int r;
  if ((r = check_positive("journal_throughput", c.journal_throughput, err)) ||
      (r = check_positive("max_flush_interval", c.max_flush_interval, err)) ||
      (r = check_nonzero("block_size", c.block_size, err)) ||
      (r = check_nonzero("replicas", c.replicas, err)) ||
      (r = check_nonzero("nodes", c.nodes, err)) ||
      (r = check_nonzero("memory_cap", c.memory_cap, err))) {
    return r;
  }

  const double bytes_per_interval = c.journal_throughput * c.max_flush_interval;
  if (!std::isfinite(bytes_per_interval)) {
    *err = "journal_throughput * max_flush_interval overflows";
    return -ERANGE;
  }
  const double blocks = std::floor(bytes_per_interval / c.block_size);
  // 2^64 is exactly representable; anything >= it does not fit a uint64_t.
  if (!(blocks < 18446744073709551616.0)) {
    *err = "sp_thresh (journal_throughput * max_flush_interval / block_size)"
           " does not fit in 64 bits";
    return -ERANGE;
  }
  const uint64_t sp = std::max<uint64_t>(1, static_cast<uint64_t>(blocks));

  const double t = std::max(c.replicas, c.nodes) * c.max_flush_interval;
  if (!std::isfinite(t)) {
    *err = "time_thresh (max(replicas, nodes) * max_flush_interval) overflows";
    return -ERANGE;
  }

  // memory_cap * 0.9 in integers; cannot overflow.
  const uint64_t m = std::max<uint64_t>(
    1, c.memory_cap / 10 * 9 + c.memory_cap % 10 * 9 / 10);
  static_assert(MEMORY_CAP_FRACTION == 0.9, "m above computes 9/10");

  const uint64_t ix = c.index_budget
    ? std::max<uint64_t>(1, c.index_budget / 2) : UINT64_MAX;

  out->reset(new FlushPolicy(c, sp, t, m, ix));
  return 0;
}

FlushTrigger FlushPolicy::check(uint64_t blocks_used, uint64_t bytes_cached,
                                double seconds_since_last_flush,
                                uint64_t index_bytes) const
{
  if (bytes_cached >= memory_thresh_) {
    return FlushTrigger::MEMORY_CAP;
  }
  if (index_bytes >= index_thresh_) {
    return FlushTrigger::INDEX_BUDGET;
  }
  if (blocks_used >= sp_thresh_) {
    return FlushTrigger::SPACE;
  }
  if (seconds_since_last_flush >= time_thresh_) {
    return FlushTrigger::TIME;
  }
  return FlushTrigger::NONE;
}

}  // namespace mim
