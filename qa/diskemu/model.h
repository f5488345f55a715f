// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the service-time model of one disk, from datasheet figures.
 *
 * No threads, no clock, no I/O: the caller says when a request starts and
 * the model says how long the drive needs, from where its head and platter
 * are at that moment. Used by the FUSE daemon (wall clock) and by
 * diskemu-replay and the tests (virtual clock) alike.
 *
 *   service = overhead + seek(cylinders) + rotation(angle) + bytes / rate(LBA)
 *   service = bytes / rate(LBA)     if the request starts where the previous
 *                                   one ended and arrived within seq_window
 *                                   of its end (sequential continuation)
 *
 * Geometry (the emulated disk is the first disk_bytes of a drive of
 * capacity_bytes; by default the two are equal, so any emulated size spans
 * the whole stroke, as qa/hddmodel.py does):
 *   radius    cylinder(off) = off / capacity * cylinders
 *   zones     rate(off) = outer + (inner - outer) * off / capacity   (MB/s)
 *   rotation  a track holds rate * one revolution of bytes; the angle of a
 *             byte is the fractional part of the number of tracks before
 *             it (integral of 1 / track_bytes), the platter's angle at time
 *             t is frac(t / revolution), both measured from the same index.
 *
 * Times are int64 nanoseconds of emulated time (ns_t).
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace diskemu {

using ns_t = int64_t;
constexpr uint64_t SECTOR = 512;
constexpr ns_t NS_PER_MS = 1000000;

enum class OpKind : uint8_t { READ, WRITE, FLUSH };
const char* op_name(OpKind op);   ///< "R", "W", "F"

/// Three datasheet seek figures, milliseconds, without controller overhead.
struct SeekPoints {
  double track_to_track_ms = 0;
  double average_ms = 0;        ///< weighted average over all seek pairs
  double full_stroke_ms = 0;
};

/// A drive's datasheet figures. Rates in MB/s, 1 MB = 1e6 bytes.
struct DiskSpec {
  std::string name;
  bool rotational = true;
  double rpm = 7200;
  SeekPoints read_seek, write_seek;
  double overhead_ms = 0.2;       ///< controller overhead per command
  double outer_mb_s = 150;        ///< sustained media rate, outermost zone
  double inner_mb_s = 75;         ///< ... innermost zone
  double interface_mb_s = 600;    ///< host link (cache hits, cached writes)
  uint64_t cylinders = 100000;    ///< tracks per surface
  uint64_t cache_bytes = 0;       ///< volatile write cache
  double fixed_latency_us = 0;    ///< non-rotational devices: per command
  /// Media cache (stage.h): bytes of platter a random write may be staged
  /// in (0: none), the media time of one staged write beyond its overhead
  /// and transfer (fitted to the datasheet's QD16 WCD write figure: not
  /// published as such), the largest write staged, and where the band is
  /// (fraction of the stroke).
  uint64_t stage_bytes = 0;
  double stage_ms = 0;
  uint64_t stage_max_bytes = 128 << 10;
  double stage_pos = 0.5;
  double stage_idle_ms = 50;      ///< idle time before it destages
  std::string source;             ///< where the figures come from
};

/// The presets (hdd7200, hdd10k, nvme); nullptr if unknown.
const DiskSpec* find_preset(const std::string& name);
std::vector<std::string> preset_names();

/// Set one figure by key (rpm, read_avg_ms, outer_mbs, cache, ...), as the
/// daemon's --disk and diskemu-replay's --set accept them. False and *err
/// on an unknown key or a bad value.
bool set_spec_value(DiskSpec* spec, const std::string& key,
                    const std::string& value, std::string* err);
/// The keys set_spec_value() accepts, for --help.
const char* spec_keys_help();

/// "64G", "512M", "4096", "1.5T" -> bytes (binary suffixes K M G T).
bool parse_size(const std::string& s, uint64_t* out);

/**
 * Ruemmler-Wilkes seek curve, seek time (ms) against distance (cylinders):
 *   d == 0         0
 *   1 <= d < D/3   a + b*sqrt(d)   (the arm accelerates, then brakes)
 *   D/3 <= d <= D  c + e*d         (it coasts)
 *   0 < d < 1      track-to-track
 * through (1, track-to-track) and (D, full stroke). The knee value at D/3
 * is not the datasheet average: datasheets define the average seek as the
 * mean over all pairs of cylinders (weight D+1-n for distance n), so the
 * knee is solved for so that this mean equals the datasheet average.
 */
class SeekCurve {
 public:
  SeekCurve(const SeekPoints& p, double cylinders);
  double ms(double distance) const;
  /// Mean over all pairs of positions on the stroke (the datasheet's
  /// weighted average), by numerical integration.
  double pair_average_ms() const { return span_average_ms(1.0); }
  /// The same for two positions within the first `fraction` of the stroke.
  double span_average_ms(double fraction) const;
  double knee_ms() const { return knee_; }

 private:
  void fit(double knee);
  double d_, boundary_, t2t_, full_, knee_ = 0;
  double a_ = 0, b_ = 0, c_ = 0, e_ = 0;
};

/// The cost of one request, split by cause.
struct Cost {
  ns_t overhead = 0, seek = 0, rotation = 0, transfer = 0;
  bool sequential = false;     ///< continued the previous request
  bool moved = false;          ///< the arm changed cylinder
  ns_t total() const { return overhead + seek + rotation + transfer; }
};

class HddModel {
 public:
  /// How late (after the previous transfer ended) a sequential request may
  /// start and still continue without losing a revolution. Real drives
  /// overlap command overhead with the transfer and write late-arriving
  /// sequential data as it passes ("zero latency" access); the window also
  /// absorbs the emulator's own turnaround (FUSE and loop: ~0.3 ms for a
  /// 1 MiB write on the validation machine), which no real disk has.
  static constexpr ns_t DEFAULT_SEQ_WINDOW = 1000000;

  /// capacity_bytes: the drive the emulated disk sits on (0: disk_bytes).
  /// seq_window: see DEFAULT_SEQ_WINDOW (negative: that default).
  HddModel(const DiskSpec& spec, uint64_t disk_bytes,
           uint64_t capacity_bytes = 0, ns_t seq_window = -1);

  /// Cost of serving [off, off+len) starting at `start`, for a request that
  /// reached the drive at `arrival`. Does not move the head. seek_scale:
  /// this seek's deviation from the curve (a firmware drive's executed
  /// seek; the rotational wait follows from where it really settles).
  Cost cost(OpKind op, uint64_t off, uint64_t len, ns_t start,
            ns_t arrival, double seek_scale = 1.0) const;
  /// The head ends at off+len at time end.
  void commit(uint64_t off, uint64_t len, ns_t end);
  /// Forget the head position (power cycle): the next request pays an
  /// average seek.
  void reset_head() { head_known_ = false; }

  /// Host link transfer (cache hits and cached writes): overhead + bytes.
  ns_t interface_time(uint64_t len) const;

  // Geometry, exposed for tests and the schedulers.
  double cylinder_of(uint64_t off) const;
  double angle_of(uint64_t off) const;       ///< [0, 1)
  double platter_angle(ns_t t) const;        ///< [0, 1)
  double rate_mb_s(uint64_t off) const;
  ns_t revolution() const { return rev_; }
  ns_t transfer_time(uint64_t off, uint64_t len) const;
  const SeekCurve& seek_curve(OpKind op) const {
    return op == OpKind::READ ? read_seek_ : write_seek_;
  }
  const DiskSpec& spec() const { return spec_; }
  uint64_t disk_bytes() const { return disk_bytes_; }
  /// The drive the emulated disk sits on (>= disk_bytes).
  uint64_t capacity_bytes() const { return static_cast<uint64_t>(capacity_); }
  bool head_known() const { return head_known_; }
  uint64_t head_offset() const { return head_off_; }

 private:
  DiskSpec spec_;
  uint64_t disk_bytes_;
  double capacity_;
  SeekCurve read_seek_, write_seek_;
  ns_t rev_;
  ns_t overhead_;
  ns_t seq_window_;
  // Head state: where the last transfer ended, and when.
  bool head_known_ = false;
  uint64_t head_off_ = 0;
  ns_t head_time_ = 0;
};

}  // namespace diskemu
