// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: replay a request trace on the drive model, with a virtual clock.
 *
 * Trace formats:
 *   csv      "t_us,op,offset,len" per line, op R, W or F (flush), offset
 *            and len in bytes; lines not starting with a digit (a header,
 *            comments) are skipped. What `diskemu --trace` writes.
 *   tracefs  block_rq_issue lines as qa/hddmodel.py parses them
 *            ("... 12.345678: block_rq_issue: 7,0 WS 4096 () 123456 + 8 ..."),
 *            one device (major,minor) selected; a request whose rwbs starts
 *            with F is a flush (then also a write when it carries data),
 *            discards (D) are skipped.
 *
 * Modes:
 *   open     each request reaches the drive at its trace time
 *   closed   `depth` requests outstanding: the next one is issued when one
 *            completes (back-to-back), trace times are ignored
 */
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "drive.h"

namespace diskemu {

struct TraceReq {
  ns_t t = 0;
  OpKind op = OpKind::WRITE;
  uint64_t off = 0, len = 0;
};

bool parse_csv_trace(std::istream& in, std::vector<TraceReq>* out, std::string* err);
/// dev "maj,min", or empty for the only device in the trace (error if more
/// than one); *dev_used tells which.
bool parse_tracefs_trace(std::istream& in, const std::string& dev,
                         std::vector<TraceReq>* out, std::string* dev_used,
                         std::string* err);

enum class ReplayMode { OPEN, CLOSED };

struct ReplayResult {
  ns_t makespan = 0;                 ///< first arrival to last completion
  std::vector<ns_t> arrival, completion;   ///< per request, in trace order
  DriveStats stats;
  std::string stats_json;
};

/// Run the trace to completion (write cache drained too) on a new Drive.
ReplayResult replay(const DiskSpec& spec, uint64_t disk_bytes,
                    const DriveOptions& opts, const std::vector<TraceReq>& trace,
                    ReplayMode mode, uint32_t depth = 1);

}  // namespace diskemu
