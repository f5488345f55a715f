// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: helpers shared by the transaction op files (MIMOps.cc,
 * MIMOmapOps.cc, MIMCollOps.cc, ReplayGuards.cc). Private to the store.
 */
#pragma once

#include <mutex>

#include "MIMStore.h"

namespace mimstore {

/// Lock two stripes in address order (they may be the same).
struct TwoLocks {
  std::unique_lock<std::mutex> a, b;
  TwoLocks(std::mutex& x, std::mutex& y) {
    if (&x == &y) {
      a = std::unique_lock(x);
    } else if (&x < &y) {
      a = std::unique_lock(x);
      b = std::unique_lock(y);
    } else {
      a = std::unique_lock(y);
      b = std::unique_lock(x);
    }
  }
};

}  // namespace mimstore
