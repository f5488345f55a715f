// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's journal replay at mount: every live entry decoded and applied
 * through the normal op code with the replay guards consulted, the merge
 * window kept when it can be (docs/store.md "Replay").
 */
#include "MIMStore.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "common/debug.h"
#include "common/errno.h"

#include "MIMJournal.h"
#include "ObjectFiles.h"
#include "TxnCodec.h"
#include "WrittenBack.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using ceph::bufferlist;

using namespace mimstore;

void MIMStore::_freeze_replayed(sn_t end)
{
  replay_froze_at = end;
  mim::FlushOrder order;
  if (!htmll->freeze(&order)) {
    return;  // nothing cached below `end`
  }
  dout(1) << "replay: the writes before sn " << end << " not yet written "
          << "back go back as the frozen generation (" << order.blocks
          << " blocks, " << order.bytes << " bytes)" << dendl;
  mim::MutexLock l(freeze_lock);
  _set_frozen_locked(std::move(order));
}

int MIMStore::_replay_journal()
{
  // Replay applies through the normal op code with guards consulted. With
  // merging on and a journal whose end can be kept, the window survives the
  // mount: a replayed write goes back into the merge cache, its bytes where
  // they are in the journal, holding its sn as a live write does, and the
  // journal keeps every replayed entry (start_keeping). Otherwise (merging
  // off, or an end that cannot be kept: a batch torn between two entries,
  // damage let through by mimstore_journal_ignore_corruption) every
  // replayed write goes to its file, and one sync makes all of it durable
  // before the journal restarts empty. docs/store.md "Replay".
  std::ostringstream err;
  bool keepable = false;
  int r = journal->check(&keepable, err);
  if (r < 0) {
    derr << "journal replay failed: " << err.str() << dendl;
    std::cerr << "mimstore: journal replay failed: " << err.str()
              << std::endl;
    return r;
  }
  keep_window = conf.merge && keepable;
  r = _load_applied_marks();
  if (r < 0) {
    return r;
  }
  if (keep_window) {
    durability.reset_checkpoint(journal->first_live_sn(),
                                 journal->max_live_sns());
  }
  // Replayed writes merge only when the window is kept; the entry's place
  // on the journal is known then too (replayed, below).
  ApplyContext ac;
  ac.replaying = true;
  ac.merge = keep_window;
  skipped_written_back = 0;
  // Where the generation under way at the stop ended, if a sweep left
  // records: its writes not yet written back go back as a frozen
  // generation of their own, swept first after the mount. Merged with the
  // newer ones, the checkpoint (and the journal space) would wait for a
  // sweep of both; alone, they are a short sweep (docs/store.md "Replay").
  const sn_t freeze_at = keep_window ? written_back->last_sweep_end() : 0;
  replay_froze_at = 0;
  TransContext replayed;  // the entry being replayed, for _journal_pos
  uint64_t n = 0;
  sn_t next = 0;
  r = journal->replay(
    [&](sn_t sn, uint64_t payload_off, bufferlist& bl) -> int {
      std::vector<Transaction> tls;
      std::string why;
      if (decode_payload(bl, &tls, &why) < 0) {
        derr << "journal entry sn " << sn << " does not decode: " << why
             << dendl;
        return -EIO;
      }
      dout(10) << "replay sn " << sn << " (" << tls.size() << " txns)"
               << dendl;
      if (_fence_sn(sn) < 0) {
        return -EIO;
      }
      if (freeze_at && !replay_froze_at && sn >= freeze_at) {
        _freeze_replayed(freeze_at);
      }
      if (keep_window) {
        // As the apply thread: a hold for the direct part, one per merged
        // write (taken in _write); the decoded writes point into bl.
        replayed.sn = sn;
        replayed.payload_off = payload_off;
        replayed.payload_index = mim::PayloadIndex();
        replayed.payload_index.add(bl.c_str(), bl.length());
        ac.txc = &replayed;
        durability.hold(sn);
      }
      uint32_t trans_num = 0;
      for (auto& t : tls) {
        _do_transaction(ac, t, sn, trans_num++);
      }
      if (keep_window) {
        ac.txc = nullptr;
        durability.release_after_sync(sn);
      }
      ++n;
      return 0;
    },
    &next, err);
  if (r == 0 && freeze_at && !replay_froze_at) {
    _freeze_replayed(freeze_at);  // nothing written after the freeze
  }
  const size_t recorded = written_back->loaded_objects();
  written_back->end_replay();
  if (r < 0) {
    derr << "journal replay failed: " << err.str() << dendl;
    std::cerr << "mimstore: journal replay failed: " << err.str()
              << std::endl;
    return r;
  }
  if (logger) {
    logger->inc(l_mimstore_replayed, n);
    logger->inc(l_mimstore_replay_written_back, skipped_written_back);
  }
  dout(1) << "replayed " << n << " transactions, next sn " << next
          << (keep_window ? ", the window kept" : "") << "; "
          << skipped_written_back << " ops skipped on " << recorded
          << " objects written back before the stop" << dendl;
  if (!keep_window) {
    r = files->sync_all();
    if (r == 0) {
      r = omap->sync();
    }
    if (r < 0) {
      derr << "sync after replay failed: " << cpp_strerror(r) << dendl;
      return r;
    }
  }
  next = _first_sn_after_replay(next);
  sequencer.reset(next, conf.queue_max_ops, conf.queue_max_bytes, logger);
  return 0;
}

int MIMStore::_load_applied_marks()
{
  int r = _read_sn_fence();
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  r = written_back->load(journal->first_live_sn());
  if (r < 0) {
    derr << "cannot read the written-back records from the DB: "
         << cpp_strerror(r) << dendl;
    return r;
  }
  if (!written_back->loaded_objects()) {
    return 0;
  }
  // A record describes the file there now (WrittenBack.h): a name with no
  // file, or with a create cut short, is one replay makes from older ops.
  r = written_back->prune([this](const std::string& cname,
                                 const std::string& fname) {
    ObjectFDRef f;
    int e = files->open_by_name(cname, fname, &f);
    if (e == -ENOENT) {
      return 0;
    }
    ReplayMarks m;
    if (e == 0) {
      e = files->get_marks(f, &m);
    }
    if (e < 0) {
      _marks_unreadable(cname, fname, e);
      return e;
    }
    return _cut_short(m) ? 0 : 1;
  });
  if (r < 0) {
    derr << "cannot check the written-back records against the object "
         << "files, or delete those of removed objects from the DB: "
         << cpp_strerror(r) << " (the message above says which)" << dendl;
    return r;
  }
  return 0;
}

int MIMStore::_read_sn_fence()
{
  sn_fence = 0;  // (absent: a store last mounted without the fence)
  int r = _read_meta_u64("mimstore_sn_fence", &sn_fence);
  if (r < 0 && r != -ENOENT) {
    derr << path << "/mimstore_sn_fence is not an sn (" << cpp_strerror(r)
         << "); refused: a guess could reuse sns that objects carry, "
         << "and ops would be skipped as done. Write into it a number "
         << "above every sn the store applied (the last sn ceph-osd "
         << "--dump-journal lists, plus " << SN_FENCE_STEP << "), then "
         << "try again" << dendl;
  }
  return r;
}

MIMStore::sn_t MIMStore::_first_sn_after_replay(sn_t replay_end)
{
  // Past damage (mimstore_journal_ignore_corruption), the entries after it
  // may have been applied before the stop, their sns stamped on objects:
  // new ones start above them, or an op would be skipped as done already.
  const sn_t acked = journal->replay_skipped_acked_up_to();
  if (!acked) {
    return replay_end;
  }
  const sn_t resume = std::max({replay_end, acked + 1, sn_fence + 1});
  derr << "sns " << replay_end << " to " << resume - 1 << " are not used "
       << "again (the entries after the damage may have applied them); new "
       << "transactions start at sn " << resume << dendl;
  return resume;
}
