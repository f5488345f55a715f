// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore crash loop: power loss at the Nth I/O, N walking through the
 * whole write path (journal appends and wraps, applies, HTMLL flushes,
 * syncs, checkpoint and header writes), merge off, on, and on with the
 * merged data kept only in a journal of 512-byte blocks (torn writes then
 * tear inside what a 4 KiB journal would write as one block).
 *
 * For each crash point a forked child mounts a fresh store whose I/O seam
 * (FaultIoEnv) crashes at I/O N: every write not yet synced is kept,
 * dropped or torn (seeded), then the child dies. It reports every
 * committed transaction on a pipe. The parent remounts (replay), runs
 * fsck, and compares the store with a reference (memstore) that applied
 * the same transactions: the store must equal the reference after exactly
 * k transactions, k at least the number acknowledged (nothing acknowledged
 * is lost, nothing half applied). Every third crash point also crashes the
 * first remount (a second power loss in the middle of replay). Every third
 * other one lives on: after the check, a second child mounts again and
 * runs the rest of the workload from the state found, and crashes too.
 * With merging on, the mounts keep the merge window (docs/store.md,
 * "Replay"), so the last mount replays the first life's writes and the
 * second's from one journal generation, across two crashes and the
 * check's clean stop between them.
 *
 * The workload (RandomTxns) has every op kind the OSD sends, PG split and
 * merge and PG-deletion-like sequences among them. The on_wide setting
 * runs its wide form: 8 collections, each transaction queued on its own
 * collection's handle, xattr and omap values up to 64 KiB, rmattrs.
 * After the walking points, cuts inside a journal wrap (between the WRAP
 * block's write and its batch's), placed by the writer's named points.
 *
 * Environment: MIMSTORE_CRASH_POINTS (default 200 per setting),
 * MIMSTORE_CRASH_SEED (default 1), MIMSTORE_CRASH_ONLY=N (replay one point;
 * with MIMSTORE_CRASH_INDEX=p, as the p-th point of the loop: p % 3 picks a
 * second crash during the replay (1) or a second life (2); a failure's
 * trace gives both),
 * MIMSTORE_CRASH_DUMP_TXNS=1 (print the seed's transactions as JSON, run
 * nothing: the workload does not depend on timing, only the I/O count does),
 * MIMSTORE_CRASH_CUT_SEED=S (the seed of the cut's outcomes; by default
 * derived from the crash point. A failure on another machine whose runs had
 * a different I/O count is chased by keeping its cut seed, seed*1000003+N,
 * while N walks around its crash point).
 * RocksDB (omap, xattrs) writes its files itself, outside the seam; under
 * fault injection the store gives it CrashRocksEnv, which cuts their
 * unsynced tails at the same crash (docs/fault-injection.md).
 */
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>

#include <gtest/gtest.h>

#include "common/Formatter.h"
#include "global/global_context.h"
#include "include/stringify.h"

#include "MIMStore.h"
#include "mimstore_test_util.h"

using namespace mimtest;
using Transaction = ObjectStore::Transaction;

namespace {

constexpr int TXNS = 120;

uint64_t env_u64(const char* name, uint64_t dflt)
{
  const char* v = getenv(name);
  return v ? strtoull(v, nullptr, 10) : dflt;
}

/// What a crash loop runs: merging off, on with the merged data in memory
/// (set explicitly: the default keeps it in the journal), or on with the
/// merged data only in a journal of 512-byte blocks (reads and write back
/// from there).
/// WIDE: merging on with the default window (the bytes in the journal),
/// and the wide workload (RandomTxns: 8 collections, each transaction on
/// its collection's own handle, larger xattr and omap values, rmattrs).
enum class CrashMode { MERGE_OFF, MERGE_ON, JOURNAL_DATA_512, WIDE };

const char* mode_name(CrashMode m)
{
  switch (m) {
  case CrashMode::MERGE_OFF: return "off";
  case CrashMode::MERGE_ON: return "on";
  case CrashMode::JOURNAL_DATA_512: return "on_jdata_512";
  case CrashMode::WIDE: return "on_wide";
  }
  return "?";
}

Conf crash_conf(CrashMode m)
{
  // The smallest journal mimstore takes (16 MiB): the workload alone does
  // not fill it once, the wrap points' filler (add_filler) wraps it about
  // four times. Short sync and flush intervals so syncs, flushes and
  // checkpoints happen between crashes.
  const bool merge = m != CrashMode::MERGE_OFF;
  const bool jdata = m == CrashMode::JOURNAL_DATA_512 ||
                     m == CrashMode::WIDE;
  return Conf({{"mimstore_merge", merge ? "true" : "false"},
               {"mimstore_merge_data_in_journal", jdata ? "true" : "false"},
               {"mimstore_journal_block_size",
                m == CrashMode::JOURNAL_DATA_512 ? "512" : "4096"},
               {"osd_journal_size", "16"},
               {"mimstore_journal_max_batch_bytes", "262144"},
               {"mimstore_journal_throughput", "100000000"},
               {"mimstore_sync_interval", "0.05"},
               {"mimstore_min_sync_interval", "0.01"},
               {"mimstore_max_flush_interval", "0.02"}});
}

/// The whole run's transactions in order (the setup, then TXNS generated
/// ones), each with the collections it creates, the collection whose
/// handle queues it and whether it goes alone (wide: a collection change),
/// and the base collections.
struct Workload {
  std::vector<Transaction> txns;
  std::vector<std::vector<coll_t>> created;  ///< per transaction
  std::vector<coll_t> on;                    ///< per transaction
  std::vector<bool> alone;                   ///< per transaction
  std::vector<coll_t> collections;
};

Workload make_workload(uint64_t seed, bool wide)
{
  RandomTxns gen(seed, 2, 12, wide);
  Workload w;
  w.collections = gen.collections();
  w.txns = gen.setup();
  w.created.resize(w.txns.size());
  w.on = w.collections;  // (setup: one transaction per collection)
  w.alone.resize(w.txns.size(), false);
  for (int k = 0; k < TXNS; ++k) {
    w.created.emplace_back();
    w.txns.push_back(gen.next(&w.created.back()));
    w.on.push_back(wide ? gen.collection() : w.collections[0]);
    w.alone.push_back(wide && gen.changed_collections());
  }
  return w;
}

/// The wrap points' filler: 512 KiB written to a scratch object and
/// removed again at the end of a transaction. The journal (16 MiB, the
/// least mimstore takes) then wraps about four times in a run of the
/// workload, which by itself does not fill it once; the state after each
/// transaction is the same as without (the object never outlives it, and
/// its hash, the collection's placement seed, keeps it in that collection
/// on the parent's side of any split).
void add_filler(Transaction& t, const coll_t& c)
{
  spg_t pg;
  const uint32_t ps = c.is_pg(&pg) ? pg.pgid.ps() : 0;
  const ghobject_t F(hobject_t(object_t("wrap_filler"), "", CEPH_NOSNAP, ps,
                               1, ""));
  Transaction f;
  bufferlist bl;
  bl.append(std::string(512 << 10, 'f'));
  f.write(c, F, 0, bl.length(), bl);
  f.remove(c, F);
  t.append(f);
}

/// In a child: the store at `d` mounted (replaying) with the fault spec;
/// exits 3 if the mount fails.
std::unique_ptr<ObjectStore> child_mount(const StoreDir& d,
                                         const std::string& spec)
{
  g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", spec);
  g_ceph_context->_conf.apply_changes(nullptr);
  auto s = make_store(d);
  if (s->mount() != 0) {
    _exit(3);
  }
  return s;
}

/// Where a wrap point cuts power: at the `nth` time the journal's writer
/// passes `point` (0: no wrap point, the spec's crash_at decides).
struct WrapCut {
  const char* point = "";
  int nth = 0;
};

/// The cut of `w` in the store's child: power loss through the fault seam
/// (the spec's mode decides what of the unsynced writes survives), then
/// the child dies as crash_at's does (exit 77).
void install_wrap_cut(ObjectStore* s, const WrapCut& w)
{
  auto* ms = static_cast<MIMStore*>(s);
  auto seen = std::make_shared<std::atomic<int>>(0);
  const std::string point = w.point;
  const int nth = w.nth;
  ms->set_debug_hook([ms, point, nth, seen](const char* where) {
    if (point == where && ++*seen == nth) {
      ms->debug_fault_crash(where);
      _exit(78);  // (the seam's callback exits 77 first)
    }
  });
}

/// Child: mount (replaying what an earlier life left) with the fault
/// spec, run the workload's transactions from index `from` on (the store
/// was found equal to the reference after `from`), reporting each commit
/// on `fd` (the int32 index), and at a clean end -1000-io_count. Four in
/// flight at once, so batches group and crash points land between journal
/// commit and apply too; wide, each on its collection's handle, and a
/// collection change only once the ones before it are done. `fill`: the
/// wrap points' filler in every transaction. Never returns.
[[noreturn]] void child_workload(const StoreDir& d, const std::string& spec,
                                 uint64_t seed, bool wide, size_t from,
                                 bool fill, const WrapCut& wrap, int fd)
{
  auto s = child_mount(d, spec);
  if (wrap.nth) {
    install_wrap_cut(s.get(), wrap);
  }
  Workload w = make_workload(seed, wide);  // the list the Reference applies
  auto& txns = w.txns;
  std::map<coll_t, ObjectStore::CollectionHandle> ch;
  for (auto& c : w.collections) {
    ch[c] = s->create_new_collection(c);
  }
  auto handle = [&](const coll_t& c) {
    auto p = ch.find(c);
    if (p == ch.end()) {
      p = ch.emplace(c, s->open_collection(c)).first;
    }
    return p->second;
  };
  for (size_t k = from; k < txns.size();) {
    std::vector<std::unique_ptr<C_SaferCond>> done;
    const size_t group = k;
    for (int j = 0; j < 4 && k < txns.size(); ++j, ++k) {
      if (w.alone[k] && j > 0) {
        break;  // after the ones in flight
      }
      for (auto& nc : w.created[k]) {
        ch[nc] = s->create_new_collection(nc);
      }
      done.push_back(std::make_unique<C_SaferCond>());
      // Wide: in the transaction's own collection, and none beside a
      // collection change (a PG deletion removes its collection).
      if (fill && !wide) {
        add_filler(txns[k], w.collections[0]);
      } else if (fill && !w.alone[k]) {
        add_filler(txns[k], w.on[k]);
      }
      txns[k].register_on_commit(done.back().get());
      auto h = wide ? handle(w.on[k]) : handle(w.collections[0]);
      s->queue_transaction(h, std::move(txns[k]));
      if (w.alone[k]) {
        ++k;
        break;  // and nothing beside it
      }
    }
    for (size_t j = 0; j < done.size(); ++j) {
      done[j]->wait();
      int32_t v = int32_t(group + j);
      if (write(fd, &v, sizeof(v)) != sizeof(v)) {
        _exit(4);
      }
    }
  }
  ch.clear();
  s->umount();
  int32_t v = -1000 - int32_t(static_cast<MIMStore*>(s.get())
                                ->debug_fault_io_count());
  if (write(fd, &v, sizeof(v)) != sizeof(v)) {
    _exit(4);
  }
  _exit(0);
}

struct ChildResult {
  int acked = 0;        ///< transactions whose commit was reported
  int64_t io_count = -1;  ///< set when the child ran to the end
  int status = 0;
};

/// Fork `child` (which never returns) with the write end of a pipe, and
/// collect what it reports there: commits (int32 index each; `acked`
/// counts from the given value) and -1000-io_count at a clean end.
ChildResult run_reporting_child(const std::function<void(int)>& child,
                                int acked)
{
  int pfd[2];
  ceph_assert(pipe(pfd) == 0);
  pid_t pid = fork_child();
  ceph_assert(pid >= 0);
  if (pid == 0) {
    close(pfd[0]);
    child(pfd[1]);
    _exit(5);  // (children exit themselves)
  }
  close(pfd[1]);
  ChildResult r;
  r.acked = acked;
  int32_t v;
  while (read(pfd[0], &v, sizeof(v)) == sizeof(v)) {
    if (v <= -1000) {
      r.io_count = -1000 - int64_t(v);
    } else {
      r.acked = v + 1;
    }
  }
  close(pfd[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

ChildResult run_child(const StoreDir& d, const std::string& spec,
                      uint64_t seed, bool wide, const WrapCut& wrap = {})
{
  return run_reporting_child(
    [&](int fd) {
      child_workload(d, spec, seed, wide, 0, wrap.nth != 0, wrap, fd);
    }, 0);
}

/// A second life from index `from`, as run_child but without a wrap cut.
ChildResult run_child_continue(const StoreDir& d, const std::string& spec,
                               uint64_t seed, bool wide, size_t from,
                               bool fill)
{
  return run_reporting_child(
    [&](int fd) { child_workload(d, spec, seed, wide, from, fill, {}, fd); },
    int(from));
}

/// Child: mount (replaying the journal) with the fault spec, which may
/// crash it (exit 77) during the replay; a mount that completes exits 0
/// without umount. Returns the wait status.
int remount_and_crash(const StoreDir& d, const std::string& spec)
{
  pid_t pid = fork_child();
  ceph_assert(pid >= 0);
  if (pid == 0) {
    g_ceph_context->_conf.set_val_or_die("mimstore_debug_fault", spec);
    g_ceph_context->_conf.apply_changes(nullptr);
    auto s = make_store(d);
    _exit(s->mount() == 0 ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

/// The states of the reference after each number of transactions.
class Reference {
 public:
  Reference(uint64_t seed, bool wide) : dir() {
    store = make_store(dir, "memstore");
    ceph_assert(store->mkfs() == 0);
    ceph_assert(store->mount() == 0);
    Workload w = make_workload(seed, wide);
    for (auto& c : w.collections) {
      ch[c] = store->create_new_collection(c);
    }
    pending = std::move(w.txns);
    created = std::move(w.created);
    states.push_back(dump_state(store.get()));
  }
  ~Reference() {
    ch.clear();
    store->umount();
  }
  /// State after n transactions.
  const StoreState& after(size_t n) {
    while (states.size() <= n) {
      for (auto& nc : created[states.size() - 1]) {
        store->create_new_collection(nc);
      }
      apply(store.get(), ch.begin()->second,
            Transaction(pending[states.size() - 1]));
      states.push_back(dump_state(store.get()));
    }
    return states[n];
  }
  size_t total() const { return pending.size(); }
  /// Every transaction of the run, numbered as `acked` counts them: the
  /// workload is fixed by the seed, so a failure's transactions can be
  /// read after the fact.
  void dump(std::ostream& out) {
    JSONFormatter f(true);
    for (size_t k = 0; k < pending.size(); ++k) {
      f.open_object_section("txn");
      f.dump_unsigned("index", k);
      pending[k].dump(&f);
      f.close_section();
      f.flush(out);
      out << "\n";
    }
  }

 private:
  StoreDir dir;
  std::unique_ptr<ObjectStore> store;
  std::map<coll_t, ObjectStore::CollectionHandle> ch;
  std::vector<Transaction> pending;
  std::vector<std::vector<coll_t>> created;  ///< per pending transaction
  std::vector<StoreState> states;
};

/// Whether `got` equals the reference after exactly k transactions for
/// some k >= acked; sets *k to the first. Empty when it does, else what
/// differs: from the states just after the acknowledged prefix, and for
/// each differing object which reference states each part matches (tells
/// a lost write, an older state, from a foreign one, no state).
std::string check_state(Reference& ref, const StoreState& got, size_t acked,
                        size_t* k_found)
{
  std::string near_diffs;
  for (size_t k = acked; k <= ref.total(); ++k) {
    std::string diff = diff_state(ref.after(k), got);
    if (diff.empty()) {
      *k_found = k;
      return "";
    }
    if (k < acked + 4) {
      // the replayed but unacknowledged transactions may be among them
      near_diffs += "\n  after " + std::to_string(k) + ": " + diff;
    }
  }
  std::string hint;
  for (auto& [cid, objs] : got) {
    for (auto& [o, st] : objs) {
      auto& want = ref.after(acked);
      auto pc = want.find(cid);
      if (pc != want.end() && pc->second.count(o) &&
          pc->second.at(o) == st) {
        continue;
      }
      // Each part on its own: a part that matches no state, or only
      // older ones, is the part that was lost.
      std::string kdata, kattrs, komap;
      for (size_t k = 0; k <= ref.total(); ++k) {
        auto& rs = ref.after(k);
        auto p2 = rs.find(cid);
        if (p2 == rs.end() || !p2->second.count(o)) {
          continue;
        }
        const ObjectState& w = p2->second.at(o);
        if (w.data == st.data) {
          kdata += " " + std::to_string(k);
        }
        if (w.attrs == st.attrs) {
          kattrs += " " + std::to_string(k);
        }
        if (w.omap == st.omap && w.omap_header == st.omap_header) {
          komap += " " + std::to_string(k);
        }
      }
      hint += "\n  " + stringify(cid) + "/" + stringify(o) +
        ": equals the reference after k in: data {" + kdata +
        " }, xattrs {" + kattrs + " }, omap {" + komap + " }";
    }
  }
  return std::to_string(acked) + " transactions acknowledged; the store "
    "matches no reference state from there on:" + near_diffs + hint;
}

}  // namespace

class MIMStoreCrash : public ::testing::TestWithParam<CrashMode> {};

TEST_P(MIMStoreCrash, PowerLossAtWalkingIOPoints)
{
  const CrashMode mode = GetParam();
  const uint64_t seed = env_u64("MIMSTORE_CRASH_SEED", 1);
  const uint64_t points = env_u64("MIMSTORE_CRASH_POINTS", 200);
  const uint64_t only = env_u64("MIMSTORE_CRASH_ONLY", 0);
  const uint64_t only_index = env_u64("MIMSTORE_CRASH_INDEX", 0);
  // MIMSTORE_CRASH_META=xfs: metadata ops (create, rename, unlink, xattrs)
  // durable only at the next log force, the rest undone at a crash.
  const char* meta_env = getenv("MIMSTORE_CRASH_META");
  const std::string meta =
    meta_env && *meta_env ? std::string(",meta=") + meta_env : "";
  Conf c = crash_conf(mode);
  const bool wide = mode == CrashMode::WIDE;
  Reference ref(seed, wide);
  if (getenv("MIMSTORE_CRASH_DUMP_TXNS")) {
    ref.dump(std::cout);
    return;
  }

  // Calibrate: the I/O count of a run without a crash.
  uint64_t total_io;
  {
    StoreDir d;
    auto s = make_store(d);
    ASSERT_EQ(0, s->mkfs());
    auto r = run_child(d, "seed=" + stringify(seed) + meta, seed, wide);
    ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
      << "calibration run failed, status " << r.status;
    ASSERT_GT(r.io_count, 0);
    ASSERT_EQ(int(ref.total()), r.acked);
    total_io = r.io_count;
  }
  std::cout << "crash loop: merge " << mode_name(mode) << ", seed "
            << seed << meta << ", " << total_io << " I/Os per run, " << points
            << " crash points" << std::endl;

  uint64_t acked_total = 0, lost = 0, runs = 0, second_crashes = 0;
  uint64_t second_lives = 0, not_crashed = 0;
  // One crash point: a fresh store, the workload cut by `cut` (the spec's
  // crash_at, or the wrap point `wrap`), the checks; by p, a second crash
  // during the replay, and a second life with new writes and a cut.
  // Sets *code to the child's exit code (77: it crashed; 0: it ran to
  // the end).
  auto run_point = [&](uint64_t p, uint64_t n, const std::string& cut,
                       const WrapCut& wrap, const std::string& trace,
                       int* code) {
    SCOPED_TRACE(trace);
    *code = -1;
    StoreDir d;
    {
      auto s = make_store(d);
      ASSERT_EQ(0, s->mkfs());
    }
    const uint64_t cut_seed = env_u64("MIMSTORE_CRASH_CUT_SEED",
                                      seed * 1000003 + n);
    auto r = run_child(d, cut + ",seed=" + stringify(cut_seed) + meta, seed,
                       wide, wrap);
    ASSERT_TRUE(WIFEXITED(r.status)) << "child died by signal";
    *code = WEXITSTATUS(r.status);
    ASSERT_TRUE(*code == 77 || *code == 0) << "child exit " << *code;
    if (p % 3 == 1) {
      // A second power loss, during the replay of the first: replay must
      // be restartable from any point.
      uint64_t m = 1 + (p * 37 + seed) % 400;
      int st2 = remount_and_crash(d, "crash_at=" + stringify(m) + ",seed=" +
                                  stringify(seed * 7919 + p) +
                                  ",mode=random" + meta);
      ASSERT_TRUE(WIFEXITED(st2) &&
                  (WEXITSTATUS(st2) == 77 || WEXITSTATUS(st2) == 0))
        << "replay with a crash at its I/O " << m << ": status " << st2;
      if (WEXITSTATUS(st2) == 77) {
        ++second_crashes;  // (0: the replay ended before its I/O m)
      }
    }
    auto s = make_store(d);
    ASSERT_EQ(0, s->mount()) << "remount after the crash failed";
    size_t k = 0;
    std::string why = check_state(ref, dump_state(s.get()), r.acked, &k);
    const bool found = why.empty();
    EXPECT_TRUE(found) << why;
    if (!found) {
      ++lost;
    }
    EXPECT_EQ(0, s->fsck(false));
    const bool next_life = found && p % 3 == 2 && k < ref.total();
    // The data checksums against the files once the window is written
    // back (a chunk the window covers whole may differ until then): not
    // before a next life, whose start must find the window as it was.
    auto check_csums = [&](std::unique_ptr<ObjectStore>& st,
                           const char* when) {
      ASSERT_EQ(0, write_back_and_umount(st.get()));
      std::string report;
      EXPECT_EQ(0, verify_checksums(d, true, &report)) << when << ": "
                                                       << report;
    };
    if (next_life) {
      // This mount appends before it stops, as a running OSD does: one
      // collection made and removed, which leaves no trace in the state.
      // A mount that keeps the window writes after the entries it
      // replayed, and the next life's scan must cross them (issue 61 item
      // 1: a keeping mount erased a WRAP it had replayed through, and only
      // an append after it made the next scan stop there).
      const coll_t scratch(spg_t(pg_t(999, 77)));
      auto ch = s->create_new_collection(scratch);
      Transaction t1, t2;
      t1.create_collection(scratch, 0);
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t1)));
      t2.remove_collection(scratch);
      ASSERT_EQ(0, apply(s.get(), ch, std::move(t2)));
      ASSERT_EQ(0, s->umount());
    } else {
      check_csums(s, "after the crash");
    }
    acked_total += r.acked;
    if (next_life) {
      // A second life from the state found: new writes after the replayed
      // ones (in the same journal generation when the window was kept),
      // then a second power cut at a point of the rest of the workload.
      const uint64_t rest_io =
        total_io * (ref.total() - k) / ref.total() + 40;
      const uint64_t m = 1 + (p * 53 + seed * 17) % rest_io;
      SCOPED_TRACE("second life from " + stringify(k) + " transactions, "
                   "crash at its I/O " + stringify(m));
      auto r2 = run_child_continue(d, "crash_at=" + stringify(m) + ",seed=" +
                                   stringify(cut_seed + 1000000) +
                                   ",mode=random" + meta, seed, wide, k,
                                   wrap.nth != 0);
      ASSERT_TRUE(WIFEXITED(r2.status)) << "second life died by signal";
      const int code2 = WEXITSTATUS(r2.status);
      ASSERT_TRUE(code2 == 77 || code2 == 0) << "second life exit " << code2;
      auto s2 = make_store(d);
      ASSERT_EQ(0, s2->mount()) << "remount after the second crash failed";
      size_t k2 = 0;
      std::string why2 = check_state(ref, dump_state(s2.get()), r2.acked,
                                     &k2);
      EXPECT_TRUE(why2.empty()) << "after the second life: " << why2;
      if (!why2.empty()) {
        ++lost;
      }
      EXPECT_EQ(0, s2->fsck(false));
      check_csums(s2, "after the second life");
      acked_total += r2.acked - k;
      ++second_lives;
    }
  };
  for (uint64_t p = only ? only_index : 0; p < points || only; ++p) {
    uint64_t n = only ? only : 1 + p * total_io / points + (p % 7);
    int code;
    run_point(p, n, "crash_at=" + stringify(n) + ",mode=random", {},
              "crash point " + stringify(n) + " seed " + stringify(seed) +
              " merge " + mode_name(mode) +
              " (replay with MIMSTORE_CRASH_ONLY=" + stringify(n) +
              " MIMSTORE_CRASH_INDEX=" + stringify(p) +
              " MIMSTORE_CRASH_SEED=" + stringify(seed) + ")", &code);
    if (HasFatalFailure()) {
      return;
    }
    ++runs;
    if (code == 0) {
      ++not_crashed;  // the point lay beyond this run's I/Os
    }
    if (only) {
      break;
    }
  }
  // Points inside a wrap (issue 61 item 1): power lost after the WRAP
  // block's write was issued and before its batch's (mode keep: the WRAP
  // lands, the batch does not; mode random: either), and after both were
  // issued (random: any of the four). Placed by the writer's named points,
  // not by I/O count: timers move the count from run to run, and a wrap is
  // two I/Os wide. Every wrap of the run, up to 4, through every life.
  uint64_t wrap_points = 0, wraps_cut = 0;
  const struct {
    const char* point;
    const char* mode;
  } wrap_cuts[] = {{"journal:wrap_submitted", "keep"},
                   {"journal:wrap_submitted", "random"},
                   {"journal:wrap_batch_submitted", "random"}};
  for (int nth = 1; nth <= 4 && !only; ++nth) {
    bool crashed_here = false;
    for (size_t j = 0; j < std::size(wrap_cuts); ++j) {
      const auto& wc = wrap_cuts[j];
      // p % 3 picks the lives (1: a second crash in the replay, 2: a
      // second life): each kind of cut gets each in turn, the first WRAP
      // kept without its batch a second life (what hid item 1).
      const uint64_t life = (j + 2 + (nth - 1)) % 3;
      const uint64_t p = (points / 3 + 1 + wrap_points++) * 3 + life;
      int code;
      run_point(p, 1000000 + p, std::string("mode=") + wc.mode,
                {wc.point, nth},
                std::string("wrap ") + stringify(nth) + " cut at " +
                wc.point + ", mode " + wc.mode + ", seed " + stringify(seed) +
                " merge " + mode_name(mode), &code);
      if (HasFatalFailure()) {
        return;
      }
      if (code == 77) {
        crashed_here = true;
        ++wraps_cut;
      }
    }
    if (!crashed_here) {
      break;  // the run has fewer wraps (its points ran to the end)
    }
  }
  if (!only) {
    std::cout << "crash loop: " << wraps_cut << " cuts inside a wrap"
              << std::endl;
    EXPECT_GE(wraps_cut, 3u) << "the run's journal never wrapped";
  }
  std::cout << "crash loop: " << runs - not_crashed << " crashes ("
            << not_crashed << " points past the run's end, no crash), "
            << acked_total << " acknowledged transactions in all, "
            << second_crashes << " second crashes during replay, "
            << second_lives << " second lives with new writes and a crash, "
            << lost << " runs with a lost or half-applied transaction"
            << std::endl;
  // Points are placed by the calibration's I/O count; a run with fewer
  // I/Os (timers: syncs, flushes) leaves the last ones uncrashed. More
  // than a few means the points do not test what they say.
  if (!only) {
    EXPECT_LE(not_crashed * 20, runs)
      << not_crashed << " of " << runs << " crash points did not crash";
  }
}

INSTANTIATE_TEST_SUITE_P(Merge, MIMStoreCrash,
                         ::testing::Values(CrashMode::MERGE_OFF,
                                           CrashMode::MERGE_ON,
                                           CrashMode::JOURNAL_DATA_512,
                                           CrashMode::WIDE),
                         [](const auto& info) {
                           return mode_name(info.param);
                         });
