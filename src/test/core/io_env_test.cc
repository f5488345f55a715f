// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for PosixIoEnv on real files in /var/tmp.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/io_env.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/journal_format.h"
#include "core/journal_scanner.h"

using namespace mim;

namespace {

/// A scratch directory in /var/tmp (a disk filesystem: O_DIRECT works
/// there, unlike on tmpfs), removed with its files afterwards.
class IoEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/mim-ioenv-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir = tmpl;
    env = make_posix_io_env();
    env->set_error_log([this](const std::string& m) { log.push_back(m); });
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& n) { return dir + "/" + n; }

  /// Open with O_DIRECT or skip the test if the filesystem refuses it.
  int open_direct(const std::string& p, int* fd) {
    int r = env->open(p, O_RDWR | O_CREAT | O_DIRECT, 0644, fd);
    return r;
  }

  struct Aligned {
    explicit Aligned(size_t n, size_t align = 4096) {
      void* p = nullptr;
      EXPECT_EQ(0, posix_memalign(&p, align, n));
      buf.reset(static_cast<char*>(p));
      len = n;
    }
    char* get() { return buf.get(); }
    struct Free {
      void operator()(char* p) const { free(p); }
    };
    std::unique_ptr<char, Free> buf;
    size_t len;
  };

  std::string dir;
  std::unique_ptr<IoEnv> env;
  std::vector<std::string> log;
};

#define SKIP_IF_NO_DIRECT(r)                                            \
  do {                                                                  \
    if ((r) == -EINVAL) {                                               \
      GTEST_SKIP() << "filesystem of " << dir << " refuses O_DIRECT";   \
    }                                                                   \
    ASSERT_EQ(0, (r));                                                  \
  } while (0)

}  // anonymous namespace

TEST_F(IoEnvTest, PreadPwritevRoundTrip)
{
  int fd;
  ASSERT_EQ(0, env->open(path("f"), O_RDWR | O_CREAT, 0644, &fd));
  std::string a = "hello ", b = "scattered ", c = "world";
  struct iovec iov[3] = {{a.data(), a.size()}, {b.data(), b.size()},
                         {c.data(), c.size()}};
  EXPECT_EQ(ssize_t(a.size() + b.size() + c.size()),
            env->pwritev(fd, iov, 3, 100));
  std::string out(21, '?');
  EXPECT_EQ(21, env->pread(fd, out.data(), out.size(), 100));
  EXPECT_EQ("hello scattered world", out);
  // Reading past the end returns what is there.
  std::string tail(50, '?');
  EXPECT_EQ(11, env->pread(fd, tail.data(), tail.size(), 110));
  EXPECT_EQ(0, env->pread(fd, tail.data(), tail.size(), 1000));
  uint64_t size = 0;
  EXPECT_EQ(0, env->get_size(fd, &size));
  EXPECT_EQ(121u, size);
  EXPECT_EQ(0, env->fsync(fd));
  EXPECT_EQ(0, env->fdatasync(fd));
  EXPECT_EQ(0, env->syncfs(fd));
  EXPECT_EQ(121, env->pwrite(fd, std::string(121, 'w').data(), 121, 0));
  EXPECT_EQ(0, env->writeback(fd, 0, 121, false));
  EXPECT_EQ(0, env->writeback(fd, 0, 121, true));
  // sync_file_range's own argument checks come back as -errno.
  EXPECT_EQ(-EINVAL, env->writeback(fd, uint64_t(-4096), 4096, true));
  EXPECT_EQ(0, env->close(fd));
  EXPECT_EQ(-EBADF, env->writeback(fd, 0, 1, false));
}

/// Pages of fd's first len bytes in the page cache (mincore(2)).
static int resident_pages(int fd, size_t len)
{
  void* m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    return -errno;
  }
  const size_t page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((len + page - 1) / page);
  int r = mincore(m, len, vec.data());
  munmap(m, len);
  if (r < 0) {
    return -errno;
  }
  return std::count_if(vec.begin(), vec.end(),
                       [](unsigned char v) { return v & 1; });
}

/// Bytes this thread has had read from storage (/proc/thread-self/io,
/// counted when the read is submitted), or -1 where the kernel does not say.
static long long thread_read_bytes()
{
  std::ifstream io("/proc/thread-self/io");
  std::string key;
  long long v;
  while (io >> key >> v) {
    if (key == "read_bytes:") {
      return v;
    }
  }
  return -1;
}

TEST_F(IoEnvTest, PreadCachedReadsOnlyWhatIsInMemory)
{
  int fd;
  ASSERT_EQ(0, env->open(path("c"), O_RDWR | O_CREAT, 0644, &fd));
  std::string data(256 << 10, 'c');
  ASSERT_EQ(ssize_t(data.size()), env->pwrite(fd, data.data(), data.size(), 0));
  // Just written: in the page cache, all of it; end of file ends it.
  std::string out(512 << 10, '?');
  ssize_t r = env->pread_cached(fd, out.data(), out.size(), 0);
  if (r == -EOPNOTSUPP) {
    GTEST_SKIP() << "no RWF_NOWAIT buffered reads on " << dir;
  }
  ASSERT_EQ(ssize_t(data.size()), r);
  EXPECT_EQ(data, out.substr(0, data.size()));
  EXPECT_EQ(0, env->pread_cached(fd, out.data(), 10, data.size() + 4096));
  // Written to the disk and dropped from memory: not read, -EAGAIN. The
  // kernel may keep a page it is still using; only "not all of it" and
  // "never wrong bytes" are promised.
  ASSERT_EQ(0, env->fsync(fd));
  ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
  // DONTNEED is advice: if every page stayed (seen once under load), there
  // is no uncached file to probe.
  const size_t page = sysconf(_SC_PAGESIZE);
  const int kept = resident_pages(fd, data.size());
  ASSERT_GE(kept, 0) << "mincore: " << strerror(-kept);
  if (size_t(kept) * page >= data.size()) {
    GTEST_SKIP() << dir << " kept all " << kept << " pages after "
                 << "POSIX_FADV_DONTNEED: cannot start from an uncached file";
  }
  std::string again(data.size(), '?');
  r = env->pread_cached(fd, again.data(), again.size(), 0);
  EXPECT_TRUE(r == -EAGAIN || (r >= 0 && r < ssize_t(data.size())))
    << "read " << r << " bytes of an uncached file without waiting";
  if (r > 0) {
    EXPECT_EQ(data.substr(0, r), again.substr(0, r));
  }
  // A plain read brings it back; then it is cached again.
  ASSERT_EQ(ssize_t(data.size()), env->pread(fd, again.data(), again.size(), 0));
  EXPECT_EQ(ssize_t(data.size()),
            env->pread_cached(fd, again.data(), again.size(), 0));
  EXPECT_EQ(0, env->close(fd));
}

TEST_F(IoEnvTest, PreadCachedDoesNotReadFromTheDevice)
{
  // The flush asks for gaps with pread_cached to avoid a disk read; a probe
  // that misses must not start one either (preadv2 RWF_NOWAIT does: it
  // submits the readahead before it answers -EAGAIN).
  const size_t len = 1 << 20;
  int fd;
  ASSERT_EQ(0, env->open(path("cold"), O_RDWR | O_CREAT, 0644, &fd));
  std::string data(len, 'd');
  ASSERT_EQ(ssize_t(len), env->pwrite(fd, data.data(), len, 0));
  ASSERT_EQ(0, env->fsync(fd));
  ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
  const int before = resident_pages(fd, len);
  ASSERT_GE(before, 0) << "mincore: " << strerror(-before);
  if (before > 0) {
    GTEST_SKIP() << dir << " kept " << before << " pages after "
                 << "POSIX_FADV_DONTNEED: cannot start from a cold file";
  }
  const long long read0 = thread_read_bytes();
  if (read0 < 0) {
    GTEST_SKIP() << "no read_bytes in /proc/thread-self/io";
  }
  std::string out(4096, '?');
  EXPECT_EQ(-EAGAIN, env->pread_cached(fd, out.data(), out.size(), len / 2));
  EXPECT_EQ(read0, thread_read_bytes())
    << "the probe of a cold range read from the device";
  // A range cached in part is not cached, and its probe reads none of the
  // rest. (The plain read's readahead decides how far the cached part
  // goes: the probe straddles its end.)
  ASSERT_EQ(4096, env->pread(fd, out.data(), 4096, 0));
  const int cached = resident_pages(fd, len);
  ASSERT_GT(cached, 0);
  const size_t page = sysconf(_SC_PAGESIZE);
  if (size_t(cached) * page < len) {
    std::string two(8192, '?');
    const long long read1 = thread_read_bytes();
    EXPECT_EQ(-EAGAIN,
              env->pread_cached(fd, two.data(), two.size(),
                                uint64_t(cached - 1) * page));
    EXPECT_EQ(read1, thread_read_bytes())
      << "the probe of a range cached in part read from the device";
  }
  EXPECT_EQ(0, env->close(fd));
}

TEST_F(IoEnvTest, PwritevMoreThanIovMax)
{
  // More segments than one pwritev(2) takes: written in several calls.
  int fd;
  ASSERT_EQ(0, env->open(path("many"), O_RDWR | O_CREAT, 0644, &fd));
  std::vector<std::string> parts;
  std::vector<struct iovec> iov;
  std::string expect;
  for (int i = 0; i < IOV_MAX * 2 + 7; ++i) {
    parts.push_back(std::string(1 + i % 5, char('a' + i % 26)));
  }
  for (auto& p : parts) {
    iov.push_back({p.data(), p.size()});
    expect += p;
  }
  EXPECT_EQ(ssize_t(expect.size()),
            env->pwritev(fd, iov.data(), iov.size(), 0));
  std::string out(expect.size(), '?');
  EXPECT_EQ(ssize_t(out.size()), env->pread(fd, out.data(), out.size(), 0));
  EXPECT_EQ(expect, out);
  env->close(fd);
}

TEST_F(IoEnvTest, ErrorsAreNegativeErrno)
{
  int fd = -1;
  EXPECT_EQ(-ENOENT, env->open(path("missing"), O_RDONLY, 0, &fd));
  EXPECT_EQ(-EBADF, env->pread(12345, nullptr, 0 + 1, 0));
  EXPECT_EQ(-EBADF, env->fsync(12345));
  EXPECT_EQ(-ENOENT, env->unlink(path("missing")));
  EXPECT_EQ(-ENOENT, env->rename(path("missing"), path("x")));
  ASSERT_EQ(0, env->open(path("ro"), O_RDONLY | O_CREAT, 0644, &fd));
  EXPECT_EQ(-EBADF, env->pwrite(fd, "x", 1, 0));
  env->close(fd);
}

TEST_F(IoEnvTest, NamespaceOps)
{
  int fd;
  ASSERT_EQ(0, env->mkdir(path("d"), 0755));
  EXPECT_EQ(-EEXIST, env->mkdir(path("d"), 0755));
  ASSERT_EQ(0, env->open(path("d/a"), O_RDWR | O_CREAT, 0644, &fd));
  env->pwrite(fd, "abc", 3, 0);
  env->close(fd);
  EXPECT_EQ(0, env->link(path("d/a"), path("d/b")));
  EXPECT_EQ(0, env->rename(path("d/a"), path("d/c")));
  std::vector<std::string> names;
  ASSERT_EQ(0, env->list_dir(path("d"), &names));
  EXPECT_EQ(std::set<std::string>({"b", "c"}),
            std::set<std::string>(names.begin(), names.end()));
  struct stat st;
  ASSERT_EQ(0, env->stat(path("d/b"), &st));
  EXPECT_EQ(3, st.st_size);
  EXPECT_EQ(2u, st.st_nlink);
  EXPECT_EQ(-ENOTEMPTY, env->rmdir(path("d")));
  EXPECT_EQ(0, env->unlink(path("d/b")));
  EXPECT_EQ(0, env->unlink(path("d/c")));
  EXPECT_EQ(0, env->rmdir(path("d")));
}

TEST_F(IoEnvTest, TruncateAllocateStat)
{
  int fd;
  ASSERT_EQ(0, env->open(path("t"), O_RDWR | O_CREAT, 0644, &fd));
  EXPECT_EQ(0, env->ftruncate(fd, 10000));
  struct stat st;
  ASSERT_EQ(0, env->fstat(fd, &st));
  EXPECT_EQ(10000, st.st_size);
  int r = env->fallocate(fd, 0, 0, 65536);
  if (r != -EOPNOTSUPP) {
    EXPECT_EQ(0, r);
    uint64_t size;
    EXPECT_EQ(0, env->get_size(fd, &size));
    EXPECT_EQ(65536u, size);
  }
  uint32_t lbs = 0;
  EXPECT_EQ(0, env->get_logical_block_size(fd, &lbs));
  EXPECT_GE(lbs, 512u);
  EXPECT_EQ(0u, lbs & (lbs - 1));
  // A file: its filesystem's block size, never below the logical one.
  uint32_t pbs = 0;
  EXPECT_EQ(0, env->get_physical_block_size(fd, &pbs));
  EXPECT_GE(pbs, lbs);
  EXPECT_EQ(uint32_t(st.st_blksize > lbs ? st.st_blksize : lbs), pbs);
  env->close(fd);
}

TEST_F(IoEnvTest, PhysicalOffset)
{
  // Data at [0, 4096) made durable, then a hole up to 1 MiB.
  int fd;
  ASSERT_EQ(0, env->open(path("p"), O_RDWR | O_CREAT, 0644, &fd));
  std::string data(4096, 'p');
  struct iovec iov{data.data(), data.size()};
  ASSERT_EQ(4096, env->pwritev(fd, &iov, 1, 0));
  ASSERT_EQ(0, env->fsync(fd));
  ASSERT_EQ(0, env->ftruncate(fd, 1 << 20));
  uint64_t p0 = 0, p1 = 0;
  int r = env->physical_offset(fd, 0, &p0);
  if (r == -EOPNOTSUPP) {
    env->close(fd);
    GTEST_SKIP() << "no FIEMAP on " << dir;
  }
  ASSERT_EQ(0, r) << io_error_string(r);
  // One filesystem block is one extent: byte 4095 is 4095 bytes further on.
  ASSERT_EQ(0, env->physical_offset(fd, 4095, &p1));
  EXPECT_EQ(p0 + 4095, p1);
  EXPECT_EQ(-ENODATA, env->physical_offset(fd, 512 << 10, &p1));
  EXPECT_EQ(-ENODATA, env->physical_offset(fd, 2 << 20, &p1));  // past EOF
  env->close(fd);
  EXPECT_EQ(-EBADF, env->physical_offset(fd, 0, &p1));
}

TEST_F(IoEnvTest, Xattrs)
{
  int fd;
  ASSERT_EQ(0, env->open(path("x"), O_RDWR | O_CREAT, 0644, &fd));
  std::string v;
  int r = env->fsetxattr(fd, "user.mim.guard", "seq=42", 6, 0);
  if (r == -EOPNOTSUPP) {
    env->close(fd);
    GTEST_SKIP() << "no user xattrs on " << dir;
  }
  ASSERT_EQ(0, r);
  ASSERT_EQ(0, env->fgetxattr(fd, "user.mim.guard", &v));
  EXPECT_EQ("seq=42", v);
  std::string big(3000, 'v');
  ASSERT_EQ(0, env->fsetxattr(fd, "user.mim.guard", big.data(), big.size(),
                              XATTR_REPLACE));
  ASSERT_EQ(0, env->fgetxattr(fd, "user.mim.guard", &v));
  EXPECT_EQ(big, v);
  EXPECT_EQ(-EEXIST, env->fsetxattr(fd, "user.mim.guard", "a", 1,
                                    XATTR_CREATE));
  EXPECT_EQ(0, env->fremovexattr(fd, "user.mim.guard"));
  EXPECT_EQ(-ENODATA, env->fgetxattr(fd, "user.mim.guard", &v));
  EXPECT_EQ(-ENODATA, env->fremovexattr(fd, "user.mim.guard"));
  env->close(fd);
}

TEST_F(IoEnvTest, CloneOrTellToCopy)
{
  int src, dst;
  ASSERT_EQ(0, env->open(path("src"), O_RDWR | O_CREAT, 0644, &src));
  ASSERT_EQ(0, env->open(path("dst"), O_RDWR | O_CREAT, 0644, &dst));
  std::string data(8192, 'c');
  env->pwrite(src, data.data(), data.size(), 0);
  int r = env->clone_file(src, dst);
  EXPECT_TRUE(r == 0 || r == -EOPNOTSUPP || r == -EXDEV) << r;
  if (r == 0) {
    std::string out(8192, '?');
    EXPECT_EQ(8192, env->pread(dst, out.data(), out.size(), 0));
    EXPECT_EQ(data, out);
  }
  r = env->clone_range(src, 0, 4096, dst, 4096);
  EXPECT_TRUE(r == 0 || r == -EOPNOTSUPP || r == -EXDEV) << r;
  env->close(src);
  env->close(dst);
}

TEST_F(IoEnvTest, DirectIoRoundTrip)
{
  int fd;
  SKIP_IF_NO_DIRECT(open_direct(path("direct"), &fd));
  Aligned w(3 * 4096), r(3 * 4096);
  for (size_t i = 0; i < w.len; ++i) {
    w.get()[i] = char(i * 7);
  }
  struct iovec iov[2] = {{w.get(), 4096}, {w.get() + 4096, 2 * 4096}};
  EXPECT_EQ(3 * 4096, env->pwritev(fd, iov, 2, 8192));
  EXPECT_EQ(0, env->fdatasync(fd));
  EXPECT_EQ(3 * 4096, env->pread(fd, r.get(), r.len, 8192));
  EXPECT_EQ(0, memcmp(w.get(), r.get(), w.len));
  EXPECT_TRUE(log.empty());
  env->close(fd);
}

TEST_F(IoEnvTest, DirectIoMisalignmentIsExplained)
{
  int fd;
  SKIP_IF_NO_DIRECT(open_direct(path("direct"), &fd));
  Aligned w(8192);
  memset(w.get(), 'x', 8192);
  // Misaligned buffer.
  EXPECT_EQ(-EINVAL, env->pwrite(fd, w.get() + 1, 4096, 0));
  ASSERT_EQ(1u, log.size());
  EXPECT_NE(std::string::npos, log[0].find("O_DIRECT")) << log[0];
  EXPECT_NE(std::string::npos, log[0].find("not aligned")) << log[0];
  // Misaligned offset.
  EXPECT_EQ(-EINVAL, env->pwrite(fd, w.get(), 4096, 100));
  ASSERT_EQ(2u, log.size());
  EXPECT_NE(std::string::npos, log[1].find("offset 100")) << log[1];
  // Reads too (of existing data: reads past the end return 0 first).
  ASSERT_EQ(8192, env->pwrite(fd, w.get(), 8192, 0));
  EXPECT_EQ(-EINVAL, env->pread(fd, w.get() + 8, 4096, 0));
  EXPECT_EQ(3u, log.size());
  env->close(fd);
}

TEST_F(IoEnvTest, AioRoundTripDirect)
{
  int fd;
  SKIP_IF_NO_DIRECT(open_direct(path("aio"), &fd));
  ASSERT_EQ(0, env->aio_setup(4));
  EXPECT_EQ(-EEXIST, env->aio_setup(4));
  std::vector<Aligned> bufs;
  int cookies[4];
  for (int i = 0; i < 4; ++i) {
    bufs.emplace_back(8192);
    memset(bufs.back().get(), 'A' + i, 8192);
  }
  for (int i = 0; i < 4; ++i) {
    // Two segments per write, like a batch plus its neighbour.
    struct iovec iov[2] = {{bufs[i].get(), 4096},
                           {bufs[i].get() + 4096, 4096}};
    ASSERT_EQ(0, env->aio_submit_write(fd, iov, 2, i * 8192, &cookies[i]));
  }
  EXPECT_EQ(4, env->aio_inflight());
  struct iovec extra = {bufs[0].get(), 4096};
  EXPECT_EQ(-EAGAIN, env->aio_submit_write(fd, &extra, 1, 0, nullptr));
  std::vector<std::pair<void*, ssize_t>> done;
  while (done.size() < 4) {
    int n = env->aio_reap(1, 4, &done, 5000);
    ASSERT_GT(n, 0);
  }
  std::set<void*> seen;
  for (auto& [c, res] : done) {
    EXPECT_EQ(8192, res);
    seen.insert(c);
  }
  EXPECT_EQ(4u, seen.size());
  EXPECT_EQ(0, env->aio_inflight());
  Aligned r(4 * 8192);
  EXPECT_EQ(4 * 8192, env->pread(fd, r.get(), r.len, 0));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ('A' + i, r.get()[i * 8192 + 100]);
  }
  env->close(fd);
}

TEST_F(IoEnvTest, AioErrorsAndTimeouts)
{
  int fd;
  ASSERT_EQ(0, env->open(path("aio2"), O_RDWR | O_CREAT, 0644, &fd));
  std::vector<std::pair<void*, ssize_t>> done;
  char c = 'x';
  struct iovec iov = {&c, 1};
  EXPECT_EQ(-EINVAL, env->aio_submit_write(fd, &iov, 1, 0, nullptr))
    << "before aio_setup";
  ASSERT_EQ(0, env->aio_setup(2));
  // Nothing in flight: returns at once even with min_events 1.
  EXPECT_EQ(0, env->aio_reap(1, 4, &done, 10000));
  // Buffered aio works too (synchronously underneath).
  ASSERT_EQ(0, env->aio_submit_write(fd, &iov, 1, 5, &c));
  ASSERT_EQ(1, env->aio_reap(1, 4, &done, 5000));
  EXPECT_EQ(&c, done[0].first);
  EXPECT_EQ(1, done[0].second);
  // A write to a read-only fd fails at submit or at completion.
  int ro;
  ASSERT_EQ(0, env->open(path("aio2"), O_RDONLY, 0, &ro));
  int r = env->aio_submit_write(ro, &iov, 1, 0, &ro);
  if (r == 0) {
    done.clear();
    ASSERT_EQ(1, env->aio_reap(1, 1, &done, 5000));
    EXPECT_EQ(-EBADF, done[0].second);
  } else {
    EXPECT_EQ(-EBADF, r);
  }
  env->close(ro);
  env->close(fd);
}

TEST_F(IoEnvTest, DirectOpenRefusedIsExplained)
{
  // tmpfs (/dev/shm) has no O_DIRECT before Linux 6.6; skip where it does.
  int fd;
  int r = env->open("/dev/shm/mim-ioenv-direct-" + std::to_string(getpid()),
                    O_RDWR | O_CREAT | O_DIRECT, 0644, &fd);
  ::unlink(("/dev/shm/mim-ioenv-direct-" + std::to_string(getpid())).c_str());
  if (r == 0) {
    env->close(fd);
    GTEST_SKIP() << "this tmpfs supports O_DIRECT";
  }
  if (r != -EINVAL) {
    GTEST_SKIP() << "no usable /dev/shm: " << io_error_string(r);
  }
  ASSERT_FALSE(log.empty());
  EXPECT_NE(std::string::npos, log.back().find("does not support direct I/O"))
    << log.back();
}

TEST_F(IoEnvTest, JournalScanThroughDirectFd)
{
  // The scanner's reads go straight to an O_DIRECT fd.
  int fd;
  SKIP_IF_NO_DIRECT(open_direct(path("journal"), &fd));
  JournalHeader h;
  h.generation = 5;
  h.block_size = 4096;
  h.journal_size = 64 * 4096;
  h.start_off = 2 * 4096;
  h.start_sn = 1;
  ASSERT_EQ(0, env->ftruncate(fd, h.journal_size));
  BatchEncoder enc(4096, h.generation);
  enc.add_txn(1, 0, "first");
  enc.add_txn(2, 0, "second");
  auto [buf, len] = enc.finish();
  ASSERT_EQ(ssize_t(len), env->pwrite(fd, buf, len, h.start_off));
  ScanResult r;
  std::vector<std::string> got;
  ASSERT_EQ(0, scan_journal(h, read_fn_for(env.get(), fd),
                            [&](sn_t, uint64_t, std::string_view p) {
                              got.emplace_back(p);
                              return 0;
                            }, &r)) << r.detail;
  EXPECT_EQ(ScanResult::CLEAN_END, r.end);
  EXPECT_EQ(std::vector<std::string>({"first", "second"}), got);
  // A journal file shorter than its header says is an error.
  ASSERT_EQ(0, env->ftruncate(fd, 32 * 4096));
  EXPECT_EQ(-ENODATA, scan_journal(h, read_fn_for(env.get(), fd),
                                   [](sn_t, uint64_t, std::string_view) {
                                     return 0;
                                   }, &r));
  EXPECT_TRUE(log.empty()) << log[0];
  env->close(fd);
}

// syncfs reports write-back errors from Linux 5.8 on (issue 61 item 5):
// the store warns at mount on an older kernel.
TEST(SyncfsErrors, ByKernelRelease)
{
  EXPECT_TRUE(mim::syncfs_reports_errors("6.1.0-18-amd64"));
  EXPECT_TRUE(mim::syncfs_reports_errors("5.8.0"));
  EXPECT_TRUE(mim::syncfs_reports_errors("5.10.0-28-amd64"));
  EXPECT_TRUE(mim::syncfs_reports_errors("6.18.44-fc-v857"));
  EXPECT_FALSE(mim::syncfs_reports_errors("5.7.19"));
  EXPECT_FALSE(mim::syncfs_reports_errors("4.18.0-553.el8.x86_64"));
  EXPECT_FALSE(mim::syncfs_reports_errors("3.10.0"));
  EXPECT_TRUE(mim::syncfs_reports_errors("garbage"));
}
