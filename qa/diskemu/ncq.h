// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the drive's command queue ordering (NCQ / TCQ reordering).
 *
 * Given the commands the drive holds and the head state, pick the one to
 * serve next:
 *   fifo   arrival order
 *   sptf   shortest positioning time first: overhead + seek + rotational
 *          wait from the model, at the moment the actuator frees
 *   clook  the lowest offset at or after the head, wrapping to the lowest
 *   fw     as firmware does it: sptf on estimates, with a safety margin
 *          (a candidate whose rotational slack after the estimated seek is
 *          under `margin` is rated a revolution later: the drive does not
 *          bet on catching it) and a bounded look-ahead (only the
 *          `lookahead` oldest candidates are rated). Its seeks also vary
 *          when executed (Drive: seek_err), so a bet can miss.
 * with an aging bound for sptf, clook and fw: a command that has waited
 * longer than `aging` is served first (oldest first), so none starves.
 * Pure function of its inputs: deterministic under a virtual clock.
 */
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model.h"

namespace diskemu {

enum class Policy { FIFO, SPTF, CLOOK, FW };
bool parse_policy(const std::string& s, Policy* out);
const char* policy_name(Policy p);

struct Candidate {
  OpKind op;
  uint64_t off, len;
  ns_t arrival;        ///< when the drive got it (aging and fifo order)
  ns_t fixed_cost;     ///< >= 0: known cost that needs no positioning
                       ///< (cached write, cache hit); -1: ask the model
};

/// Policy::FW's estimate (see above); unused by the other policies.
struct FwParams {
  ns_t margin = 0;        ///< rotational slack the drive insists on
  size_t lookahead = 0;   ///< oldest candidates rated (0: all)
};

/// Index into cands of the one to serve at `now`. cands must not be empty.
size_t pick_next(Policy p, const HddModel& m, const std::vector<Candidate>& cands,
                 ns_t now, ns_t aging, const FwParams& fw = FwParams());

}  // namespace diskemu
