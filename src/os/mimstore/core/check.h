// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: MIM_CHECK, an always-on assertion for core/ (which may not use
 * Ceph's ceph_assert): for invariants and caller contract violations that
 * would otherwise corrupt state silently. Prints the condition and aborts.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <cstdio>
#include <cstdlib>

#define MIM_CHECK(cond)                                                   \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                \
      std::abort();                                                       \
    }                                                                     \
  } while (0)
