// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore fault tests: I/O errors injected through the seam (EIO on the
 * journal and on the data filesystem), a full data filesystem, a journal
 * that cannot be written, a journal of an unknown format version. Each
 * must stop the store or refuse to mount with a message, and lose no
 * acknowledged write: a forked child takes the error and dies, the parent
 * remounts and checks every write the child saw committed. And the omap
 * database's power-loss model: nothing written after the cut.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "global/global_context.h"
#include "include/stringify.h"
#include "common/errno.h"

#include "CrashRocksEnv.h"
#include "MIMStore.h"
#include "core/journal_format.h"
#include "mimstore_test_util.h"

using namespace mimtest;
using ceph::bufferlist;
using Transaction = ObjectStore::Transaction;

namespace {

const coll_t CID(spg_t(pg_t(0, 1)));

Conf fault_conf(bool merge)
{
  return Conf({{"mimstore_merge", merge ? "true" : "false"},
               {"osd_journal_size", "32"},
               {"mimstore_journal_throughput", "1000000000"},
               {"mimstore_sync_interval", "0.05"},
               {"mimstore_min_sync_interval", "0.01"},
               {"mimstore_max_flush_interval", "0.05"},
               {"mimstore_journal_max_batch_bytes", "262144"}});
}

ghobject_t obj(int i)
{
  return ghobject_t(hobject_t(object_t("f" + std::to_string(i)), "",
                              CEPH_NOSNAP, 0x100 + i, 1, ""));
}

bufferlist block(int i)
{
  bufferlist bl;
  bl.append(std::string(4096, char('a' + i % 26)) + std::to_string(i));
  return bl;
}

std::string omap_key(int i) { return "k" + std::to_string(i); }

/// Child: mount (with `spec` as the fault spec), write object i's block i
/// for i = 0.. until `n` or until the store stops, reporting each commit.
/// Returns how many commits the parent saw and the child's wait status.
/// `omap`: each transaction also sets omap_key(i) to block i on the
/// object; `armed`: a spec that replaces `spec` once the store is mounted
/// (the omap database's counts then start after the mount's own appends
/// and syncs; exit 5 if it does not parse).
std::pair<int, int> run_writer(const StoreDir& d, const std::string& spec,
                               int n, bool omap = false,
                               const std::string& armed = "")
{
  int pfd[2];
  ceph_assert(pipe(pfd) == 0);
  pid_t pid = fork_child();
  if (pid == 0) {
    close(pfd[0]);
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", spec);
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    if (!armed.empty() &&
        static_cast<MIMStore*>(s.get())->debug_fault_set_spec(armed) != 0) {
      _exit(5);
    }
    auto ch = s->open_collection(CID);
    for (int i = 0; i < n; ++i) {
      Transaction t;
      bufferlist bl = block(i);
      t.write(CID, obj(i % 16), (i / 16) * 8192, bl.length(), bl);
      if (omap) {
        std::map<std::string, bufferlist> kv;
        kv[omap_key(i)] = block(i);
        t.omap_setkeys(CID, obj(i % 16), kv);
      }
      apply(s.get(), ch, std::move(t));
      int32_t v = i;
      if (write(pfd[1], &v, sizeof(v)) != sizeof(v)) {
        _exit(4);
      }
    }
    ch.reset();
    // (merging on, the data files are written here: the window back)
    write_back_and_umount(s.get());
    _exit(0);
  }
  close(pfd[1]);
  int32_t v;
  int acked = 0;
  while (read(pfd[0], &v, sizeof(v)) == sizeof(v)) {
    acked = v + 1;
  }
  close(pfd[0]);
  int status;
  waitpid(pid, &status, 0);
  return {acked, status};
}

/// Every write 0..acked-1 must read back.
void check_acked(const StoreDir& d, int acked)
{
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  for (int i = 0; i < acked; ++i) {
    bufferlist want = block(i), got;
    int r = s->read(ch, obj(i % 16), (i / 16) * 8192, want.length(), got);
    ASSERT_EQ(int(want.length()), r) << "write " << i;
    ASSERT_TRUE(want.contents_equal(got)) << "write " << i << " lost";
  }
  EXPECT_EQ(0, s->fsck(false));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

void mkfs_with_collection(const StoreDir& d)
{
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

/// On a fresh store, run the writer for `n` writes under the fault `spec`:
/// the store must stop (killed by its abort), and every write it
/// acknowledged must be there after a remount without the fault.
void expect_stop_keeps_acked(const std::string& spec, int n,
                             const std::string& what,
                             int* acked_out = nullptr)
{
  StoreDir d;
  ASSERT_NO_FATAL_FAILURE(mkfs_with_collection(d));
  auto [acked, status] = run_writer(d, spec, n);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the store must stop, status " << status;
  std::cout << what << ": " << acked << " writes acknowledged" << std::endl;
  check_acked(d, acked);
  if (acked_out) {
    *acked_out = acked;
  }
}

}  // namespace

class MIMStoreFault : public ::testing::TestWithParam<Window> {
 protected:
  static Conf conf()
  {
    Conf c = fault_conf(GetParam() != Window::Off);
    set_window(c, GetParam());
    return c;
  }
};

// EIO on a journal write: the store stops (the write was never
// acknowledged); everything acknowledged before is there after remount.
TEST_P(MIMStoreFault, JournalWriteEIO)
{
  Conf c = conf();
  int acked = 0;
  expect_stop_keeps_acked("fail=aio|write:journal:eio@40", 200,
                          "journal EIO", &acked);
  EXPECT_LT(acked, 200);
}

// io_submit itself refuses a journal write (no completion will come): the
// store stops at that batch, from the reaper (which alone completes
// batches, in sn order); everything acknowledged before is there.
TEST_P(MIMStoreFault, JournalSubmitEIO)
{
  Conf c = conf();
  int acked = 0;
  expect_stop_keeps_acked("fail=submit:journal:eio@40", 200,
                          "journal submit EIO", &acked);
  EXPECT_LT(acked, 200);
}

// EIO from the data filesystem's sync: the checkpoint must not move; the
// store stops; replay restores everything acknowledged.
TEST_P(MIMStoreFault, DataSyncEIO)
{
  Conf c = conf();
  expect_stop_keeps_acked("fail=sync:/data/:eio@2", 400, "data sync EIO");
}

// EIO on an object file write (direct or during a flush).
TEST_P(MIMStoreFault, DataWriteEIO)
{
  Conf c = conf();
  expect_stop_keeps_acked("fail=write:/objects/:eio@3", 400,
                          "data write EIO");
}

// ENOSPC on the data filesystem: stop with a message, replay once there is
// room (here: the fault is gone at remount).
TEST_P(MIMStoreFault, DataWriteENOSPC)
{
  Conf c = conf();
  expect_stop_keeps_acked("fail=write:/objects/:enospc@3+", 400,
                          "data write ENOSPC");
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreFault,
                         ::testing::ValuesIn(kWindows),
                         [](const auto& info) {
                           return window_name(info.param);
                         });

// Issue 61 item 2: an op on an object with cached bytes (write, zero,
// truncate, clone, clone_range, rename, a split's or merge's barrier) takes
// them out of the cache and writes them to the file first. When that write
// back failed, their sns were released all the same: with an error the op
// tolerates (ENODATA, as from a short read of the journal-resident bytes;
// ENOENT) the op went on, the bytes were in neither the cache nor the file,
// and the next sync checkpointed past them; with any other the store died,
// but the sync thread could checkpoint past them first. Now the store stops
// before it releases them, as the flush thread does, and the next mount
// replays them. The fault on the write back's first write to A's file
// stands in for those errors. Each case: a child mounts with the fault,
// writes A (merged: the test checks), runs the op, and umounts if it is
// still alive; the store must have stopped, and A's write must read back
// after a remount without the fault.
namespace {

enum class TakeOp { Clone, DirectWrite };

void expect_take_failure_keeps(Window w, TakeOp op, const char* err)
{
  const ghobject_t A(hobject_t(object_t("takenA"), "", CEPH_NOSNAP, 0x201, 1,
                               ""));
  const ghobject_t B(hobject_t(object_t("takenB"), "", CEPH_NOSNAP, 0x202, 1,
                               ""));
  bufferlist a;
  a.append(std::string(4096, 'A'));
  Conf c = fault_conf(true);
  set_window(c, w);
  c.set("mimstore_max_flush_interval", "3600");  // no sweep takes A first
  StoreDir d;
  ASSERT_NO_FATAL_FAILURE(mkfs_with_collection(d));
  pid_t pid = fork_child();
  if (pid == 0) {
    g_ceph_context->_conf.set_val_or_die(
      "mimstore_debug_fault", std::string("fail=write:takenA:") + err + "@1");
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    auto ch = s->open_collection(CID);
    {
      Transaction t;
      t.write(CID, A, 0, a.length(), a);
      apply(s.get(), ch, std::move(t));
    }
    if (perf_counter(s.get(), l_mimstore_merged) != 1) {
      _exit(5);  // not cached: nothing for the op to take
    }
    Transaction t;
    if (op == TakeOp::Clone) {
      t.clone(CID, A, B);
    } else {
      bufferlist far;  // beyond the merge block: written directly
      far.append(std::string(4096, 'F'));
      t.write(CID, A, 8 << 20, far.length(), far);
    }
    apply(s.get(), ch, std::move(t));
    ch.reset();
    s->umount();  // merging on: keeps the window in the journal
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 5)
    << "A's write was not merged";
  EXPECT_TRUE(WIFSIGNALED(status))
    << "the store must stop at the failed write back, status " << status;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  bufferlist got;
  EXPECT_EQ(4096, s->read(ch, A, 0, 4096, got));
  EXPECT_TRUE(a.contents_equal(got)) << "A's acknowledged write lost";
  EXPECT_EQ(0, s->fsck(false));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

}  // namespace

class MIMStoreTakeFault : public ::testing::TestWithParam<Window> {};

TEST_P(MIMStoreTakeFault, CloneAfterATolerantWriteBackError)
{
  expect_take_failure_keeps(GetParam(), TakeOp::Clone, "enodata");
}

TEST_P(MIMStoreTakeFault, DirectWriteAfterATolerantWriteBackError)
{
  expect_take_failure_keeps(GetParam(), TakeOp::DirectWrite, "enoent");
}

TEST_P(MIMStoreTakeFault, CloneAfterAWriteBackEIO)
{
  expect_take_failure_keeps(GetParam(), TakeOp::Clone, "eio");
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreTakeFault,
                         ::testing::Values(Window::Journal, Window::Ram),
                         [](const auto& info) {
                           return window_name(info.param);
                         });

// A really full data filesystem (a small tmpfs): the store stops before
// acknowledging what it cannot store; after the filesystem grows, mount
// replays and nothing acknowledged is missing.
TEST(MIMStoreFaultEnv, FullDataFilesystem)
{
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  }
  Conf c = fault_conf(false);
  StoreDir d;
  // RocksDB (omap) elsewhere: only the object files fill the filesystem
  c.set("mimstore_db_dir", d.root + "/db");
  if (::mount("tmpfs", d.data.c_str(), "tmpfs", 0, "size=6m") != 0) {
    GTEST_SKIP() << "cannot mount tmpfs: " << cpp_strerror(errno);
  }
  mkfs_with_collection(d);
  // 16 objects x 8 KiB steps: far more than 6 MiB of data
  auto [acked, status] = run_writer(d, "", 3000);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the store must stop, status " << status;
  EXPECT_LT(acked, 3000);
  std::cout << "full data filesystem: " << acked << " writes acknowledged"
            << std::endl;
  ASSERT_EQ(0, ::mount("tmpfs", d.data.c_str(), "tmpfs", MS_REMOUNT,
                       "size=256m"));
  check_acked(d, acked);
  ::umount2(d.data.c_str(), MNT_DETACH);
}

// A journal the OSD cannot write is refused at mount with a message.
TEST(MIMStoreFaultEnv, JournalNotWritable)
{
  Conf c = fault_conf(true);
  StoreDir d;
  mkfs_with_collection(d);
  std::string cmd = "chattr +i '" + d.journal + "' 2>/dev/null";
  if (system(cmd.c_str()) != 0) {
    GTEST_SKIP() << "chattr +i is not supported here";
  }
  auto s = make_store(d);
  int r = s->mount();
  cmd = "chattr -i '" + d.journal + "'";
  EXPECT_EQ(0, system(cmd.c_str()));
  EXPECT_EQ(-EPERM, r);
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->umount());
}

// A journal header of a newer format version (valid crc) is refused with
// -EPROTONOSUPPORT, not mistaken for damage or replayed.
TEST(MIMStoreFaultEnv, UnknownJournalVersion)
{
  Conf c = fault_conf(true);
  StoreDir d;
  mkfs_with_collection(d);
  std::string bytes;
  {
    std::ifstream f(d.journal, std::ios::binary);
    bytes.resize(8192);
    f.read(bytes.data(), bytes.size());
  }
  mim::JournalHeader h;
  int which;
  std::string err;
  ASSERT_EQ(0, mim::pick_header(bytes.data(), bytes.data() + 4096, 4096, &h,
                                &which, &err)) << err;
  h.version = 2;
  {
    // both slots: a v2 header each, so no older v1 header can win
    std::fstream f(d.journal, std::ios::in | std::ios::out | std::ios::binary);
    for (int k = 1; k <= 2; ++k) {
      h.header_seq++;
      std::string slot(4096, '\0');
      mim::encode_header(h, slot.data());
      f.seekp(mim::header_slot_offset(h.header_seq, 4096));
      f.write(slot.data(), slot.size());
    }
  }
  auto s = make_store(d);
  EXPECT_EQ(-EPROTONOSUPPORT, s->mount());
}

// The omap database's power-loss model (CrashRocksEnv): the cut keeps only
// what was synced (mode drop), and a RocksDB write that comes after it
// halts its thread instead of failing. A failed write would reach the
// store as a failed omap op, which aborts the OSD before the crash
// callback's _exit: a crash test then sees a child killed by a signal.
// The hook exits 42 where the store's default waits for that _exit.
TEST(MIMStoreFaultEnv, RocksWritesHaltAfterPowerCut)
{
  StoreDir d;
  const std::string f = d.root + "/rocks-file";
  pid_t pid = fork_child();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    mimstore::CrashRocksEnv env(rocksdb::Env::Default(), 1,
                                mimstore::CrashRocksEnv::Mode::DROP);
    std::unique_ptr<rocksdb::WritableFile> w;
    if (!env.NewWritableFile(f, &w, rocksdb::EnvOptions()).ok() ||
        !w->Append("synced").ok() || !w->Sync().ok() ||
        !w->Append("unsynced").ok() || !w->Flush().ok()) {
      _exit(2);
    }
    env.set_after_crash([] { _exit(42); });
    if (env.crash() != 1) {
      _exit(3);  // the one file with unsynced bytes was not cut
    }
    rocksdb::Status s = w->Append("after the cut");
    _exit(s.ok() ? 4 : 5);  // the write came back to its caller
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(42, WEXITSTATUS(status))
    << "2: setup failed, 3: nothing cut, 4/5: a write after the cut returned";
  struct stat st;
  ASSERT_EQ(0, ::stat(f.c_str(), &st));
  EXPECT_EQ(6, st.st_size) << "the cut keeps the synced \"synced\" only";
}

// The omap database's injected errors (dbwrite, dbsync): the Nth matching
// append or sync fails without being done, ENOSPC as NoSpace, any other
// errno as IOError; a path that does not match is left alone.
TEST(MIMStoreFaultEnv, RocksInjectedErrors)
{
  StoreDir d;
  const std::string f = d.root + "/000007.log";
  mimstore::CrashRocksEnv env(rocksdb::Env::Default(), 1,
                              mimstore::CrashRocksEnv::Mode::KEEP);
  mim::fault_spec_t spec;
  std::string err;
  ASSERT_EQ(0, mim::parse_fault_spec(
    "fail=dbwrite:.log:enospc@2+,fail=dbsync::eio@1,fail=write::eio@1",
    &spec, &err)) << err;
  env.set_fail_rules(spec.fails);
  std::unique_ptr<rocksdb::WritableFile> w;
  ASSERT_TRUE(env.NewWritableFile(f, &w, rocksdb::EnvOptions()).ok());
  EXPECT_TRUE(w->Append("one").ok());                  // 1st append
  rocksdb::Status a2 = w->Append("two");               // 2nd: fails
  EXPECT_TRUE(a2.IsNoSpace()) << a2.ToString();
  EXPECT_TRUE(w->Append("three").IsNoSpace());         // "+": and after
  rocksdb::Status s1 = w->Sync();
  EXPECT_TRUE(s1.IsIOError() && !s1.IsNoSpace()) << s1.ToString();
  EXPECT_TRUE(w->Sync().ok());                         // only the 1st sync
  ASSERT_TRUE(w->Close().ok());
  struct stat st;
  ASSERT_EQ(0, ::stat(f.c_str(), &st));
  EXPECT_EQ(3, st.st_size) << "a failed append must not be written";
  // Another file: the .log rule does not match, the FaultIoEnv rule
  // ("write") is not the database's.
  std::unique_ptr<rocksdb::WritableFile> m;
  ASSERT_TRUE(env.NewWritableFile(d.root + "/MANIFEST-000001", &m,
                                  rocksdb::EnvOptions()).ok());
  EXPECT_TRUE(m->Append("m").ok());
  EXPECT_TRUE(m->Close().ok());
}

// ---- Read errors (issue 62 item 9) -----------------------------------
// A disk that cannot read a block: the journal during replay, an object
// file, the journal-resident copy of a cached write. The store must say
// so (a mount refused, a read's -EIO for the OSD to repair from a replica,
// a stop where it cannot go on) and never take the unreadable bytes for
// an end or for zeros.
namespace {

/// Child: mount, write `n` blocks as run_writer does (every one
/// acknowledged), then die without umount, as kill -9 does: the journal
/// holds them, the sync interval keeps them from being checkpointed.
/// Returns the child's wait status (exit 0: all written).
int write_and_die(const StoreDir& d, int n)
{
  pid_t pid = fork_child();
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    // (with the seam, as every child here: RocksDB then gets the env the
    // store gives it under fault injection)
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", "seed=0");
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    auto ch = s->open_collection(CID);
    for (int i = 0; i < n; ++i) {
      Transaction t;
      bufferlist bl = block(i);
      t.write(CID, obj(i % 16), (i / 16) * 8192, bl.length(), bl);
      apply(s.get(), ch, std::move(t));
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

/// Child: mount with `spec`; exits 0 if the mount succeeded and the first
/// `n` writes read back, 6 if it succeeded without them, 3 if the mount
/// was refused. (A mount that succeeds exits without umount: the next
/// attempt replays again.)
int mount_and_check(const StoreDir& d, const std::string& spec, int n)
{
  pid_t pid = fork_child();
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", spec);
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    // (the checks read without faults)
    static_cast<MIMStore*>(s.get())->debug_fault_set_spec("seed=0");
    auto ch = s->open_collection(CID);
    for (int i = 0; i < n; ++i) {
      bufferlist want = block(i), got;
      if (s->read(ch, obj(i % 16), (i / 16) * 8192, want.length(), got) !=
            int(want.length()) ||
          !want.contents_equal(got)) {
        _exit(6);
      }
    }
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

class MIMStoreReadFault : public MIMStoreFault {};

// EIO on the K-th read of the journal during the mount, for every K the
// mount reaches: the mount is refused (an unreadable block is not the
// journal's end: acknowledged entries may follow it), or it did not need
// that read and has every write; after each, a mount without the fault
// replays all of them.
TEST_P(MIMStoreReadFault, JournalReadEIOInReplayRefusesTheMount)
{
  Conf c = conf();
  // Nothing checkpointed unless asked (umount asks): all replayed.
  c.set("mimstore_sync_interval", "3600");
  c.set("mimstore_max_flush_interval", "3600");
  const int N = 60;
  int refused = 0, k = 1;
  for (; k <= 400; ++k) {
    // A store of its own for each k, made in a child like every life of
    // it: the parent opens no database for this test (RocksDB's thread
    // pool does not survive fork; the stores here are small enough that
    // no child needs a background flush).
    StoreDir d;
    pid_t pid = fork_child();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      mkfs_with_collection(d);
      _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int mst = 0;
    waitpid(pid, &mst, 0);
    ASSERT_TRUE(WIFEXITED(mst) && WEXITSTATUS(mst) == 0) << "mkfs " << mst;
    const int wst = write_and_die(d, N);
    ASSERT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
      << "the writer before read " << k << ": status " << wst;
    const int st = mount_and_check(
      d, "fail=read:journal:eio@" + std::to_string(k), N);
    ASSERT_TRUE(WIFEXITED(st)) << "read " << k << ": the mount died, status "
                               << st;
    ASSERT_NE(6, WEXITSTATUS(st))
      << "read " << k << " failed and the mount lost acknowledged writes";
    ASSERT_TRUE(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3)
      << "read " << k << ": exit " << WEXITSTATUS(st);
    if (WEXITSTATUS(st) == 0) {
      break;  // the mount reads the journal fewer than k times
    }
    ++refused;
    ASSERT_EQ(0, mount_and_check(d, "seed=0", N))
      << "after the refused mount at read " << k;
  }
  std::cout << "journal reads refused at mount: " << refused << " of "
            << k - 1 << std::endl;
  EXPECT_GT(refused, 0) << "no journal read went through the seam";
  EXPECT_LE(k, 400) << "no mount succeeded: the last journal read never came";
}

// EIO reading an object file: the read returns -EIO (the OSD repairs the
// object from a replica), not zeros, and the store keeps running.
TEST_P(MIMStoreReadFault, ObjectFileReadEIOIsReturned)
{
  Conf c = conf();
  StoreDir d;
  ASSERT_NO_FATAL_FAILURE(mkfs_with_collection(d));
  {
    auto [acked, status] = run_writer(d, "seed=0", 16);
    ASSERT_EQ(16, acked);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  pid_t pid = fork_child();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault",
                                         "fail=read:/objects/:eio@1+");
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    auto ch = s->open_collection(CID);
    bufferlist got;
    int r = s->read(ch, obj(3), 0, 4096, got);
    if (r != -EIO) {
      _exit(r >= 0 ? 4 : 5);
    }
    // Still running: a write and a read of another range go on.
    Transaction t;
    bufferlist bl = block(99);
    t.write(CID, obj(20), 0, bl.length(), bl);
    if (apply(s.get(), ch, std::move(t)) != 0) {
      _exit(6);
    }
    ch.reset();
    _exit(s->umount() == 0 ? 0 : 7);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(0, WEXITSTATUS(status))
    << "3: mount refused, 4: the read returned bytes, 5: another error, "
       "6: a write after it failed, 7: umount failed";
  check_acked(d, 16);
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreReadFault,
                         ::testing::ValuesIn(kWindows),
                         [](const auto& info) {
                           return window_name(info.param);
                         });

// EIO reading the journal-resident copy of a cached write (merging on, the
// merged bytes only in the journal, the default): the read returns -EIO;
// the write back that needs the same bytes stops the store; the next mount
// replays the write from the journal.
TEST(MIMStoreFaultEnv, JournalResidentReadEIO)
{
  Conf c = fault_conf(true);
  set_window(c, Window::Journal);
  c.set("mimstore_max_flush_interval", "3600");  // no sweep takes it first
  StoreDir d;
  ASSERT_NO_FATAL_FAILURE(mkfs_with_collection(d));
  bufferlist a = block(7);
  pid_t pid = fork_child();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", "seed=0");
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(3);
    }
    auto ch = s->open_collection(CID);
    Transaction t;
    t.write(CID, obj(7), 0, a.length(), a);
    apply(s.get(), ch, std::move(t));
    if (perf_counter(s.get(), l_mimstore_merged) != 1) {
      _exit(4);  // not cached: nothing in the journal to read
    }
    auto* ms = static_cast<MIMStore*>(s.get());
    if (ms->debug_fault_set_spec("fail=read:journal:eio@1+") != 0) {
      _exit(5);
    }
    bufferlist got;
    int r = s->read(ch, obj(7), 0, a.length(), got);
    if (r != -EIO) {
      _exit(r >= 0 ? 6 : 7);
    }
    ch.reset();
    ms->write_back_all();  // must stop the store: the bytes cannot be read
    _exit(8);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 4)
    << "the write was not merged";
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 6)
    << "a read of journal-resident bytes the disk could not read returned data";
  EXPECT_TRUE(WIFSIGNALED(status))
    << "the write back must stop the store; status " << status
    << " (exit 7: the read gave another error; 8: the write back went on)";
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  bufferlist got;
  EXPECT_EQ(int(a.length()), s->read(ch, obj(7), 0, a.length(), got));
  EXPECT_TRUE(a.contents_equal(got)) << "the cached write was lost";
  EXPECT_EQ(0, s->fsck(false));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// ---- The omap database failing (issue 62 item 9) ----------------------
// RocksDB's appends or syncs failing (a disk error, a full filesystem
// under the database): the omap write of an acknowledged transaction
// cannot be applied, so the store must stop rather than go on without
// it, and the next mount (the fault gone: the disk replaced, space made)
// replays it from the journal. Each transaction writes a block and an
// omap key.
namespace {

/// Every write 0..acked-1 must read back, its omap key too.
void check_omap_acked(const StoreDir& d, int acked)
{
  ASSERT_NO_FATAL_FAILURE(check_acked(d, acked));
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  for (int o = 0; o < 16 && o < acked; ++o) {
    std::set<std::string> want;
    for (int i = o; i < acked; i += 16) {
      want.insert(omap_key(i));
    }
    std::map<std::string, bufferlist> got;
    ASSERT_EQ(0, s->omap_get_values(ch, obj(o), want, &got)) << "object " << o;
    for (const auto& k : want) {
      auto p = got.find(k);
      ASSERT_TRUE(p != got.end()) << "omap key " << k << " lost";
      ASSERT_TRUE(p->second.contents_equal(block(std::stoi(k.substr(1)))))
        << "omap key " << k << " has other bytes";
    }
  }
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

void expect_db_fault_stops(const std::string& spec, const std::string& what)
{
  StoreDir d;
  ASSERT_NO_FATAL_FAILURE(mkfs_with_collection(d));
  // Until the store stops: the sync thread's syncs come with time, not
  // with a number of transactions.
  const int N = 20000;
  auto [acked, status] = run_writer(d, "seed=0", N, true, spec);
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 3)
    << "the mount failed";
  ASSERT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 5)
    << "the spec did not parse: " << spec;
  EXPECT_TRUE(WIFSIGNALED(status)) << "the store must stop, status " << status;
  EXPECT_GT(acked, 0);
  EXPECT_LT(acked, N) << "the fault never fired";
  std::cout << what << ": " << acked << " transactions acknowledged"
            << std::endl;
  check_omap_acked(d, acked);
}

}  // namespace

class MIMStoreDbFault : public MIMStoreFault {};

TEST_P(MIMStoreDbFault, RocksAppendEIO)
{
  Conf c = conf();
  expect_db_fault_stops("fail=dbwrite::eio@40", "RocksDB append EIO");
}

TEST_P(MIMStoreDbFault, RocksSyncEIO)
{
  Conf c = conf();
  expect_db_fault_stops("fail=dbsync::eio@3", "RocksDB sync EIO");
}

TEST_P(MIMStoreDbFault, RocksAppendENOSPC)
{
  Conf c = conf();
  expect_db_fault_stops("fail=dbwrite::enospc@40+", "RocksDB append ENOSPC");
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreDbFault,
                         ::testing::ValuesIn(kWindows),
                         [](const auto& info) {
                           return window_name(info.param);
                         });
