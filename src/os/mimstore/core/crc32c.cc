// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: crc32c (Castagnoli), Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace mim {

namespace {

constexpr uint32_t POLY = 0x82F63B78;  // reflected 0x1EDC6F41

// table[k][b]: crc register after feeding byte b followed by k zero bytes.
using table_t = std::array<std::array<uint32_t, 256>, 8>;

constexpr table_t make_table()
{
  table_t t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) {
      c = (c >> 1) ^ ((c & 1) ? POLY : 0);
    }
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = t[k - 1][b];
      t[k][b] = (c >> 8) ^ t[0][c & 0xff];
    }
  }
  return t;
}

constexpr table_t TABLE = make_table();

inline uint64_t load_le64(const unsigned char* p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | p[i];
  }
  return v;
}

// Raw register update (no pre/post inversion).
uint32_t sw_update(uint32_t c, const unsigned char* p, size_t n)
{
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = (c >> 8) ^ TABLE[0][(c ^ *p++) & 0xff];
    --n;
  }
  while (n >= 8) {
    uint64_t v = load_le64(p) ^ c;
    c = TABLE[7][v & 0xff] ^
        TABLE[6][(v >> 8) & 0xff] ^
        TABLE[5][(v >> 16) & 0xff] ^
        TABLE[4][(v >> 24) & 0xff] ^
        TABLE[3][(v >> 32) & 0xff] ^
        TABLE[2][(v >> 40) & 0xff] ^
        TABLE[1][(v >> 48) & 0xff] ^
        TABLE[0][(v >> 56) & 0xff];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ TABLE[0][(c ^ *p++) & 0xff];
    --n;
  }
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
uint32_t hw_update(uint32_t c, const unsigned char* p, size_t n)
{
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // x86 is little-endian, as the crc32 insn wants
    c64 = _mm_crc32_u64(c64, v);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n > 0) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  return c;
}
#endif

bool detect_hw()
{
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // anonymous namespace

bool crc32c_hw_available()
{
  static const bool have = detect_hw();
  return have;
}

uint32_t crc32c_sw(uint32_t crc, const void* p, size_t n)
{
  return ~sw_update(~crc, static_cast<const unsigned char*>(p), n);
}

uint32_t crc32c_hw(uint32_t crc, const void* p, size_t n)
{
#if defined(__x86_64__)
  return ~hw_update(~crc, static_cast<const unsigned char*>(p), n);
#else
  return crc32c_sw(crc, p, n);
#endif
}

uint32_t crc32c(uint32_t crc, const void* p, size_t n)
{
  if (crc32c_hw_available()) {
    return crc32c_hw(crc, p, n);
  }
  return crc32c_sw(crc, p, n);
}

}  // namespace mim
