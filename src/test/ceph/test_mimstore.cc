// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore Ceph-tier tests: the store against a real Ceph build, real files,
 * a real RocksDB. Run with the mimstore tier of qa/run-tests.sh.
 *
 *   Basic        mkfs, mount, write/read, remount
 *   Replay       remount after clean and unclean stops (forked child dies)
 *   Journal      wrap, throttle when full, corruption and bad journals
 *   Tools        mkjournal, dump_journal and flush_journal
 *   Differential random transactions on memstore and mimstore, remounts in
 *                between, full state compared
 *   Merge        merging turns many small writes into fewer write calls
 *   Fsck         clean on a healthy store, counts stray files and orphan omap
 *   BadConfig    every bad option value is refused, naming the option
 *   Reads        a read waits only for the applies of its object
 *   Commit       flush_commit's context follows on_commit on the
 *                collection's commit queue
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <functional>
#include <thread>
#include <initializer_list>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "common/Finisher.h"
#include "common/Formatter.h"
#include "common/ceph_mutex.h"
#include "common/ceph_argparse.h"
#include "global/global_init.h"
#include "global/global_context.h"
#include "include/stringify.h"

#include "MIMStore.h"
#include "OmapStore.h"
#include "kv/KeyValueDB.h"
#if __has_include("os/DBObjectMap.h")
#include "os/DBObjectMap.h"
#endif
#include "core/batch_index.h"
#include "mimstore_test_util.h"

using namespace mimtest;
using ceph::bufferlist;
using Transaction = ObjectStore::Transaction;

namespace {

/// The options every test starts from: a small journal file, short sync
/// intervals, and no throughput measurement (tests set it).
Conf base_conf(bool merge)
{
  return Conf({{"mimstore_merge", merge ? "true" : "false"},
               {"osd_journal_size", "64"},
               {"mimstore_journal_throughput", "1000000000"},
               {"mimstore_sync_interval", "0.2"},
               {"mimstore_min_sync_interval", "0.01"},
               {"mimstore_max_flush_interval", "0.2"},
               {"mimstore_journal_max_batch_bytes", "1048576"}});
}

ghobject_t obj(const std::string& name, uint32_t hash = 7)
{
  return ghobject_t(hobject_t(object_t(name), "", CEPH_NOSNAP, hash, 1, ""));
}

const coll_t CID(spg_t(pg_t(0, 1)));

bufferlist pattern(size_t len, char seed)
{
  std::string s(len, '\0');
  for (size_t i = 0; i < len; ++i) {
    s[i] = char(seed + i * 31 + i / 4096);
  }
  bufferlist bl;
  bl.append(s);
  return bl;
}

/// "" if equal, else sizes and the first differing offset (gtest would
/// print megabytes of binary otherwise).
std::string first_diff(const std::string& want, const std::string& got)
{
  if (want == got) {
    return "";
  }
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) {
    ++i;
  }
  return "sizes " + std::to_string(want.size()) + " (want) and " +
    std::to_string(got.size()) + " (got), first difference at " +
    std::to_string(i);
}

std::string read_all(ObjectStore* s, ObjectStore::CollectionHandle& ch,
                     const ghobject_t& o)
{
  bufferlist bl;
  int r = s->read(ch, o, 0, 0, bl);
  EXPECT_GE(r, 0);
  return bl.to_str();
}

/// What `o` holds after `bl` is written at `off`, in the model `want`.
void model_write(std::map<ghobject_t, std::string>* want, const ghobject_t& o,
                 uint64_t off, const bufferlist& bl)
{
  std::string& w = (*want)[o];
  w.resize(std::max<size_t>(w.size(), off + bl.length()), '\0');
  w.replace(off, bl.length(), bl.to_str());
}

/// Mount `s` (unmounted), check every object of CID holds what `want`
/// says, umount.
void expect_after_remount(ObjectStore* s,
                          const std::map<ghobject_t, std::string>& want)
{
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  for (auto& [o, w] : want) {
    EXPECT_EQ("", first_diff(w, read_all(s, ch, o))) << o;
  }
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

/// Counter values at one point of a test: the counters live across mounts,
/// so a test that counts one flush subtracts what came before it.
class CounterMark {
 public:
  CounterMark(ObjectStore* s, std::initializer_list<int> idx) : s_(s)
  {
    for (int i : idx) {
      at_[i] = perf_counter(s, i);
    }
  }
  int64_t since(int idx) const { return perf_counter(s_, idx) - at_.at(idx); }

 private:
  ObjectStore* s_;
  std::map<int, int64_t> at_;
};

/// Polls `done` every 10 ms for up to 60 s; its last answer. The bound
/// only turns a store that never gets there into a failure.
bool wait_until(const std::function<bool()>& done)
{
  for (int i = 0; i < 6000; ++i) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

/// Flush everything (umount), mark `counters`, mount again and reopen CID.
void remount_marking(ObjectStore* s, ObjectStore::CollectionHandle* ch,
                     std::initializer_list<int> counters,
                     std::optional<CounterMark>* mark)
{
  ch->reset();
  ASSERT_EQ(0, write_back_and_umount(s));
  mark->emplace(s, counters);
  ASSERT_EQ(0, s->mount());
  *ch = s->open_collection(CID);
}

}  // namespace

// ---------------------------------------------------------------------------

Conf window_conf(Window w)
{
  Conf c = base_conf(w != Window::Off);
  set_window(c, w);
  return c;
}

class MIMStoreMerge : public ::testing::TestWithParam<Window> {};

TEST_P(MIMStoreMerge, MkfsMountWriteReadRemount)
{
  Conf c = window_conf(GetParam());
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::string want;
  for (int i = 0; i < 64; ++i) {
    Transaction t;
    uint64_t off = (i * 7 % 3) * 4096 + (i % 2) * 100;
    bufferlist bl = pattern(4096, char(i));
    if (want.size() < off + 4096) {
      want.resize(off + 4096, '\0');
    }
    memcpy(want.data() + off, bl.c_str(), 4096);
    t.write(CID, obj("a"), off, 4096, bl);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    // read-after-commit sees the write, cached or not
    ASSERT_EQ("", first_diff(want, read_all(s.get(), ch, obj("a")))) << i;
  }
  struct stat st;
  ASSERT_EQ(0, s->stat(ch, obj("a"), &st));
  EXPECT_EQ(int64_t(want.size()), st.st_size);
  ch.reset();
  ASSERT_EQ(0, s->umount());
  ASSERT_EQ(0, s->mount());
  ch = s->open_collection(CID);
  ASSERT_TRUE(ch);
  EXPECT_EQ("", first_diff(want, read_all(s.get(), ch, obj("a"))));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

namespace {

/// For tests that stop a store uncleanly: long intervals, so most data is
/// still only in the journal (and the merge cache) when it dies.
/// `n` transactions of one 4 KiB write each, to one of `objects` objects
/// (rbd_data.K) at a 4 KiB-aligned offset below 4 MiB, chosen by a
/// generator seeded with `seed`; all committed on return, recorded in *want.
/// n writes of len bytes (a divisor of 4 MiB), each to one of `objects`
/// objects at a random multiple of len below 4 MiB, 8 in flight.
void random_writes(ObjectStore* s, ObjectStore::CollectionHandle& ch,
                   int n, int objects, unsigned seed, uint64_t len,
                   std::map<ghobject_t, std::string>* want)
{
  std::mt19937 rng(seed);
  InFlight q;
  for (int i = 0; i < n; ++i) {
    const ghobject_t o = obj("rbd_data." + std::to_string(rng() % objects));
    const uint64_t off = (rng() % ((4 << 20) / len)) * len;
    bufferlist bl = pattern(len, char(i));
    model_write(want, o, off, bl);
    Transaction t;
    t.write(CID, o, off, len, bl);
    ASSERT_EQ(0, q.queue(s, ch, std::move(t)));
  }
  ASSERT_EQ(0, q.wait_all());
}

void random_4k_writes(ObjectStore* s, ObjectStore::CollectionHandle& ch,
                      int n, int objects, unsigned seed,
                      std::map<ghobject_t, std::string>* want)
{
  random_writes(s, ch, n, objects, seed, 4096, want);
}

void long_intervals(Conf& c)
{
  c.set("mimstore_sync_interval", "30");
  c.set("mimstore_max_flush_interval", "30");
}

/// In a child process: mount the store at `d`, commit writes first ..
/// first+n-1 (write i: 4 KiB of pattern(i) to object o<i%10> at
/// (i/10)*4096; CID is created first when first == 0), then exit without
/// umount, as kill -9 leaves a store. Returns the last write the child saw
/// committed (each commit is reported on a pipe), or -1 if the child failed.
int commit_then_die(const StoreDir& d, int first, int n)
{
  int pfd[2];
  if (pipe(pfd) != 0) {
    return -1;
  }
  pid_t pid = fork_child();
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    close(pfd[0]);
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(2);
    }
    auto ch = first == 0 ? s->create_new_collection(CID)
                         : s->open_collection(CID);
    if (first == 0) {
      Transaction t0;
      t0.create_collection(CID, 0);
      apply(s.get(), ch, std::move(t0));
    }
    for (int i = first; i < first + n; ++i) {
      Transaction t;
      t.write(CID, obj("o" + std::to_string(i % 10)), (i / 10) * 4096, 4096,
              pattern(4096, char(i)));
      if (apply(s.get(), ch, std::move(t)) != 0) {
        _exit(3);
      }
      int32_t v = i;
      if (write(pfd[1], &v, sizeof(v)) != sizeof(v)) {
        _exit(4);
      }
    }
    _exit(0);  // no umount: the store never syncs its last state
  }
  close(pfd[1]);
  int32_t v, last = -1;
  while (read(pfd[0], &v, sizeof(v)) == sizeof(v)) {
    last = v;
  }
  close(pfd[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return -1;
  }
  return last;
}

/// Every write 0..last of commit_then_die is in the mounted store `s`.
void expect_committed(ObjectStore* s, int last)
{
  auto ch = s->open_collection(CID);
  ASSERT_TRUE(ch);
  for (int k = 0; k < 10; ++k) {
    std::string want;
    for (int i = k; i <= last; i += 10) {
      want += pattern(4096, char(i)).to_str();
    }
    EXPECT_EQ("", first_diff(want, read_all(s, ch,
                                            obj("o" + std::to_string(k)))))
      << "object o" << k;
  }
}

/// What the replay counter must say after a mount (it counts across
/// mounts of one store object).
enum class Replayed { SOME, NONE, ANY };

/// Mount `s`, check the replay counter and every write 0..last of
/// commit_then_die, umount.
void mount_expect_committed(ObjectStore* s, int last, Replayed replayed)
{
  ASSERT_EQ(0, s->mount());
  if (replayed == Replayed::SOME) {
    EXPECT_GT(perf_counter(s, l_mimstore_replayed), 0);
  } else if (replayed == Replayed::NONE) {
    EXPECT_EQ(0, perf_counter(s, l_mimstore_replayed));
  }
  ASSERT_NO_FATAL_FAILURE(expect_committed(s, last));
  ASSERT_EQ(0, s->umount());
}

}  // namespace

// An unclean stop: a child process mounts, writes and commits, then dies
// without umount (like kill -9). The parent remounts and checks that every
// committed write is there.
TEST_P(MIMStoreMerge, UncleanStopReplays)
{
  Conf c = window_conf(GetParam());
  long_intervals(c);
  StoreDir d;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  ASSERT_EQ(199, commit_then_die(d, 0, 200));
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_GT(perf_counter(s.get(), l_mimstore_replayed), 0);
  ASSERT_NO_FATAL_FAILURE(expect_committed(s.get(), 199));
  ASSERT_EQ(0, s->umount());
}

// Three unclean stops in a row, each mount writing more after its replay:
// merging on, each mount keeps the window it replayed and writes after it
// in the same journal generation, so the last mount replays the writes of
// all three lives (nothing was written back: the intervals are long).
// Merging off, each mount writes its replay through and starts empty.
TEST_P(MIMStoreMerge, ChainedUncleanStopsKeepOneWindow)
{
  Conf c = window_conf(GetParam());
  long_intervals(c);
  StoreDir d;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  ASSERT_EQ(99, commit_then_die(d, 0, 100));
  ASSERT_EQ(199, commit_then_die(d, 100, 100));
  ASSERT_EQ(299, commit_then_die(d, 200, 100));
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  const int64_t replayed = perf_counter(s.get(), l_mimstore_replayed);
  if (GetParam() != Window::Off) {
    EXPECT_GE(replayed, 300);
  } else {
    EXPECT_GE(replayed, 100);
    EXPECT_LT(replayed, 200);
  }
  ASSERT_NO_FATAL_FAILURE(expect_committed(s.get(), 299));
  ASSERT_EQ(0, s->umount());
}

// The same random transactions on memstore and mimstore, with remounts of
// mimstore in between; the full observable state must be identical.
TEST_P(MIMStoreMerge, DifferentialAgainstMemstore)
{
  Conf c = window_conf(GetParam());
  // Every data change checked against its file as it is made, and all
  // checksums against the files at the end.
  c.set("mimstore_debug_verify_csums", "true");
  const char* env = getenv("MIMSTORE_TEST_SEED");
  uint64_t seed = env ? strtoull(env, nullptr, 10) : 1234 + int(GetParam());
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (rerun with MIMSTORE_TEST_SEED)");
  StoreDir dm, dr;
  auto mim = make_store(dm);
  auto mem = make_store(dr, "memstore");
  ASSERT_EQ(0, mim->mkfs());
  ASSERT_EQ(0, mim->mount());
  ASSERT_EQ(0, mem->mkfs());
  ASSERT_EQ(0, mem->mount());
  RandomTxns gen(seed);
  std::map<coll_t, ObjectStore::CollectionHandle> hm, hr;
  for (auto& cid : gen.collections()) {
    hm[cid] = mim->create_new_collection(cid);
    hr[cid] = mem->create_new_collection(cid);
  }
  int n = 0;
  for (auto& t : gen.setup()) {
    coll_t cid = gen.collections()[n++];
    Transaction t2 = t;
    ASSERT_EQ(0, apply(mim.get(), hm[cid], std::move(t)));
    ASSERT_EQ(0, apply(mem.get(), hr[cid], std::move(t2)));
  }
  // MIMSTORE_TEST_PER_ROUND=1 compares (and remounts) after every
  // transaction, to find the first one that differs.
  const int per_round = getenv("MIMSTORE_TEST_PER_ROUND") ?
    atoi(getenv("MIMSTORE_TEST_PER_ROUND")) : 250;
  const int rounds = per_round < 250 ? 1500 / per_round : 6;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < per_round; ++i) {
      std::vector<coll_t> created;
      Transaction t = gen.next(&created);
      for (auto& nc : created) {
        mim->create_new_collection(nc);
        mem->create_new_collection(nc);
      }
      // queued on the first collection's handle: both stores apply in
      // order across collections
      coll_t cid = gen.collections()[0];
      Transaction t2 = t;
      ASSERT_EQ(0, apply(mim.get(), hm[cid], std::move(t)));
      ASSERT_EQ(0, apply(mem.get(), hr[cid], std::move(t2)));
    }
    std::string diff = diff_state(dump_state(mem.get()),
                                  dump_state(mim.get()));
    ASSERT_EQ("", diff) << "round " << round;
    // remount mimstore: clean, then state must still match
    hm.clear();
    ASSERT_EQ(0, mim->umount());
    ASSERT_EQ(0, mim->mount());
    for (auto& cid : gen.collections()) {
      hm[cid] = mim->open_collection(cid);
    }
    diff = diff_state(dump_state(mem.get()), dump_state(mim.get()));
    ASSERT_EQ("", diff) << "after remount, round " << round;
  }
  hm.clear();
  hr.clear();
  EXPECT_EQ(0, mim->fsck(false));
  ASSERT_EQ(0, write_back_and_umount(mim.get()));
  ASSERT_EQ(0, mem->umount());
  std::string report;
  EXPECT_EQ(0, verify_checksums(dm, true, &report)) << report;
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreMerge,
                         ::testing::ValuesIn(kWindows),
                         [](const auto& info) {
                           return window_name(info.param);
                         });

// ---------------------------------------------------------------------------
// fsck

// A store with two objects written back, unmounted: "plain" (8 KiB, one
// omap key) and "omapobj" (4 KiB, one omap key).
static void write_plain_and_omapobj(ObjectStore* s)
{
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s, CID, &ch));
  Transaction t;
  t.write(CID, obj("plain"), 0, 8192, pattern(8192, 1));
  t.write(CID, obj("omapobj"), 0, 4096, pattern(4096, 2));
  std::map<std::string, bufferlist> kv;
  kv["k"].append("v");
  t.omap_setkeys(CID, obj("omapobj"), kv);
  t.omap_setkeys(CID, obj("plain"), kv);
  ASSERT_EQ(0, apply(s, ch, std::move(t)));
  ch.reset();
  ASSERT_EQ(0, write_back_and_umount(s));
}

// Damage behind the store's back, as fsck classes it: a stray file in the
// collection directory (stray != nullptr), the file of "omapobj" removed
// while its omap stays in RocksDB (orphan).
static void damage(const StoreDir& d, const char* stray, bool orphan)
{
  namespace fs = std::filesystem;
  const fs::path cdir = fs::path(d.data) / "objects" / CID.to_str();
  ASSERT_TRUE(fs::is_directory(cdir)) << cdir;
  if (stray) {
    std::ofstream(cdir / "not-an-object-name") << stray;
  }
  if (!orphan) {
    return;
  }
  int removed = 0;
  for (auto& e : fs::directory_iterator(cdir)) {
    if (e.path().filename().string().find("omapobj") != std::string::npos) {
      fs::remove(e.path());
      ++removed;
    }
  }
  ASSERT_EQ(1, removed);
}

// fsck is clean on a healthy store (shallow and deep), and counts what was
// damaged behind the store's back: a stray file in a collection directory,
// an object file removed while its omap stays in RocksDB.
TEST(MIMStoreFsck, FindsStrayFilesAndOrphanOmap)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ASSERT_NO_FATAL_FAILURE(write_plain_and_omapobj(s.get()));
  EXPECT_EQ(0, s->fsck(false));
  EXPECT_EQ(0, s->fsck(true));
  ASSERT_NO_FATAL_FAILURE(damage(d, "stray", false));
  EXPECT_EQ(1, s->fsck(false));
  ASSERT_NO_FATAL_FAILURE(damage(d, nullptr, true));
  EXPECT_EQ(2, s->fsck(false));
}

// repair mends what fsck finds that the store can mend alone: a stray file
// goes to the quarantine directory (kept, not deleted); orphan omap is
// removed, but not by the repair that quarantined a file (the stray may be
// the orphan's object under another name): by the next one. The live
// object stays as it was, and fsck is clean after. Without a mount of its
// own (the OSD stopped), as ceph-objectstore-tool --op repair runs it.
TEST(MIMStoreFsck, RepairQuarantinesStrayFilesAndRemovesOrphanOmap)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ASSERT_NO_FATAL_FAILURE(write_plain_and_omapobj(s.get()));
  EXPECT_EQ(0, s->repair(false));  // nothing to mend
  ASSERT_NO_FATAL_FAILURE(damage(d, "stray", true));
  ASSERT_EQ(2, s->fsck(true));
  EXPECT_EQ(1, s->repair(true));  // quarantined; the orphan kept
  EXPECT_EQ(1, s->fsck(true));
  EXPECT_EQ(0, s->repair(true));  // now the orphan goes
  EXPECT_EQ(0, s->fsck(true));

  namespace fs = std::filesystem;
  const fs::path cdir = fs::path(d.data) / "objects" / CID.to_str();
  EXPECT_FALSE(fs::exists(cdir / "not-an-object-name"));
  const fs::path kept = fs::path(d.data) / "mimstore-quarantine" /
    CID.to_str() / "not-an-object-name";
  ASSERT_TRUE(fs::exists(kept)) << kept;
  std::string content;
  std::ifstream(kept) >> content;
  EXPECT_EQ("stray", content);
  // a second stray file of the same name does not overwrite the first
  ASSERT_NO_FATAL_FAILURE(damage(d, "again", false));
  EXPECT_EQ(0, s->repair(false));
  EXPECT_TRUE(fs::exists(kept.string() + ".1"));

  // the live object and its omap are untouched
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  bufferlist bl;
  EXPECT_EQ(8192, s->read(ch, obj("plain"), 0, 8192, bl));
  EXPECT_TRUE(bl.contents_equal(pattern(8192, 1)));
  std::map<std::string, bufferlist> got;
  bufferlist header;
  EXPECT_EQ(0, s->omap_get(ch, obj("plain"), &header, &got));
  EXPECT_EQ(1u, got.size());
  EXPECT_FALSE(s->exists(ch, obj("omapobj")));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// With fsck on mount, a store with errors refuses to mount (-EIO); repair
// mounts it all the same (its own mount runs no fsck), mends it, and the
// store mounts again.
TEST(MIMStoreFsck, RepairMountsWhereFsckOnMountRefuses)
{
  Conf c = base_conf(true);
  c.set("mimstore_fsck_on_mount", "true");
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ASSERT_NO_FATAL_FAILURE(write_plain_and_omapobj(s.get()));
  ASSERT_NO_FATAL_FAILURE(damage(d, "stray", false));
  EXPECT_EQ(-EIO, s->mount());
  EXPECT_EQ(0, s->repair(false));
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->umount());
}

// ---------------------------------------------------------------------------
// status (MIMStatus.cc)

// statfs counts the omap database's bytes (they grow with an omap write);
// the last fsck's result is kept in the data directory and raises
// MIMSTORE_FSCK_ERRORS at every mount until a clean fsck as deep as the
// one that found the errors; no alert while not mounted.
TEST(MIMStoreStatus, FsckRecordRaisesAnAlertUntilACleanFsck)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  store_statfs_t st;
  osd_alert_list_t alerts;
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  const uint64_t omap0 = st.omap_allocated;
  EXPECT_GT(st.total, 0u);
  EXPECT_TRUE(alerts.empty()) << alerts.begin()->first;  // never an fsck yet
  {
    Transaction t;
    t.write(CID, obj("omapobj"), 0, 4096, pattern(4096, 2));
    std::map<std::string, bufferlist> kv;
    std::mt19937_64 rng(1);  // incompressible: RocksDB may compress
    for (int i = 0; i < 64; ++i) {
      std::string v(65536, '\0');
      for (auto& ch8 : v) {
        ch8 = char(rng());
      }
      kv["k" + std::to_string(i)].append(v);
    }
    t.omap_setkeys(CID, obj("omapobj"), kv);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  // 4 MiB of omap: the estimate is refreshed at a remount (it is cached
  // for MIMStore::OMAP_BYTES_AGE seconds)
  ch.reset();
  ASSERT_EQ(0, write_back_and_umount(s.get()));
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  EXPECT_GE(uint64_t(st.omap_allocated), uint64_t(omap0) + (2u << 20))
    << "omap bytes " << omap0 << " before 4 MiB of omap values";
  EXPECT_LE(st.allocated + st.omap_allocated + st.available, st.total);
  ASSERT_EQ(0, s->umount());

  namespace fs = std::filesystem;
  const fs::path cdir = fs::path(d.data) / "objects" / CID.to_str();
  std::ofstream(cdir / "not-an-object-name") << "stray";
  EXPECT_EQ(1, s->fsck(true));
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  EXPECT_TRUE(alerts.empty()) << "an alert while not mounted";
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  ASSERT_EQ(1u, alerts.count("MIMSTORE_FSCK_ERRORS"));
  EXPECT_NE(std::string::npos, alerts["MIMSTORE_FSCK_ERRORS"].find("deep) found 1 error(s)"))
    << alerts["MIMSTORE_FSCK_ERRORS"];
  ASSERT_EQ(0, s->umount());
  // and at the next mount; a clean shallow fsck does not clear what a
  // deep one found, a clean deep one does
  fs::remove(cdir / "not-an-object-name");
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  EXPECT_EQ(1u, alerts.count("MIMSTORE_FSCK_ERRORS"));
  ASSERT_EQ(0, s->umount());
  EXPECT_EQ(0, s->fsck(true));
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->statfs(&st, &alerts));
  EXPECT_EQ(0u, alerts.count("MIMSTORE_FSCK_ERRORS"));
  ASSERT_EQ(0, s->umount());
}

// ---------------------------------------------------------------------------
// journal

// Write several times the journal's size: the journal wraps and is reused,
// and everything is there after a remount.
TEST(MIMStoreJournal, WrapsAndRemounts)
{
  Conf c = base_conf(true);
  c.set("osd_journal_size", "16");
  c.set("mimstore_journal_max_batch_bytes", "262144");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  const int n = 3 * 16 * 1024 / 64;  // 3 journals of 64 KiB writes
  for (int i = 0; i < n; ++i) {
    Transaction t;
    t.write(CID, obj("w" + std::to_string(i % 8)), (i / 8 % 32) * 65536,
            65536, pattern(65536, char(i)));
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  EXPECT_GT(perf_counter(s.get(), l_mimstore_journal_wrap), 0);
  auto before = dump_state(s.get());
  ch.reset();
  ASSERT_EQ(0, s->umount());
  ASSERT_EQ(0, s->mount());
  EXPECT_EQ("", diff_state(before, dump_state(s.get())));
  ASSERT_EQ(0, s->umount());
}

// With syncs far apart, only journal pressure frees journal space: writes
// must wait for it, never overwrite live entries, and keep going. The first
// checkpoint is held until the writer has waited, so the full path is taken
// however fast the sync is (it once was not: a quick sync freed the space
// first and the counter stayed at 0).
TEST(MIMStoreJournal, ThrottlesWhenFull)
{
  for (bool merge : {true, false}) {
    SCOPED_TRACE(merge ? "merge on" : "merge off");
    Conf c = base_conf(merge);
    c.set("osd_journal_size", "16");
    c.set("mimstore_journal_max_batch_bytes", "262144");
    c.set("mimstore_sync_interval", "100");
    c.set("mimstore_max_flush_interval", "100");
    // The backoff exists to keep clients from reaching a full journal; on
    // a fast machine it can succeed here, and the full path goes untested.
    c.set("mimstore_backoff_max_delay", "0");
    StoreDir d;
    auto s = make_store(d);
    auto* ms = static_cast<MIMStore*>(s.get());
    // Set before the mount: no sync thread runs yet. The wait's limit only
    // keeps a broken store from hanging the test; it fails below then.
    ms->set_debug_hook([&](const char* where) {
      if (std::string(where) != "sync:checkpoint") {
        return;
      }
      auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
      while (perf_counter(s.get(), l_mimstore_journal_full_waits) <= 0 &&
             std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    // queue without waiting, so the journal really fills up
    InFlight q;
    for (int i = 0; i < 1000; ++i) {
      Transaction t;
      t.write(CID, obj("t" + std::to_string(i % 16)), (i / 16 % 64) * 65536,
              65536, pattern(65536, char(i)));
      ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
    }
    ASSERT_EQ(0, q.wait_all());
    EXPECT_GT(perf_counter(s.get(), l_mimstore_journal_full_waits), 0);
    auto before = dump_state(s.get());
    ch.reset();
    ASSERT_EQ(0, s->umount());
    ms->set_debug_hook(nullptr);
    ASSERT_EQ(0, s->mount());
    EXPECT_EQ("", diff_state(before, dump_state(s.get())));
    ASSERT_EQ(0, s->umount());
  }
}

namespace {

/// mkfs a store and return its journal header bytes' location helpers.
void corrupt_byte(const std::string& path, uint64_t off, uint8_t xor_with)
{
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(off);
  char ch;
  f.read(&ch, 1);
  ch ^= xor_with;
  f.seekp(off);
  f.write(&ch, 1);
}

}  // namespace

TEST(MIMStoreJournal, RefusesJournalOfAnotherStore)
{
  Conf c = base_conf(true);
  StoreDir a, b;
  auto sa = make_store(a);
  ASSERT_EQ(0, sa->mkfs());
  auto sb = make_store(b);
  ASSERT_EQ(0, sb->mkfs());
  // point b at a's journal
  ASSERT_EQ(0, ::rename(a.journal.c_str(), b.journal.c_str()));
  EXPECT_EQ(-EINVAL, sb->mount());
}

TEST(MIMStoreJournal, RefusesMissingJournal)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mkfs());
  ASSERT_EQ(0, ::unlink(d.journal.c_str()));
  EXPECT_EQ(-ENOENT, s->mount());
}

// A journal path that is a symbolic link to nothing (a link to a journal
// device that is missing today) is refused by mkfs and mkjournal, and no
// file is made where it points: that file would take the device's place.
TEST(MIMStoreJournal, RefusesToMakeAJournalThroughADanglingLink)
{
  Conf c = base_conf(true);
  StoreDir d;
  const std::string target = d.root + "/missing-device";
  struct stat st;
  ASSERT_EQ(0, ::symlink(target.c_str(), d.journal.c_str()));
  {
    auto s = make_store(d);
    EXPECT_EQ(-ENOENT, s->mkfs());
    EXPECT_NE(0, ::stat(target.c_str(), &st)) << "a file was made at "
                                              << target;
  }
  // mkjournal of a store whose journal device has gone missing since mkfs
  StoreDir e;
  const std::string gone = e.root + "/missing-device";
  {
    auto s = make_store(e);
    ASSERT_EQ(0, s->mkfs());
  }
  ASSERT_EQ(0, ::unlink(e.journal.c_str()));
  ASSERT_EQ(0, ::symlink(gone.c_str(), e.journal.c_str()));
  auto s = make_store(e);
  EXPECT_EQ(-ENOENT, s->mkjournal());
  EXPECT_NE(0, ::stat(gone.c_str(), &st)) << "a file was made at " << gone;
  EXPECT_EQ(-ENOENT, s->mount());
}

// A missing journal under /dev is a device that is not there (a typo, a
// device not yet present): mkfs refuses instead of making a journal file
// in devtmpfs, in memory.
TEST(MIMStoreJournal, RefusesToMakeAJournalFileUnderDev)
{
  Conf c = base_conf(true);
  StoreDir d;
  const std::string path =
      "/dev/mimstore-test-no-such-device-" + std::to_string(::getpid());
  auto s = ObjectStore::create(g_ceph_context, "mimstore", d.data, path);
  ASSERT_TRUE(s);
  int r = s->mkfs();
  struct stat st;
  const bool made = ::stat(path.c_str(), &st) == 0;
  if (made) {
    ::unlink(path.c_str());  // the store's, before the fix: not left in /dev
  }
  EXPECT_EQ(-ENOENT, r);
  EXPECT_FALSE(made) << "a journal file was made at " << path;
}

TEST(MIMStoreJournal, RefusesTooSmallJournal)
{
  Conf c = base_conf(true);
  c.set("osd_journal_size", "4");
  StoreDir d;
  auto s = make_store(d);
  EXPECT_EQ(-ENOSPC, s->mkfs());
}

// A journal file is made with its blocks reserved: on a filesystem without
// the room mkfs refuses, rather than the store stopping on a journal write
// once the disk fills. (The fault seam's first size operation on the
// journal file, before its ftruncate, is the reservation.)
TEST(MIMStoreJournal, RefusesJournalFileWithoutRoom)
{
  Conf c = base_conf(true);
  c.set("mimstore_debug_fault", "fail=trunc:journal:enospc@1");
  StoreDir d;
  auto s = make_store(d);
  EXPECT_EQ(-ENOSPC, s->mkfs());
}

// The writer's index of live batches addresses the journal in 512-byte
// units with 32 bits: a journal over 2 TiB is refused, at mkfs and at
// mount, instead of failing a check on the first write past that offset.
TEST(MIMStoreJournal, RefusesJournalLargerThanTheIndexAddresses)
{
  Conf c = base_conf(true);
  StoreDir d;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  // sparse: no disk space is used
  ASSERT_EQ(0, ::truncate(d.journal.c_str(), (off_t(2) << 40) + (1 << 20)));
  {
    auto s = make_store(d);
    EXPECT_EQ(-EFBIG, s->mount());
  }
  // a journal of exactly the largest size is accepted
  ASSERT_EQ(0, ::truncate(d.journal.c_str(),
                          off_t(mim::BatchIndex::MAX_AREA_BYTES)));
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mount());
    ASSERT_EQ(0, s->umount());
  }
  StoreDir e;
  c.set("osd_journal_size", "2097153");  // MiB: 2 TiB + 1 MiB
  auto s = make_store(e);
  EXPECT_EQ(-EFBIG, s->mkfs());
}

// mkfs over another store's data directory (osd_objectstore changed, --mkfs
// run again) is refused and leaves it as it was: writing our type over its
// own would put an empty mimstore in front of that store's data.
TEST(MIMStoreJournal, MkfsLeavesAnotherStoresDataDirectory)
{
  Conf c = base_conf(true);
  StoreDir d;
  {
    std::ofstream f(d.data + "/type");
    f << "bluestore\n";
  }
  {
    std::ofstream f(d.data + "/fsid");
    f << "6c3a1fd2-4b0e-4f5a-9a7e-2d1b8f0c5e11\n";
  }
  auto s = make_store(d);
  EXPECT_EQ(-EEXIST, s->mkfs());
  std::string type;
  ASSERT_EQ(0, s->read_meta("type", &type));
  EXPECT_EQ("bluestore", type);
  struct stat st;
  EXPECT_NE(0, ::stat(d.journal.c_str(), &st)) << "a journal was made";
  EXPECT_NE(0, ::stat((d.data + "/objects").c_str(), &st));
  // this store's own directory still mkfs'es again (already made: a no-op)
  StoreDir e;
  auto m = make_store(e);
  ASSERT_EQ(0, m->mkfs());
  EXPECT_EQ(0, m->mkfs());
}

// A data directory of a newer format is refused, not half understood; one
// made before mimstore_format existed mounts as format 1 (on Reef; on a
// Ceph without DBObjectMap it is refused).
TEST(MIMStoreJournal, RefusesNewerStoreFormat)
{
  Conf c = base_conf(true);
  StoreDir d;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
    std::string v;
    ASSERT_EQ(0, s->read_meta("mimstore_format", &v));
    EXPECT_EQ(stringify(MIMStore::FORMAT), v);
    ASSERT_EQ(0, s->write_meta("mimstore_format",
                               stringify(MIMStore::FORMAT + 1)));
    EXPECT_EQ(-EINVAL, s->mount());
    ASSERT_EQ(0, s->write_meta("mimstore_format", "2x"));
    EXPECT_EQ(-EINVAL, s->mount());
  }
  ASSERT_EQ(0, ::unlink((d.data + "/mimstore_format").c_str()));
  auto s = make_store(d);
#if __has_include("os/DBObjectMap.h")
  ASSERT_EQ(0, s->mount());  // (its omap converted: ConvertsDBObjectMapOmap)
  ASSERT_EQ(0, s->umount());
#else
  // A format 1 store's omap is DBObjectMap's, which this Ceph has not:
  // refused, with the way out in the log (OmapMigrate.cc).
  EXPECT_EQ(-EOPNOTSUPP, s->mount());
#endif
}

#if __has_include("os/DBObjectMap.h")
// A store of format 2 keeps omap and xattrs in DBObjectMap; mount converts
// them to OmapStore, stamps too, after dropping what an earlier conversion
// that stopped had written, and deletes DBObjectMap's keys.
TEST(MIMStoreFormat, ConvertsDBObjectMapOmap)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto oa = obj("a", 1), ob = obj("b", 2), oc = obj("c", 3);
  StoreState before;
  std::string dbdir;
  {
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    Transaction t;
    bufferlist data, v, h;
    data.append("data");
    v.append("value");
    h.append("header");
    std::map<std::string, bufferlist> kv{{"k1", v}, {"k2", v}};
    for (auto& o : {oa, ob, oc}) {
      t.write(CID, o, 0, data.length(), data);
    }
    t.omap_setkeys(CID, oa, kv);
    t.omap_setheader(CID, oa, h);
    t.setattr(CID, oa, "_", v);
    t.setattr(CID, ob, "snapset", v);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    before = dump_state(s.get());
    ASSERT_EQ(0, s->read_meta("mimstore_db_dir", &dbdir));
    ASSERT_EQ(0, write_back_and_umount(s.get()));
  }
  const SequencerPosition stamp(100, 0, 0);
  {
    // What a format 2 store holds: the same objects in DBObjectMap, with
    // a's header stamped by a guard; and a record of our layer for c, as a
    // conversion stopped half way leaves.
    KeyValueDB* kv = KeyValueDB::create(g_ceph_context, "rocksdb", dbdir);
    ASSERT_TRUE(kv);
    mimstore::OmapStore::register_merge_operators(kv);
    std::stringstream err;
    ASSERT_EQ(0, kv->open(err)) << err.str();
    mimstore::OmapStore fresh(g_ceph_context, kv);
    ASSERT_EQ(0, fresh.init());
    ASSERT_EQ(0, fresh.remove_all());
    DBObjectMap old(g_ceph_context, kv);  // closes kv when it goes
    ASSERT_EQ(0, old.init(false));
    for (auto& [o, st] : before[CID]) {
      std::map<std::string, bufferlist> keys, attrs;
      for (auto& [k, val] : st.omap) {
        keys[k].append(val);
      }
      for (auto& [k, val] : st.attrs) {
        attrs[k].append(val);
      }
      if (!keys.empty()) {
        ASSERT_EQ(0, old.set_keys(o, keys, nullptr));
      }
      if (!st.omap_header.empty()) {
        bufferlist hb;
        hb.append(st.omap_header);
        ASSERT_EQ(0, old.set_header(o, hb, nullptr));
      }
      if (!attrs.empty()) {
        ASSERT_EQ(0, old.set_xattrs(o, attrs, nullptr));
      }
    }
    ASSERT_EQ(0, old.sync(&oa, &stamp));
    bufferlist z;
    z.append("stale");
    ASSERT_EQ(0, fresh.set_keys(oc, {{"stale", z}}, nullptr));
    ASSERT_EQ(0, fresh.sync());
  }
  auto s = make_store(d);
  ASSERT_EQ(0, s->write_meta("mimstore_format", "2"));
  ASSERT_EQ(0, s->mount());
  EXPECT_EQ("", diff_state(before, dump_state(s.get())));
  std::string v;
  ASSERT_EQ(0, s->read_meta("mimstore_format", &v));
  EXPECT_EQ(stringify(MIMStore::FORMAT), v);
  ASSERT_EQ(0, s->umount());
  {
    std::unique_ptr<KeyValueDB> kv(
      KeyValueDB::create(g_ceph_context, "rocksdb", dbdir));
    mimstore::OmapStore::register_merge_operators(kv.get());
    std::stringstream err;
    ASSERT_EQ(0, kv->open(err)) << err.str();
    mimstore::OmapStore now(g_ceph_context, kv.get());
    ASSERT_EQ(0, now.init());
    SequencerPosition got;
    ASSERT_EQ(0, now.get_stamp(oa, &got));
    EXPECT_EQ(stamp, got);
    auto it = kv->get_wholespace_iterator();
    int legacy = 0;
    for (it->seek_to_first(); it->valid(); it->next()) {
      legacy += it->raw_key().first[0] == '_';
    }
    EXPECT_EQ(0, legacy) << "DBObjectMap keys left";
    std::ostringstream ss;
    EXPECT_EQ(0, now.check(ss, false)) << ss.str();
  }
}
#endif

TEST(MIMStoreJournal, RefusesJournalInUse)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mkfs());
  ASSERT_EQ(0, s->mount());
  auto s2 = make_store(d);
  EXPECT_NE(0, s2->mount());
  ASSERT_EQ(0, s->umount());
}

// Two data directories naming one journal file (a copied OSD directory, a
// wrong osd_journal): the second mount is refused by the journal's own lock,
// not by the data directory's, while the first store runs.
TEST(MIMStoreJournal, RefusesJournalFileLockedByAnotherStore)
{
  Conf c = base_conf(true);
  StoreDir d, copy;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  std::filesystem::copy(d.data, copy.data,
                        std::filesystem::copy_options::recursive |
                        std::filesystem::copy_options::overwrite_existing);
  {
    // the copy's own database, as a copied OSD directory would have
    auto s2 = ObjectStore::create(g_ceph_context, "mimstore", copy.data,
                                  d.journal);
    ASSERT_EQ(0, s2->write_meta("mimstore_db_dir", copy.data + "/db"));
  }
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto s2 = ObjectStore::create(g_ceph_context, "mimstore", copy.data,
                                d.journal);
  EXPECT_EQ(-EBUSY, s2->mount());
  ASSERT_EQ(0, s->umount());
  // free again once the first store is stopped
  ASSERT_EQ(0, s2->mount());
  ASSERT_EQ(0, s2->umount());
}

TEST(MIMStoreJournal, RefusesUnknownVersionAndGarbage)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mkfs());
  // both header slots: flip a bit of the version field (offset 8): the crc
  // no longer matches, so it is refused as damaged, not as another version
  corrupt_byte(d.journal, 8, 0x40);
  corrupt_byte(d.journal, 4096 + 8, 0x40);
  EXPECT_LT(s->mount(), 0);
}

namespace {

/// In a forked child: mount the store at `d`, create CID, run `body`, then
/// exit without umount (as kill -9 leaves a store, everything `body`
/// applied committed). The child's exit status (0: body ran), or 100.
int in_child_with_cid(
  const StoreDir& d,
  const std::function<void(ObjectStore*, ObjectStore::CollectionHandle&)>&
    body)
{
  int status = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    auto ch = s->create_new_collection(CID);
    Transaction t0;
    t0.create_collection(CID, 0);
    apply(s.get(), ch, std::move(t0));
    body(s.get(), ch);
    ch->flush();  // applied, not only committed
  });
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

/// In a child: `writes` writes to object "src" (sns 2 .. writes + 1), then
/// an omap key and a clone of it to "copy" (which stamps the clone's sn,
/// the last, on copy's omap header); die without umount. 0, or the
/// child's failure.
int writes_clone_then_die(const StoreDir& d, int writes)
{
  return in_child_with_cid(d, [writes](ObjectStore* s,
                                       ObjectStore::CollectionHandle& ch) {
    for (int i = 0; i < writes; ++i) {
      Transaction t;
      t.write(CID, obj("src"), i * 4096, 4096, pattern(4096, char(i)));
      apply(s, ch, std::move(t));
    }
    Transaction t1;
    t1.omap_setkeys(CID, obj("src"), {{"before", pattern(8, 'b')}});
    t1.clone(CID, obj("src"), obj("copy"));
    apply(s, ch, std::move(t1));
  });
}

/// The journal device lost: both header slots zeroed.
void lose_journal(const StoreDir& d)
{
  std::fstream f(d.journal, std::ios::in | std::ios::out | std::ios::binary);
  std::string zeros(2 * 4096, '\0');
  f.write(zeros.data(), zeros.size());
}

/// Set key "after" on "copy", then check both of its keys are there.
void expect_new_key_lands(ObjectStore* s)
{
  auto ch = s->open_collection(CID);
  ASSERT_TRUE(ch);
  Transaction t;
  t.omap_setkeys(CID, obj("copy"), {{"after", pattern(8, 'a')}});
  ASSERT_EQ(0, apply(s, ch, std::move(t)));
  std::map<std::string, bufferlist> kv;
  bufferlist h;
  ASSERT_EQ(0, s->omap_get(ch, obj("copy"), &h, &kv));
  EXPECT_EQ(1u, kv.count("before"));
  EXPECT_EQ(1u, kv.count("after"))
    << "an omap key set after the new journal was dropped as already "
    << "applied: its sn is not above the clone's";
}

}  // namespace

// A bit flip in an entry that later entries prove was acknowledged must
// make mount refuse, not silently replay up to it. The salvage option
// mounts with what precedes the damage; the entries after it were applied
// before the crash, so new transactions do not take their sns again.
TEST(MIMStoreJournal, RefusesCorruptAcknowledgedEntry)
{
  Conf c = base_conf(false);
  c.set("mimstore_sync_interval", "100");
  StoreDir d;
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  ASSERT_EQ(0, writes_clone_then_die(d, 50));
  // a payload byte of the first write's entry, sn 2 (the area starts at
  // 8 KiB; the first entry, the collection's create, is a batch of one
  // block). Entries 3 .. 52 were applied too: the clone's sn, 52, is on
  // copy's omap header, far above the evidence's committed_up_to.
  corrupt_byte(d.journal, 8192 + 4096 + 100, 0x01);
  auto s = make_store(d);
  EXPECT_EQ(-EIO, s->mount());
  c.set("mimstore_journal_ignore_corruption", "true");
  ASSERT_EQ(0, s->mount());
  ASSERT_NO_FATAL_FAILURE(expect_new_key_lands(s.get()));
  ASSERT_EQ(0, s->umount());
}

// ---------------------------------------------------------------------------
// Journal tools: ceph-osd --mkjournal, --dump-journal and --flush-journal.

namespace {

std::string dump_journal_of(ObjectStore* s, int* r)
{
  std::ostringstream out;
  *r = s->dump_journal(out);
  return out.str();
}

/// The sequence numbers of the entries dump_journal lists, in its order,
/// and the payload length of each.
std::vector<std::pair<uint64_t, uint64_t>> dumped_entries(
  const std::string& dump)
{
  std::vector<std::pair<uint64_t, uint64_t>> out;
  std::istringstream in(dump);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long sn, off, len;
    if (sscanf(line.c_str(), "  sn %llu off %llu len %llu", &sn, &off,
               &len) == 3) {
      out.emplace_back(sn, len);
    }
  }
  return out;
}

bool dump_says_clean(const std::string& dump)
{
  return dump.find(" CLEAN\n") != std::string::npos;
}

}  // namespace

// The journal's block size is chosen when it is made (the option, else the
// device's physical block size) and is the journal's own from then on: a
// journal of 512-byte blocks mounts, replays and remounts under any value
// of the option. Small writes take only the blocks they need.
TEST(MIMStoreJournal, BlockSizeIsTheJournalsOwn)
{
  // Journal bytes per 4 KiB write, each write committed alone (one entry
  // per batch), after a fresh mkfs with the given option value.
  auto bytes_per_write = [](const std::string& bs, std::string* dump) {
    Conf c = base_conf(true);
    c.set("mimstore_journal_block_size", bs);
    StoreDir d;
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    start_with_collection(s.get(), CID, &ch);
    uint64_t b0 = perf_counter(s.get(), l_mimstore_journal_bytes);
    uint64_t e0 = perf_counter(s.get(), l_mimstore_journal_entries);
    for (int i = 0; i < 64; ++i) {
      Transaction t;
      t.write(CID, obj("b" + std::to_string(i % 4)), (i / 4) * 4096, 4096,
              pattern(4096, char(i)));
      EXPECT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
    uint64_t b = perf_counter(s.get(), l_mimstore_journal_bytes) - b0;
    uint64_t e = perf_counter(s.get(), l_mimstore_journal_entries) - e0;
    ch.reset();
    EXPECT_EQ(0, s->umount());
    int r;
    *dump = dump_journal_of(s.get(), &r);
    EXPECT_EQ(0, r) << *dump;
    EXPECT_EQ(64u, e);
    return e ? b / e : 0;
  };
  std::string dump;
  // 4 KiB blocks: the data and the transaction's metadata take two.
  EXPECT_GE(bytes_per_write("4096", &dump), 8192u);
  EXPECT_NE(std::string::npos, dump.find(" block 4096 ")) << dump;
  // 512-byte blocks: the same write, padded to 512 bytes only.
  EXPECT_LE(bytes_per_write("512", &dump), 4096u + 1024u);
  EXPECT_NE(std::string::npos, dump.find(" block 512 ")) << dump;

  // 0: the journal file's filesystem block size (the physical block size
  // of a file), as the device would report for a partition.
  {
    Conf c = base_conf(true);
    c.set("mimstore_journal_block_size", "0");
    StoreDir d;
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
    struct stat st;
    ASSERT_EQ(0, ::stat(d.journal.c_str(), &st));
    int r;
    dump = dump_journal_of(s.get(), &r);
    ASSERT_EQ(0, r) << dump;
    uint32_t want = std::max<uint32_t>(512, st.st_blksize);
    EXPECT_NE(std::string::npos,
              dump.find(" block " + std::to_string(want) + " "))
      << "want " << want << ": " << dump;
  }

  // Made with 512, then an unclean stop: replay under another value of the
  // option reads the journal at its own block size and loses nothing.
  Conf c = base_conf(true);
  long_intervals(c);
  c.set("mimstore_journal_block_size", "512");
  StoreDir d;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mkfs());
  ASSERT_EQ(99, commit_then_die(d, 0, 100));
  for (const char* other : {"4096", "65536", "0"}) {
    SCOPED_TRACE(std::string("option ") + other);
    c.set("mimstore_journal_block_size", other);
    ASSERT_NO_FATAL_FAILURE(
      mount_expect_committed(s.get(), 99, Replayed::ANY));
    int r;
    dump = dump_journal_of(s.get(), &r);
    ASSERT_EQ(0, r) << dump;
    EXPECT_NE(std::string::npos, dump.find(" block 512 ")) << dump;
  }
  EXPECT_EQ(199, commit_then_die(d, 100, 100));
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 199, Replayed::SOME));
}

/// The journal tools' tests: merging on, long intervals (nothing trims
/// the journal behind the test's back), a store made with mkfs.
class MIMStoreJournalTools : public ::testing::Test {
 protected:
  void SetUp() override
  {
    long_intervals(c);
    s = make_store(d);
    ASSERT_TRUE(s);
    ASSERT_EQ(0, s->mkfs());
  }
  Conf c = base_conf(true);
  StoreDir d;
  std::unique_ptr<ObjectStore> s;
};

// A journal that holds unreplayed transactions is never replaced: mkjournal
// refuses, and the same store object then mounts and replays all of it.
TEST_F(MIMStoreJournalTools, MkjournalRefusesUnreplayedJournal)
{
  ASSERT_EQ(49, commit_then_die(d, 0, 50));
  EXPECT_EQ(-EBUSY, s->mkjournal());
  ASSERT_EQ(0, s->mount());
  EXPECT_GT(perf_counter(s.get(), l_mimstore_replayed), 0);
  ASSERT_NO_FATAL_FAILURE(expect_committed(s.get(), 49));
  // nor while the store is mounted: a mounted journal is not clean
  EXPECT_EQ(-EBUSY, s->mkjournal());
  ASSERT_EQ(0, s->umount());
}

// After a clean stop, mkjournal makes a new journal (a new generation) that
// continues the sequence numbers: replay guards compare them with those
// already applied, so entries of the new journal must not look old.
TEST_F(MIMStoreJournalTools, MkjournalAfterCleanStopContinuesSequence)
{
  ASSERT_EQ(99, commit_then_die(d, 0, 100));
  ASSERT_EQ(0, s->flush_journal());
  int r;
  std::string before = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << before;
  ASSERT_TRUE(dump_says_clean(before)) << before;

  ASSERT_EQ(0, s->mkjournal());
  std::string after = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << after;
  EXPECT_TRUE(dump_says_clean(after)) << after;
  auto generation = [](const std::string& dump) {
    auto at = dump.find(" generation ");
    return at == std::string::npos ? "" : dump.substr(at, 30);
  };
  EXPECT_NE(generation(before), generation(after)) << before << after;

  // the new journal's entries replay over objects written before it
  ASSERT_EQ(199, commit_then_die(d, 100, 100));
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 199, Replayed::SOME));
}

// A lost journal (here: its headers zeroed) makes mount refuse; mkjournal
// replaces it, and what the clean stop wrote to the object files is there.
TEST_F(MIMStoreJournalTools, MkjournalReplacesLostJournal)
{
  ASSERT_EQ(29, commit_then_die(d, 0, 30));
  ASSERT_EQ(0, s->flush_journal());
  lose_journal(d);
  EXPECT_LT(s->mount(), 0);
  ASSERT_EQ(0, s->mkjournal());
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 29, Replayed::ANY));
}

// mkjournal replaces no journal that has a header it cannot open: here
// another store's, holding acknowledged writes, under this store's
// osd_journal (a wrong path). It refuses, and that store has every write.
TEST_F(MIMStoreJournalTools, MkjournalLeavesAnotherStoresJournal)
{
  StoreDir other;
  auto so = make_store(other);
  ASSERT_EQ(0, so->mkfs());
  ASSERT_EQ(29, commit_then_die(other, 0, 30));
  ASSERT_EQ(0, ::rename(other.journal.c_str(), d.journal.c_str()));
  EXPECT_EQ(-EEXIST, s->mkjournal());
  ASSERT_EQ(0, ::rename(d.journal.c_str(), other.journal.c_str()));
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(so.get(), 29, Replayed::SOME));
}

// This store's clean journal is replaced even when open() refuses it for
// an option: here a raised mimstore_journal_max_batch_bytes (ten batches
// of 8 MiB) that the 64 MiB journal no longer fits. Nothing is in it.
TEST_F(MIMStoreJournalTools, MkjournalReplacesOwnCleanJournalAnOptionRefuses)
{
  ASSERT_EQ(29, commit_then_die(d, 0, 30));
  ASSERT_EQ(0, s->flush_journal());
  c.set("mimstore_journal_max_batch_bytes", "8388608");
  EXPECT_LT(s->mount(), 0);
  c.set("osd_journal_size", "128");
  ASSERT_EQ(0, s->mkjournal());
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 29, Replayed::ANY));
}

// Nor one whose header fails its crc in both slots (bit rot, a stray
// write) while acknowledged writes sit behind it: mount and mkjournal
// refuse; the header repaired, every write is there. (Zeroed, the contents
// given up, it is replaced: MkjournalReplacesLostJournal.)
TEST_F(MIMStoreJournalTools, MkjournalLeavesDamagedHeader)
{
  ASSERT_EQ(29, commit_then_die(d, 0, 30));
  int r;
  std::string dump = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << dump;
  auto at = dump.find(" block ");
  ASSERT_NE(std::string::npos, at) << dump;
  const uint64_t bs = std::stoul(dump.substr(at + 7));
  // byte 20 is in the fsid, under the crc; slot B may still be zeros
  auto flip_both_slots = [&] {
    corrupt_byte(d.journal, 20, 0x10);
    corrupt_byte(d.journal, bs + 20, 0x10);
  };
  flip_both_slots();
  EXPECT_LT(s->mount(), 0);
  EXPECT_EQ(-EEXIST, s->mkjournal());
  flip_both_slots();
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 29, Replayed::SOME));
}

// A journal lost after a crash: the objects and the DB carry sns applied
// since the last clean stop, which mimstore_next_sn (written by umount)
// does not know. The new journal starts above them (the sn fence), or a
// new op whose sn is not above a stamp is skipped as done: here an omap
// key set on a clone.
TEST_F(MIMStoreJournalTools, MkjournalAfterCrashStartsAboveAppliedSns)
{
  ASSERT_EQ(0, writes_clone_then_die(d, 20));
  lose_journal(d);
  EXPECT_LT(s->mount(), 0);
  // (the journal held the last writes: a new one only with the loss
  // accepted, MkjournalRefusesAMissingJournalThatWasNotEmpty)
  c.set("mimstore_journal_lost", "true");
  ASSERT_EQ(0, s->mkjournal());
  c.set("mimstore_journal_lost", "false");
  ASSERT_EQ(0, s->mount());
  ASSERT_NO_FATAL_FAILURE(expect_new_key_lands(s.get()));
  ASSERT_EQ(0, s->umount());
  ASSERT_EQ(0, s->mount());
  ASSERT_NO_FATAL_FAILURE(expect_new_key_lands(s.get()));
  ASSERT_EQ(0, s->umount());
}

// Issue 61 item 6: a journal gone (here: its headers zeroed, as a new
// device) after a stop that kept the merge window in it, or after a crash.
// mkjournal made a new journal, and the window's writes were gone (on an
// OSD: its own maps among them, so it aborted at start). The data
// directory records whether the last journal was left empty; mkjournal
// refuses one that was not, unless mimstore_journal_lost accepts the loss.
TEST_F(MIMStoreJournalTools, MkjournalRefusesAMissingJournalThatWasNotEmpty)
{
  ASSERT_EQ(29, commit_then_die(d, 0, 30));  // a crash
  ASSERT_EQ(0, s->mount());
  ASSERT_NO_FATAL_FAILURE(expect_committed(s.get(), 29));
  ASSERT_EQ(0, s->umount());  // merging on: keeps the window
  int r;
  std::string dump = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << dump;
  ASSERT_FALSE(dumped_entries(dump).empty()) << "no window kept: " << dump;
  lose_journal(d);
  EXPECT_EQ(-EBUSY, s->mkjournal());
  EXPECT_LT(s->mount(), 0) << "the lost journal is not made again";
  c.set("mimstore_journal_lost", "true");
  ASSERT_EQ(0, s->mkjournal());
  c.set("mimstore_journal_lost", "false");
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->umount());
}

// Issue 61 item 7: flush_journal() on a mounted store (Ceph calls it at
// every clean OSD shutdown, osd_journal_flush_on_shutdown, and for `ceph
// daemon osd.N flush_journal`) called mount() again under the running
// threads. Now it writes the window back; the store keeps serving, and
// the umount that follows leaves the journal empty, so a lost journal
// after it needs no mimstore_journal_lost. (ceph-osd --flush-journal runs
// mount, flush_journal, umount: patch 0012, qa/crash/flush-journal.sh.)
TEST_F(MIMStoreJournalTools, FlushJournalOnAMountedStoreLeavesItEmpty)
{
  // commit_then_die's writes first..last, here on the mounted store
  auto writes = [&](int first, int last) {
    auto ch = s->open_collection(CID);
    for (int i = first; i <= last; ++i) {
      Transaction t;
      t.write(CID, obj("o" + std::to_string(i % 10)), (i / 10) * 4096, 4096,
              pattern(4096, char(i)));
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
  };
  ASSERT_EQ(49, commit_then_die(d, 0, 50));
  ASSERT_EQ(0, s->mount());
  ASSERT_NO_FATAL_FAILURE(writes(50, 59));  // cached
  ASSERT_EQ(0, s->flush_journal());
  EXPECT_EQ(0, s->flush_journal()) << "a second one is harmless";
  ASSERT_NO_FATAL_FAILURE(writes(60, 69));
  ASSERT_NO_FATAL_FAILURE(expect_committed(s.get(), 69));
  ASSERT_EQ(0, s->umount());
  int r;
  std::string dump = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << dump;
  EXPECT_TRUE(dump_says_clean(dump)) << dump;
  EXPECT_TRUE(dumped_entries(dump).empty()) << dump;
  lose_journal(d);
  ASSERT_EQ(0, s->mkjournal());
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 69, Replayed::ANY));
}

// A damaged sn fence (mimstore_sn_fence not a number) is refused by mount
// and mkjournal, not read as 0 or as its digits: either could start new
// sns below ones objects carry. Once it holds a number again, all is there.
TEST_F(MIMStoreJournalTools, DamagedSnFenceIsRefused)
{
  ASSERT_EQ(29, commit_then_die(d, 0, 30));
  {
    // one transaction surely applied (umount waits): the fence is written
    ASSERT_EQ(0, s->mount());
    auto ch = s->open_collection(CID);
    ASSERT_TRUE(ch);
    Transaction t;
    t.touch(CID, obj("fenced"));
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    ch.reset();
    ASSERT_EQ(0, s->umount());
  }
  const std::string fence_file = d.data + "/mimstore_sn_fence";
  std::string fence;
  {
    std::ifstream in(fence_file);
    ASSERT_TRUE(std::getline(in, fence)) << fence_file;
  }
  ASSERT_FALSE(fence.empty());
  auto put_fence = [&](const std::string& v) {
    std::ofstream out(fence_file, std::ios::trunc);
    out << v << "\n";
  };
  for (const char* bad : {"12x", "", "-1", "99999999999999999999999"}) {
    SCOPED_TRACE(std::string("fence '") + bad + "'");
    put_fence(bad);
    EXPECT_EQ(-EINVAL, s->mount());
  }
  put_fence(fence);
  ASSERT_EQ(0, s->flush_journal());  // replayed: mkjournal needs it clean
  lose_journal(d);
  put_fence("12x");
  EXPECT_EQ(-EINVAL, s->mkjournal());
  put_fence(fence);
  ASSERT_EQ(0, s->mkjournal());
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 29, Replayed::ANY));
}

// dump_journal lists every unreplayed entry, in sequence order, each holding
// its write; after a replay the journal is clean and lists none.
TEST_F(MIMStoreJournalTools, DumpJournalListsUnreplayedEntries)
{
  ASSERT_EQ(19, commit_then_die(d, 0, 20));
  int r;
  std::string dump = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << dump;
  EXPECT_FALSE(dump_says_clean(dump)) << dump;
  auto entries = dumped_entries(dump);
  // the collection's creation and 20 writes, one transaction per entry
  // (each was waited for before the next), unless a sync trimmed the first
  ASSERT_GE(entries.size(), 20u) << dump;
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i - 1].first + 1, entries[i].first) << dump;
  }
  for (size_t i = entries.size() - 20; i < entries.size(); ++i) {
    EXPECT_GE(entries[i].second, 4096u) << dump;
  }
  EXPECT_NE(std::string::npos, dump.find("  end: ")) << dump;

  // ceph-osd --flush-journal: replayed, written back, a clean journal
  ASSERT_EQ(0, s->flush_journal());
  dump = dump_journal_of(s.get(), &r);
  ASSERT_EQ(0, r) << dump;
  EXPECT_TRUE(dump_says_clean(dump)) << dump;
  EXPECT_EQ(0u, dumped_entries(dump).size()) << dump;
}

// Merging on (either window), umount leaves the merge window in the
// journal and the next mount indexes it again (its writes merged, not
// written through): across two such stops the data reads back.
// write_back_all then leaves a clean journal that replays nothing.
// Merging off, every umount is clean.
TEST_P(MIMStoreMerge, UmountKeepsTheWindowForTheNextMount)
{
  Conf c = window_conf(GetParam());
  long_intervals(c);
  const bool merge = GetParam() != Window::Off;
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::map<std::string, std::string> want;
  auto write_round = [&](int round) {
    for (int i = 0; i < 48; ++i) {
      const std::string name = "o" + std::to_string(i % 6);
      const uint64_t off = ((i * 5 + round) % 8) * 4096;
      bufferlist bl = pattern(4096, char(round * 50 + i));
      std::string& w = want[name];
      if (w.size() < off + 4096) {
        w.resize(off + 4096, '\0');
      }
      memcpy(w.data() + off, bl.c_str(), 4096);
      Transaction t;
      t.write(CID, obj(name), off, 4096, bl);
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
  };
  auto remount_and_check = [&](bool write_back, bool expect_replay) {
    ch.reset();
    ASSERT_EQ(0, write_back ? write_back_and_umount(s.get()) : s->umount());
    int r;
    std::string dump = dump_journal_of(s.get(), &r);
    ASSERT_EQ(0, r) << dump;
    EXPECT_EQ(!expect_replay, dump_says_clean(dump)) << dump;
    CounterMark m(s.get(), {l_mimstore_replayed, l_mimstore_merged});
    ASSERT_EQ(0, s->mount());
    EXPECT_EQ(expect_replay, m.since(l_mimstore_replayed) > 0);
    // replayed writes go back into the cache, not to their files
    EXPECT_EQ(expect_replay, m.since(l_mimstore_merged) > 0);
    ch = s->open_collection(CID);
    ASSERT_TRUE(ch);
    for (const auto& [name, w] : want) {
      ASSERT_EQ("", first_diff(w, read_all(s.get(), ch, obj(name))))
        << name;
    }
  };
  ASSERT_NO_FATAL_FAILURE(write_round(0));
  ASSERT_NO_FATAL_FAILURE(remount_and_check(false, merge));
  ASSERT_NO_FATAL_FAILURE(write_round(1));
  ASSERT_NO_FATAL_FAILURE(remount_and_check(false, merge));
  ASSERT_NO_FATAL_FAILURE(remount_and_check(true, false));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// An umount in the middle of a sweep: the sweep stops at the next object,
// and what it had not written back stays in the journal for the next mount
// to index again; what it had written back is not indexed again.
TEST(MIMStoreMergeStop, UmountInTheMiddleOfASweepKeepsTheRest)
{
  for (bool in_journal : {false, true}) {
    SCOPED_TRACE(in_journal ? "data in the journal" : "data in memory");
    Conf c = base_conf(true);
    long_intervals(c);
    c.set("mimstore_merge_data_in_journal", in_journal ? "true" : "false");
    StoreDir d;
    auto s = make_store(d);
    auto* ms = static_cast<MIMStore*>(s.get());
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    std::map<std::string, std::string> want;
    for (int i = 0; i < 48; ++i) {
      const std::string name = "o" + std::to_string(i % 12);
      const uint64_t off = (i / 12) * 8192;
      bufferlist bl = pattern(4096, char(i));
      std::string& w = want[name];
      w.resize(std::max<size_t>(w.size(), off + 4096), '\0');
      memcpy(w.data() + off, bl.c_str(), 4096);
      Transaction t;
      t.write(CID, obj(name), off, 4096, bl);
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
    // The sweep holds after its third object until umount has begun.
    std::promise<void> reached;
    std::atomic<int> swept{0};
    ms->set_debug_hook([&](const char* where) {
      if (std::string(where) != "flush:object" || ++swept != 3) {
        return;
      }
      reached.set_value();
      while (!ms->debug_stopping()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    auto sweep = std::async(std::launch::async,
                            [&] { return ms->write_back_all(); });
    reached.get_future().wait();
    ch.reset();
    ASSERT_EQ(0, s->umount());
    EXPECT_EQ(0, sweep.get());
    ms->set_debug_hook(nullptr);
    EXPECT_EQ(3, swept.load()) << "the sweep went on after the stop";
    int r;
    std::string dump = dump_journal_of(s.get(), &r);
    ASSERT_EQ(0, r) << dump;
    EXPECT_FALSE(dump_says_clean(dump)) << dump;

    // The next mount indexes again the 36 writes of the nine objects not
    // written back, and only those: the stop's last sync recorded the
    // three written back (WrittenBack.h), and replay skips their writes
    // above the checkpoint (9 or 12, as their order put the checkpoint).
    // They come back as a frozen generation of their own, which the flush
    // thread sweeps at once: held after its first object, the cache has
    // nothing in the active generation.
    std::promise<void> swept_one, go_on;
    std::shared_future<void> gone_on = go_on.get_future().share();
    std::atomic<bool> held{false};
    ms->set_debug_hook([&](const char* where) {
      if (std::string(where) == "flush:object" && !held.exchange(true)) {
        swept_one.set_value();
        gone_on.wait();
      }
    });
    CounterMark m(s.get(), {l_mimstore_merged,
                            l_mimstore_replay_written_back});
    ASSERT_EQ(0, s->mount());
    EXPECT_EQ(36, m.since(l_mimstore_merged));
    EXPECT_GE(m.since(l_mimstore_replay_written_back), 9);
    // The bound only turns a hang into a failure: no sweep, no hook call.
    ASSERT_EQ(std::future_status::ready,
              swept_one.get_future().wait_for(std::chrono::seconds(60)))
      << "no sweep started after the mount";
    {
      JSONFormatter f;
      ms->dump_htmll(&f);
      std::ostringstream out;
      f.flush(out);
      std::smatch used;
      const std::string js = out.str();
      ASSERT_TRUE(std::regex_search(js, used,
                                    std::regex("\"blocks_used\": ?(\\d+)")))
        << js;
      EXPECT_EQ("0", used[1].str()) << js;
    }
    go_on.set_value();  // (the hook stays until the threads have stopped)
    ch = s->open_collection(CID);
    ASSERT_TRUE(ch);
    for (const auto& [name, w] : want) {
      ASSERT_EQ("", first_diff(w, read_all(s.get(), ch, obj(name)))) << name;
    }
    // Written back in full this time: a clean journal, the files right.
    ch.reset();
    ASSERT_EQ(0, write_back_and_umount(s.get()));
    ms->set_debug_hook(nullptr);
    dump = dump_journal_of(s.get(), &r);
    ASSERT_EQ(0, r) << dump;
    EXPECT_TRUE(dump_says_clean(dump)) << dump;
    ASSERT_EQ(0, s->mount());
    ch = s->open_collection(CID);
    ASSERT_TRUE(ch);
    for (const auto& [name, w] : want) {
      ASSERT_EQ("", first_diff(w, read_all(s.get(), ch, obj(name)))) << name;
    }
    ch.reset();
    ASSERT_EQ(0, s->umount());
  }
}

// `mimstore flush` (write_back_all) while a sweep runs: its request is
// remembered and queued again when the sweep ends. A writer that then
// found the cache full replaced it with its own trigger, whose freeze does
// not count as the request's: the command never returned, nor did the
// umount behind the admin socket. Built without timing: the request is
// made while the sweep of the generation before it is held after its first
// object, and a transaction queued behind it waits for cache room.
TEST(MIMStoreMergeStop, ExplicitFlushIsNotLostToAWriterWaitingForRoom)
{
  Conf c = base_conf(true);
  c.set("mimstore_merge_data_in_journal", "false");  // bytes in RAM, capped
  c.set("mimstore_block_size", "1M");
  c.set("mimstore_cache_max_bytes", "4M");
  StoreDir d;
  auto s = make_store(d);
  auto* ms = static_cast<MIMStore*>(s.get());
  ObjectStore::CollectionHandle ch;
  std::map<ghobject_t, std::string> want;
  // T1: two objects of 1 MiB, frozen by the time threshold; T2: 3.5 MiB,
  // more than the cap leaves beside the 1 MiB the held sweep still has.
  auto writes = [&](const std::vector<std::pair<std::string, size_t>>& w,
                    char seed) {
    Transaction t;
    for (const auto& [name, len] : w) {
      bufferlist bl = pattern(len, seed++);
      model_write(&want, obj(name), 0, bl);
      t.write(CID, obj(name), 0, len, bl);
    }
    return t;
  };
  std::atomic<bool> armed{false}, hold{false}, queue_t2{false};
  std::promise<void> held, release;
  std::shared_future<void> sweep_held = held.get_future().share();
  std::shared_future<void> released = release.get_future().share();
  InFlight t2;
  int t1_r = -1, t2_r = -1;
  ms->set_debug_hook([&](const char* where) {
    const std::string w(where);
    if (w == "flush:object" && hold.exchange(false)) {
      held.set_value();
      released.wait();
    } else if (w == "write_back_all:want" && armed.exchange(false)) {
      hold = true;
      t1_r = apply(s.get(), ch, writes({{"a", 1 << 20}, {"b", 1 << 20}}, 'a'));
      sweep_held.wait();  // T1's generation is being swept: flush pending
      queue_t2 = true;
    } else if (w == "write_back_all:queued" && queue_t2.exchange(false)) {
      // behind the request in the apply queue
      t2_r = t2.queue(s.get(), ch, writes({{"c", 1 << 20}, {"d", 1 << 20},
                                           {"e", 1 << 20}, {"f", 512 << 10}},
                                          'c'));
    }
  });
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  CounterMark m(s.get(), {l_mimstore_cache_full_waits});
  armed = true;
  auto flush = std::async(std::launch::async,
                          [&] { return ms->write_back_all(); });
  // Until T2 waits for room, having passed its trigger to the held sweep.
  const bool t2_waited = wait_until([&] {
    return m.since(l_mimstore_cache_full_waits) >= 1;
  });
  release.set_value();  // also when it did not: the sweep must not stay held
  ASSERT_TRUE(t2_waited) << "T2 never waited for cache room";
  // The bound only turns a hang into a failure.
  const bool returned =
    flush.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!returned) {
    ms->write_back_all();  // a request of its own lets the lost one return
  }
  EXPECT_TRUE(returned) << "write_back_all's request was lost";
  EXPECT_EQ(0, flush.get());
  EXPECT_EQ(0, t1_r);
  EXPECT_EQ(0, t2_r);
  EXPECT_EQ(0, t2.wait_all());
  for (const auto& [o, w] : want) {
    EXPECT_EQ("", first_diff(w, read_all(s.get(), ch, o))) << o;
  }
  ch.reset();
  ASSERT_EQ(0, s->umount());
  ms->set_debug_hook(nullptr);
  ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
}

// flush_journal replays an unclean journal into the object files and
// leaves it clean: the next mount has nothing to replay.
TEST_F(MIMStoreJournalTools, FlushJournalReplaysAndLeavesItClean)
{
  ASSERT_EQ(59, commit_then_die(d, 0, 60));
  {
    // a store object of its own, as `ceph-osd --flush-journal` is
    auto tool = make_store(d);
    ASSERT_EQ(0, tool->flush_journal());
    EXPECT_GT(perf_counter(tool.get(), l_mimstore_replayed), 0);
    int r;
    std::string dump = dump_journal_of(tool.get(), &r);
    ASSERT_EQ(0, r) << dump;
    EXPECT_TRUE(dump_says_clean(dump)) << dump;
  }
  s = make_store(d);  // a fresh replay counter
  ASSERT_NO_FATAL_FAILURE(
    mount_expect_committed(s.get(), 59, Replayed::NONE));
}

// ---------------------------------------------------------------------------
// merging

// The same fixed random 4 KiB write workload: with merging, the data files
// see far fewer write calls (and the flushes are sorted and coalesced).
TEST(MIMStoreMergeEffect, FewerWriteIOsWithMerge)
{
  std::map<bool, int64_t> ios;
  for (bool merge : {false, true}) {
    Conf c = base_conf(merge);
    c.set("mimstore_max_flush_interval", "100");
    StoreDir d;
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    std::mt19937 rng(99);
    InFlight q;
    for (int i = 0; i < 4000; ++i) {
      Transaction t;
      // 8 objects of 4 MiB, 4 KiB random offsets: many land next to or on
      // top of each other within a flush interval
      t.write(CID, obj("rbd_data." + std::to_string(rng() % 8)),
              (rng() % 256) * 4096, 4096, pattern(4096, char(i)));
      ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
    }
    ASSERT_EQ(0, q.wait_all());
    ch.reset();
    ASSERT_EQ(0, write_back_and_umount(s.get()));
    ios[merge] = perf_counter(s.get(), l_mimstore_writeback_ios);
  }
  std::cout << "writeback write calls for 4000 random 4 KiB writes: merge "
            << "off " << ios[false] << ", merge on " << ios[true] << std::endl;
  EXPECT_EQ(4000, ios[false]);
  EXPECT_LT(ios[true] * 4, ios[false]);
}

TEST(MIMStoreMergeEffect, FlushOrdersObjectsByDiskAddress)
{
  // 16 objects written whole and flushed (their files then have disk
  // addresses), then rewritten in part and flushed again at umount: with
  // mimstore_flush_physical_order every object of that flush is placed by
  // its address, without it none is; the data is the same either way.
  for (bool physical : {true, false}) {
    SCOPED_TRACE(physical ? "physical order" : "collection order");
    Conf c = base_conf(true);
    c.set("mimstore_max_flush_interval", "100");
    c.set("mimstore_flush_physical_order", physical ? "true" : "false");
    StoreDir d;
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    std::map<ghobject_t, std::string> want;
    {
      InFlight q;
      for (int i = 0; i < 16; ++i) {
        const ghobject_t o = obj("rbd_data." + std::to_string(i), i);
        Transaction t;
        bufferlist bl = pattern(1 << 20, char(i));
        want[o] = bl.to_str();
        t.write(CID, o, 0, bl.length(), bl);
        ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
      }
      ASSERT_EQ(0, q.wait_all());
    }
    std::optional<CounterMark> m;  // count the second flush only
    ASSERT_NO_FATAL_FAILURE(remount_marking(
      s.get(), &ch, {l_mimstore_flush_objects, l_mimstore_flush_objects_placed},
      &m));
    {
      InFlight q;
      for (int i = 0; i < 16; ++i) {
        const ghobject_t o = obj("rbd_data." + std::to_string(i), i);
        Transaction t;
        bufferlist bl = pattern(4096, char(100 + i));
        want[o].replace(4096 * (i + 1), 4096, bl.to_str());
        t.write(CID, o, 4096 * (i + 1), bl.length(), bl);
        ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
      }
      ASSERT_EQ(0, q.wait_all());
    }
    ch.reset();
    ASSERT_EQ(0, write_back_and_umount(s.get()));
    EXPECT_EQ(16, m->since(l_mimstore_flush_objects));
    // The test directory's filesystem must answer FIEMAP (ext4 and XFS do;
    // tmpfs does not, and then nothing can be placed).
    EXPECT_EQ(physical ? 16 : 0, m->since(l_mimstore_flush_objects_placed));
    ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
  }
}

class MIMStoreJournalData : public ::testing::TestWithParam<bool> {};

TEST_P(MIMStoreJournalData, MergedWritesAreFoundInTheJournal)
{
  // Every merged write records where its bytes sit on the journal device.
  // With mimstore_merge_data_in_journal (param true) the cache keeps only
  // that (and a crc) and reads the bytes back from the journal for reads
  // and write back; without it, the bytes stay in memory and
  // mimstore_debug_verify_journal_data compares them with the journal at
  // merge, at each read of a cached extent and at write back. Either way
  // the store aborts on a difference. Writes of any size and offset,
  // several per transaction with xattrs between them, some made of several
  // buffers, some slices of a larger one; a small cache and journal, so
  // flushes, checkpoints and journal wraps happen while writing.
  const bool in_journal = GetParam();
  Conf c = base_conf(true);
  c.set("mimstore_merge_data_in_journal", in_journal ? "true" : "false");
  c.set("mimstore_debug_verify_journal_data", "true");
  c.set("mimstore_cache_max_bytes", "16M");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::map<ghobject_t, std::string> want;
  std::mt19937 rng(2026);
  bufferptr big = buffer::create(1 << 20);
  for (size_t i = 0; i < big.length(); ++i) {
    big.c_str()[i] = char(i * 7 + i / 1000);
  }
  InFlight q;
  for (int i = 0; i < 9000; ++i) {
    Transaction t;
    const int nw = 1 + rng() % 3;
    for (int k = 0; k < nw; ++k) {
      const ghobject_t o = obj("rbd_data." + std::to_string(rng() % 12));
      const uint64_t len = 1 + rng() % 16384;
      const uint64_t off = rng() % (4 << 20);
      bufferlist bl;
      switch (rng() % 3) {
      case 0:
        bl = pattern(len, char(i + k));
        break;
      case 1: {  // two buffers
        const uint64_t h = len / 2;
        bl.append(pattern(h, char(i)));
        bl.append(pattern(len - h, char(i + 1)));
        break;
      }
      default:  // a slice of a larger buffer (the store copies it)
        bl.append(bufferptr(big, rng() % (big.length() - len), len));
      }
      model_write(&want, o, off, bl);
      t.write(CID, o, off, len, bl);
      if (rng() % 4 == 0) {
        bufferlist a = pattern(1 + rng() % 200, 'a');
        t.setattr(CID, o, "x" + std::to_string(k), a);
      }
    }
    ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
    if (i % 1000 == 999) {
      // reads of cached extents (each checked against the journal)
      ASSERT_EQ(0, q.wait_all());
      for (auto& [o, w] : want) {
        ASSERT_EQ("", first_diff(w, read_all(s.get(), ch, o))) << o;
      }
    }
  }
  ASSERT_EQ(0, q.wait_all());
  ch.reset();
  ASSERT_EQ(0, write_back_and_umount(s.get()));  // every extent checked
  const int64_t merged = perf_counter(s.get(), l_mimstore_merged);
  std::cout << "merged " << merged << ", located in the journal "
            << perf_counter(s.get(), l_mimstore_merged_in_journal)
            << ", extents checked "
            << perf_counter(s.get(), l_mimstore_journal_data_verified)
            << ", read back " << perf_counter(s.get(), l_mimstore_journal_data_reads)
            << ", journal wraps " << perf_counter(s.get(), l_mimstore_journal_wrap)
            << ", flushes " << perf_counter(s.get(), l_mimstore_flush_space)
            << " space " << perf_counter(s.get(), l_mimstore_flush_time)
            << " time " << perf_counter(s.get(), l_mimstore_flush_memory)
            << " memory" << std::endl;
  EXPECT_GT(merged, 5000);
  EXPECT_EQ(merged, perf_counter(s.get(), l_mimstore_merged_in_journal));
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_direct_not_in_journal));
  EXPECT_GT(perf_counter(s.get(), l_mimstore_journal_wrap), 0);
  if (in_journal) {
    // every write offered to the cache checked once, merged or refused;
    // then every cached read and write back reads the bytes from the
    // journal (crc checked)
    EXPECT_EQ(merged + perf_counter(s.get(), l_mimstore_direct_no_slot) +
                perf_counter(s.get(), l_mimstore_direct_no_block) +
                perf_counter(s.get(), l_mimstore_direct_beyond_block) +
                perf_counter(s.get(), l_mimstore_direct_memory_cap),
              perf_counter(s.get(), l_mimstore_journal_data_verified));
    EXPECT_GT(perf_counter(s.get(), l_mimstore_journal_data_reads), merged);
  } else {
    // at least one check per merge, more for reads and write backs
    EXPECT_GT(perf_counter(s.get(), l_mimstore_journal_data_verified), merged);
    EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_journal_data_reads));
  }
  ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
}

INSTANTIATE_TEST_SUITE_P(DataInMemoryOrJournal, MIMStoreJournalData,
                         ::testing::Values(false, true));

TEST(MIMStoreJournalData, GenerationFreezesAtItsJournalShare)
{
  // With the data in the journal a generation is what it takes of the
  // journal, transactions and padding included: it is frozen once it holds
  // mimstore_generation_journal_share of the journal below
  // mimstore_backoff_high (counted as a space flush), not when its payload
  // reaches the cache cap or the journal is under pressure. 64 MiB journal,
  // share 0.2: about 12.4 MiB; 5000 writes of 4 KiB take about 21 MiB of
  // journal (a little over 4 KiB each), below the journal pressure (32 MiB)
  // and the cache cap (90% of 32 MiB of payload).
  Conf c = base_conf(true);
  long_intervals(c);
  c.set("mimstore_merge_data_in_journal", "true");
  c.set("mimstore_generation_journal_share", "0.2");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::map<ghobject_t, std::string> want;
  ASSERT_NO_FATAL_FAILURE(random_4k_writes(s.get(), ch, 5000, 20, 15, &want));
  EXPECT_GE(perf_counter(s.get(), l_mimstore_flush_space), 1);
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_memory));
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_journal));
  ch.reset();
  ASSERT_EQ(0, s->umount());
  ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
}

TEST(MIMStoreJournalData, GenerationFreezesAtHalfTheIndexBudget)
{
  // The index is held to mimstore_cache_index_max_bytes: a generation is
  // frozen once its index takes half the budget (counted as an index
  // flush), before the journal share, the journal pressure or the cache
  // cap would freeze it. Budget 1 MiB (the least allowed): 12,000 writes
  // of 512 bytes at random offsets (about 45 bytes of index each, 0.5 MiB
  // at about 11,600) take about 48 MiB of the 256 MiB journal.
  Conf c = base_conf(true);
  long_intervals(c);
  c.set("osd_journal_size", "256");
  c.set("mimstore_merge_data_in_journal", "true");
  c.set("mimstore_cache_index_max_bytes", "1M");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::map<ghobject_t, std::string> want;
  ASSERT_NO_FATAL_FAILURE(
    random_writes(s.get(), ch, 12000, 40, 21, 512, &want));
  EXPECT_GE(perf_counter(s.get(), l_mimstore_flush_index), 1);
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_space));
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_memory));
  EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_journal));
  // Both generations within the budget, less than one transaction over.
  EXPECT_LE(perf_counter(s.get(), l_mimstore_htmll_index_bytes),
            (1 << 20) + 4096);
  EXPECT_GT(perf_counter(s.get(), l_mimstore_htmll_index_bytes), 0);
  ch.reset();
  ASSERT_EQ(0, s->umount());
  ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
}

TEST(MIMStoreJournalData, CorruptJournalCopyIsAnErrorNotWrongData)
{
  // A cached write kept only in the journal whose bytes there are damaged
  // (a bad NVMe sector): the read fails with EIO (the OSD then repairs the
  // object from a replica); it never returns other bytes.
  Conf c = base_conf(true);
  long_intervals(c);  // the write stays cached
  c.set("mimstore_merge_data_in_journal", "true");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  const ghobject_t o = obj("rbd_data.corrupt");
  {
    Transaction t;
    t.write(CID, o, 8192, 4096, pattern(4096, 'q'));
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  ASSERT_EQ(1, perf_counter(s.get(), l_mimstore_merged_in_journal));
  // Find the write's bytes in the journal file and flip one.
  const std::string want = pattern(4096, 'q').to_str();
  int fd = ::open(d.journal.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(0, ::fstat(fd, &st));
  std::string all(st.st_size, '\0');
  ASSERT_EQ(ssize_t(all.size()), ::pread(fd, all.data(), all.size(), 0));
  const size_t at = all.find(want);
  ASSERT_NE(std::string::npos, at);
  char x = char(all[at + 100] ^ 0x5a);
  ASSERT_EQ(1, ::pwrite(fd, &x, 1, at + 100));
  ::close(fd);
  bufferlist bl;
  EXPECT_EQ(-EIO, s->read(ch, o, 8192, 4096, bl));
  EXPECT_EQ(-EIO, s->read(ch, o, 8192 + 200, 10, bl));  // a slice, too
  // The object is removed: the damaged copy is never needed, umount is clean.
  {
    Transaction t;
    t.remove(CID, o);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

TEST(MIMStoreMergeEffect, PacedWritebackKeepsData)
{
  // A 1 MiB writeback window is far smaller than a flush (8 objects, runs
  // gap-filled to most of 4 MiB each), so the flush thread keeps waiting
  // for its oldest run; what it wrote must still all be there.
  Conf c = base_conf(true);
  c.set("mimstore_max_flush_interval", "100");
  c.set("mimstore_flush_writeback_window", "1M");
  StoreDir d;
  auto s = make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  std::map<ghobject_t, std::string> want;
  ASSERT_NO_FATAL_FAILURE(random_4k_writes(s.get(), ch, 3000, 8, 7, &want));
  ch.reset();
  ASSERT_EQ(0, write_back_and_umount(s.get()));  // through the window
  EXPECT_GT(perf_counter(s.get(), l_mimstore_flush_window_waits), 0);
  ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
}

TEST(MIMStoreMergeEffect, GapsNotInMemoryAreNotJoined)
{
  // 4 objects written whole and flushed, then 8 writes of 4 KiB 64 KiB
  // apart in each, flushed at umount with gap filling up to 512 KiB. With
  // the object files' bytes in the page cache each object's writes go as
  // one run, the gaps read from memory. With the fault seam's read delay
  // on them (a slow disk: their bytes count as not in memory) the gaps are
  // not read, each write goes alone. The data is the same either way.
  for (bool slow : {false, true}) {
    SCOPED_TRACE(slow ? "gaps on the disk" : "gaps in memory");
    Conf c = base_conf(true);
    c.set("mimstore_max_flush_interval", "100");
    c.set("mimstore_flush_gap_fill", "512K");
    if (slow) {
      // (object file names escape '_' as %5F)
      c.set("mimstore_debug_fault", "delay=read:rbd%5Fdata:1@1+");
    }
    StoreDir d;
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
    std::map<ghobject_t, std::string> want;
    auto write_all = [&](bool whole) {
      InFlight q;
      for (int i = 0; i < 4; ++i) {
        const ghobject_t o = obj("rbd_data." + std::to_string(i), i);
        for (int k = 0; k < (whole ? 1 : 8); ++k) {
          uint64_t off = whole ? 0 : k * (64 << 10);
          bufferlist bl = pattern(whole ? 1 << 20 : 4096, char(16 * i + k));
          model_write(&want, o, off, bl);
          Transaction t;
          t.write(CID, o, off, bl.length(), bl);
          ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
        }
      }
      ASSERT_EQ(0, q.wait_all());
    };
    ASSERT_NO_FATAL_FAILURE(write_all(true));
    std::optional<CounterMark> m;
    ASSERT_NO_FATAL_FAILURE(remount_marking(
      s.get(), &ch,
      {l_mimstore_flush_ios, l_mimstore_flush_gaps_filled,
       l_mimstore_flush_gaps_uncached},
      &m));
    ASSERT_NO_FATAL_FAILURE(write_all(false));
    ch.reset();
    ASSERT_EQ(0, write_back_and_umount(s.get()));
    EXPECT_EQ(slow ? 0 : 4, m->since(l_mimstore_flush_gaps_filled));
    EXPECT_EQ(slow ? 4 : 0, m->since(l_mimstore_flush_gaps_uncached));
    EXPECT_EQ(slow ? 32 : 4, m->since(l_mimstore_flush_ios));
    ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
  }
}

// A store whose flush of object rbd_data.0 the fault seam holds (`fault`),
// the time threshold freezing every second, and a helper that commits a
// 4 KiB write to that object and records it in `want`.
struct HeldFlush {
  Conf c = base_conf(true);  // (set until the end of the test: remounts)
  StoreDir d;
  std::unique_ptr<ObjectStore> s;
  ObjectStore::CollectionHandle ch;
  const ghobject_t o = obj("rbd_data.0");
  std::map<ghobject_t, std::string> want;

  void start(const char* fault) {
    c.set("mimstore_max_flush_interval", "1");
    c.set("mimstore_debug_fault", fault);
    s = make_store(d);
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  }
  void write(uint64_t off, char fill) {
    InFlight q;
    bufferlist bl = pattern(4096, fill);
    model_write(&want, o, off, bl);
    Transaction t;
    t.write(CID, o, off, 4096, bl);
    ASSERT_EQ(0, q.queue(s.get(), ch, std::move(t)));
    ASSERT_EQ(0, q.wait_all());
  }
  /// Until `held` (bounded: a store that never flushes fails).
  void wait_for(const std::function<bool()>& held) {
    ASSERT_TRUE(wait_until(held)) << "no flush within 60 s";
  }
  void umount_and_check() {
    ch.reset();
    ASSERT_EQ(0, s->umount());
    ASSERT_NO_FATAL_FAILURE(expect_after_remount(s.get(), want));
  }
};

TEST(MIMStoreMergeEffect, WritebackStartIsNotUnderTheObjectLock)
{
  // The flush hands each run to the disk (sync_file_range) only after it
  // released the object's lock: a full disk queue holds that call for
  // seconds, and under the lock a write to the object (or to any object of
  // its lock stripe) waited for it, and with it on_commit of every client.
  // The fault seam holds the first writeback start of an object file for
  // 10 s; a second write to the same object must commit while it is held
  // (flush_runs_started counts a start once the call has returned).
  HeldFlush h;
  ASSERT_NO_FATAL_FAILURE(h.start("delay=writeback:rbd%5Fdata:10000@1"));
  ObjectStore* s = h.s.get();
  ASSERT_NO_FATAL_FAILURE(h.write(0, 'a'));
  // Until the flush has written the run (and is in, or about to be in, the
  // held writeback start).
  ASSERT_NO_FATAL_FAILURE(h.wait_for([&] {
    return perf_counter(s, l_mimstore_flush_ios) > 0;
  }));
  ASSERT_NO_FATAL_FAILURE(h.write(8192, 'b'));
  EXPECT_EQ(0, perf_counter(s, l_mimstore_flush_runs_started))
    << "the write waited for the flush's writeback start";
  ASSERT_NO_FATAL_FAILURE(h.umount_and_check());
  EXPECT_GE(perf_counter(s, l_mimstore_flush_runs_started), 1);
}

TEST(MIMStoreMergeEffect, MergedWriteDoesNotWaitForTheFlushsFileWrite)
{
  // The flush holds an object's lock across its file writes, and a
  // buffered write can wait seconds for a page under writeback behind a
  // full disk queue (measured at 64 GiB: the flush in __filemap_get_folio,
  // every client op waiting for commit). A merged write needs no object
  // lock: it must commit while the flush's write of the same object is
  // held. The fault seam holds the object file's first write, the
  // flush's, for 10 s; flush_ios counts a write once it has returned.
  HeldFlush h;
  ASSERT_NO_FATAL_FAILURE(h.start("delay=write:rbd%5Fdata:10000@1"));
  auto* ms = static_cast<MIMStore*>(h.s.get());
  ASSERT_NO_FATAL_FAILURE(h.write(0, 'a'));
  // Until the flush is inside the held write, under the object's lock.
  ASSERT_NO_FATAL_FAILURE(h.wait_for([&] {
    return ms->debug_fault_delayed_writes() > 0;
  }));
  ASSERT_NO_FATAL_FAILURE(h.write(8192, 'b'));
  EXPECT_EQ(0, perf_counter(ms, l_mimstore_flush_ios))
    << "the merged write waited for the flush's file write";
  EXPECT_EQ(2, perf_counter(ms, l_mimstore_merged));  // both cached
  ASSERT_NO_FATAL_FAILURE(h.umount_and_check());
  EXPECT_GE(perf_counter(ms, l_mimstore_flush_ios), 1);
}

// ---------------------------------------------------------------------------
// bad configuration

TEST(MIMStoreBadConfig, EachBadOptionIsRefused)
{
  const std::vector<std::pair<std::string, std::string>> bad = {
    {"mimstore_htmll_slots", "0"},
    {"mimstore_htmll_blocks", "0"},
    {"mimstore_htmll_max_slots", "100"},         // below mimstore_htmll_slots
    {"mimstore_htmll_max_slots", "16777217"},
    {"mimstore_htmll_max_blocks", "8"},          // below mimstore_htmll_blocks
    {"mimstore_htmll_max_blocks", "65537"},
    {"mimstore_block_size", "3000"},
    {"mimstore_block_size", "12288"},
    {"mimstore_block_size", "2048"},
    {"mimstore_max_flush_interval", "-1"},
    {"mimstore_max_flush_interval", "0"},
    {"mimstore_generation_journal_share", "0"},
    {"mimstore_generation_journal_share", "1.5"},
    {"mimstore_sync_interval", "0"},
    {"mimstore_min_sync_interval", "-0.5"},
    {"mimstore_journal_pressure_ratio", "1.5"},
    {"mimstore_journal_max_batch_bytes", "1000"},
    {"mimstore_journal_block_size", "1000"},
    {"mimstore_journal_block_size", "256"},
    {"mimstore_journal_block_size", "131072"},
    {"mimstore_journal_max_inflight", "0"},
    {"mimstore_cache_max_bytes", "4096"},
    {"mimstore_cache_index_max_bytes", "4096"},     // neither 0 nor >= 256 KiB
    {"mimstore_cache_index_max_bytes", "262143"},   // one byte short of it
    {"mimstore_backoff_high", "0.5"},
    {"mimstore_backoff_max_delay", "-1"},
    {"mimstore_flush_writeback_window", "4096"},
    {"mimstore_warn_writeback_stall_age", "0"},
    {"mimstore_warn_journal_full_window", "-1"},
    {"mimstore_warn_db_free_ratio", "1"},
    {"mimstore_warn_inodes_free_ratio", "-0.1"},
    // (issue 61 item 5) RocksDB without its WAL: synced DB writes are not
    // durable, so omap, xattrs and the store's records could be lost
    {"mimstore_rocksdb_options", "disableWAL=true"},
    {"mimstore_rocksdb_options", "write_buffer_size=16777216; disableWAL = 1"},
  };
  for (auto& [k, v] : bad) {
    SCOPED_TRACE(k + " = " + v);
    Conf c = base_conf(true);
    c.set(k, v);
    StoreDir d;
    auto s = make_store(d);
    EXPECT_EQ(-EINVAL, s->mkfs());
  }
}

TEST(MIMStoreBadConfig, BadValueAtMountIsRefused)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mkfs());
  c.set("mimstore_htmll_blocks", "0");
  EXPECT_EQ(-EINVAL, s->mount());
  c.set("mimstore_htmll_blocks", "16");
  // An option string that keeps the WAL, or says so, mounts.
  c.set("mimstore_rocksdb_options", "disableWAL=False,write_buffer_size=16777216");
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->umount());
}

TEST(MIMStoreBadConfig, NoJournalPathIsRefused)
{
  Conf c = base_conf(true);
  StoreDir d;
  auto s = ObjectStore::create(g_ceph_context, "mimstore", d.data, "");
  EXPECT_EQ(-EINVAL, s->mkfs());
}

// mimstore reads its options at mount and observes no change after that:
// each must be one Ceph refuses to change in a running daemon ("may not be
// modified at runtime"), not one it accepts, says was applied, and the
// store ignores until its next start.
TEST(MIMStoreBadConfig, NoOptionClaimsARuntimeChange)
{
  size_t n = 0;
  for (const auto& [name, opt] : g_conf().get_schema()) {
    if (name.rfind("mimstore_", 0) != 0) {
      continue;
    }
    ++n;
    EXPECT_FALSE(opt.can_update_at_runtime()) << name;
  }
  EXPECT_GE(n, 40u) << "mimstore's options are not in the schema";
}

// A read of one object waits for the transactions that changed that object,
// not for everything queued on its collection. The OSD reads object info
// (getattr) before each write; with merging off, an apply held up by the
// writeback throttle (a sync of a large, slow HDD) held those reads, and
// with them the OSD's op threads, past the PG's read lease: on a 64 GiB
// image the PG stayed laggy and every client write hung. Here the apply
// thread is held inside a rename of y; a read of x must not wait for it, a
// read of y2 must.
TEST(MIMStoreReads, ReadWaitsOnlyForItsObject)
{
  Conf c = base_conf(false);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  auto slot = [](const ghobject_t& o) {
    return MIMStore::Collection::slot_of(std::hash<ghobject_t>()(o));
  };
  const ghobject_t y = obj("y", 1), y2 = obj("y2", 2);
  uint32_t hx = 3;
  while (slot(obj("x", hx)) == slot(y) || slot(obj("x", hx)) == slot(y2)) {
    ++hx;  // objects sharing a slot wait for each other, by design
  }
  const ghobject_t x = obj("x", hx);
  {
    Transaction t;
    bufferlist v = pattern(16, 'x');
    t.touch(CID, x);
    t.setattr(CID, x, "_", v);
    t.touch(CID, y);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  std::promise<void> reached, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> held{false};
  static_cast<MIMStore*>(s.get())->set_debug_hook([&](const char* where) {
    if (std::string(where) == "rename:linked" && !held.exchange(true)) {
      reached.set_value();
      released.wait();
    }
  });
  C_SaferCond applied;
  {
    Transaction t;
    t.collection_move_rename(CID, y, CID, y2);
    t.register_on_applied(&applied);
    ASSERT_EQ(0, s->queue_transaction(ch, std::move(t)));
  }
  reached.get_future().wait();  // the apply thread is inside the rename
  auto read_x = std::async(std::launch::async, [&] {
    ceph::bufferptr v;
    return s->getattr(ch, x, "_", v);
  });
  auto read_y2 = std::async(std::launch::async, [&] {
    return s->exists(ch, y2);
  });
  // The bound only turns a hang into a failure: read_x needs no apply.
  bool x_done =
    read_x.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  release.set_value();
  EXPECT_TRUE(x_done) << "a read of an untouched object waited for an apply";
  EXPECT_EQ(0, read_x.get());
  EXPECT_TRUE(read_y2.get()) << "a read of y2 did not wait for its rename";
  applied.wait();
  EXPECT_FALSE(s->exists(ch, y));
  static_cast<MIMStore*>(s.get())->set_debug_hook(nullptr);
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// ---------------------------------------------------------------------------

TEST(MIMStoreCommit, FlushCommitFollowsOnCommitOnTheCollectionsQueue)
{
  // The OSD gives each PG's collection its shard's commit queue and runs
  // what it holds in order; a PG's IntervalFlush (flush_commit) must come
  // after the on_commit of the transaction it waits for, on that queue
  // (BlueStore appends it to that transaction's oncommits).
  Conf c = base_conf(false);
  StoreDir d;
  auto s = make_store(d);
  ASSERT_TRUE(s);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), CID, &ch));
  auto* ms = static_cast<MIMStore*>(s.get());
  const ghobject_t a = obj("a"), b = obj("b");
  {
    Transaction t;
    t.touch(CID, a);
    ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
  }
  std::mutex m;
  std::vector<std::string> ran;  // which contexts completed, in order
  auto recording = [&](std::string name) {
    return make_lambda_context([&m, &ran, name](int) {
      std::lock_guard l(m);
      ran.push_back(name);
    });
  };
  auto ran_now = [&] {
    std::lock_guard l(m);
    return ran;
  };
  {
    Context* idle = recording("idle");
    bool done = ch->flush_commit(idle);
    if (done) {
      delete idle;  // not used when nothing is pending
    }
    EXPECT_TRUE(done) << "flush_commit waited with every transaction applied";
  }
  ceph::mutex qm = ceph::make_mutex("test-commit-queue");
  ceph::condition_variable qc;
  ContextQueue q(qm, qc);
  s->set_collection_commit_queue(CID, &q);
  // The rename's debug point runs on the apply thread in the middle of
  // the transaction: a flush_commit made there must wait for it.
  Context* flush_ctx = nullptr;
  std::atomic<int> flush_ret{-1};
  std::atomic<bool> hooked{false};
  ms->set_debug_hook([&](const char* where) {
    if (std::string(where) == "rename:linked" && !hooked.exchange(true)) {
      flush_ctx = recording("flush");
      bool done = ch->flush_commit(flush_ctx);
      if (done) {
        delete flush_ctx;
        flush_ctx = nullptr;
      }
      flush_ret = done;
    }
  });
  Context* commit_ctx = recording("commit");
  {
    Transaction t;
    t.collection_move_rename(CID, a, CID, b);
    t.register_on_commit(commit_ctx);
    ASSERT_EQ(0, s->queue_transaction(ch, std::move(t)));
  }
  // Waits until both contexts are accounted for, queued here or run
  // elsewhere (the finisher), so none is left behind to run after the
  // test; the bound only turns a store that loses one into a failure.
  std::list<Context*> queued;
  wait_until([&] {
    std::list<Context*> more;
    q.move_to(more);
    queued.splice(queued.end(), more);
    size_t want = flush_ret.load() == 1 ? 1 : 2;
    return queued.size() + ran_now().size() >= want;
  });
  EXPECT_EQ(0, flush_ret.load()) << "flush_commit found the rename applied";
  EXPECT_EQ(std::vector<std::string>{}, ran_now())
    << "a context ran outside the collection's commit queue";
  EXPECT_EQ((std::list<Context*>{commit_ctx, flush_ctx}), queued);
  for (Context* ctx : queued) {
    ctx->complete(0);  // as the OSD's shard would, in queue order
  }
  ms->set_debug_hook(nullptr);  // the transaction has finished
  s->set_collection_commit_queue(CID, nullptr);
  EXPECT_TRUE(s->exists(ch, b));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

int main(int argc, char** argv)
{
  auto args = argv_to_vec(argc, argv);
  auto cct = global_init(nullptr, args, CEPH_ENTITY_TYPE_CLIENT,
                         CODE_ENVIRONMENT_UTILITY,
                         CINIT_FLAG_NO_DEFAULT_CONFIG_FILE);
  common_init_finish(g_ceph_context);
  g_ceph_context->_conf._clear_safe_to_start_threads();
  // the log goes to --log-file; gtest's output stays readable
  if (!getenv("MIMSTORE_TEST_LOG_TO_STDERR")) {
    g_ceph_context->_conf.set_val_or_die("log_to_stderr", "false");
    g_ceph_context->_conf.set_val_or_die("err_to_stderr", "false");
    g_ceph_context->_conf.apply_changes(nullptr);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
