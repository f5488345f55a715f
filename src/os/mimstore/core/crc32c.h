// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: crc32c (Castagnoli), Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace mim {

/// CRC-32C, polynomial 0x1EDC6F41 (reflected 0x82F63B78), in the standard
/// convention: register initialised to ~0, result xored with ~0. `crc` is a
/// previous *result* (0 to start), so
///   crc32c(0, "123456789", 9) == 0xE3069283
///   crc32c(crc32c(0, a, na), b, nb) == crc32c(0, a||b, na+nb)
/// Note: this differs from Ceph's ceph_crc32c(), which takes and returns the
/// raw register (no pre/post inversion); do not mix the two.
///
/// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at
/// run time), else a table-driven slicing-by-8 implementation.
uint32_t crc32c(uint32_t crc, const void* p, size_t n);

/// The two implementations, exposed for tests and benchmarks.
/// crc32c_hw() REQUIRES: crc32c_hw_available().
uint32_t crc32c_sw(uint32_t crc, const void* p, size_t n);
uint32_t crc32c_hw(uint32_t crc, const void* p, size_t n);
bool crc32c_hw_available();

}  // namespace mim
