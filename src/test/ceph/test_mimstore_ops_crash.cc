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
 *   MergeTombstoneKeptWhileItsBatchIsLive  a merge's tombstone outlives a
 *                                  checkpoint inside its batch, where
 *                                  replay starts before the merge
 *   CloneSourceRemovedLater        replay of a clone whose source was
 *                                  removed later does not stop the mount
 *   RenameRedoesOmap               a rename whose unlink became durable
 *                                  before its omap clone gets the omap back
 *   CreateWithoutBirthMarkIsMadeAgain  a create whose birth mark the crash
 *                                  lost takes no op from before it
 *   UnreadableMarksStopReplay      an object's replay marks that cannot be
 *                                  read stop the mount (not taken for none)
 *   MIMStoreWrittenBackReplay.*    a PG deleted, made again and deleted
 *                                  again during one sweep (directly, or
 *                                  the first life by a split): replay of
 *                                  the first life applies its remove,
 *                                  whatever the later life's written-back
 *                                  record says, also after a mount killed
 *                                  in that replay; an object's marks that
 *                                  cannot be read keep its record
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

#include <atomic>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/Cond.h"
#include "common/Formatter.h"
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

/// A number from MIMStore::dump_htmll (the admin socket's
/// dump_mimstore_htmll): "checkpoint" (the tracker's checkpoint, in memory)
/// or "applied_sn".
uint64_t htmll_field(MIMStore* ms, const std::string& name)
{
  ceph::JSONFormatter f;
  ms->dump_htmll(&f);
  std::ostringstream out;
  f.flush(out);
  const std::string js = out.str();
  std::smatch m;
  if (!std::regex_search(js, m, std::regex("\"" + name + "\": ?(\\d+)"))) {
    ceph_abort_msg("dump_htmll has no " + name);
  }
  return std::stoull(m[1].str());
}

/// The live part of an unmounted store's journal, as dump_journal prints
/// it: the header's block size and start_sn, and (sn, offset of the entry)
/// of each entry replay would apply.
struct JournalView {
  uint64_t block = 0;
  uint64_t start_sn = 0;
  std::vector<std::pair<uint64_t, uint64_t>> entries;
};

int view_journal(const StoreDir& d, JournalView* v, std::string* text)
{
  auto s = make_store(d);
  std::ostringstream out;
  int r = s->dump_journal(out);
  *text = out.str();
  if (r < 0) {
    return r;
  }
  const std::regex block_re(" block (\\d+) size ");
  const std::regex start_re("^  start_off \\d+ start_sn (\\d+)");
  const std::regex entry_re("^  sn (\\d+) off (\\d+) len ");
  std::istringstream in(*text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, block_re)) {
      v->block = std::stoull(m[1].str());
    } else if (std::regex_search(line, m, start_re)) {
      v->start_sn = std::stoull(m[1].str());
    } else if (std::regex_search(line, m, entry_re)) {
      v->entries.emplace_back(std::stoull(m[1].str()),
                              std::stoull(m[2].str()));
    }
  }
  return 0;
}

/// MergeTombstoneKeptWhileItsBatchIsLive's hold on the sync and apply
/// threads (the test says why): while `closed`, the sync thread waits at
/// "sync:checkpoint", before the journal's tail moves; once T3's sn is
/// known, the apply thread waits at "rename:linked" (T3) until the
/// checkpoint being persisted is T3's, and the child dies at the move
/// after that one.
struct CheckpointGate {
  std::mutex m;
  std::condition_variable cv;
  bool closed = false;  ///< no checkpoint is persisted meanwhile
  uint64_t sn_t3 = 0;   ///< 0: not known yet
  bool t3_cp = false;   ///< the move to sn_t3 has begun

  void update(const std::function<void()>& f) {
    std::lock_guard l(m);
    f();
    cv.notify_all();
  }
};

/// Set before mount; harmless until the
/// gate closes. Child exits: 0 at the kill point, 4 if the checkpoint
/// passed T3 without stopping inside its batch.
void install_gate(MIMStore* ms, std::shared_ptr<CheckpointGate> g)
{
  ms->set_debug_hook([g, ms](const char* where) {
    const std::string w(where);
    if (w == "rename:linked") {  // T3, on the apply thread
      std::unique_lock l(g->m);
      g->cv.wait(l, [&] { return g->t3_cp; });
      return;
    }
    if (w != "sync:checkpoint") {
      return;
    }
    uint64_t t3;
    bool seen;
    {
      std::unique_lock l(g->m);
      g->cv.wait(l, [&] { return !g->closed; });
      t3 = g->sn_t3;
      seen = g->t3_cp;
    }
    if (!t3) {
      return;
    }
    if (seen) {
      // The move to T3 returned (header at T1's batch, tombstones
      // trimmed) before this one began; this one writes nothing yet.
      _exit(0);
    }
    // Only this thread moves the tracker: this is the cp persisted now.
    const uint64_t cp = htmll_field(ms, "checkpoint");
    if (cp > t3) {
      _exit(4);
    }
    if (cp == t3) {
      g->update([&] { g->t3_cp = true; });
    }
  });
}

/// In the child, the gate closed: queue `len`-byte writes of D/F, each
/// waited for, until the journal writer waits for space with one (the
/// gate keeps the tail where it is). `fillers` gets their completions
/// (live until the child exits); returns the last one's fill byte. Exits
/// the child (5) if the journal does not fill.
char fill_journal(ObjectStore* st, ObjectStore::CollectionHandle& dh,
                  const coll_t& D, const ghobject_t& F, uint64_t len,
                  std::vector<std::unique_ptr<C_SaferCond>>* fillers)
{
  const int64_t waits0 = perf_counter(st, l_mimstore_journal_full_waits);
  for (int i = 0; i < 64; ++i) {
    const char c = char('a' + i % 26);
    Transaction t;
    t.write(D, F, 0, len, fill(len, c));
    fillers->push_back(std::make_unique<C_SaferCond>());
    C_SaferCond* done = fillers->back().get();
    t.register_on_commit(done);
    st->queue_transaction(dh, std::move(t));
    const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (done->wait_for(0.01) == ETIMEDOUT) {  // committed: the next one
      if (perf_counter(st, l_mimstore_journal_full_waits) > waits0) {
        return c;  // its batch waits for space the gate keeps
      }
      if (std::chrono::steady_clock::now() > deadline) {
        _exit(5);
      }
    }
  }
  _exit(5);
}

/// The journal a MergeTombstoneKeptWhileItsBatchIsLive child left: replay
/// starts at sn_t1, and T1..T3 are all that is live, T2 and T3 in T1's
/// batch (an entry that does not start on a block boundary is no batch's
/// first). Call in ASSERT_NO_FATAL_FAILURE.
void expect_one_live_batch(const StoreDir& d, uint64_t sn_t1)
{
  JournalView v;
  std::string text;
  ASSERT_EQ(0, view_journal(d, &v, &text)) << text;
  ASSERT_EQ(4096u, v.block) << text;
  EXPECT_EQ(sn_t1, v.start_sn) << text;
  ASSERT_EQ(3u, v.entries.size()) << text;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sn_t1 + i, v.entries[i].first) << text;
  }
  EXPECT_EQ(0u, v.entries[0].second % v.block) << text;
  EXPECT_NE(0u, v.entries[1].second % v.block) << text;
  EXPECT_NE(0u, v.entries[2].second % v.block) << text;
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

// A merge's tombstone must live as long as a replay can start before the
// merge. Replay starts at the journal header's start_sn, the first sn of
// the batch that holds the checkpoint (JournalWriter::trim); the tombstone
// used to be trimmed at the checkpoint itself. With one batch [T1 create C
// and write to it, T2 merge C into D, T3 a later op] and the checkpoint
// persisted at T3, the trim removed C's tombstone, and a crash then
// replayed T1 without it: C came back, with a stale copy of X.
//
// How the child makes that state, every step waiting for a state, not for
// time:
//  - One batch: the debug hook holds the sync thread at "sync:checkpoint"
//    (before the journal's tail moves) from right after mount, so no
//    journal space is ever freed; 4 MiB writes (one batch each, each
//    waited for) fill the journal until the writer waits for space with
//    the last one (l_mimstore_journal_full_waits). T1, T2 and T3 queued
//    then sit in the writer's queue; once the hook lets the sync go, the
//    writer's next batch takes all three (group commit; 512 entries and
//    1 MiB per batch, far above them).
//  - The checkpoint at T3: T3 is a rename, and the hook holds the apply
//    thread at "rename:linked" until the sync thread reaches
//    "sync:checkpoint" with the checkpoint (dump_htmll's, which only the
//    sync thread moves) equal to T3's sn. T3 is held (durability.hold
//    before apply), T1 and T2 are released (T2's barrier wrote back every
//    cached write of C and D, fillers included), so the checkpoint stops
//    at exactly T3 and cannot pass it.
//  - The kill: at the next "sync:checkpoint" (T3 done and synced). The
//    sync thread runs checkpoint_moved one at a time, so the move to T3 -
//    header written with start_sn = T1, tombstones trimmed - is complete,
//    and this one has not yet written the header.
// The parent checks that state in the journal (replay starts at T1, and
// T2 and T3 are in T1's batch) before it remounts, so the test cannot
// pass without making it.
TEST_P(MIMStoreOpsCrash, MergeTombstoneKeptWhileItsBatchIsLive)
{
  Conf c = slow_conf(GetParam());
  c.set("osd_journal_size", "16");               // filled by four writes
  c.set("mimstore_journal_block_size", "4096");  // T1..T3 in one block
  c.set("mimstore_sync_interval", "0.1");        // the syncs come by themselves
  c.set("mimstore_backoff_max_delay", "0");      // no submit sleeps while full
  c.set("mimstore_backoff_pace", "false");
  StoreDir d;
  const coll_t D = pg(0), C = pg(2);
  const ghobject_t X = obj("x", 2), Y = obj("y", 0), Y2 = obj("y2", 0),
    F = obj("fill", 0);
  const uint64_t kFill = 4 << 20;
  const std::string info = d.root + "/tombstone-test";
  mkfs_store(d);

  pid_t pid = fork_child();
  if (pid == 0) {
    auto gate = std::make_shared<CheckpointGate>();
    auto s = make_store(d);
    auto* ms = static_cast<MIMStore*>(s.get());
    install_gate(ms, gate);
    if (s->mount() != 0) {
      _exit(2);
    }
    // Nothing applied since the mount: no checkpoint move is under way.
    gate->update([&] { gate->closed = true; });
    ObjectStore* st = s.get();
    auto dh = st->create_new_collection(D);
    Transaction t0;
    t0.create_collection(D, 2);
    t0.write(D, Y, 0, 4096, fill(4096, 'y'));
    if (apply(st, dh, std::move(t0)) != 0) {
      _exit(6);
    }
    dh->flush();  // applied: applied_sn is t0's sn
    // sns are handed out in queue order, one per queue_transaction (this
    // thread queues alone): the fillers follow, then T1, T2, T3. (Not
    // applied_sn after the fillers: a commit is reported before its apply.)
    const uint64_t sn_d = htmll_field(ms, "applied_sn");
    std::vector<std::unique_ptr<C_SaferCond>> fillers;
    const char last = fill_journal(st, dh, D, F, kFill, &fillers);
    const uint64_t sn_t1 = sn_d + fillers.size() + 1;
    {
      std::ofstream o(info);
      o << sn_t1 << " " << last << "\n";
      if (!o.flush()) {
        _exit(6);
      }
    }
    gate->update([&] { gate->sn_t3 = sn_t1 + 2; });
    auto chh = st->create_new_collection(C);
    InFlight q;
    Transaction t1;  // T1: ops on C
    t1.create_collection(C, 2);
    t1.write(C, X, 0, 1024, fill(1024, 'x'));
    q.queue(st, chh, std::move(t1));
    Transaction t2;  // T2: C merged into D, the tombstone of C at T2
    t2.merge_collection(C, D, 1);
    q.queue(st, dh, std::move(t2));
    Transaction t3;  // T3: held in apply until the checkpoint is T3
    t3.collection_move_rename(D, Y, D, Y2);
    q.queue(st, dh, std::move(t3));
    gate->update([&] { gate->closed = false; });
    // The hook ends the child; this only turns a hang into a failure.
    std::this_thread::sleep_for(std::chrono::seconds(300));
    _exit(3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(exited_ok(status))
    << "child status " << status << " (exit 2: mount failed, 3: no kill "
    << "point in 300 s, 4: the checkpoint passed T3, 5: the journal did not "
    << "fill, 6: setup failed)";

  uint64_t sn_t1 = 0;
  char last = 0;
  {
    std::ifstream in(info);
    ASSERT_TRUE(in >> sn_t1 >> last) << info;
  }
  // The state the fix is for, as the crash left it (the child's exit 0
  // says the checkpoint persisted last was T3's sn).
  ASSERT_NO_FATAL_FAILURE(expect_one_live_batch(d, sn_t1));
  // Still there: a replay from T1 needs it (MIMFlush.cc, checkpoint_moved).
  const std::string tombstone = d.data + "/objects/.gone/" + C.to_str();
  EXPECT_EQ(0, ::access(tombstone.c_str(), F_OK))
    << tombstone << ": trimmed while the journal still replays from T1";

  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_FALSE(s->collection_exists(C));
  EXPECT_EQ(std::string(1024, 'x'), read_all(s.get(), D, X));
  EXPECT_EQ(std::string(4096, 'y'), read_all(s.get(), D, Y2));
  EXPECT_EQ(std::string(kFill, last), read_all(s.get(), D, F));
  {
    auto dh = s->open_collection(D);
    ASSERT_TRUE(dh);
    EXPECT_FALSE(s->exists(dh, Y));
    EXPECT_EQ(1, s->collection_bits(dh));
  }
  EXPECT_EQ(0, s->fsck(false));
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

namespace {

/// In a child, killed after it: C made and checkpointed, then one
/// transaction, applied (not only committed), that truncates A to 3 MiB
/// before A exists (-ENOENT, tolerated) and writes A's block at 8 KiB.
/// Replayed onto the file the write made, the truncate would resize it.
void truncate_before_create(const StoreDir& d, const coll_t& C,
                            const ghobject_t& A)
{
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& s) {
    create_then_checkpoint(s, C, 0);
    auto ch = s->open_collection(C);
    Transaction t;
    t.truncate(C, A, 3 << 20);  // no object yet: -ENOENT, tolerated
    t.write(C, A, 8192, 4096, fill(4096, 'w'));
    apply(s.get(), ch, std::move(t));
    ch->flush();
  });
  ASSERT_TRUE(exited_ok(st)) << st;
}

/// A's data as truncate_before_create leaves it.
std::string truncated_before_create()
{
  return std::string(8192, '\0') + std::string(4096, 'w');
}

/// A fault spec failing every xattr op on `oid`'s file (its replay marks).
std::string marks_eio(const ghobject_t& oid)
{
  return "fail=xattr:" + mimstore::object_file_name(oid) + ":eio@1+";
}

/// A child's exit status: the mount returned an error (in_mounted_child).
bool mount_failed(int status)
{
  return WIFEXITED(status) && WEXITSTATUS(status) == 2;
}

}  // namespace

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
  ASSERT_NO_FATAL_FAILURE(truncate_before_create(d, C, A));
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
  EXPECT_TRUE(truncated_before_create() == read_all(s.get(), C, A));
  ch.reset();
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

// A read error on an object file's replay marks was taken for marks not
// there: replay applied ops from before the file's create to it (here a
// truncate that found no object would resize it to 3 MiB), or removed it
// as a create cut short. Replay now stops (the mount aborts, in a child),
// and a mount after the error is gone replays as before.
TEST_P(MIMStoreOpsCrash, UnreadableMarksStopReplay)
{
  Conf c = slow_conf(GetParam());
  StoreDir d;
  const coll_t C = pg(0);
  const ghobject_t A = obj("a", 0);
  mkfs_store(d);
  ASSERT_NO_FATAL_FAILURE(truncate_before_create(d, C, A));
  {
    Conf fault({{"mimstore_debug_fault", marks_eio(A)}});
    int st = in_mounted_child(d, [](std::unique_ptr<ObjectStore>&) {});
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)
      << "a mount that could not read A's marks: status " << st;
  }
  auto s = make_store(d);
  ASSERT_EQ(0, s->mount());
  EXPECT_GT(perf_counter(s.get(), l_mimstore_replayed), 0);
  EXPECT_TRUE(truncated_before_create() == read_all(s.get(), C, A));
  EXPECT_EQ(0, s->fsck(false));
  ASSERT_EQ(0, s->umount());
}

namespace {

/// In a child, after the sequence a test built: a sweep (write_back_all)
/// held after its first object, `then` applied on `ch` while it is held,
/// and umount, which keeps the window and puts the records of what the
/// sweep wrote back. The other handles must be gone by then.
void sweep_one_then(ObjectStore* s, ObjectStore::CollectionHandle& ch,
                    Transaction then)
{
  auto* ms = static_cast<MIMStore*>(s);
  std::promise<void> reached;
  std::atomic<bool> held{false};
  ms->set_debug_hook([&](const char* where) {
    if (std::string(where) == "flush:object" && !held.exchange(true)) {
      reached.set_value();
      while (!ms->debug_stopping()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  });
  auto sweep = std::async(std::launch::async,
                          [&] { return ms->write_back_all(); });
  // The bound only turns a hang into a failure.
  if (reached.get_future().wait_for(std::chrono::seconds(60)) !=
      std::future_status::ready) {
    _exit(3);
  }
  apply(s, ch, std::move(then));
  ch.reset();
  if (s->umount() != 0 || sweep.get() != 0) {
    _exit(4);
  }
  ms->set_debug_hook(nullptr);
}

/// Mount in a child (an abort in replay kills only the child) and exit 0
/// if `ok` holds of the mounted store and fsck is clean.
int mount_and_check(const StoreDir& d,
                    const std::function<bool(ObjectStore*)>& ok)
{
  return in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    const bool good = ok(up.get()) && up->fsck(false) == 0 &&
                      up->umount() == 0;
    _exit(good ? 0 : 5);
  });
}

/// The records' tests: long intervals, and the sweep's order without disk
/// addresses (collections by cached bytes, so 8 KiB objects go before the
/// 4 KiB W).
Conf record_conf(Window w)
{
  Conf c = slow_conf(w);
  c.set("mimstore_flush_physical_order", "false");
  return c;
}

/// In a child: H made and checkpointed, then W in it written and left in
/// the cache, where it holds the checkpoint below all that follows.
void hold_checkpoint(std::unique_ptr<ObjectStore>& up, const coll_t& H,
                     const ghobject_t& W)
{
  create_then_checkpoint(up, H, 0);
  auto hh = up->open_collection(H);
  Transaction t;
  t.write(H, W, 0, 4096, fill(4096, 'w'));
  apply(up.get(), hh, std::move(t));
}

/// The state the records' tests end in: `gone` removed, W as written.
bool gone_and_w_kept(ObjectStore* s, std::initializer_list<coll_t> gone,
                     const coll_t& H, const ghobject_t& W)
{
  for (const auto& c : gone) {
    if (s->collection_exists(c)) {
      return false;
    }
  }
  return read_all(s, H, W) == std::string(4096, 'w');
}

const char* const MOUNT_STATUS = " (2: mount failed, 5: wrong state, a "
                                 "signal: the mount aborted)";

/// The sequence of RecordOfALaterIncarnationKeepsAnEarlierRemove, in a
/// child: C made, A written, both deleted; C made again, A written, swept
/// (its record) and both deleted again; W in H cached before all of it, so
/// the checkpoint stays below. `first_life` adds ops to the first life's
/// transaction.
void delete_remake_delete(const StoreDir& d, const coll_t& H, const coll_t& C,
                          const ghobject_t& W, const ghobject_t& A,
                          const std::function<void(Transaction&)>& first_life,
                          const std::function<void(Transaction&)>& first_rm)
{
  int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
    hold_checkpoint(up, H, W);
    ObjectStore* s = up.get();
    auto c1 = s->create_new_collection(C);
    {
      Transaction t;
      t.create_collection(C, 0);
      t.write(C, A, 0, 8192, fill(8192, 'x'));
      first_life(t);
      apply(s, c1, std::move(t));
    }
    {
      Transaction t;  // the PG deleted
      first_rm(t);
      t.remove(C, A);
      t.remove_collection(C);
      apply(s, c1, std::move(t));
    }
    c1.reset();
    auto c2 = s->create_new_collection(C);
    {
      Transaction t;  // and made again, the same object written
      t.create_collection(C, 0);
      t.write(C, A, 0, 8192, fill(8192, 'y'));
      apply(s, c2, std::move(t));
    }
    // swept first (8 KiB before W's 4 KiB), then deleted again
    Transaction again;
    again.remove(C, A);
    again.remove_collection(C);
    sweep_one_then(s, c2, std::move(again));
  });
  ASSERT_TRUE(exited_ok(st)) << "status " << st;
}

}  // namespace

// A PG deleted, made again and deleted again while one sweep ran: the sweep
// wrote the second incarnation's object back, and its written-back record
// ("every op on C/A below F is durable") outlived both deletions. Replay
// from the checkpoint (held before all of it by a cached write elsewhere)
// made the first incarnation's C and A again, then skipped A's remove as
// covered by that record, and the collection's removal found it non-empty:
// the mount aborted, and so did every mount after it. Found by a read-only
// audit (helper) of PG deletion and re-creation. No crash is needed: a
// clean umount keeps the window and the records.
TEST(MIMStoreWrittenBackReplay, RecordOfALaterIncarnationKeepsAnEarlierRemove)
{
  for (Window w : {Window::Journal, Window::Ram}) {
    SCOPED_TRACE(window_name(w));
    Conf c = record_conf(w);
    StoreDir d;
    const coll_t H = pg(1), C = pg(2);
    const ghobject_t W = obj("w", 1), A = obj("a", 2);
    mkfs_store(d);
    ASSERT_NO_FATAL_FAILURE(delete_remake_delete(
      d, H, C, W, A, [](Transaction&) {}, [](Transaction&) {}));
    int st = mount_and_check(
      d, [&](ObjectStore* s) { return gone_and_w_kept(s, {C}, H, W); });
    EXPECT_TRUE(exited_ok(st)) << "remount: status " << st << MOUNT_STATUS;
  }
}

// The same record, reached by a replayed split instead: the first life of
// D came from splitting C, so replay moved the re-made C/X onto D/X without
// asking about D/X, and X's remove in that life was skipped as covered by
// the later life's record (found by a second read-only audit).
TEST(MIMStoreWrittenBackReplay, ReplayedSplitKeepsTheChildsRemove)
{
  for (Window w : {Window::Journal, Window::Ram}) {
    SCOPED_TRACE(window_name(w));
    Conf c = record_conf(w);
    StoreDir d;
    const coll_t H = pg(1), C = pg(0), D = pg(2);
    const ghobject_t W = obj("w", 1), X = obj("x", 2);
    mkfs_store(d);
    int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
      hold_checkpoint(up, H, W);
      ObjectStore* s = up.get();
      auto ch = s->create_new_collection(C);
      {
        Transaction t;
        t.create_collection(C, 1);
        t.write(C, X, 0, 8192, fill(8192, 'x'));
        apply(s, ch, std::move(t));
      }
      auto d1 = s->create_new_collection(D);
      {
        Transaction t;  // X goes to D
        t.create_collection(D, 2);
        t.split_collection(C, 2, 2, D);
        apply(s, ch, std::move(t));
      }
      {
        Transaction t;  // both PGs deleted
        t.remove(D, X);
        t.remove_collection(D);
        t.remove_collection(C);
        apply(s, ch, std::move(t));
      }
      ch.reset();
      d1.reset();
      auto d2 = s->create_new_collection(D);
      {
        Transaction t;  // D made again, X written: swept first
        t.create_collection(D, 2);
        t.write(D, X, 0, 8192, fill(8192, 'y'));
        apply(s, d2, std::move(t));
      }
      Transaction again;
      again.remove(D, X);
      again.remove_collection(D);
      sweep_one_then(s, d2, std::move(again));
    });
    ASSERT_TRUE(exited_ok(st)) << "status " << st;
    st = mount_and_check(
      d, [&](ObjectStore* s) { return gone_and_w_kept(s, {C, D}, H, W); });
    EXPECT_TRUE(exited_ok(st)) << "remount: status " << st << MOUNT_STATUS;
  }
}

// The mount-time prune of the written-back records took a read error on an
// object's marks for a create cut short and deleted its record for good:
// the next mount replayed ops the record covered over the written-back
// file. The error now fails the mount with the record kept, and a mount
// after the error is gone skips those ops by it.
TEST(MIMStoreWrittenBackReplay, UnreadableMarksKeepTheRecord)
{
  for (Window w : {Window::Journal, Window::Ram}) {
    SCOPED_TRACE(window_name(w));
    Conf c = record_conf(w);
    StoreDir d;
    const coll_t H = pg(1), C = pg(2);
    const ghobject_t W = obj("w", 1), A = obj("a", 2);
    mkfs_store(d);
    int st = in_mounted_child(d, [&](std::unique_ptr<ObjectStore>& up) {
      hold_checkpoint(up, H, W);
      ObjectStore* s = up.get();
      auto ch = s->create_new_collection(C);
      {
        Transaction t;
        t.create_collection(C, 0);
        t.write(C, A, 0, 8192, fill(8192, 'a'));  // swept first
        apply(s, ch, std::move(t));
      }
      Transaction then;
      then.touch(C, obj("t", 2));
      sweep_one_then(s, ch, std::move(then));
    });
    ASSERT_TRUE(exited_ok(st)) << "status " << st;
    {
      Conf fault({{"mimstore_debug_fault", marks_eio(A)}});
      st = mount_and_check(d, [](ObjectStore*) { return true; });
      EXPECT_TRUE(mount_failed(st))
        << "a mount that could not read A's marks: status " << st
        << MOUNT_STATUS;
    }
    st = mount_and_check(d, [&](ObjectStore* s) {
      return perf_counter(s, l_mimstore_replay_written_back) > 0 &&
             read_all(s, C, A) == std::string(8192, 'a') &&
             gone_and_w_kept(s, {}, H, W);
    });
    EXPECT_TRUE(exited_ok(st)) << "remount: status " << st << MOUNT_STATUS;
  }
}

// A record replay stopped trusting must stay forgotten: a mount killed in
// its replay, after it had made the first life's A again (with a birth
// mark) and before that life's remove, left a next mount that read the
// record again and skipped the remove. Here the first life also renames a
// temporary object, as recovery does, and the mount dies inside that
// rename's replay.
TEST(MIMStoreWrittenBackReplay, ForgottenRecordStaysForgotten)
{
  for (Window w : {Window::Journal, Window::Ram}) {
    SCOPED_TRACE(window_name(w));
    Conf c = record_conf(w);
    StoreDir d;
    const coll_t H = pg(1), C = pg(2);
    const ghobject_t W = obj("w", 1), A = obj("a", 2), T = obj("t", 2),
                     T2 = obj("t2", 2);
    mkfs_store(d);
    ASSERT_NO_FATAL_FAILURE(delete_remake_delete(
      d, H, C, W, A,
      [&](Transaction& t) {
        t.touch(C, T);
        t.collection_move_rename(C, T, C, T2);
      },
      [&](Transaction& t) { t.remove(C, T2); }));
    pid_t pid = fork_child();
    if (pid == 0) {
      auto s = make_store(d);
      die_at(s.get(), "rename:linked");  // in replay, after A is made again
      s->mount();
      _exit(1);  // the point was never reached
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(exited_ok(st)) << "the mount did not die in the rename: "
                               << st;
    st = mount_and_check(
      d, [&](ObjectStore* s) { return gone_and_w_kept(s, {C}, H, W); });
    EXPECT_TRUE(exited_ok(st)) << "remount: status " << st << MOUNT_STATUS;
  }
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
