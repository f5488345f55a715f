// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
// Thin storage: zeros are holes, not data.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "thin.h"

using namespace diskemu;

class Thin : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/diskemu-thin-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    path_ = tmpl;
    std::string err;
    ASSERT_TRUE(f_.open(path_, 1ull << 40, &err)) << err;   // 1 TiB, sparse
    // Hole punching is what is tested: skip where the filesystem lacks it.
    std::vector<char> x(4096, 1);
    ASSERT_EQ(f_.write(0, x.data(), x.size()), 0);
    if (f_.punch(0, 4096) != 0) {
      GTEST_SKIP() << "no PUNCH_HOLE on /var/tmp";
    }
  }
  void TearDown() override {
    f_.close();
    unlink(path_.c_str());
  }
  std::string path_;
  ThinFile f_;
};

TEST_F(Thin, ZeroWritesPunchHoles) {
  const size_t n = 1 << 20;
  std::vector<char> data(n, 'd'), zero(n, 0), back(n);
  EXPECT_LT(f_.allocated(), 64u * 1024);          // 1 TiB of nothing
  ASSERT_EQ(f_.write(512ull << 30, data.data(), n), 0);
  EXPECT_GE(f_.allocated(), n);
  ASSERT_EQ(f_.write(512ull << 30, zero.data(), n), 0);
  EXPECT_LT(f_.allocated(), 64u * 1024);
  ASSERT_EQ(f_.read(512ull << 30, back.data(), n), 0);
  EXPECT_EQ(back, zero);
}

TEST_F(Thin, MixedWriteStoresOnlyItsNonZeroBlocks) {
  const size_t n = 64 * 4096;
  std::vector<char> data(n, 0), back(n);
  for (size_t i = 0; i < n; i += 8 * 4096) {
    data[i + 100] = 'x';                            // 8 of 64 blocks
  }
  ASSERT_EQ(f_.write(1 << 20, data.data(), n), 0);
  EXPECT_LE(f_.allocated(), 8 * 4096u + 32 * 1024);
  ASSERT_EQ(f_.read(1 << 20, back.data(), n), 0);
  EXPECT_EQ(back, data);
}

TEST_F(Thin, UnalignedZerosKeepNeighbours) {
  std::vector<char> data(8192, 'q'), zero(1000, 0), back(8192);
  ASSERT_EQ(f_.write(0, data.data(), 8192), 0);
  ASSERT_EQ(f_.write(3000, zero.data(), 1000), 0);  // inside block 0
  ASSERT_EQ(f_.read(0, back.data(), 8192), 0);
  for (size_t i = 0; i < 8192; i++) {
    ASSERT_EQ(back[i], (i >= 3000 && i < 4000) ? 0 : 'q') << i;
  }
}

TEST(ThinZero, Detects) {
  std::vector<char> z(4096, 0);
  EXPECT_TRUE(ThinFile::all_zero(z.data(), z.size()));
  z[4095] = 1;
  EXPECT_FALSE(ThinFile::all_zero(z.data(), z.size()));
  EXPECT_TRUE(ThinFile::all_zero(z.data(), 4095));
}
