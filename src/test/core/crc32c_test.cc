// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for crc32c.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace mim;

namespace {

using crc_fn = uint32_t (*)(uint32_t, const void*, size_t);

std::vector<std::pair<const char*, crc_fn>> impls()
{
  std::vector<std::pair<const char*, crc_fn>> v = {{"dispatch", crc32c},
                                                  {"sw", crc32c_sw}};
  if (crc32c_hw_available()) {
    v.push_back({"hw", crc32c_hw});
  }
  return v;
}

}  // anonymous namespace

TEST(Crc32c, StandardCheckValue)
{
  for (auto [name, f] : impls()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(0xE3069283u, f(0, "123456789", 9));
    EXPECT_EQ(0u, f(0, "", 0));
    EXPECT_EQ(0xC1D04330u, f(0, "a", 1));
  }
}

TEST(Crc32c, Rfc3720Vectors)
{
  // iSCSI (RFC 3720, B.4) test vectors, also used by LevelDB's crc32c_test.
  char buf[48];
  for (auto [name, f] : impls()) {
    SCOPED_TRACE(name);
    memset(buf, 0, 32);
    EXPECT_EQ(0x8A9136AAu, f(0, buf, 32));
    memset(buf, 0xff, 32);
    EXPECT_EQ(0x62A8AB43u, f(0, buf, 32));
    for (int i = 0; i < 32; ++i) {
      buf[i] = char(i);
    }
    EXPECT_EQ(0x46DD794Eu, f(0, buf, 32));
    for (int i = 0; i < 32; ++i) {
      buf[i] = char(31 - i);
    }
    EXPECT_EQ(0x113FDB5Cu, f(0, buf, 32));
    const unsigned char pdu[48] = {
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    EXPECT_EQ(0xD9963A56u, f(0, pdu, sizeof(pdu)));
  }
}

TEST(Crc32c, IncrementalChainingAtEverySplit)
{
  std::string s;
  std::mt19937 rng(1);
  for (int i = 0; i < 100; ++i) {
    s.push_back(char(rng()));
  }
  for (auto [name, f] : impls()) {
    SCOPED_TRACE(name);
    uint32_t whole = f(0, s.data(), s.size());
    for (size_t k = 0; k <= s.size(); ++k) {
      uint32_t a = f(0, s.data(), k);
      EXPECT_EQ(whole, f(a, s.data() + k, s.size() - k)) << "split " << k;
    }
  }
}

TEST(Crc32c, ImplementationsAgreeOnAnyAlignmentAndLength)
{
  if (!crc32c_hw_available()) {
    GTEST_SKIP() << "CPU has no SSE4.2; only the table implementation runs";
  }
  std::vector<char> buf(4096 + 16);
  std::mt19937 rng(2);
  for (auto& c : buf) {
    c = char(rng());
  }
  for (int i = 0; i < 2000; ++i) {
    size_t off = rng() % 16;
    size_t len = rng() % 4096;
    uint32_t seed = rng();
    ASSERT_EQ(crc32c_sw(seed, buf.data() + off, len),
              crc32c_hw(seed, buf.data() + off, len))
      << "off " << off << " len " << len;
  }
}

TEST(Crc32c, DetectsSingleBitFlips)
{
  std::string s(256, 'x');
  uint32_t base = crc32c(0, s.data(), s.size());
  for (size_t i = 0; i < s.size() * 8; ++i) {
    s[i / 8] ^= char(1 << (i % 8));
    EXPECT_NE(base, crc32c(0, s.data(), s.size()));
    s[i / 8] ^= char(1 << (i % 8));
  }
}
