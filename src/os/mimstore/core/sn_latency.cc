// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: sampled queue-to-checkpoint latency. See the header.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/sn_latency.h"

namespace mim {

void SnLatency::queued(sn_t sn, double t)
{
  if (sn % every_) {
    return;
  }
  MutexLock l(lock_);
  if (q_.size() < cap_) {
    q_.emplace_back(sn, t);
  }
}

void SnLatency::clear()
{
  MutexLock l(lock_);
  q_.clear();
}

size_t SnLatency::waiting() const
{
  MutexLock l(lock_);
  return q_.size();
}

}  // namespace mim
