// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's data checksums, the write side (Checksums.h, format 4): every
 * op that changes an object's bytes leaves each chunk it touched with the
 * state of the file's bytes; a partial overwrite does not bless rot; a
 * remove drops the states; a replayed clone takes its file's states; a
 * format-3 store is raised to 4 at mount. Reads check what they return: a
 * rotten or bad chunk fails with -EIO, a chunk without a state only in a
 * complete store, and a mismatch a second read from the disk clears is no
 * error; a clone_range of rot makes a BAD copy.
 * (The differential test and the crash loop check every chunk of every
 * object too: verify_checksums.)
 */
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "global/global_context.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#include "MIMPerf.h"
#include "MIMStore.h"
#include "ObjectName.h"
#include "OmapStore.h"
#include "mimstore_test_util.h"

using ceph::bufferlist;
using mimtest::Conf;
using mimtest::StoreDir;
using mimtest::Window;
using Transaction = ObjectStore::Transaction;

namespace {

const coll_t CID(spg_t(pg_t(0, 1)));

ghobject_t obj(const std::string& name)
{
  return ghobject_t(hobject_t(object_t(name), "", CEPH_NOSNAP, 7, 1, ""));
}

bufferlist pattern(size_t len, char seed)
{
  std::string s(len, '\0');
  for (size_t i = 0; i < len; ++i) {
    s[i] = char(seed + i * 31 + i / 4096 + 1);
  }
  bufferlist bl;
  bl.append(s);
  return bl;
}

Conf csum_conf(Window w)
{
  Conf c({{"osd_journal_size", "64"},
          {"mimstore_journal_throughput", "1000000000"},
          {"mimstore_sync_interval", "0.2"},
          {"mimstore_min_sync_interval", "0.01"},
          {"mimstore_max_flush_interval", "0.2"},
          {"mimstore_debug_verify_csums", "true"}});
  mimtest::set_window(c, w);
  return c;
}

std::string object_path(const StoreDir& d, const ghobject_t& o)
{
  return d.data + "/objects/" + CID.to_str() + "/" +
    mimstore::object_file_name(o);
}

/// A new store at d with object a (len bytes of pattern 1), written back
/// and unmounted.
void write_object(const StoreDir& d, const ghobject_t& a, uint64_t len)
{
  auto s = mimtest::make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(mimtest::start_with_collection(s.get(), CID, &ch));
  Transaction t;
  t.write(CID, a, 0, len, pattern(len, 1));
  ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  ch.reset();
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
}

/// write_object (64 KiB); then one bit of byte `at` of its file flipped
/// under the store: in the page cache, or (on_disk) synced and dropped
/// from it.
void write_then_rot(const StoreDir& d, const ghobject_t& a, uint64_t at,
                    bool on_disk)
{
  ASSERT_NO_FATAL_FAILURE(write_object(d, a, 65536));
  int fd = ::open(object_path(d, a).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char b = 0;
  ASSERT_EQ(1, ::pread(fd, &b, 1, at));
  b ^= 0x10;
  ASSERT_EQ(1, ::pwrite(fd, &b, 1, at));
  if (on_disk) {
    ASSERT_EQ(0, ::fsync(fd));
    ASSERT_EQ(0, ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
  }
  ::close(fd);
}

class MIMStoreCsum : public ::testing::TestWithParam<Window> {};

}  // namespace

// Every kind of data change, aligned and not, through the cache and not:
// each touched chunk keeps the state of its file bytes (the debug option
// checks after each change and aborts on a difference), and after the
// write back every chunk of every object matches, a chunk never written
// reading as zeros.
TEST_P(MIMStoreCsum, StatesMatchTheFileAfterEveryOp)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto s = mimtest::make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(mimtest::start_with_collection(s.get(), CID, &ch));
  auto a = obj("a"), b = obj("b"), cl = obj("c");
  auto step = [&](const char* what, auto&& fill) {
    SCOPED_TRACE(what);
    Transaction t;
    fill(t);
    ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  };
  step("aligned write", [&](Transaction& t) {
    t.write(CID, a, 0, 65536, pattern(65536, 1));
  });
  step("unaligned write inside", [&](Transaction& t) {
    t.write(CID, a, 5000, 100, pattern(100, 2));
  });
  step("append past the end", [&](Transaction& t) {
    t.write(CID, a, 65536 + 1000, 3000, pattern(3000, 3));
  });
  step("zero whole chunks and a partial one", [&](Transaction& t) {
    t.zero(CID, a, 4096, 8192);
    t.zero(CID, a, 20000, 100);
  });
  step("another object", [&](Transaction& t) {
    t.write(CID, b, 0, 40000, pattern(40000, 4));
  });
  step("clone_range into the middle of b", [&](Transaction& t) {
    t.clone_range(CID, a, b, 0, 12288, 1000);
  });
  step("truncate down, not on a chunk", [&](Transaction& t) {
    t.truncate(CID, a, 30000);
  });
  step("truncate up", [&](Transaction& t) {
    t.truncate(CID, a, 200000);
  });
  step("write after the grown end's hole", [&](Transaction& t) {
    t.write(CID, a, 150000, 5000, pattern(5000, 5));
  });
  step("clone", [&](Transaction& t) {
    t.clone(CID, b, cl);
  });
  step("truncate on a group bound, then write across it", [&](Transaction& t) {
    t.truncate(CID, b, 65536);
    t.write(CID, b, 65000, 2000, pattern(2000, 6));
  });
  EXPECT_GT(mimtest::perf_counter(s.get(), l_mimstore_csum_updates), 0);
  EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_bad_marked));
  ch.reset();
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  std::string report;
  EXPECT_EQ(0, mimtest::verify_checksums(d, true, &report)) << report;
}

// A byte flipped under the store: a partial overwrite of its chunk reads
// the old bytes, finds them wrong and marks the chunk bad, instead of
// taking a crc of the rotten bytes with the new ones (which would hide
// the rot from every later read).
TEST_P(MIMStoreCsum, PartialOverwriteOfRottenChunkMarksItBad)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto a = obj("a");
  ASSERT_NO_FATAL_FAILURE(write_then_rot(d, a, 100, false));
  // With the debug check off: it would (rightly) abort on the bad chunk.
  c.set("mimstore_debug_verify_csums", "false");
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  Transaction t;
  t.write(CID, a, 2048, 512, pattern(512, 9));
  ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  ch.reset();
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  EXPECT_EQ(1, mimtest::perf_counter(s.get(), l_mimstore_csum_bad_marked));
  std::string report;
  // Chunk 0 is bad (counted as wrong), every other chunk matches.
  EXPECT_EQ(1, mimtest::verify_checksums(d, true, &report)) << report;
  // And a read of it fails; one of the next chunk does not.
  ASSERT_EQ(0, s->mount());
  ch = s->open_collection(CID);
  bufferlist got;
  EXPECT_EQ(-EIO, s->read(ch, a, 2048, 512, got));
  EXPECT_EQ(4096, s->read(ch, a, 4096, 4096, got));
  EXPECT_EQ(1, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// A remove takes the object's checksums with it (a later object of the
// same name must not inherit them).
TEST_P(MIMStoreCsum, RemoveDropsTheStates)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto s = mimtest::make_store(d);
  ObjectStore::CollectionHandle ch;
  ASSERT_NO_FATAL_FAILURE(mimtest::start_with_collection(s.get(), CID, &ch));
  auto a = obj("a");
  {
    Transaction t;
    t.write(CID, a, 0, 8192, pattern(8192, 1));
    ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  }
  {
    Transaction t;
    t.remove(CID, a);
    t.touch(CID, a);
    t.write(CID, a, 4096, 100, pattern(100, 2));
    ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  }
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));  // no group of the removed object's nid
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  std::string report;
  EXPECT_EQ(0, mimtest::verify_checksums(d, true, &report)) << report;
  // Only the new object's chunk 1 has a state.
  std::string err;
  auto db = mimtest::open_store_db(d, &err);
  ASSERT_TRUE(db) << err;
  mimstore::OmapStore om(g_ceph_context, db.get());
  ASSERT_EQ(0, om.init());
  std::map<uint32_t, mim::CsumGroup> groups;
  ASSERT_EQ(0, om.csum_get(a, 0, UINT32_MAX, &groups));
  ASSERT_EQ(1u, groups.size());
  EXPECT_EQ(mim::ChunkState::UNKNOWN, groups[0].state(0));
  EXPECT_EQ(mim::ChunkState::CRC, groups[0].state(1));
}

// Replay of a clone whose omap clone was durable (the target's record
// stamped at it) and whose file guard was not: the omap clone, checksums
// included, is skipped, while a write to the target before the clone was
// replayed onto the file and put its states back. The clone's file comes
// from the source again; its states must too (the crash loop found it, in
// a chunk of a write the clone replaced, after a crash at a guard).
TEST_P(MIMStoreCsum, ReplayedCloneOverStampedOmapTakesTheFilesStates)
{
  Conf c = csum_conf(GetParam());
  c.set("mimstore_sync_interval", "30");  // replay starts before the write
  c.set("mimstore_max_flush_interval", "30");
  StoreDir d;
  auto src = obj("src"), dst = obj("dst");
  {
    auto s = mimtest::make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(
      mimtest::start_with_collection(s.get(), CID, &ch));
    Transaction t;
    t.write(CID, src, 0, 4096, pattern(4096, 1));
    t.write(CID, dst, 0, 4096, pattern(4096, 2));
    ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
    ch.reset();
    ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  }
  int st = mimtest::in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    auto ch = s->open_collection(CID);
    Transaction w;
    w.write(CID, dst, 77824, 8192, pattern(8192, 3));
    if (mimtest::apply(s.get(), ch, std::move(w)) != 0) {
      _exit(5);
    }
    mimtest::die_at(s.get(), "guard:omap_synced");
    Transaction cl;
    cl.clone(CID, src, dst);
    mimtest::apply(s.get(), ch, std::move(cl));
    _exit(4);  // the hook did not fire
  });
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  {
    auto ch = s->open_collection(CID);
    bufferlist got;
    ASSERT_EQ(4096, s->read(ch, dst, 0, 1 << 20, got));
    EXPECT_TRUE(got.contents_equal(pattern(4096, 1)));
  }
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  std::string report;
  EXPECT_EQ(0, mimtest::verify_checksums(d, true, &report)) << report;
}

// Rot on the disk: a byte of an object file changed under the store and
// out of the page cache. Every read that returns a byte of that chunk gets
// -EIO (the OSD repairs from a replica), aligned or not; the chunks around
// it read fine; the error is counted once per read; deep fsck counts it.
TEST_P(MIMStoreCsum, ReadOfRottenChunkFailsWithEIO)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto a = obj("a");
  ASSERT_NO_FATAL_FAILURE(write_then_rot(d, a, 3 * 4096 + 7, true));
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  bufferlist got;
  EXPECT_EQ(-EIO, s->read(ch, a, 0, 65536, got));
  EXPECT_EQ(-EIO, s->read(ch, a, 3 * 4096 + 100, 10, got));
  EXPECT_EQ(-EIO, s->read(ch, a, 2 * 4096 + 4000, 200, got));
  EXPECT_EQ(8192, s->read(ch, a, 4 * 4096, 8192, got));
  bufferlist want;
  want.substr_of(pattern(65536, 1), 4 * 4096, 8192);
  EXPECT_TRUE(got.contents_equal(want));
  EXPECT_EQ(4096, s->read(ch, a, 2 * 4096, 4096, got));
  EXPECT_EQ(3, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
  EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_retried_ok));
  EXPECT_GT(mimtest::perf_counter(s.get(), l_mimstore_csum_verified), 0);
  // fsck finds it only deep, one error for the one chunk.
  EXPECT_EQ(0, s->fsck(false));
  EXPECT_EQ(1, s->fsck(true));
  // A rewrite of the whole chunk replaces the rot and its state.
  Transaction t;
  t.write(CID, a, 3 * 4096, 4096, pattern(4096, 7));
  ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  ch.reset();
  ASSERT_EQ(0, mimtest::write_back_and_umount(s.get()));
  ASSERT_EQ(0, s->mount());
  ch = s->open_collection(CID);
  EXPECT_EQ(65536, s->read(ch, a, 0, 65536, got));
  EXPECT_EQ(0, s->fsck(true));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// mimstore_csum_verify off: the states are kept, reads do not check them
// (the rot comes back, nothing counted); fsck-deep still does.
TEST_P(MIMStoreCsum, VerifyOffReadsUnchecked)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto a = obj("a");
  ASSERT_NO_FATAL_FAILURE(write_then_rot(d, a, 3 * 4096 + 7, true));
  c.set("mimstore_csum_verify", "false");
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  bufferlist got;
  EXPECT_EQ(65536, s->read(ch, a, 0, 65536, got));
  EXPECT_FALSE(got.contents_equal(pattern(65536, 1)));
  EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
  EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_verified));
  EXPECT_EQ(1, s->fsck(true));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// clone_range of a range holding a rotten chunk: the copy does not get a
// crc of the rot (which would make it valid data); the destination's
// chunk fed by it is BAD and fails its reads, the others read right.
TEST_P(MIMStoreCsum, CloneRangeOfRotMarksTheCopyBad)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto a = obj("a"), b = obj("b");
  ASSERT_NO_FATAL_FAILURE(write_then_rot(d, a, 3 * 4096 + 7, true));
  // The debug check would (rightly) abort on the chunk marked bad.
  c.set("mimstore_debug_verify_csums", "false");
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  Transaction t;
  t.clone_range(CID, a, b, 0, 32768, 4096);  // a's chunk 3 -> b's chunk 4
  ASSERT_EQ(0, mimtest::apply(s.get(), ch, std::move(t)));
  EXPECT_EQ(1, mimtest::perf_counter(s.get(), l_mimstore_csum_bad_marked));
  bufferlist got;
  EXPECT_EQ(-EIO, s->read(ch, b, 4 * 4096, 4096, got));
  EXPECT_EQ(-EIO, s->read(ch, b, 0, 36864, got));
  EXPECT_EQ(4 * 4096, s->read(ch, b, 0, 4 * 4096, got));
  EXPECT_EQ(4 * 4096, s->read(ch, b, 5 * 4096, 4 * 4096, got));
  bufferlist want;
  want.substr_of(pattern(65536, 1), 4 * 4096, 4 * 4096);
  EXPECT_TRUE(got.contents_equal(want));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

// A bad page or a bad transfer, not rot: a read of the chunk returns a
// flipped bit once (FaultIoEnv's corrupt rule; the file is right). The
// second read, from the disk with the page dropped, matches: the read
// succeeds with the right bytes, counted as retried. A fault on every read
// (a path that always corrupts) is -EIO.
TEST_P(MIMStoreCsum, MismatchASecondReadClearsIsNoError)
{
  Conf c = csum_conf(GetParam());
  StoreDir d;
  auto a = obj("a");
  ASSERT_NO_FATAL_FAILURE(write_object(d, a, 65536));
  // Byte 7 of chunk 3, in reads of the collection's files only.
  const std::string rule = "corrupt=read:" + CID.to_str() + ":12295@1";
  for (const char* nth : {"", "+"}) {
    SCOPED_TRACE(rule + nth);
    c.set("mimstore_debug_fault", rule + nth);
    auto s = mimtest::make_store(d);
    ASSERT_EQ(0, s->mount());
    auto ch = s->open_collection(CID);
    bufferlist got;
    if (*nth) {
      EXPECT_EQ(-EIO, s->read(ch, a, 0, 65536, got));
      EXPECT_EQ(1, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
      EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_retried_ok));
    } else {
      EXPECT_EQ(65536, s->read(ch, a, 0, 65536, got));
      EXPECT_TRUE(got.contents_equal(pattern(65536, 1)));
      EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
      EXPECT_EQ(1, mimtest::perf_counter(s.get(), l_mimstore_csum_retried_ok));
    }
    ch.reset();
    ASSERT_EQ(0, s->umount());
  }
}

// A chunk with data but no state: in a complete store (made at format 4)
// that cannot be, and the read fails; in a store raised from format 3 it
// is data written before checksums, read unverified and counted.
TEST_P(MIMStoreCsum, ChunkWithoutStateFailsOnlyInACompleteStore)
{
  Conf c = csum_conf(GetParam());
  c.set("mimstore_debug_verify_csums", "false");
  StoreDir d;
  auto a = obj("a");
  ASSERT_NO_FATAL_FAILURE(write_object(d, a, 16384));
  {
    // Forget the object's states, as a store of format 3 never had them.
    std::string err;
    auto db = mimtest::open_store_db(d, &err);
    ASSERT_TRUE(db) << err;
    mimstore::OmapStore om(g_ceph_context, db.get());
    ASSERT_EQ(0, om.init());
    ASSERT_EQ(0, om.csum_update(a, {}, 0));
    ASSERT_EQ(0, om.sync());
  }
  bufferlist got;
  {
    auto s = mimtest::make_store(d);
    ASSERT_EQ(0, s->mount());
    auto ch = s->open_collection(CID);
    EXPECT_EQ(-EIO, s->read(ch, a, 0, 4096, got));
    ch.reset();
    ASSERT_EQ(0, s->umount());
  }
  ASSERT_EQ(0, ::unlink((d.data + "/mimstore_csum_complete").c_str()));
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(CID);
  EXPECT_EQ(16384, s->read(ch, a, 0, 16384, got));
  EXPECT_TRUE(got.contents_equal(pattern(16384, 1)));
  EXPECT_EQ(4, mimtest::perf_counter(s.get(), l_mimstore_csum_unverified));
  EXPECT_EQ(0, mimtest::perf_counter(s.get(), l_mimstore_csum_errors));
  ch.reset();
  ASSERT_EQ(0, s->umount());
}

INSTANTIATE_TEST_SUITE_P(Window, MIMStoreCsum,
                         ::testing::ValuesIn(mimtest::kWindows),
                         [](const auto& info) {
                           return mimtest::window_name(info.param);
                         });

// mkfs makes format 4, complete; a format-3 store is raised to 4 at its
// first mount (before replay), and stays incomplete: its older chunks have
// no state.
TEST(MIMStoreCsumFormat, Format3IsRaisedTo4)
{
  Conf c = csum_conf(Window::Off);
  StoreDir d;
  auto s = mimtest::make_store(d);
  ASSERT_EQ(0, s->mkfs());
  std::string v;
  ASSERT_EQ(0, s->read_meta("mimstore_format", &v));
  EXPECT_EQ("4", v);
  ASSERT_EQ(0, s->read_meta("mimstore_csum_complete", &v));
  EXPECT_EQ("yes", v);
  ASSERT_EQ(0, s->write_meta("mimstore_format", "3"));
  ASSERT_EQ(0, ::unlink((d.data + "/mimstore_csum_complete").c_str()));
  ASSERT_EQ(0, s->mount());
  ASSERT_EQ(0, s->read_meta("mimstore_format", &v));
  EXPECT_EQ("4", v);
  EXPECT_EQ(-ENOENT, s->read_meta("mimstore_csum_complete", &v));
  ASSERT_EQ(0, s->umount());
}
