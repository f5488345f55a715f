// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace diskemu {

const char* op_name(OpKind op) {
  switch (op) {
  case OpKind::READ: return "R";
  case OpKind::WRITE: return "W";
  case OpKind::FLUSH: return "F";
  }
  return "?";
}

// --- presets -----------------------------------------------------------------
// Sources and what is estimated: qa/diskemu/README.md, "Presets".

static std::map<std::string, DiskSpec> make_presets() {
  std::map<std::string, DiskSpec> m;
  {
    // 3.5" 7,200 rpm nearline SAS, the classic Ceph HDD.
    DiskSpec s;
    s.name = "hdd7200";
    s.rpm = 7200;
    // Seagate Constellation.2 SAS product manual (100620418 Rev. H) 5.2.1,
    // "not including controller overhead": read 0.23 / 7.5 / 17.06 ms,
    // write 0.44 / 8.5 / 18.08 ms (single track / average / full stroke);
    // overhead = 7.7 - 7.5 (the "including" column).
    s.read_seek = {0.23, 7.5, 17.06};
    s.write_seek = {0.44, 8.5, 18.08};
    s.overhead_ms = 0.2;
    // Seagate Constellation ES.3 SAS product manual (100671510 Rev. C)
    // 4.1 / 4.1.2: 83 to 175 MB/s sustained, 320,800 tracks per surface,
    // 600 MB/s SAS link.
    s.outer_mb_s = 175;
    s.inner_mb_s = 83;
    s.interface_mb_s = 600;
    s.cylinders = 320800;
    s.cache_bytes = 128ull << 20;   // estimated (README)
    s.source = "Seagate Constellation ES.3 SAS (rates, geometry) + "
               "Constellation.2 SAS (seek, overhead), 7200 rpm";
    m[s.name] = s;
  }
  {
    // Current 3.5" 7,200 rpm nearline drives (20-30 TB, 2023-2025). Their
    // datasheets give the sustained rate, the cache and random 4 KiB IOPS
    // at QD16 with the write cache disabled, nothing of the seek curve or
    // the media cache: those are class figures or fitted (README,
    // "Presets" and "Validation").
    DiskSpec s;
    s.rpm = 7200;
    // Seek: the class's published figures (Toshiba MG series datasheet
    // 2019: 8.5 ms read, 9.5 write; WD Ultrastar He10: 8.0 / 8.6); track to
    // track and full stroke as hdd7200.
    s.read_seek = {0.23, 8.5, 17.06};
    s.write_seek = {0.44, 9.5, 18.08};
    s.overhead_ms = 0.2;
    s.interface_mb_s = 1200;        // SAS 12 Gb/s
    s.cylinders = 600000;           // estimated
    s.cache_bytes = 512ull << 20;   // datasheets (X24, Exos M: 512 MB)
    s.stage_pos = 0.5;
    s.stage_idle_ms = 50;           // estimated
    s.stage_max_bytes = 128 << 10;  // estimated
    DiskSpec x24 = s;
    // Seagate Exos X24 datasheet DS2080: 285 MB/s max sustained; random
    // 4K QD16 WCD 168 read / 550 write IOPS.
    x24.name = "exos-x24";
    x24.outer_mb_s = 285;
    x24.inner_mb_s = 135;            // estimated (ID/OD as hdd7200)
    x24.stage_bytes = 4ull << 30;    // estimated
    x24.stage_ms = 1.6;              // fitted: 550 WCD writes/s at QD16
    x24.source = "Seagate Exos X24 datasheet DS2080 (rate, cache, QD16 "
                 "IOPS); seek: class figures; media cache: fitted";
    m[x24.name] = x24;
    DiskSpec m30 = s;
    // Seagate Exos M 30TB (ST30000NM004K) datasheet DS2045: 275 MB/s max
    // sustained; random 4K QD16 WCD 170 read / 350 write IOPS.
    m30.name = "exos-m30";
    m30.outer_mb_s = 275;
    m30.inner_mb_s = 130;            // estimated
    m30.stage_bytes = 4ull << 30;    // estimated
    m30.stage_ms = 2.6;              // fitted: 350 WCD writes/s at QD16
    m30.source = "Seagate Exos M 30TB datasheet DS2045 (rate, cache, QD16 "
                 "IOPS); seek: class figures; media cache: fitted";
    m[m30.name] = m30;
  }
  {
    // 2.5" 10,000 rpm SAS, the disk class of the MIM paper.
    DiskSpec s;
    s.name = "hdd10k";
    s.rpm = 10000;
    // Seagate Savvio 10K.4 SAS product manual (100539221 Rev. A) 4.1, 4.2.1
    // (600 GB, not including controller overhead) and 4.2.3.
    s.read_seek = {0.30, 3.8, 7.81};
    s.write_seek = {0.56, 4.4, 8.18};
    s.overhead_ms = 0.2;
    s.outer_mb_s = 135;
    s.inner_mb_s = 72;
    s.interface_mb_s = 600;
    s.cylinders = 147620;
    s.cache_bytes = 16ull << 20;    // estimated (README)
    s.source = "Seagate Savvio 10K.4 SAS ST9600204SS, 10000 rpm";
    m[s.name] = s;
  }
  {
    // A journal device: no arm, a fixed per-command latency. Estimated.
    DiskSpec s;
    s.name = "nvme";
    s.rotational = false;
    s.rpm = 0;
    s.read_seek = s.write_seek = {0, 0, 0};
    s.overhead_ms = 0;
    s.fixed_latency_us = 20;
    s.outer_mb_s = s.inner_mb_s = 2000;
    s.interface_mb_s = 2000;
    s.cylinders = 0;
    s.cache_bytes = 64ull << 20;    // estimated (README)
    s.source = "estimated: datacenter NVMe, 20 us per command, 2 GB/s";
    m[s.name] = s;
  }
  return m;
}

static const std::map<std::string, DiskSpec>& presets() {
  static const std::map<std::string, DiskSpec> m = make_presets();
  return m;
}

const DiskSpec* find_preset(const std::string& name) {
  auto it = presets().find(name);
  return it == presets().end() ? nullptr : &it->second;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> v;
  for (auto& kv : presets()) {
    v.push_back(kv.first);
  }
  return v;
}

bool parse_size(const std::string& s, uint64_t* out) {
  if (s.empty()) {
    return false;
  }
  char* end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (end == s.c_str() || v < 0) {
    return false;
  }
  std::string suf(end);
  double mul = 1;
  if (!suf.empty()) {
    switch (suf[0]) {
    case 'k': case 'K': mul = 1024.0; break;
    case 'm': case 'M': mul = 1024.0 * 1024; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    case 'b': case 'B': mul = 1; break;
    default: return false;
    }
    std::string rest = suf.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "iB" || rest == "b")) {
      return false;
    }
  }
  *out = static_cast<uint64_t>(std::llround(v * mul));
  return true;
}

const char* spec_keys_help() {
  return "rpm, {read,write,}_{t2t,avg,full}_ms (e.g. write_avg_ms, avg_ms sets "
         "both), overhead_ms, outer_mbs, inner_mbs, iface_mbs, cylinders, "
         "cache (bytes, K/M/G suffix), latency_us, rotational (0|1), "
         "stage (media cache bytes, 0: none), stage_ms, stage_max (bytes), "
         "stage_pos (0-1), stage_idle_ms";
}

bool set_spec_value(DiskSpec* s, const std::string& key,
                    const std::string& value, std::string* err) {
  for (auto [k, field] : {std::pair<const char*, uint64_t DiskSpec::*>{
                              "cache", &DiskSpec::cache_bytes},
                            {"stage", &DiskSpec::stage_bytes},
                            {"stage_max", &DiskSpec::stage_max_bytes}}) {
    if (key == k) {
      if (!parse_size(value, &(s->*field))) {
        *err = "bad size '" + value + "' for " + key;
        return false;
      }
      if (key != "cache") {   // (the cache size was never a mark)
        s->name += "*";
      }
      return true;
    }
  }
  char* end = nullptr;
  double v = strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || v < 0) {
    *err = "bad number '" + value + "' for " + key;
    return false;
  }
  auto seek = [&](const std::string& which, double SeekPoints::*field) {
    if (which == "read_" || which == "") {
      s->read_seek.*field = v;
    }
    if (which == "write_" || which == "") {
      s->write_seek.*field = v;
    }
  };
  for (const char* which : {"read_", "write_", ""}) {
    std::string w(which);
    if (key == w + "t2t_ms") { seek(w, &SeekPoints::track_to_track_ms); return true; }
    if (key == w + "avg_ms") { seek(w, &SeekPoints::average_ms); return true; }
    if (key == w + "full_ms") { seek(w, &SeekPoints::full_stroke_ms); return true; }
  }
  if (key == "rpm") { s->rpm = v; }
  else if (key == "overhead_ms") { s->overhead_ms = v; }
  else if (key == "outer_mbs") { s->outer_mb_s = v; }
  else if (key == "inner_mbs") { s->inner_mb_s = v; }
  else if (key == "iface_mbs") { s->interface_mb_s = v; }
  else if (key == "cylinders") { s->cylinders = static_cast<uint64_t>(v); }
  else if (key == "latency_us") { s->fixed_latency_us = v; }
  else if (key == "rotational") { s->rotational = v != 0; }
  else if (key == "stage_ms") { s->stage_ms = v; }
  else if (key == "stage_pos" && v <= 1) { s->stage_pos = v; }
  else if (key == "stage_idle_ms") { s->stage_idle_ms = v; }
  else {
    *err = "unknown disk key '" + key + "' (known: " + spec_keys_help() + ")";
    return false;
  }
  s->name += "*";   // marks a modified preset in stats
  return true;
}

// --- seek curve ----------------------------------------------------------------

SeekCurve::SeekCurve(const SeekPoints& p, double cylinders)
    : d_(std::max(cylinders, 4.0)), boundary_(d_ / 3.0),
      t2t_(p.track_to_track_ms), full_(p.full_stroke_ms) {
  double avg = std::clamp(p.average_ms, t2t_, full_);
  // The pair average grows with the knee value (both pieces rise with it),
  // so bisect for the knee that gives the datasheet average.
  double lo = t2t_, hi = full_;
  for (int i = 0; i < 50; i++) {
    fit((lo + hi) / 2);
    if (pair_average_ms() < avg) {
      lo = knee_;
    } else {
      hi = knee_;
    }
  }
  fit((lo + hi) / 2);
}

void SeekCurve::fit(double knee) {
  knee_ = knee;
  b_ = (knee - t2t_) / (std::sqrt(boundary_) - 1.0);
  a_ = t2t_ - b_;
  e_ = (full_ - knee) / (d_ - boundary_);
  c_ = knee - e_ * boundary_;
}

double SeekCurve::ms(double d) const {
  d = std::fabs(d);
  if (d == 0) {
    return 0;
  }
  if (d < 1.0) {
    d = 1.0;
  }
  if (d < boundary_) {
    return a_ + b_ * std::sqrt(d);
  }
  return c_ + e_ * std::min(d, d_);
}

double SeekCurve::span_average_ms(double fraction) const {
  // The distance u (fraction of the span) between two uniform positions
  // has density 2(1-u); midpoint rule, fine enough for a 1e-4 relative error.
  const int n = 4000;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    double u = (i + 0.5) / n;
    sum += ms(u * fraction * d_) * 2.0 * (1.0 - u);
  }
  return sum / n;
}

// --- model -------------------------------------------------------------------

static ns_t ms_to_ns(double ms) { return static_cast<ns_t>(std::llround(ms * 1e6)); }

HddModel::HddModel(const DiskSpec& spec, uint64_t disk_bytes,
                   uint64_t capacity_bytes, ns_t seq_window)
    : spec_(spec), disk_bytes_(disk_bytes),
      capacity_(static_cast<double>(std::max(capacity_bytes, disk_bytes))),
      read_seek_(spec.read_seek, static_cast<double>(spec.cylinders)),
      write_seek_(spec.write_seek, static_cast<double>(spec.cylinders)),
      rev_(spec.rotational && spec.rpm > 0 ? ms_to_ns(60000.0 / spec.rpm) : 0),
      overhead_(ms_to_ns(spec.overhead_ms)),
      seq_window_(seq_window < 0 ? DEFAULT_SEQ_WINDOW : seq_window) {
  if (capacity_ <= 0) {
    capacity_ = 1;
  }
}

double HddModel::rate_mb_s(uint64_t off) const {
  double f = std::min(1.0, off / capacity_);
  return spec_.outer_mb_s + (spec_.inner_mb_s - spec_.outer_mb_s) * f;
}

double HddModel::cylinder_of(uint64_t off) const {
  return off / capacity_ * static_cast<double>(spec_.cylinders);
}

double HddModel::angle_of(uint64_t off) const {
  // Tracks before off: integral of 1 / (rate(l) * revolution) dl.
  double rev_s = rev_ / 1e9;
  double r0 = spec_.outer_mb_s * 1e6;                            // B/s
  double k = (spec_.inner_mb_s - spec_.outer_mb_s) * 1e6 / capacity_;  // B/s per B
  double x = static_cast<double>(off);
  double tracks = std::fabs(k * x) < 1e-9 * r0
                      ? x / (r0 * rev_s)
                      : std::log1p(k * x / r0) / (k * rev_s);
  return tracks - std::floor(tracks);
}

double HddModel::platter_angle(ns_t t) const {
  ns_t m = t % rev_;
  if (m < 0) {
    m += rev_;
  }
  return static_cast<double>(m) / static_cast<double>(rev_);
}

ns_t HddModel::transfer_time(uint64_t off, uint64_t len) const {
  double mb = spec_.rotational ? rate_mb_s(off) : spec_.interface_mb_s;
  return static_cast<ns_t>(std::llround(len / (mb * 1e-3)));   // MB/s = 1e-3 B/ns
}

ns_t HddModel::interface_time(uint64_t len) const {
  ns_t fixed = spec_.rotational ? overhead_ : static_cast<ns_t>(spec_.fixed_latency_us * 1e3);
  return fixed + static_cast<ns_t>(std::llround(len / (spec_.interface_mb_s * 1e-3)));
}

Cost HddModel::cost(OpKind op, uint64_t off, uint64_t len, ns_t start,
                    ns_t arrival, double seek_scale) const {
  (void)arrival;
  Cost c;
  if (!spec_.rotational) {
    c.overhead = static_cast<ns_t>(spec_.fixed_latency_us * 1e3);
    c.transfer = transfer_time(off, len);
    return c;
  }
  c.transfer = transfer_time(off, len);
  // Continuation: the head is where this request starts and the drive gets
  // it before the sector has gone by (the command overhead overlaps the
  // previous transfer).
  if (head_known_ && off == head_off_ && start <= head_time_ + seq_window_) {
    c.sequential = true;
    return c;
  }
  c.overhead = overhead_;
  const SeekCurve& curve = seek_curve(op);
  if (!head_known_) {
    c.seek = ms_to_ns((op == OpKind::READ ? spec_.read_seek.average_ms
                                          : spec_.write_seek.average_ms) *
                      seek_scale);
    c.moved = true;
  } else {
    double d = std::fabs(cylinder_of(off) - cylinder_of(head_off_));
    if (d >= 0.5) {     // else the same cylinder: rotation only
      c.seek = ms_to_ns(curve.ms(d) * seek_scale);
      c.moved = true;
    }
  }
  ns_t settled = start + c.overhead + c.seek;
  double wait = angle_of(off) - platter_angle(settled);
  wait -= std::floor(wait);
  c.rotation = static_cast<ns_t>(wait * static_cast<double>(rev_));
  return c;
}

void HddModel::commit(uint64_t off, uint64_t len, ns_t end) {
  if (!spec_.rotational) {
    return;
  }
  head_known_ = true;
  head_off_ = off + len;
  head_time_ = end;
}

}  // namespace diskemu
