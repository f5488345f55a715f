// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests of Durability (parts per sn, the sync thread, the
 * checkpoint, the writeback throttle). No test depends on timing: the sync
 * thread's interval is an hour, so it syncs only when asked, and a test
 * that needs a sync in progress holds it inside the sync_data hook.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "core/durability.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mim;

namespace {

/// A journal that holds at most this many entries (the default window).
constexpr uint64_t kSmallJournal = 1000;

/// A Durability with its sync thread running, and what its hooks saw.
struct Running {
  Durability d;
  std::thread thread;
  std::mutex lock;
  std::vector<sn_t> moved;      ///< checkpoint_moved calls, GUARDED_BY(lock)
  std::vector<std::string> log; ///< hook calls in order, GUARDED_BY(lock)
  std::function<void()> in_sync;  ///< runs inside sync_data, if set

  explicit Running(DurabilityLimits limits = slow())
  {
    DurabilityHooks h;
    h.sync_data = [this] {
      note("sync_data");
      if (in_sync) {
        in_sync();
      }
    };
    h.synced = [this](double secs) {
      EXPECT_GE(secs, 0);
      note("synced");
    };
    h.checkpoint_moved = [this](sn_t cp) {
      std::lock_guard l(lock);
      moved.push_back(cp);
      log.push_back("moved");
    };
    h.after_sync = [this](sn_t cp) { note("after_sync"); };
    h.tick = [this] { note("tick"); };
    d.configure(limits, std::move(h));
    thread = std::thread([this] { d.run(); });
  }
  ~Running() { stop(); }

  void stop()
  {
    if (thread.joinable()) {
      d.stop();
      thread.join();
    }
  }
  void note(const char* what)
  {
    std::lock_guard l(lock);
    log.emplace_back(what);
  }
  std::vector<sn_t> moved_so_far()
  {
    std::lock_guard l(lock);
    return moved;
  }
  static DurabilityLimits slow()
  {
    DurabilityLimits l;
    l.interval = 3600;  // syncs only when asked
    l.min_interval = 0;
    return l;
  }
};

/// A one-shot gate a thread waits at until another opens it.
class Gate {
 public:
  void open()
  {
    std::lock_guard l(m);
    is_open = true;
    cv.notify_all();
  }
  void wait()
  {
    std::unique_lock l(m);
    cv.wait(l, [this] { return is_open; });
  }

 private:
  std::mutex m;
  std::condition_variable cv;
  bool is_open = false;
};

}  // namespace

TEST(Durability, ReleasedPartIsDurableOnlyAfterASync)
{
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  r.d.hold(1);
  r.d.release_after_sync(1);
  EXPECT_EQ(1u, r.d.checkpoint());
  EXPECT_EQ(1u, r.d.parts_unsynced());
  r.d.wait_for_next_sync();
  EXPECT_EQ(2u, r.d.checkpoint());
  EXPECT_EQ(0u, r.d.sns_held());
  EXPECT_EQ(0u, r.d.parts_unsynced());
  EXPECT_EQ(std::vector<sn_t>{2}, r.moved_so_far());
}

TEST(Durability, AMountForgetsWhatTheLastOneHeld)
{
  // A store object mounted again after an umount that left its merge
  // window in the journal: the replay holds those sns anew, so the holds
  // of the last mount must not stay (they would pin the checkpoint).
  mim::Durability d;
  d.reset_checkpoint(1, kSmallJournal);
  d.hold(1);
  d.hold(2);
  d.release_after_sync(2);
  ASSERT_EQ(2u, d.sns_held());
  d.reset_checkpoint(1, kSmallJournal);
  EXPECT_EQ(0u, d.sns_held());
  EXPECT_EQ(0u, d.parts_unsynced());
  d.hold(1);
  d.release_after_sync(1);
  EXPECT_EQ(1u, d.sns_held());
  EXPECT_EQ(1u, d.parts_unsynced());
}

TEST(Durability, AnSnIsDurableWhenAllItsPartsAre)
{
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  r.d.hold(1);  // the direct part
  r.d.hold(1);  // a merged write
  r.d.release_after_sync(1);
  r.d.wait_for_next_sync();
  EXPECT_EQ(1u, r.d.checkpoint());
  EXPECT_EQ(1u, r.d.sns_held());
  r.d.release_after_sync(std::vector<sn_t>{1});
  r.d.wait_for_next_sync();
  EXPECT_EQ(2u, r.d.checkpoint());
}

TEST(Durability, CheckpointStopsAtTheFirstSnNotDurable)
{
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  for (sn_t sn = 1; sn <= 3; ++sn) {
    r.d.hold(sn);
  }
  r.d.release_after_sync(std::vector<sn_t>{3, 2});
  r.d.wait_for_next_sync();
  EXPECT_EQ(1u, r.d.checkpoint());
  EXPECT_EQ(2u, r.d.checkpoint_pending());
  EXPECT_TRUE(r.moved_so_far().empty()) << "not moved: not persisted";
  r.d.release_after_sync(1);
  r.d.wait_for_next_sync();
  EXPECT_EQ(4u, r.d.checkpoint());
  EXPECT_EQ(std::vector<sn_t>{4}, r.moved_so_far());
}

TEST(Durability, WaitCoversASyncStartedAfterTheCallNotOneRunning)
{
  // A part released while a sync runs was not in that sync: a writer that
  // waits for the next sync must not be released by the running one.
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  Gate entered, go;
  bool first = true;
  r.in_sync = [&] {
    if (first) {
      first = false;
      entered.open();
      go.wait();
    }
  };
  r.d.hold(1);
  r.d.hold(2);
  r.d.release_after_sync(1);
  r.d.request_sync();
  entered.wait();  // sync 1 runs, with sn 1 only
  r.d.release_after_sync(2);
  sn_t seen = 0;
  std::thread waiter([&] {
    r.d.wait_for_next_sync();
    seen = r.d.checkpoint();
  });
  while (r.d.sync_waiters() == 0) {
    std::this_thread::yield();
  }
  go.open();
  waiter.join();
  EXPECT_EQ(3u, seen) << "released by the sync that was already running";
}

TEST(Durability, TickComesBeforeTheSyncAndTheCheckpointAfterIt)
{
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  r.d.hold(1);
  r.d.release_after_sync(1);
  r.d.wait_for_next_sync();
  r.stop();
  std::lock_guard l(r.lock);
  std::vector<std::string> want = {"tick", "sync_data", "synced", "moved",
                                    "after_sync"};
  ASSERT_GE(r.log.size(), want.size());
  EXPECT_EQ(want, std::vector<std::string>(r.log.begin(),
                                           r.log.begin() + want.size()));
}

TEST(Durability, NothingReleasedNoDataSync)
{
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  r.d.wait_for_next_sync();
  r.stop();
  std::lock_guard l(r.lock);
  for (auto& e : r.log) {
    EXPECT_NE("sync_data", e);
  }
  EXPECT_NE(r.log.end(), std::find(r.log.begin(), r.log.end(), "after_sync"));
}

TEST(Durability, DirtyDataIsSyncedWithNothingReleased)
{
  // A sync between a write and the release of its part: the throttle's
  // count is zeroed only by a sync that wrote the data.
  Running r;
  r.d.reset_checkpoint(1, kSmallJournal);
  r.d.note_dirty(4096);
  r.d.wait_for_next_sync();
  std::lock_guard l(r.lock);
  EXPECT_NE(r.log.end(), std::find(r.log.begin(), r.log.end(), "sync_data"));
}

TEST(Durability, StopSyncsWhatWasReleasedAndFreesWaiters)
{
  Running r;
  r.d.reset_checkpoint(5, kSmallJournal);
  r.d.hold(5);
  r.d.release_after_sync(5);
  r.stop();
  EXPECT_EQ(6u, r.d.checkpoint()) << "the final sync at stop";
  r.d.wait_for_next_sync();  // returns: the thread is stopping
}

TEST(Durability, WritebackThrottleUntilTheNextSync)
{
  DurabilityLimits limits = Running::slow();
  limits.writeback_ios = 3;
  limits.writeback_bytes = 1 << 20;
  Running r(limits);
  r.d.note_dirty(4096);
  r.d.note_dirty(4096);
  EXPECT_FALSE(r.d.over_writeback_limit());
  r.d.note_dirty(4096);
  EXPECT_TRUE(r.d.over_writeback_limit());
  r.d.wait_for_next_sync();
  EXPECT_FALSE(r.d.over_writeback_limit());
  r.d.note_dirty(1 << 20);
  EXPECT_TRUE(r.d.over_writeback_limit()) << "the byte limit alone";
}

TEST(Durability, ReleasedTwiceIsABug)
{
  // The child dies on the sync thread: fork only after a re-exec.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
    {
      Running r;
      r.d.reset_checkpoint(1, kSmallJournal);
      r.d.hold(1);
      r.d.release_after_sync(1);
      r.d.release_after_sync(1);
      r.d.wait_for_next_sync();
    },
    "check failed");
}
