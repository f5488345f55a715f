// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the text commands of the control file (/MOUNT/.control).
 *
 *   cut <disk> <seed> [torn]   power cut: drop what was not flushed (torn:
 *                              keep a seeded subset of its 512-byte
 *                              sectors), then EIO for everything
 *   cut all <seed> [torn]      every disk (disk i with seed + i): the
 *                              whole machine loses power
 *   restore <disk>|all         power back on (an empty cache, the data that
 *                              reached the platter)
 *   fast <disk> on|off         no delays, model not charged (prefill)
 *   destage <disk> on|off      off: hold written data in the cache until a
 *                              flush or a full cache forces it out (so a
 *                              cut's loss does not depend on timing)
 *   flush <disk> obey|ignore   ignore: acknowledge FLUSH at once and keep
 *                              the cache (a drive that lies; crash tests
 *                              use it as an unsafe configuration that
 *                              must be caught)
 *   stats <disk>|all           counters as JSON
 *   help
 * One command per line; the answer is "ok", JSON, or "error: ...".
 */
#pragma once

#include <string>
#include <vector>

#include "engine.h"

namespace diskemu {

/// Run one command line; *ok false if it failed.
std::string run_control(const std::vector<DiskEngine*>& disks,
                        const std::string& line, bool* ok);

}  // namespace diskemu
