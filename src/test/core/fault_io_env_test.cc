// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for FaultIoEnv (failures, crash rollback, crash_at).
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/fault_io_env.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <atomic>
#include <thread>
#include <string>
#include <vector>

using namespace mim;

namespace {

class IoFaultEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/mim-fault-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    dir = tmpl;
    base = make_posix_io_env();
    env = std::make_unique<FaultIoEnv>(base.get());
  }
  void TearDown() override {
    env.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& n) { return dir + "/" + n; }

  /// The file as the next process would see it (not through env).
  std::string contents(const std::string& n) {
    std::string out;
    int fd = ::open(path(n).c_str(), O_RDONLY);
    if (fd < 0) {
      return "<missing>";
    }
    char buf[65536];
    ssize_t r;
    while ((r = ::read(fd, buf, sizeof(buf))) > 0) {
      out.append(buf, r);
    }
    ::close(fd);
    return out;
  }

  int open_rw(const std::string& n, int extra = 0) {
    int fd = -1;
    EXPECT_EQ(0, env->open(path(n), O_RDWR | O_CREAT | extra, 0644, &fd));
    return fd;
  }

  ssize_t write_str(int fd, const std::string& s, uint64_t off) {
    return env->pwrite(fd, s.data(), s.size(), off);
  }

  std::string dir;
  std::unique_ptr<IoEnv> base;
  std::unique_ptr<FaultIoEnv> env;
};

/// What a file should hold, modelled independently of FaultIoEnv.
struct FileModel {
  std::string data;
  struct Write {
    uint64_t off;
    std::string bytes;
    std::string pre;     // model bytes [off, min(end, old size))
    uint64_t old_size;
  };
  std::vector<Write> unsynced;

  void write(uint64_t off, const std::string& s) {
    Write w{off, s, "", data.size()};
    if (off < data.size()) {
      w.pre = data.substr(off, std::min<uint64_t>(s.size(), data.size() - off));
    }
    if (data.size() < off + s.size()) {
      data.resize(off + s.size(), '\0');
    }
    data.replace(off, s.size(), s);
    unsynced.push_back(w);
  }
  void sync() { unsynced.clear(); }
};

}  // anonymous namespace

// ---- spec parsing ----------------------------------------------------------

TEST(IoFaultSpec, Parses)
{
  fault_spec_t s;
  std::string err;
  ASSERT_EQ(0, parse_fault_spec("crash_at=1234,seed=7,mode=tear", &s, &err))
    << err;
  EXPECT_EQ(1234u, s.crash_at);
  EXPECT_EQ(7u, s.seed);
  EXPECT_EQ(crash_mode_t::TEAR, s.mode);
  EXPECT_TRUE(s.fails.empty());

  ASSERT_EQ(0, parse_fault_spec("fail=write:journal:eio@5", &s, &err)) << err;
  ASSERT_EQ(1u, s.fails.size());
  EXPECT_EQ(uint32_t(FAULT_OP_WRITE), s.fails[0].ops);
  EXPECT_EQ("journal", s.fails[0].path);
  EXPECT_EQ(EIO, s.fails[0].err);
  EXPECT_EQ(5u, s.fails[0].nth);
  EXPECT_FALSE(s.fails[0].and_after);
  EXPECT_EQ(0u, s.crash_at);
  EXPECT_EQ(crash_mode_t::RANDOM, s.mode);

  ASSERT_EQ(0, parse_fault_spec(
    " fail=sync::enospc@3+ , fail=aio|write:/data/:28@1,mode=drop", &s, &err))
    << err;
  ASSERT_EQ(2u, s.fails.size());
  EXPECT_EQ(uint32_t(FAULT_OP_SYNC), s.fails[0].ops);
  EXPECT_EQ("", s.fails[0].path);
  EXPECT_EQ(ENOSPC, s.fails[0].err);
  EXPECT_TRUE(s.fails[0].and_after);
  EXPECT_EQ(uint32_t(FAULT_OP_AIO | FAULT_OP_WRITE), s.fails[1].ops);
  EXPECT_EQ("/data/", s.fails[1].path);
  EXPECT_EQ(28, s.fails[1].err);
  EXPECT_EQ(crash_mode_t::DROP, s.mode);

  ASSERT_EQ(0, parse_fault_spec("fail=submit:journal:eio@2", &s, &err)) << err;
  ASSERT_EQ(1u, s.fails.size());
  EXPECT_EQ(uint32_t(FAULT_OP_SUBMIT), s.fails[0].ops);
  EXPECT_STREQ("submit", fault_op_name(FAULT_OP_SUBMIT));

  EXPECT_EQ(0, parse_fault_spec("", &s, &err));

  // The omap database's ops: for the store's CrashRocksEnv, not in "any".
  ASSERT_EQ(0, parse_fault_spec("fail=dbwrite|dbsync:.log:enospc@3+", &s,
                                &err)) << err;
  ASSERT_EQ(1u, s.fails.size());
  EXPECT_EQ(uint32_t(FAULT_OP_DB_WRITE | FAULT_OP_DB_SYNC), s.fails[0].ops);
  EXPECT_EQ(0u, s.fails[0].ops & FAULT_OP_ANY);
  EXPECT_EQ(0u, uint32_t(FAULT_OP_ANY) & (FAULT_OP_DB_WRITE | FAULT_OP_DB_SYNC));
  EXPECT_EQ(ENOSPC, s.fails[0].err);
  EXPECT_STREQ("dbwrite", fault_op_name(FAULT_OP_DB_WRITE));

  ASSERT_EQ(0, parse_fault_spec("delay=read:probe:20000@2+,delay=read::5@1",
                                &s, &err)) << err;
  ASSERT_EQ(2u, s.delays.size());
  EXPECT_EQ("probe", s.delays[0].path);
  EXPECT_EQ(20000u, s.delays[0].ms);
  EXPECT_EQ(2u, s.delays[0].nth);
  EXPECT_TRUE(s.delays[0].and_after);
  EXPECT_EQ("", s.delays[1].path);
  EXPECT_EQ(5u, s.delays[1].ms);
  EXPECT_FALSE(s.delays[1].and_after);
  EXPECT_EQ(delay_op_t::READ, s.delays[0].op);
  EXPECT_TRUE(s.fails.empty());

  ASSERT_EQ(0, parse_fault_spec("delay=writeback:data:30@1+", &s, &err)) << err;
  ASSERT_EQ(1u, s.delays.size());
  EXPECT_EQ(delay_op_t::WRITEBACK, s.delays[0].op);
  EXPECT_EQ("data", s.delays[0].path);
  EXPECT_EQ(30u, s.delays[0].ms);

  ASSERT_EQ(0, parse_fault_spec("delay=write:obj:40@3", &s, &err)) << err;
  ASSERT_EQ(1u, s.delays.size());
  EXPECT_EQ(delay_op_t::WRITE, s.delays[0].op);
  EXPECT_EQ(3u, s.delays[0].nth);

  ASSERT_EQ(0, parse_fault_spec("corrupt=read:obj:12295@2+", &s, &err)) << err;
  ASSERT_EQ(1u, s.corrupts.size());
  EXPECT_EQ("obj", s.corrupts[0].path);
  EXPECT_EQ(12295u, s.corrupts[0].off);
  EXPECT_EQ(2u, s.corrupts[0].nth);
  EXPECT_TRUE(s.corrupts[0].and_after);
  EXPECT_TRUE(s.delays.empty());
}

TEST(IoFaultSpec, RejectsWithMessage)
{
  for (const char* bad : {"crash_at=x", "crash_at=", "mode=foo", "seed=-1",
                          "fail=write:eio@5", "fail=bogus::eio@1",
                          "fail=write::eio@0", "fail=write::eio",
                          "fail=write::ebogus@1", "unknown=1", "crash_at",
                          "delay=writes::5@1", "delay=read::0@1",
                          "delay=read::5@0", "delay=read::5",
                          "delay=read::x@1", "delay=read::3600001@1",
                          "corrupt=write::5@1", "corrupt=read::x@1",
                          "corrupt=read::5@0", "corrupt=read::5"}) {
    fault_spec_t s;
    std::string err;
    EXPECT_EQ(-EINVAL, parse_fault_spec(bad, &s, &err)) << bad;
    EXPECT_NE(std::string::npos, err.find("bad fault injection item")) << bad;
  }
  FaultIoEnv env(nullptr);
  std::string err;
  EXPECT_EQ(-EINVAL, env.set_spec("mode=sometimes", &err));
}

// ---- (a) failing the Nth matching operation --------------------------------

TEST_F(IoFaultEnvTest, DelayHoldsTheNthMatchingReadOnly)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("delay=read:slow:200@2", &err)) << err;
  int slow = open_rw("slow");
  int fast = open_rw("fast");
  ASSERT_EQ(1, write_str(slow, "s", 0));
  ASSERT_EQ(1, write_str(fast, "f", 0));
  char c = 0;
  EXPECT_EQ(1, env->pread(fast, &c, 1, 0));  // other path: not counted
  EXPECT_EQ(1, env->pread(slow, &c, 1, 0));  // 1st: served at once
  EXPECT_EQ(0u, env->delayed_reads());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(1, env->pread(slow, &c, 1, 0));  // 2nd: held
  auto held = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ('s', c);
  EXPECT_EQ(1u, env->delayed_reads());
  EXPECT_GE(held, std::chrono::milliseconds(200));
  EXPECT_EQ(1, env->pread(slow, &c, 1, 0));  // 3rd: no "+", not held
  EXPECT_EQ(1u, env->delayed_reads());
  env->close(slow);
  env->close(fast);
}

TEST_F(IoFaultEnvTest, CorruptFlipsTheByteInTheNthReadCoveringIt)
{
  // Reads of other paths, and reads that miss the offset, do not count;
  // the file itself is never changed (a bad page, not rot).
  std::string err;
  ASSERT_EQ(0, env->set_spec("corrupt=read:bad:5@2", &err)) << err;
  int bad = open_rw("bad");
  int good = open_rw("good");
  ASSERT_EQ(8, write_str(bad, "abcdefgh", 0));
  ASSERT_EQ(8, write_str(good, "abcdefgh", 0));
  char b[9] = {};
  EXPECT_EQ(8, env->pread(good, b, 8, 0));
  EXPECT_EQ(4, env->pread(bad, b, 4, 0));
  EXPECT_EQ(8, env->pread(bad, b, 8, 0));  // 1st covering byte 5: as is
  EXPECT_STREQ("abcdefgh", b);
  EXPECT_EQ(0u, env->corrupted_reads());
  EXPECT_EQ(3, env->pread(bad, b, 3, 4));  // 2nd: byte 5 flipped
  EXPECT_EQ('e', b[0]);
  EXPECT_EQ('f' ^ 0x01, b[1]);
  EXPECT_EQ('g', b[2]);
  EXPECT_EQ(1u, env->corrupted_reads());
  EXPECT_EQ(8, env->pread(bad, b, 8, 0));  // no "+": served right again
  EXPECT_STREQ("abcdefgh", b);
  env->close(bad);
  env->close(good);
}

TEST_F(IoFaultEnvTest, DelayHoldsWritebackStartsNotReadsOrWaits)
{
  // A writeback rule holds sync_file_range starts (a full disk queue) of
  // its path only: not reads, not a writeback that waits, not other paths.
  std::string err;
  ASSERT_EQ(0, env->set_spec("delay=writeback:slow:200@1+", &err)) << err;
  int slow = open_rw("slow");
  int fast = open_rw("fast");
  ASSERT_EQ(1, write_str(slow, "s", 0));
  ASSERT_EQ(1, write_str(fast, "f", 0));
  char c = 0;
  EXPECT_EQ(1, env->pread(slow, &c, 1, 0));
  EXPECT_EQ(0, env->writeback(fast, 0, 1, false));
  EXPECT_EQ(0, env->writeback(slow, 0, 1, true));
  EXPECT_EQ(0u, env->delayed_writebacks());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(0, env->writeback(slow, 0, 1, false));
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(200));
  EXPECT_EQ(1u, env->delayed_writebacks());
  EXPECT_EQ(0u, env->delayed_reads());
  env->close(slow);
  env->close(fast);
}

TEST_F(IoFaultEnvTest, DelayHoldsWritesOfItsPathOutsideTheEnvLock)
{
  // A write rule holds the pwritev of its path only; another thread's I/O
  // through the env goes on meanwhile (the hold is outside the env's lock;
  // 2 s leaves the other thread's three calls a wide margin).
  std::string err;
  ASSERT_EQ(0, env->set_spec("delay=write:slow:2000@2", &err)) << err;
  int slow = open_rw("slow");
  int fast = open_rw("fast");
  ASSERT_EQ(1, write_str(slow, "a", 0));  // 1st: not held
  ASSERT_EQ(1, write_str(fast, "f", 0));
  EXPECT_EQ(0u, env->delayed_writes());
  std::atomic<bool> done{false};
  auto t0 = std::chrono::steady_clock::now();
  std::thread held([&] {
    EXPECT_EQ(1, write_str(slow, "b", 0));  // 2nd: held
    done = true;
  });
  while (env->delayed_writes() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(1, write_str(fast, "g", 0));  // not behind the held write
  char c = 0;
  EXPECT_EQ(1, env->pread(fast, &c, 1, 0));
  EXPECT_EQ('g', c);
  EXPECT_FALSE(done);
  held.join();
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(2000));
  EXPECT_EQ(1, env->pread(slow, &c, 1, 0));
  EXPECT_EQ('b', c);
  EXPECT_EQ(1u, env->delayed_writes());
  EXPECT_EQ(0u, env->delayed_writebacks());
  env->close(slow);
  env->close(fast);
}

TEST_F(IoFaultEnvTest, DelayedReadDoesNotHoldOtherThreads)
{
  // The held read waits outside the env's lock: a write on another thread
  // completes while it waits (the held read is released only after).
  std::string err;
  ASSERT_EQ(0, env->set_spec("delay=read:slow:60000@1", &err)) << err;
  int slow = open_rw("slow");
  int fast = open_rw("fast");
  auto read_returned = std::make_shared<std::atomic<bool>>(false);
  std::thread reader([e = env.get(), slow, read_returned] {
    char c;
    e->pread(slow, &c, 1, 0);
    *read_returned = true;
  });
  // Wait until the reader is counted as held (it then sleeps unlocked).
  while (env->delayed_reads() == 0) {
    std::this_thread::yield();
  }
  EXPECT_EQ(1, write_str(fast, "f", 0));
  EXPECT_EQ(0, env->fsync(fast));
  // Were the lock held across the wait, the write would have waited the
  // full minute for the read, which would have returned first.
  EXPECT_FALSE(*read_returned);
  // The reader sleeps on: it keeps both envs and slow's fd, leaked on
  // purpose, until it returns or the process ends. Held in globals, so
  // that LeakSanitizer sees them reachable once the reader returns (a run
  // longer than its minute, under load, reported them leaked).
  reader.detach();
  static IoEnv* kept_for_the_reader[2];
  kept_for_the_reader[0] = env.release();
  kept_for_the_reader[1] = base.release();
}

TEST_F(IoFaultEnvTest, FailNthMatchingWrite)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("fail=write:journal:eio@2", &err)) << err;
  int j = open_rw("journal");
  int d = open_rw("data");
  EXPECT_EQ(1, write_str(d, "d", 0));  // other path: not counted
  EXPECT_EQ(1, write_str(j, "1", 0));
  EXPECT_EQ(-EIO, write_str(j, "2", 1));
  EXPECT_EQ(1, write_str(d, "d", 1));
  EXPECT_EQ(1, write_str(j, "3", 2));
  EXPECT_EQ(std::string("1\0" "3", 3), contents("journal"));
  env->close(j);
  env->close(d);
}

TEST_F(IoFaultEnvTest, FailFromNthOnWithEnospc)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("fail=write::enospc@2+", &err)) << err;
  int f = open_rw("f");
  EXPECT_EQ(1, write_str(f, "a", 0));
  EXPECT_EQ(-ENOSPC, write_str(f, "b", 1));
  EXPECT_EQ(-ENOSPC, write_str(f, "c", 2));
  EXPECT_EQ(-ENOSPC, write_str(f, "d", 3));
  env->clear_fail_rules();
  EXPECT_EQ(1, write_str(f, "e", 1));
  env->close(f);
}

TEST_F(IoFaultEnvTest, CachedReadOfASlowPathIsRefusedAndFailuresPass)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("delay=read:slow:60000@1+", &err)) << err;
  fail_rule_t r;
  r.ops = FAULT_OP_READ;
  r.path = "broken";
  env->add_fail_rule(r);
  int slow = open_rw("slow"), fast = open_rw("fast"), broken = open_rw("broken");
  ASSERT_EQ(1, write_str(slow, "s", 0));
  ASSERT_EQ(1, write_str(fast, "f", 0));
  char c = 0;
  ssize_t got = env->pread_cached(fast, &c, 1, 0);
  if (got == -EOPNOTSUPP) {
    GTEST_SKIP() << "no RWF_NOWAIT buffered reads here";
  }
  EXPECT_EQ(1, got);
  EXPECT_EQ('f', c);
  // a delayed path is a slow device: its bytes are never "in memory", and
  // asking does not wait
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(-EAGAIN, env->pread_cached(slow, &c, 1, 0));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(-EIO, env->pread_cached(broken, &c, 1, 0));
  env->close(slow);
  env->close(fast);
  env->close(broken);
}

TEST_F(IoFaultEnvTest, FailOtherOpKinds)
{
  fail_rule_t r;
  r.ops = FAULT_OP_SYNC;
  r.nth = 2;
  env->add_fail_rule(r);
  r = fail_rule_t();
  r.ops = FAULT_OP_READ;
  r.path = "data";
  env->add_fail_rule(r);
  r = fail_rule_t();
  r.ops = FAULT_OP_META;
  r.path = "victim";
  r.err = EROFS;
  env->add_fail_rule(r);
  r = fail_rule_t();
  r.ops = FAULT_OP_OPEN;
  r.path = "locked";
  r.err = EACCES;
  env->add_fail_rule(r);

  int f = open_rw("data");
  char c;
  EXPECT_EQ(-EIO, env->pread(f, &c, 1, 0));
  EXPECT_EQ(0, env->pread(f, &c, 1, 0));
  EXPECT_EQ(0, env->fsync(f));
  EXPECT_EQ(-EIO, env->fdatasync(f));
  EXPECT_EQ(0, env->syncfs(f));
  EXPECT_EQ(-EROFS, env->mkdir(path("victim"), 0755));
  EXPECT_EQ(0, env->mkdir(path("other"), 0755));
  int g = -1;
  EXPECT_EQ(-EACCES, env->open(path("locked"), O_RDWR | O_CREAT, 0644, &g));
  EXPECT_EQ("<missing>", contents("locked"));
  env->close(f);
}

TEST_F(IoFaultEnvTest, FailedAioIsDeliveredAsCompletion)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("fail=aio:journal:eio@1", &err)) << err;
  ASSERT_EQ(0, env->aio_setup(4));
  int j = open_rw("journal");
  std::string a = "first", b = "second";
  struct iovec ia = {a.data(), a.size()}, ib = {b.data(), b.size()};
  ASSERT_EQ(0, env->aio_submit_write(j, &ia, 1, 0, &a));
  ASSERT_EQ(0, env->aio_submit_write(j, &ib, 1, 100, &b));
  std::vector<std::pair<void*, ssize_t>> done;
  while (done.size() < 2) {
    ASSERT_GE(env->aio_reap(1, 4, &done, 5000), 0);
  }
  std::map<void*, ssize_t> res(done.begin(), done.end());
  EXPECT_EQ(-EIO, res[&a]);
  EXPECT_EQ(6, res[&b]);
  std::string c = contents("journal");
  EXPECT_EQ(std::string(5, '\0'), c.substr(0, 5));
  EXPECT_EQ("second", c.substr(100));
  env->close(j);
}

TEST_F(IoFaultEnvTest, FailedSubmitReturnsTheErrorAndQueuesNothing)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("fail=submit:journal:eio@1", &err)) << err;
  ASSERT_EQ(0, env->aio_setup(4));
  int j = open_rw("journal");
  std::string a = "first", b = "second";
  struct iovec ia = {a.data(), a.size()}, ib = {b.data(), b.size()};
  EXPECT_EQ(-EIO, env->aio_submit_write(j, &ia, 1, 0, &a));
  EXPECT_EQ(0, env->aio_inflight());
  ASSERT_EQ(0, env->aio_submit_write(j, &ib, 1, 100, &b));
  std::vector<std::pair<void*, ssize_t>> done;
  while (done.empty()) {
    ASSERT_GE(env->aio_reap(1, 4, &done, 5000), 0);
  }
  ASSERT_EQ(1u, done.size()) << "a refused submit completed";
  EXPECT_EQ(&b, done[0].first);
  EXPECT_EQ(6, done[0].second);
  std::string c = contents("journal");
  EXPECT_EQ(std::string(5, '\0'), c.substr(0, 5));
  EXPECT_EQ("second", c.substr(100));
  env->close(j);
}

// ---- (b) the volatile write cache and crash rollback -----------------------

TEST_F(IoFaultEnvTest, CrashDropReturnsToLastSync)
{
  int f = open_rw("f");
  std::string a(4096, 'a');
  ASSERT_EQ(4096, write_str(f, a, 0));
  ASSERT_EQ(0, env->fsync(f));
  EXPECT_EQ(0u, env->unsynced_writes());
  ASSERT_EQ(2000, write_str(f, std::string(2000, 'b'), 1000));
  ASSERT_EQ(3000, write_str(f, std::string(3000, 'c'), 3000));  // extends
  EXPECT_EQ(2u, env->unsynced_writes());
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_TRUE(env->crashed());
  EXPECT_EQ(a, contents("f"));
  auto rep = env->last_crash_report();
  ASSERT_EQ(2u, rep.size());
  EXPECT_EQ(3000u, rep[0].off);  // newest first
  EXPECT_EQ(FaultIoEnv::rollback_t::DROPPED, rep[0].outcome);
  // After the crash all I/O fails.
  char c;
  EXPECT_EQ(-EIO, env->pread(f, &c, 1, 0));
  EXPECT_EQ(-EIO, write_str(f, "x", 0));
  EXPECT_EQ(-EIO, env->fsync(f));
  int g;
  EXPECT_EQ(-EIO, env->open(path("g"), O_RDWR | O_CREAT, 0644, &g));
  EXPECT_EQ(0, env->close(f));
}

TEST_F(IoFaultEnvTest, WritebackMakesNothingDurable)
{
  // sync_file_range writes pages out but neither metadata nor the device
  // cache: the model must keep such writes undoable until a sync.
  int f = open_rw("f");
  std::string a(8192, 'a');
  ASSERT_EQ(8192, write_str(f, a, 0));
  ASSERT_EQ(0, env->fsync(f));
  ASSERT_EQ(4096, write_str(f, std::string(4096, 'b'), 4096));
  uint64_t ios = env->io_count();
  EXPECT_EQ(0, env->writeback(f, 0, 8192, false));
  EXPECT_EQ(0, env->writeback(f, 0, 8192, true));
  EXPECT_EQ(ios, env->io_count());    // not counted toward crash_at
  EXPECT_EQ(1u, env->unsynced_writes());
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ(a, contents("f"));
  EXPECT_EQ(-EIO, env->writeback(f, 0, 8192, true));
  env->close(f);
}

TEST_F(IoFaultEnvTest, CrashKeepKeepsEverything)
{
  int f = open_rw("f");
  ASSERT_EQ(5, write_str(f, "hello", 0));
  ASSERT_EQ(5, write_str(f, "world", 10));
  env->set_crash_mode(crash_mode_t::KEEP);
  env->crash();
  EXPECT_EQ(std::string("hello\0\0\0\0\0world", 15), contents("f"));
  env->close(f);
}

TEST_F(IoFaultEnvTest, NewFileDroppedBecomesEmpty)
{
  int f = open_rw("new");
  ASSERT_EQ(3, write_str(f, "abc", 0));
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("", contents("new"));  // creation is durable, content is not
  env->close(f);
}

TEST_F(IoFaultEnvTest, SyncScopes)
{
  // fsync covers its file only; syncfs covers all; O_DSYNC needs no sync.
  int a = open_rw("a"), b = open_rw("b"), c = open_rw("c"),
      d = open_rw("d", O_DSYNC);
  write_str(a, "A", 0);
  write_str(b, "B", 0);
  write_str(d, "D", 0);
  EXPECT_EQ(2u, env->unsynced_writes());
  // A second fd of the same file: its fsync covers writes made through a.
  int a2 = open_rw("a");
  ASSERT_EQ(0, env->fdatasync(a2));
  EXPECT_EQ(1u, env->unsynced_writes());
  write_str(c, "C", 0);
  ASSERT_EQ(0, env->syncfs(c));
  EXPECT_EQ(0u, env->unsynced_writes());
  write_str(a, "a", 1);
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("A", contents("a"));
  EXPECT_EQ("B", contents("b"));
  EXPECT_EQ("C", contents("c"));
  EXPECT_EQ("D", contents("d"));
  for (int fd : {a, a2, b, c, d}) {
    env->close(fd);
  }
}

TEST_F(IoFaultEnvTest, RollbackAfterCloseAndRename)
{
  int f = open_rw("f");
  write_str(f, "old", 0);
  env->fsync(f);
  write_str(f, "new", 0);
  ASSERT_EQ(0, env->close(f));
  ASSERT_EQ(0, env->rename(path("f"), path("g")));  // durable at once
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("<missing>", contents("f"));
  EXPECT_EQ("old", contents("g"));
}

TEST_F(IoFaultEnvTest, TruncateIsRolledBack)
{
  int f = open_rw("f");
  std::string data(8192, 'x');
  data[5000] = 'y';
  write_str(f, data, 0);
  env->fsync(f);
  ASSERT_EQ(0, env->ftruncate(f, 100));
  write_str(f, "zz", 200);
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ(data, contents("f"));
  env->close(f);
}

TEST_F(IoFaultEnvTest, MetadataIsDurableAtOnce)
{
  ASSERT_EQ(0, env->mkdir(path("d"), 0755));
  int f = open_rw("d/x");
  write_str(f, "content", 0);
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("", contents("d/x"));
  env->close(f);
}

TEST_F(IoFaultEnvTest, AioDurableOnlyAfterReapAndSync)
{
  ASSERT_EQ(0, env->aio_setup(4));
  int j = open_rw("j");
  std::string a = "AAAA", b = "BBBB", c = "CCCC";
  std::vector<std::pair<void*, ssize_t>> done;
  auto submit = [&](std::string& s, uint64_t off) {
    struct iovec iov = {s.data(), s.size()};
    ASSERT_EQ(0, env->aio_submit_write(j, &iov, 1, off, &s));
  };
  auto reap = [&]() {
    done.clear();
    ASSERT_EQ(1, env->aio_reap(1, 4, &done, 5000));
    ASSERT_EQ(4, done[0].second);
  };
  submit(a, 0);
  reap();
  ASSERT_EQ(0, env->fdatasync(j));  // a: completed, then synced: durable
  submit(b, 4);
  ASSERT_EQ(0, env->fdatasync(j));  // b: not reaped yet: not covered
  reap();
  submit(c, 8);
  reap();                           // c: completed, never synced
  EXPECT_EQ(2u, env->unsynced_writes());
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("AAAA", contents("j"));
  EXPECT_EQ(-EIO, env->aio_reap(0, 4, &done, 0));
  env->close(j);
}

TEST_F(IoFaultEnvTest, AioInFlightAtCrashIsRolledBack)
{
  ASSERT_EQ(0, env->aio_setup(4));
  int j = open_rw("j", O_DSYNC);
  std::string a(4096, 'a');
  struct iovec iov = {a.data(), a.size()};
  ASSERT_EQ(0, env->aio_submit_write(j, &iov, 1, 0, &a));
  // Not reaped: even on an O_DSYNC fd the write is not known durable.
  env->set_crash_mode(crash_mode_t::DROP);
  env->crash();
  EXPECT_EQ("", contents("j"));
  env->close(j);
}

TEST_F(IoFaultEnvTest, SyncedWritesAlwaysSurvive)
{
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto e = std::make_unique<FaultIoEnv>(base.get());
    e->set_seed(seed);
    e->set_crash_mode(seed % 4 == 0 ? crash_mode_t::TEAR
                                    : crash_mode_t::RANDOM);
    std::mt19937_64 rng(seed * 1000 + 1);
    std::vector<std::string> names;
    std::vector<int> fds;
    std::vector<FileModel> models(3);
    for (int i = 0; i < 3; ++i) {
      names.push_back("s" + std::to_string(seed) + "_" + std::to_string(i));
      int fd;
      ASSERT_EQ(0, e->open(path(names[i]), O_RDWR | O_CREAT, 0644, &fd));
      fds.push_back(fd);
    }
    for (int step = 0; step < 60; ++step) {
      int i = rng() % 3;
      if (rng() % 5 == 0) {
        ASSERT_EQ(0, e->fsync(fds[i]));
        models[i].sync();
      } else {
        uint64_t off = rng() % 6000;
        std::string s(1 + rng() % 1500, char('a' + rng() % 26));
        ASSERT_EQ(ssize_t(s.size()), e->pwrite(fds[i], s.data(), s.size(),
                                               off));
        models[i].write(off, s);
      }
    }
    e->crash();
    for (int i = 0; i < 3; ++i) {
      // Bytes no unsynced write touched must read back as written, and the
      // file is at least as long as at the last sync.
      std::string got = contents(names[i]);
      std::vector<bool> dirty(models[i].data.size() + 8192, false);
      uint64_t synced_size = models[i].data.size();
      for (auto& w : models[i].unsynced) {
        synced_size = std::min(synced_size, w.old_size);
        for (uint64_t k = w.off; k < w.off + w.bytes.size(); ++k) {
          dirty[k] = true;
        }
      }
      ASSERT_GE(got.size(), synced_size);
      for (uint64_t k = 0; k < synced_size; ++k) {
        if (!dirty[k]) {
          ASSERT_EQ(models[i].data[k], got[k]) << names[i] << " byte " << k;
        }
      }
      e->close(fds[i]);
    }
  }
}

TEST_F(IoFaultEnvTest, RollbackMatchesReferenceModel)
{
  // Replay the crash report on an independent model of the file: writes
  // undone newest first, a dropped write restores its pre-image and the
  // old size, a torn one reverts the reported sectors.
  for (crash_mode_t mode : {crash_mode_t::RANDOM, crash_mode_t::TEAR,
                            crash_mode_t::DROP, crash_mode_t::KEEP}) {
    for (uint64_t seed = 0; seed < 6; ++seed) {
      SCOPED_TRACE("mode " + std::to_string(int(mode)) + " seed " +
                   std::to_string(seed));
      auto e = std::make_unique<FaultIoEnv>(base.get());
      e->set_seed(seed);
      e->set_crash_mode(mode);
      std::string name = "ref" + std::to_string(int(mode)) + "_" +
                         std::to_string(seed);
      int fd;
      ASSERT_EQ(0, e->open(path(name), O_RDWR | O_CREAT, 0644, &fd));
      FileModel m;
      std::mt19937_64 rng(seed + 77);
      for (int step = 0; step < 25; ++step) {
        if (step == 8) {
          ASSERT_EQ(0, e->fdatasync(fd));
          m.sync();
        }
        uint64_t off = rng() % 5000;
        std::string s(1 + rng() % 2000, char('A' + rng() % 26));
        ASSERT_EQ(ssize_t(s.size()), e->pwrite(fd, s.data(), s.size(), off));
        m.write(off, s);
      }
      e->crash();
      auto rep = e->last_crash_report();
      ASSERT_EQ(m.unsynced.size(), rep.size());
      std::string model = m.data;
      for (size_t k = 0; k < rep.size(); ++k) {
        const auto& w = m.unsynced[m.unsynced.size() - 1 - k];
        ASSERT_EQ(w.off, rep[k].off);
        ASSERT_EQ(w.bytes.size(), rep[k].len);
        if (mode == crash_mode_t::KEEP) {
          ASSERT_EQ(FaultIoEnv::rollback_t::KEPT, rep[k].outcome);
        }
        if (mode == crash_mode_t::DROP) {
          ASSERT_EQ(FaultIoEnv::rollback_t::DROPPED, rep[k].outcome);
        }
        if (mode == crash_mode_t::TEAR) {
          ASSERT_EQ(FaultIoEnv::rollback_t::TORN, rep[k].outcome);
        }
        if (rep[k].outcome == FaultIoEnv::rollback_t::DROPPED) {
          model.replace(w.off, w.pre.size(), w.pre);
          if (w.off + w.bytes.size() > w.old_size) {
            model.resize(w.old_size);
          }
        } else if (rep[k].outcome == FaultIoEnv::rollback_t::TORN) {
          uint64_t end = w.off + w.bytes.size();
          size_t sec = 0;
          for (uint64_t s = w.off; s < end; ++sec) {
            uint64_t e2 = std::min(end, (s / 512 + 1) * 512);
            ASSERT_LT(sec, rep[k].reverted.size());
            if (rep[k].reverted[sec]) {
              for (uint64_t b = s; b < e2; ++b) {
                model[b] = b < w.old_size ? w.pre[b - w.off] : '\0';
              }
            }
            s = e2;
          }
          ASSERT_EQ(sec, rep[k].reverted.size());
        }
      }
      ASSERT_EQ(model, contents(name));
      e->close(fd);
    }
  }
}

TEST_F(IoFaultEnvTest, SeededCrashesAreReproducible)
{
  auto run = [&](uint64_t seed, const std::string& name) {
    FaultIoEnv e(base.get());
    e.set_seed(seed);
    int fd;
    EXPECT_EQ(0, e.open(path(name), O_RDWR | O_CREAT, 0644, &fd));
    std::mt19937_64 rng(5);  // the same workload every time
    for (int i = 0; i < 40; ++i) {
      std::string s(1 + rng() % 3000, char('a' + i % 26));
      e.pwrite(fd, s.data(), s.size(), rng() % 10000);
    }
    e.crash();
    e.close(fd);
    std::string out = contents(name);
    for (auto& r : e.last_crash_report()) {
      out += char('0' + r.outcome);
      for (bool b : r.reverted) {
        out += b ? 'r' : 'k';
      }
    }
    return out;
  };
  std::string a = run(7, "a"), b = run(7, "b");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, run(8, "c"));
}

// ---- (c) crash_at ----------------------------------------------------------

TEST_F(IoFaultEnvTest, CrashAtCallsCallbackAndFailsAfter)
{
  bool called = false;
  env->set_crash_callback([&](const std::string&) { called = true; });
  std::string err;
  ASSERT_EQ(0, env->set_spec("crash_at=4,mode=drop", &err)) << err;
  int f = open_rw("f");
  char c;
  EXPECT_EQ(0, env->pread(f, &c, 1, 0));        // reads are not counted
  EXPECT_EQ(1, write_str(f, "a", 0));            // 1
  EXPECT_EQ(0, env->fsync(f));                   // 2
  EXPECT_EQ(1, write_str(f, "b", 1));            // 3
  EXPECT_EQ(3u, env->io_count());
  EXPECT_FALSE(called);
  EXPECT_EQ(-EIO, write_str(f, "c", 2));         // 4: crash, not performed
  EXPECT_TRUE(called);
  EXPECT_TRUE(env->crashed());
  EXPECT_EQ("a", contents("f"));                 // "b" was never synced
  EXPECT_EQ(-EIO, env->pread(f, &c, 1, 0));
  EXPECT_EQ(-EIO, env->syncfs(f));
  env->close(f);
}

TEST_F(IoFaultEnvTest, CrashAtCountsSyncsAndAioSubmits)
{
  bool called = false;
  env->set_crash_callback([&](const std::string&) { called = true; });
  env->set_crash_mode(crash_mode_t::DROP);
  env->set_crash_at(3);
  ASSERT_EQ(0, env->aio_setup(2));
  int f = open_rw("f");
  std::string s = "xyz";
  struct iovec iov = {s.data(), s.size()};
  EXPECT_EQ(0, env->aio_submit_write(f, &iov, 1, 0, &s));  // 1
  EXPECT_EQ(0, env->fdatasync(f));                        // 2
  EXPECT_EQ(-EIO, env->aio_submit_write(f, &iov, 1, 0, &s));  // 3
  EXPECT_TRUE(called);
  EXPECT_EQ("", contents("f"));
  env->close(f);
}

// A rule for the omap database's ops (dbwrite, dbsync) is not this env's:
// the store's own writes and syncs go on.
TEST_F(IoFaultEnvTest, DbRulesAreNotThisEnvs)
{
  std::string err;
  ASSERT_EQ(0, env->set_spec("fail=dbwrite|dbsync::eio@1+", &err)) << err;
  int f = open_rw("f");
  EXPECT_EQ(1, write_str(f, "a", 0));
  EXPECT_EQ(0, env->fsync(f));
  EXPECT_EQ("a", contents("f"));
  env->close(f);
}

// A cut at a point the caller names (a test hook in the store): the same
// rollback and callback as crash_at, the summary naming the point, once.
TEST_F(IoFaultEnvTest, CrashHereCutsAndCallsBackOnce)
{
  int calls = 0;
  std::string what;
  env->set_crash_callback([&](const std::string& w) {
    ++calls;
    what = w;
    // (with the env locked: another thread's I/O would wait here)
  });
  env->set_crash_mode(crash_mode_t::DROP);
  int f = open_rw("f");
  EXPECT_EQ(1, write_str(f, "a", 0));
  EXPECT_EQ(0, env->fsync(f));
  EXPECT_EQ(1, write_str(f, "b", 1));
  env->crash_here("journal:wrap_submitted");
  EXPECT_EQ(1, calls);
  EXPECT_NE(std::string::npos, what.find("journal:wrap_submitted")) << what;
  EXPECT_TRUE(env->crashed());
  EXPECT_EQ("a", contents("f"));
  EXPECT_EQ(-EIO, write_str(f, "c", 2));
  env->crash_here("again");
  EXPECT_EQ(1, calls);
  env->close(f);
}

TEST_F(IoFaultEnvTest, CrashAtCallbackMayThrow)
{
  struct Crashed {};
  env->set_crash_callback([](const std::string&) { throw Crashed(); });
  env->set_crash_at(2);
  env->set_crash_mode(crash_mode_t::DROP);
  int f = open_rw("f");
  write_str(f, "a", 0);
  EXPECT_THROW(env->fsync(f), Crashed);
  EXPECT_TRUE(env->crashed());
  EXPECT_EQ("", contents("f"));
  // The lock was released on the way out.
  EXPECT_EQ(-EIO, write_str(f, "b", 0));
  env->close(f);
}

TEST_F(IoFaultEnvTest, CrashAtInForkedChildWithExit)
{
  // How the store's crash tests use it: a forked child dies in _exit at the
  // Nth I/O; the parent checks what is on disk.
  std::string p = path("child");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto b = make_posix_io_env();
    FaultIoEnv e(b.get());
    std::string err;
    if (e.set_spec("crash_at=4,mode=drop", &err) < 0) {
      _exit(2);
    }
    e.set_crash_callback([](const std::string&) { _exit(0); });
    int fd;
    if (e.open(p, O_RDWR | O_CREAT, 0644, &fd) < 0) {
      _exit(3);
    }
    e.pwrite(fd, "durable", 7, 0);   // 1
    e.fsync(fd);                     // 2
    e.pwrite(fd, "LOST", 4, 0);      // 3
    e.pwrite(fd, "never", 5, 100);   // 4: crash -> _exit(0)
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(0, WEXITSTATUS(status));
  EXPECT_EQ("durable", contents("child"));
}

TEST_F(IoFaultEnvTest, CrashWhileThreadsWriteAndReap)
{
  // A journal-like submitter, a separate reaper thread and a data writer
  // that fsyncs; the crash lands in the middle. Nothing may hang, and every
  // write whose fsync returned 0 must survive.
  std::atomic<bool> crashed{false};
  env->set_crash_callback([&](const std::string&) { crashed = true; });
  env->set_crash_at(150);
  env->set_seed(3);
  ASSERT_EQ(0, env->aio_setup(8));
  int j = open_rw("journal");
  int d = open_rw("data");
  std::vector<std::string> bufs(64);
  for (size_t i = 0; i < bufs.size(); ++i) {
    bufs[i] = std::string(4096, char('a' + i % 26));
  }
  std::atomic<int> inflight{0};
  std::thread submitter([&] {
    for (int i = 0; !crashed && i < 10000; ++i) {
      if (inflight >= 8) {
        std::this_thread::yield();
        continue;
      }
      auto& b = bufs[i % bufs.size()];
      struct iovec iov = {b.data(), b.size()};
      int r = env->aio_submit_write(j, &iov, 1, (i % 64) * 4096, &b);
      if (r == 0) {
        ++inflight;
      } else if (r != -EAGAIN) {
        break;
      }
    }
  });
  std::thread reaper([&] {
    std::vector<std::pair<void*, ssize_t>> done;
    while (!crashed) {
      done.clear();
      int n = env->aio_reap(1, 8, &done, 20);
      if (n < 0) {
        break;
      }
      inflight -= n;
    }
  });
  std::vector<std::pair<uint64_t, char>> acked;  // written and fsynced
  uint64_t unacked_off = UINT64_MAX;  // the write the crash interrupted
  for (int i = 0; !crashed && i < 10000; ++i) {
    char c = char('A' + i % 26);
    std::string s(512, c);
    unacked_off = (i % 16) * 512;
    if (env->pwrite(d, s.data(), s.size(), unacked_off) != 512 ||
        env->fsync(d) != 0) {
      break;
    }
    acked.emplace_back(unacked_off, c);
    unacked_off = UINT64_MAX;
  }
  submitter.join();
  reaper.join();
  EXPECT_TRUE(crashed);
  EXPECT_TRUE(env->crashed());
  // The latest acknowledged write of each 512-byte slot survives.
  std::map<uint64_t, char> latest;
  for (auto& [off, c] : acked) {
    latest[off] = c;
  }
  latest.erase(unacked_off);  // may be old or new: either is right
  std::string got = contents("data");
  for (auto& [off, c] : latest) {
    ASSERT_LT(off, got.size());
    EXPECT_EQ(c, got[off]) << "slot " << off / 512;
  }
  env->close(j);
  env->close(d);
}
