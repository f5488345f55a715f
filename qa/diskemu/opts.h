// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: command-line options shared by diskemu and diskemu-replay, so
 * that a replay can be run with exactly the drive the daemon emulated.
 */
#pragma once

#include <string>

#include "drive.h"

namespace diskemu {

/// Handle one drive option (--queue-depth, --sched, --aging-ms,
/// --write-cache, --cache, --destage-window, --seq-window-us, --capacity).
/// Returns false if `flag` is not one of them; *err is set on a bad value.
bool parse_drive_option(const std::string& flag, const std::string& value,
                        DriveOptions* o, std::string* err);
/// The same options as "key=value" inside a --disk spec (qd, sched, aging_ms,
/// wc, cache_bytes, destage_window, seq_window_us, capacity).
bool parse_drive_key(const std::string& key, const std::string& value,
                     DriveOptions* o, std::string* err);
const char* drive_options_help();

}  // namespace diskemu
