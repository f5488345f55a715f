// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: when to run a full HTMLL flush (MIM paper, section 4.4).
 *
 *   sp_thresh   = journal_throughput * max_flush_interval / block_size
 *                 (blocks that the journal can fill in one interval)
 *   time_thresh = max(replicas, nodes) * max_flush_interval   (seconds)
 *
 * plus two memory guards the paper does not have: flush once the cache holds
 * MEMORY_CAP_FRACTION of its hard cap, so that the cap (past which every
 * write goes direct, see Htmll) is rarely reached; and once the active
 * generation's index takes half the index budget (double buffering: the
 * next generation fills the other half while this one is written back).
 *
 * Immutable after create(): no locking needed.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mim {

enum class FlushTrigger {
  NONE,
  SPACE,             ///< active blocks reached sp_thresh
  TIME,              ///< time since the last full flush reached time_thresh
  MEMORY_CAP,        ///< cached bytes reached MEMORY_CAP_FRACTION of the cap
  INDEX_BUDGET,      ///< the active generation's index reached half the budget
  JOURNAL_PRESSURE,  ///< raised by the store (journal nearly full), not by check()
  EXPLICIT,          ///< raised by the store (umount, admin command), not by check()
};
const char* to_string(FlushTrigger t);

struct FlushPolicyConfig {
  double journal_throughput = 0;  ///< bytes/s the journal device sustains for appends
  double max_flush_interval = 0;  ///< seconds
  uint64_t block_size = 0;        ///< bytes (object size, HtmllConfig::block_size)
  uint32_t replicas = 0;
  uint32_t nodes = 0;
  uint64_t memory_cap = 0;        ///< bytes (HtmllConfig::max_bytes)
  uint64_t index_budget = 0;      ///< bytes of index, both generations; 0: none
};

class FlushPolicy {
 public:
  /// MEMORY_CAP fires when the cached bytes reach this fraction of
  /// memory_cap: 10% headroom lets writes keep merging while the flush
  /// thread freezes and drains, instead of going direct at the hard cap.
  static constexpr double MEMORY_CAP_FRACTION = 0.9;

  /// Validate `c` and build a policy. Every input must be given: zero,
  /// negative, NaN or infinite -> -EINVAL; a threshold that does not fit
  /// (journal_throughput * max_flush_interval overflows a double or
  /// sp_thresh a uint64_t; max(replicas, nodes) * max_flush_interval
  /// overflows) -> -ERANGE. On error *err names the input and *out is left
  /// alone; no input is ever silently replaced by a default.
  static int create(const FlushPolicyConfig& c,
                    std::unique_ptr<FlushPolicy>* out, std::string* err);

  /// max(1, floor(journal_throughput * max_flush_interval / block_size)).
  /// floor: the paper's threshold counts blocks the journal can *fill* in
  /// one interval, so a partial block does not count. At least 1, so a
  /// small journal rate still lets one block merge before a flush instead
  /// of flushing an empty cache.
  uint64_t sp_thresh_blocks() const { return sp_thresh_; }

  /// max(replicas, nodes) * max_flush_interval, in seconds.
  double time_thresh() const { return time_thresh_; }

  /// Bytes at which MEMORY_CAP fires: memory_cap * MEMORY_CAP_FRACTION,
  /// rounded down, at least 1.
  uint64_t memory_thresh_bytes() const { return memory_thresh_; }

  /// Index bytes of the active generation at which INDEX_BUDGET fires:
  /// index_budget / 2, at least 1; UINT64_MAX (never) without a budget.
  uint64_t index_thresh_bytes() const { return index_thresh_; }

  /// The first trigger that applies, checked in the order MEMORY_CAP,
  /// INDEX_BUDGET, SPACE, TIME; NONE otherwise. Each fires when its quantity *reaches*
  /// the threshold (>=). TIME fires even when nothing is cached: the
  /// freeze it causes also rebinds the block positions to the collections
  /// written since the last one, which an idle-looking cache (every write
  /// DIRECT_NO_BLOCK) needs most.
  /// blocks_used: blocks of the active generation (HtmllStats::blocks_used).
  /// bytes_cached: bytes of both generations, as the cap counts them
  /// (HtmllStats::all_bytes).
  /// index_bytes: the active generation's index (HtmllStats::index_bytes).
  FlushTrigger check(uint64_t blocks_used, uint64_t bytes_cached,
                     double seconds_since_last_flush,
                     uint64_t index_bytes) const;

  const FlushPolicyConfig& config() const { return config_; }

 private:
  FlushPolicy(const FlushPolicyConfig& c, uint64_t sp, double t, uint64_t m,
              uint64_t ix)
    : config_(c), sp_thresh_(sp), time_thresh_(t), memory_thresh_(m),
      index_thresh_(ix) {}

  // Constant after construction.
  const FlushPolicyConfig config_;
  const uint64_t sp_thresh_;
  const double time_thresh_;
  const uint64_t memory_thresh_;
  const uint64_t index_thresh_;
};

}  // namespace mim
