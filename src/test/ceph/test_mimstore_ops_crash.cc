// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore crash tests for the multi-step ops Ceph sends: PG split and
 * merge, clone followed by removal, rename. Each test forks a child that
 * runs a workload and dies at a chosen point (a debug hook inside the op,
 * or right after an acknowledged commit, like kill -9); the parent
 * remounts (replay) and compares with the state the acknowledged and
 * journaled transactions define.
 *
 *   MergeKeepsCachedWritesToDest   a write merged into the cache of the
 *                                  merge destination survives a kill after
 *                                  the merge
 *   MergeSourceNotRecreated        replay does not re-create a merged-away
 *                                  collection from its older ops
 *   SplitCrash / MergeCrash        death at every step of a split or merge:
 *                                  replay completes it without overwriting
 *                                  moved objects with partial copies
 *   SetBitsAfterMergeNotReplayedOverSplit  the bits a merge set do not
 *                                  replace a later split's in replay
 *   CloneSourceRemovedLater        replay of a clone whose source was
 *                                  removed later does not stop the mount
 *   RenameRedoesOmap               a rename whose unlink became durable
 *                                  before its omap clone gets the omap back
 *   CreateWithoutBirthMarkIsMadeAgain  a create whose birth mark the crash
 *                                  lost takes no op from before it
 *   ReplayedGuardKeepsNewerOmapPosition  a guard replay closes for an old
 *                                  op does not move the omap's position
 *                                  back (the keys of a rename there and
 *                                  back survive)
 *   SmallTxnsDoNotStallJournal     small omap-only transactions behind one
 *                                  cached write free the journal by a
 *                                  freeze, not by the time threshold
 *
 * Each runs in the three windows of mimstore_test_util.h's Window: merging
 * off, on (merged bytes only in the journal, the default) and on_ram.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/errno.h"
#include "global/global_context.h"
#include "include/stringify.h"

#include "MIMStore.h"
#include "ObjectName.h"
#include "mimstore_test_util.h"

using namespace mimtest;
using ceph::bufferlist;
using Transaction = ObjectStore::Transaction;

namespace {

/// Long intervals: after a kill, the cache and the journal still hold what
/// the test wrote, and the checkpoint has not moved past it.
Conf slow_conf(Window w)
{
  Conf c({{"osd_journal_size", "64"},
          {"mimstore_journal_throughput", "1000000000"},
          {"mimstore_sync_interval", "30"},
          {"mimstore_min_sync_interval", "0.01"},
          {"mimstore_max_flush_interval", "30"},
          {"mimstore_journal_max_batch_bytes", "1048576"}});
  set_window(c, w);
  return c;
}

ghobject_t obj(const std::string& name, uint32_t hash)
{
  return ghobject_t(hobject_t(object_t(name), "", CEPH_NOSNAP, hash, 1, ""));
}

coll_t pg(uint32_t ps)
{
  return coll_t(spg_t(pg_t(ps, 1)));
}

bufferlist fill(size_t len, char c)
{
  bufferlist bl;
  bl.append(std::string(len, c));
  return bl;
}

std::string read_all(ObjectStore* s, const coll_t& cid, const ghobject_t& o)
{
  auto ch = s->open_collection(cid);
  if (!ch) {
    return "<no collection>";
  }
  bufferlist bl;
  int r = s->read(ch, o, 0, 0, bl);
  if (r < 0) {
    return "<" + cpp_strerror(r) + ">";
  }
  return bl.to_str();
}

/// Create collections D and C (2 bits each) in one transaction; their
/// handles.
std::pair<ObjectStore::CollectionHandle, ObjectStore::CollectionHandle>
create_two(ObjectStore* s, const coll_t& D, const coll_t& C)
{
  auto dh = s->create_new_collection(D);
  auto ch = s->create_new_collection(C);
  Transaction t;
  t.create_collection(D, 2);
  t.create_collection(C, 2);
  apply(s, dh, std::move(t));
  return {dh, ch};
}

bool exited_ok(int status)
{
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Die at the n-th time the store passes `point` (1-based).
void die_at(ObjectStore* s, const std::string& point, int n = 1)
{
  auto count = std::make_shared<int>(0);
  static_cast<MIMStore*>(s)->set_debug_hook(
    [point, n, count](const char* where) {
      if (point == where && ++*count == n) {
        _exit(0);
      }
    });
}

/// umount and mount: everything so far durable, journal empty.
void checkpoint(std::unique_ptr<ObjectStore>& s)
{
  ceph_assert(s->umount() == 0);
  ceph_assert(s->mount() == 0);
}

/// A fresh store for in_mounted_child to mount.
void mkfs_store(const StoreDir& d)
{
  auto s = make_store(d);
  ceph_assert(s->mkfs() == 0);
}

/// In the child: create C (split bits `bits`) with `first` in the same
/// transaction, then checkpoint, so replay starts after all of it.
void create_then_checkpoint(std::unique_ptr<ObjectStore>& s, const coll_t& C,
                            int bits, Transaction first = Transaction())
{
  {
    auto ch = s->create_new_collection(C);
    Transaction t;
    t.create_collection(C, bits);
    t.append(first);
    apply(s.get(), ch, std::move(t));
  }
  checkpoint(s);
}

}  // namespace

class MIMStoreOpsCrash : public ::testing::TestWithParam<Window> {};

// Finding 1 of issue 11: merge guarded the destination while its cached
// writes were only in memory; replay then skipped them.
TEST_P(MIMStoreOpsCrash, MergeKeepsCachedWritesToDest)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t D = pg(0), C = pg(2);
  const ghobject_t Y = obj("y", 0), X = obj("x", 2);
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    ObjectStore* s = up.get();
    auto [dh, chh] = create_two(s, D, C);
    Transaction w;
    w.write(D, Y, 0, 4096, fill(4096, 'y'));
    w.write(C, X, 0, 4096, fill(4096, 'x'));
    apply(s, dh, std::move(w));
    Transaction m;
    m.merge_collection(C, D, 1);
    apply(s, dh, std::move(m));
    dh->flush();  // applied (not only committed) before the kill
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_EQ(std::string(4096, 'y'), read_all(s.get(), D, Y));
  EXPECT_EQ(std::string(4096, 'x'), read_all(s.get(), D, X));
  EXPECT_FALSE(s->collection_exists(C));
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// Replay from a checkpoint before the source's creation must not bring the
// source back (with copies of objects that now live in the destination).
TEST_P(MIMStoreOpsCrash, MergeSourceNotRecreated)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t D = pg(0), C = pg(2);
  const ghobject_t X = obj("x", 2);
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    ObjectStore* s = up.get();
    auto dh = s->create_new_collection(D);
    Transaction t;
    t.create_collection(D, 2);
    apply(s, dh, std::move(t));
    auto chh = s->create_new_collection(C);
    Transaction t2;
    t2.create_collection(C, 2);
    t2.write(C, X, 0, 8192, fill(8192, 'x'));
    t2.omap_setkeys(C, X, {{"k", fill(3, 'v')}});
    apply(s, chh, std::move(t2));
    Transaction m;
    m.merge_collection(C, D, 1);
    apply(s, dh, std::move(m));
    Transaction w;
    w.write(D, X, 0, 4096, fill(4096, 'z'));
    apply(s, dh, std::move(w));
    dh->flush();  // applied (not only committed) before the kill
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_FALSE(s->collection_exists(C));
  EXPECT_EQ(std::string(4096, 'z') + std::string(4096, 'x'),
            read_all(s.get(), D, X));
  auto dh = s->open_collection(D);
  std::map<std::string, bufferlist> kv;
  bufferlist h;
  ASSERT_EQ(0, s->omap_get(dh, X, &h, &kv));
  EXPECT_EQ(1u, kv.size());
  dh.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// Findings 1 and 2: death at each step of a split. An object X written
// before the checkpoint and again after it moves to the destination; the
// replay must finish the split with X whole.
class MIMStoreSplitCrash
  : public ::testing::TestWithParam<std::tuple<Window, const char*>> {};

TEST_P(MIMStoreSplitCrash, ReplayFinishesSplit)
{
  auto [window, point] = GetParam();
  Conf c = slow_conf(window);
  StoreDir d;
  const coll_t C = pg(0), D = pg(2);
  const ghobject_t X = obj("x", 2), Z = obj("z", 0);
  mkfs_store(d);
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    Transaction first;
    first.write(C, X, 0, 4096, fill(4096, '1'));
    first.write(C, Z, 0, 4096, fill(4096, 'z'));
    // X's first write is behind the checkpoint
    create_then_checkpoint(s, C, 1, std::move(first));
    auto ch = s->open_collection(C);
    Transaction w;
    w.write(C, X, 4096, 4096, fill(4096, '2'));
    apply(s.get(), ch, std::move(w));
    die_at(s.get(), point);
    auto dh = s->create_new_collection(D);
    Transaction sp;
    sp.create_collection(D, 2);
    sp.split_collection(C, 2, 2, D);
    apply(s.get(), ch, std::move(sp));
    _exit(1);  // the point was never reached
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_EQ(std::string(4096, '1') + std::string(4096, '2'),
            read_all(s.get(), D, X));
  EXPECT_EQ(std::string(4096, 'z'), read_all(s.get(), C, Z));
  auto ch = s->open_collection(C);
  EXPECT_FALSE(s->exists(ch, X));
  EXPECT_EQ(2, s->collection_bits(ch));
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

INSTANTIATE_TEST_SUITE_P(
  Points, MIMStoreSplitCrash,
  ::testing::Combine(::testing::ValuesIn(kWindows),
                     ::testing::Values("split:guarded", "move:object",
                                       "split:moved", "split:dest-closed")),
  [](const auto& info) {
    std::string p = std::get<1>(info.param);
    for (auto& ch : p) {
      if (!isalnum(ch)) {
        ch = '_';
      }
    }
    return std::string(window_name(std::get<0>(info.param))) + "_" + p;
  });

// The same for a merge: C (with X, written before and after the
// checkpoint, and a cached write to D's Y) merged into D.
class MIMStoreMergeCrash
  : public ::testing::TestWithParam<std::tuple<Window, const char*>> {};

TEST_P(MIMStoreMergeCrash, ReplayFinishesMerge)
{
  auto [window, point] = GetParam();
  Conf c = slow_conf(window);
  StoreDir d;
  const coll_t D = pg(0), C = pg(2);
  const ghobject_t X = obj("x", 2), Y = obj("y", 0);
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    {
      auto dh = s->create_new_collection(D);
      auto chh = s->create_new_collection(C);
      Transaction t;
      t.create_collection(D, 2);
      t.create_collection(C, 2);
      t.write(C, X, 0, 4096, fill(4096, '1'));
      apply(s.get(), dh, std::move(t));
    }
    checkpoint(s);
    auto dh = s->open_collection(D);
    Transaction w;
    w.write(C, X, 4096, 4096, fill(4096, '2'));
    w.write(D, Y, 0, 4096, fill(4096, 'y'));
    apply(s.get(), dh, std::move(w));
    die_at(s.get(), point);
    Transaction m;
    m.merge_collection(C, D, 1);
    apply(s.get(), dh, std::move(m));
    _exit(1);
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_EQ(std::string(4096, '1') + std::string(4096, '2'),
            read_all(s.get(), D, X));
  EXPECT_EQ(std::string(4096, 'y'), read_all(s.get(), D, Y));
  EXPECT_FALSE(s->collection_exists(C));
  auto dh = s->open_collection(D);
  EXPECT_EQ(1, s->collection_bits(dh));
  dh.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

INSTANTIATE_TEST_SUITE_P(
  Points, MIMStoreMergeCrash,
  ::testing::Combine(::testing::ValuesIn(kWindows),
                     ::testing::Values("merge:guarded", "move:object",
                                       "merge:tombstone", "merge:removed")),
  [](const auto& info) {
    std::string p = std::get<1>(info.param);
    for (auto& ch : p) {
      if (!isalnum(ch)) {
        ch = '_';
      }
    }
    return std::string(window_name(std::get<0>(info.param))) + "_" + p;
  });

// Reef's PG::merge_from sets the merged PG's bits after merge_collection,
// and a later split sets them again. Replayed from before the merge (which
// is skipped as done: the destination's guard is the split's), the
// set_bits must be skipped too, or it undoes the split's bits.
TEST_P(MIMStoreOpsCrash, SetBitsAfterMergeNotReplayedOverSplit)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t D = pg(0), C = pg(2), E = pg(1);
  {
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
  }
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    ObjectStore* s = up.get();
    auto [dh, chh] = create_two(s, D, C);
    Transaction m;
    m.merge_collection(C, D, 1);
    m.collection_set_bits(D, 1);
    apply(s, dh, std::move(m));
    auto eh = s->create_new_collection(E);
    Transaction sp;
    sp.create_collection(E, 3);
    sp.split_collection(D, 3, 1, E);
    apply(s, dh, std::move(sp));
    dh->flush();  // applied (not only committed) before the kill
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto dh = s->open_collection(D);
  ASSERT_TRUE(dh);
  EXPECT_EQ(3, s->collection_bits(dh));
  dh.reset();
  ASSERT_EQ(0, s->umount());
  ASSERT_EQ(0, s->mount());  // and as the files say, not only in memory
  dh = s->open_collection(D);
  ASSERT_TRUE(dh);
  EXPECT_EQ(3, s->collection_bits(dh));
  dh.reset();
  ASSERT_EQ(0, s->umount());
}

// Finding 3: clone A->B, then A and B removed (snapshot trim) and the
// removal durable while the checkpoint is still before the clone. Replay
// used to abort on the clone's ENOENT, and so did every later mount.
TEST_P(MIMStoreOpsCrash, CloneSourceRemovedLater)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t C = pg(0);
  const ghobject_t A = obj("a", 0), B = obj("b", 0), W = obj("w", 0);
  mkfs_store(d);
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    Transaction first;
    first.write(C, A, 0, 4096, fill(4096, 'a'));
    // A's creation is behind the checkpoint: not replayed
    create_then_checkpoint(up, C, 0, std::move(first));
    ObjectStore* s = up.get();
    auto ch = s->open_collection(C);
    Transaction t;
    t.write(C, W, 0, 4096, fill(4096, 'w'));  // holds the checkpoint
    apply(s, ch, std::move(t));
    Transaction cl;
    cl.clone(C, A, B);
    apply(s, ch, std::move(cl));
    Transaction rm;
    rm.remove(C, A);
    rm.remove(C, B);
    apply(s, ch, std::move(rm));
    ch->flush();  // applied (not only committed) before the kill
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  // The mount runs in a child too: before the fix it aborted.
  int mst = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    ObjectStore* s = up.get();
    _exit(read_all(s, C, W) == std::string(4096, 'w') ? 0 : 5);
  });
  EXPECT_TRUE(exited_ok(mst)) << "remount after the kill: status " << mst;
}

// Finding 4: the rename's unlink durable, its omap clone not (power went
// between a sync and RocksDB's). The hook makes that state: it drops the
// old name right after the link, before the omap is cloned, and dies.
TEST_P(MIMStoreOpsCrash, RenameRedoesOmap)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t C = pg(0);
  const ghobject_t A = obj("a", 0), B = obj("b", 0);
  mkfs_store(d);
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    Transaction first;
    first.write(C, A, 0, 4096, fill(4096, 'a'));
    first.omap_setkeys(C, A, {{"k1", fill(2, '1')}, {"k2", fill(2, '2')}});
    bufferlist xv = fill(5, 'x');
    first.setattr(C, A, "_x", xv);
    create_then_checkpoint(s, C, 0, std::move(first));
    std::string old_path = d.data + "/objects/" + C.to_str() + "/" +
      mimstore::object_file_name(A);
    static_cast<MIMStore*>(s.get())->set_debug_hook(
      [old_path](const char* where) {
        if (std::string(where) == "rename:linked") {
          ::unlink(old_path.c_str());
          _exit(0);
        }
      });
    auto ch = s->open_collection(C);
    Transaction mv;
    mv.collection_move_rename(C, A, C, B);
    apply(s.get(), ch, std::move(mv));
    _exit(1);
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(C);
  EXPECT_FALSE(s->exists(ch, A));
  EXPECT_EQ(std::string(4096, 'a'), read_all(s.get(), C, B));
  std::map<std::string, bufferlist> kv;
  bufferlist h;
  ASSERT_EQ(0, s->omap_get(ch, B, &h, &kv));
  EXPECT_EQ(2u, kv.size());
  bufferptr v;
  EXPECT_EQ(0, s->getattr(ch, B, "_x", v));
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// Found by the XFS-metadata crash loop (seed 1, CI): a rename there and
// back (A -> M -> A, as recovery does) whose last link and unlink the power
// cut undid, so only M names the file, while RocksDB already held A's omap,
// cloned from M at the second rename's position. Replaying an older clone
// onto A closed its guard by stamping A's omap header with the clone's
// position, moving it back; the remove after the clone then cleared A's
// keys, and M's were cleared by the rename: both names lost the omap.
// DBObjectMap::sync no longer moves a header's position back (patch 0011).
TEST_P(MIMStoreOpsCrash, ReplayedGuardKeepsNewerOmapPosition)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t C = pg(0);
  const ghobject_t X = obj("x", 0), A = obj("a", 0), M = obj("a.moved", 0);
  mkfs_store(d);
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    Transaction first;
    first.write(C, X, 0, 4096, fill(4096, 'x'));
    create_then_checkpoint(s, C, 0, std::move(first));
    auto ch = s->open_collection(C);
    {
      Transaction t;  // replayed: re-creates A, guards it at this position
      t.clone(C, X, A);
      apply(s.get(), ch, std::move(t));
    }
    {
      Transaction t;
      t.remove(C, A);
      apply(s.get(), ch, std::move(t));
    }
    // Killed in the second rename once its omap steps and its unlink of M
    // are done, before its guard is closed.
    die_at(s.get(), "rename:unlinked", 2);
    Transaction t;
    t.touch(C, A);
    t.write(C, A, 0, 4096, fill(4096, 'a'));
    t.omap_setkeys(C, A, {{"k1", fill(2, '1')}, {"k2", fill(2, '2')}});
    t.collection_move_rename(C, A, C, M);
    t.collection_move_rename(C, M, C, A);
    apply(s.get(), ch, std::move(t));
    _exit(1);
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  // The cut undid the link of A and the unlink of M: only M names the file.
  const std::string dir = d.data + "/objects/" + C.to_str() + "/";
  const std::string a_path = dir + mimstore::object_file_name(A);
  const std::string m_path = dir + mimstore::object_file_name(M);
  ASSERT_EQ(0, ::rename(a_path.c_str(), m_path.c_str()))
    << cpp_strerror(-errno);
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(C);
  EXPECT_FALSE(s->exists(ch, M));
  EXPECT_EQ(std::string(4096, 'a'), read_all(s.get(), C, A));
  std::map<std::string, bufferlist> kv;
  bufferlist h;
  EXPECT_EQ(0, s->omap_get(ch, A, &h, &kv));
  EXPECT_EQ(2u, kv.size());
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// Found by the XFS-metadata crash loop (seed 6): a create is two metadata
// ops, the file and then its birth mark, and a power cut can keep the
// first alone. Replay then let a truncate from before the create (which
// found no object) resize the file the create made. Here the child's
// transactions end applied, and the parent drops the mark by hand, as
// that cut would.
TEST_P(MIMStoreOpsCrash, CreateWithoutBirthMarkIsMadeAgain)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t C = pg(0);
  const ghobject_t A = obj("a", 0);
  mkfs_store(d);
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    create_then_checkpoint(s, C, 0);
    auto ch = s->open_collection(C);
    Transaction t;
    t.truncate(C, A, 3 << 20);  // no object yet: -ENOENT, tolerated
    t.write(C, A, 8192, 4096, fill(4096, 'w'));
    apply(s.get(), ch, std::move(t));
    ch->flush();  // applied (not only committed) before the kill
  });
  ASSERT_TRUE(exited_ok(st)) << st;
  const std::string path = d.data + "/objects/" + C.to_str() + "/" +
    mimstore::object_file_name(A);
  ASSERT_EQ(0, ::removexattr(path.c_str(), "user.mim.born"))
    << path << ": " << cpp_strerror(-errno);
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  auto ch = s->open_collection(C);
  struct stat stbuf;
  ASSERT_EQ(0, s->stat(ch, A, &stbuf));
  EXPECT_EQ(8192 + 4096, stbuf.st_size);
  EXPECT_TRUE(std::string(8192, '\0') + std::string(4096, 'w') ==
              read_all(s.get(), C, A));
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// Finding 5: one cached write, then small omap-only transactions, one per
// journal batch (each padded to a block), more than the journal holds. The
// generation that holds the checkpoint must be frozen before the time
// threshold (here 20 s, which the test's counters would show): with the
// bytes in memory by journal pressure (it used to compare payload bytes
// and only sync, and clients stalled until the time threshold); with the
// bytes in the journal by the generation's journal share (the space
// threshold), which comes first.
TEST(MIMStoreJournalPressure, SmallTxnsDoNotStallJournal)
{
  for (Window w : {Window::Ram, Window::Journal}) {
    SCOPED_TRACE(window_name(w));
    Conf c({{"osd_journal_size", "16"},
            {"mimstore_journal_throughput", "1000000000"},
            {"mimstore_sync_interval", "0.05"},
            {"mimstore_min_sync_interval", "0.01"},
            {"mimstore_max_flush_interval", "20"},
            {"mimstore_backoff_max_delay", "0"},
            {"mimstore_journal_max_batch_bytes", "262144"}});
    set_window(c, w);
    StoreDir d;
    const coll_t C = pg(0);
    auto s = make_store(d);
    ObjectStore::CollectionHandle ch;
    ASSERT_NO_FATAL_FAILURE(start_with_collection(s.get(), C, &ch));
    {
      Transaction t;
      t.write(C, obj("cached", 0), 0, 4096, fill(4096, 'c'));
      t.touch(C, obj("meta", 0));
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
    const int n = 2 * (16 << 20) / 4096;  // twice the journal in blocks
    for (int i = 0; i < n; ++i) {
      Transaction t;
      t.omap_setkeys(C, obj("meta", 0), {{"k" + stringify(i % 64),
                                          fill(16, 'v')}});
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t)));
    }
    EXPECT_GT(perf_counter(s.get(), w == Window::Ram ? l_mimstore_flush_journal
                                                     : l_mimstore_flush_space),
              0);
    EXPECT_EQ(0, perf_counter(s.get(), l_mimstore_flush_time));
    ch.reset();
    ASSERT_EQ(0, s->umount());
  }
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreOpsCrash,
                         ::testing::ValuesIn(kWindows),
                         [](const auto& info) {
                           return window_name(info.param);
                         });
