// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: one emulated disk in real time (the daemon's side of a Drive).
 *
 * Emulated time is CLOCK_MONOTONIC. A request is stamped on arrival, its
 * data moved at once (a write to the backing file, or into a payload for
 * the write cache; a read from the backing file with the cached data laid
 * over it), then handed to the Drive; the dispatcher thread starts what
 * the drive plans, sleeps until the earliest end, finishes it and calls
 * the request's callback. The callback therefore runs when the emulated
 * disk would have completed the command, not when the data was moved.
 *
 * Locking: mu_ protects drive_, trace_ and the engine state below it;
 * callbacks run without it. thin_ is thread-safe for disjoint ranges;
 * destaged data is written to it with mu_ held, so a read that took its
 * cache overlay before reading the file never misses data (see read()).
 */
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "drive.h"
#include "thin.h"

namespace diskemu {

ns_t now_ns();   ///< CLOCK_MONOTONIC

struct EngineConfig {
  std::string name;
  DiskSpec spec;
  uint64_t size = 0;
  DriveOptions drive;
  std::string backing;
  std::string trace;      ///< CSV request trace, empty for none
  bool fast = false;
};

class DiskEngine {
 public:
  /// err: 0 or an errno; data/len: a read's bytes. Runs on the dispatcher
  /// thread or, for an immediate answer, on the caller's.
  using Callback = void (*)(void* ctx, int err, const char* data, size_t len);

  explicit DiskEngine(const EngineConfig& cfg);
  ~DiskEngine();
  bool start(std::string* err);
  void stop();

  void read(uint64_t off, size_t len, Callback cb, void* ctx);
  void write(uint64_t off, const char* data, size_t len, Callback cb, void* ctx);
  void flush(Callback cb, void* ctx);
  /// Zero a range on the platter (FUSE fallocate: punch hole, zero range);
  /// immediate, not charged. 0 or -errno.
  int discard(uint64_t off, uint64_t len);

  /// Control (see control.h). cut/restore/fast return "" or an error.
  std::string cut(uint64_t seed, bool torn);
  std::string restore();
  void set_fast(bool on);
  void set_idle_destage(bool on);
  /// Ignore FLUSH (a drive that lies): answered at once, the cache kept.
  /// For crash tests that must catch an unsafe configuration.
  void set_ignore_flush(bool on) { ignore_flush_ = on; }
  std::string stats_json();

  const std::string& name() const { return cfg_.name; }
  uint64_t size() const { return cfg_.size; }
  uint64_t allocated() const { return thin_.allocated(); }

 private:
  struct Io;
  void dispatcher();
  void submit(Io* io);
  void answer(Io* io);
  void trace_locked(const Io* io);

  EngineConfig cfg_;
  ThinFile thin_;
  std::thread thread_;
  std::atomic<bool> fast_{false};
  std::atomic<uint64_t> fast_ops_{0};
  std::atomic<bool> ignore_flush_{false};
  std::atomic<uint64_t> flushes_ignored_{0};
  ns_t started_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  // State below is protected by mu_.
  Drive drive_;
  bool stop_ = false;
  FILE* trace_ = nullptr;
  uint64_t cuts_ = 0;
};

}  // namespace diskemu
