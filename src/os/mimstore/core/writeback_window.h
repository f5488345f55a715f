// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the flush's writeback window (docs/store.md, "The writeback
 * window").
 *
 * A sweep writes a frozen generation to the page cache object by object.
 * Left to the next sync, the whole generation (gigabytes) would reach the
 * disk queue at once, and whatever is queued behind it would wait seconds,
 * among it RocksDB's log pages on which the apply thread then blocks. Like
 * FileStore's flusher, the sweep instead hands each run to the disk as soon
 * as it is written (start: sync_file_range WRITE) and, once more than `cap`
 * bytes are in flight, waits for the oldest runs to be written (wait), so a
 * bounded amount is queued at any time.
 *
 *   written(f, off, len)   a run the sweep wrote under the object's lock,
 *                          kept until the lock is released
 *   start_written()        hands those runs to the disk (no object lock
 *                          held: starting blocks while the disk's queue is
 *                          full, and an apply to the same stripe would wait)
 *   wait_for_room()        waits for the oldest runs until at most cap
 *                          bytes are in flight
 *   end()                  the sweep's end: forgets what is still in flight
 *                          (the sync waits for it); only the file
 *                          references go
 *
 * Invariant: bytes_in_flight() is the sum of the lengths of the runs in
 * flight, and after wait_for_room() it is at most cap unless nothing is in
 * flight.
 *
 * A filesystem without sync_file_range (start returns -EINVAL, -ENOSYS,
 * -ESPIPE or -EOPNOTSUPP) turns the window off for good: every run is then
 * left to the sync. Other start errors are not handled here: a writeback
 * error stays recorded on the filesystem, and the next sync reports it.
 *
 * One thread (the flush thread) uses it: no lock.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cerrno>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

namespace mim {

/// `File` is the caller's handle of an open file (the store's ObjectFDRef;
/// an int in the tests), kept alive while its run is in flight.
template <typename File>
class WritebackWindow {
 public:
  /// Start writing [off, off + len) of f back, without waiting: 0 or
  /// -errno.
  using StartFn = std::function<int(const File& f, uint64_t off,
                                    uint64_t len)>;
  /// Wait until [off, off + len) of f is written.
  using WaitFn = std::function<void(const File& f, uint64_t off,
                                    uint64_t len)>;

  /// A start error that means sync_file_range does not work here.
  static bool unsupported(int r) {
    return r == -EINVAL || r == -ENOSYS || r == -ESPIPE || r == -EOPNOTSUPP;
  }

  WritebackWindow(StartFn start, WaitFn wait)
    : start_fn(std::move(start)), wait_fn(std::move(wait)) {}

  /// Bytes in flight before wait_for_room() waits; 0: no window (every run
  /// is left to the sync). Set before a sweep.
  void set_cap(uint64_t bytes) { cap = bytes; }

  void written(File f, uint64_t off, uint64_t len) {
    pending.push_back(Run{std::move(f), off, len});
  }

  struct Started {
    uint64_t runs = 0;    ///< runs handed to the disk by this call
    int unsupported = 0;  ///< the error that turned the window off now, or 0
  };
  Started start_written() {
    Started s;
    std::vector<Run> runs;
    runs.swap(pending);
    if (!cap || off) {
      return s;
    }
    for (auto& run : runs) {
      int r = start_fn(run.f, run.off, run.len);
      if (unsupported(r)) {
        off = true;
        end();
        s.unsupported = r;
        return s;
      }
      ++s.runs;
      in_flight_bytes += run.len;
      in_flight.push_back(std::move(run));
    }
    return s;
  }

  /// Returns the runs waited for.
  uint64_t wait_for_room() {
    uint64_t waited = 0;
    while (in_flight_bytes > cap && !in_flight.empty()) {
      const Run& o = in_flight.front();
      wait_fn(o.f, o.off, o.len);
      in_flight_bytes -= o.len;
      in_flight.pop_front();
      ++waited;
    }
    return waited;
  }

  void end() {
    in_flight.clear();
    in_flight_bytes = 0;
  }

  uint64_t bytes_in_flight() const { return in_flight_bytes; }
  size_t runs_in_flight() const { return in_flight.size(); }
  /// Written, not yet handed to the disk.
  size_t runs_pending() const { return pending.size(); }
  /// sync_file_range is not supported here: the window is off for good.
  bool disabled() const { return off; }

 private:
  struct Run {
    File f;
    uint64_t off, len;
  };
  const StartFn start_fn;
  const WaitFn wait_fn;
  uint64_t cap = 0;
  std::vector<Run> pending;  ///< written under an object lock, not started
  std::deque<Run> in_flight;  ///< started, oldest first
  uint64_t in_flight_bytes = 0;
  bool off = false;
};

}  // namespace mim
