// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "core/name_escape.h"

#include <gtest/gtest.h>

#include <random>

using mim::escape_component;
using mim::unescape_component;

TEST(NameEscape, PlainBytesPassThrough)
{
  std::string out;
  escape_component("rbd_data.1234.0000000000000abc", &out);
  EXPECT_EQ("rbd%5Fdata.1234.0000000000000abc", out);
}

TEST(NameEscape, EverySingleByteRoundTrips)
{
  for (int b = 0; b < 256; ++b) {
    std::string in(1, static_cast<char>(b)), enc, dec;
    escape_component(in, &enc);
    EXPECT_EQ(std::string::npos, enc.find('_')) << b;
    EXPECT_EQ(std::string::npos, enc.find('/')) << b;
    ASSERT_TRUE(unescape_component(enc, &dec)) << b;
    EXPECT_EQ(in, dec) << b;
  }
}

TEST(NameEscape, RandomStringsRoundTrip)
{
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    std::string in(rng() % 300, '\0');
    for (auto& c : in) {
      c = static_cast<char>(rng());
    }
    std::string enc, dec;
    escape_component(in, &enc);
    ASSERT_TRUE(unescape_component(enc, &dec));
    ASSERT_EQ(in, dec);
  }
}

TEST(NameEscape, MalformedInputIsRejected)
{
  std::string out;
  EXPECT_FALSE(unescape_component("%", &out));
  EXPECT_FALSE(unescape_component("%4", &out));
  EXPECT_FALSE(unescape_component("%zz", &out));
  EXPECT_FALSE(unescape_component("%5f", &out));   // lower case never emitted
  EXPECT_FALSE(unescape_component("%41", &out));   // 'A' is plain: not canonical
  EXPECT_FALSE(unescape_component("a_b", &out));   // separator inside a field
  EXPECT_FALSE(unescape_component("a/b", &out));
  EXPECT_TRUE(unescape_component("", &out));
  EXPECT_EQ("", out);
}
