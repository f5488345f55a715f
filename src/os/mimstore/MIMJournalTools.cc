// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * The journal tools of ceph-osd: --mkjournal (a new journal, only where
 * none can hold acknowledged transactions: not over a journal it cannot
 * read, nor where a missing one was not left empty), --flush-journal
 * (mount, which replays, then flush_journal() on the mounted store and a
 * umount that writes everything back; patch 0012 makes ceph-osd call it)
 * and --dump-journal. mkjournal and dump_journal open the store offline,
 * as mount's first steps do (MIMMount.cc).
 */
#include "MIMStore.h"

#include <algorithm>
#include <sstream>

#include "common/debug.h"
#include "common/errno.h"

#include "MIMJournal.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using namespace mimstore;

int MIMStore::_open_offline(const char* tool)
{
  if (mounted) {
    derr << tool << ": the store is mounted; umount it first" << dendl;
    return -EBUSY;
  }
  int r = _load_config();
  if (r == 0) {
    r = _check_fsid();
  }
  if (r == 0) {
    r = _open_io();
    if (r < 0) {
      _close_all(JournalEnd::AS_IS);
    }
  }
  return r;
}

int MIMStore::_missing_journal_was_empty(const std::string& why)
{
  // No journal to read: the data directory says whether the last one was
  // left empty (a clean stop, mkfs, mkjournal) or may have held
  // transactions not in the object files (a stop that kept the merge
  // window, a crash, a mount under way): those are lost with it.
  std::string empty;
  const int mr = read_meta(JOURNAL_EMPTY_META, &empty);
  if (mr == 0 && empty == "yes") {
    return 0;
  }
  if (conf.journal_lost) {
    derr << "mkjournal: the last journal was not left empty; its "
         << "transactions are lost (mimstore_journal_lost)" << dendl;
    return 0;
  }
  derr << "mkjournal: no journal of this store at " << journal_path << " ("
       << why << "), and " << path << "/" << JOURNAL_EMPTY_META
       << (mr < 0 ? " is missing (a store last stopped by an older "
                    "mimstore), so the last one may not have been left "
                    "empty: it may have held transactions "
                  : " says the last one was not left empty: it held "
                    "transactions ")
       << "that are not in the object files (the merge window a stop "
       << "keeps, or the last writes before a crash), and a new journal "
       << "would lose them. If the old journal is still there, point "
       << "osd_journal at it and run ceph-osd --flush-journal first. If it "
       << "is gone for good, run ceph-osd --mkjournal with "
       << "--mimstore-journal-lost=true to accept the loss; the OSD's PGs "
       << "must then recover from their peers" << dendl;
  return -EBUSY;
}

int MIMStore::mkjournal()
{
  int r = _open_offline("mkjournal");
  if (r < 0) {
    return r;
  }
  {
    // A new journal loses whatever the old one holds beyond the
    // checkpoint: only allowed when the old journal is this store's and
    // clean, or there is none (no file, or a device without a header: new,
    // zeroed). A header that does not open (another store's, a crc
    // mismatch, a newer version, a read error) may front acknowledged
    // transactions: left alone (FileStore's mkjournal replaced any journal
    // its check refused).
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    std::ostringstream err;
    bool clean = false;
    r = journal->open(fsid, &clean, err);
    bool clean_header = false;  // this store's, clean, refused for another reason
    if (r < 0 && r != -ENOENT) {
      bool has_header = false;
      std::ostringstream perr;
      int pr = journal->find_header_magic(&has_header, perr);
      if (pr == -EBADF) {
        // not opened at all (in use, no access): a new one would fail alike
        derr << "mkjournal: " << err.str() << ": nothing replaced" << dendl;
        goto out;
      }
      if (pr < 0) {
        derr << "mkjournal: " << err.str() << "; " << perr.str()
             << ": nothing replaced" << dendl;
        r = pr;
        goto out;
      }
      if (has_header && journal->header_is_clean_of(fsid)) {
        // this store's, nothing to replay: open() refused the device or
        // an option (now too small, a block size option), not the journal
        dout(0) << "mkjournal: " << err.str() << "; the journal is this "
                << "store's and clean: making a new one" << dendl;
        has_header = false;
        clean_header = true;
      }
      if (has_header) {
        derr << "mkjournal: " << err.str() << ". " << journal_path
             << " holds a mimstore journal header, so it may hold "
             << "acknowledged transactions (this store's behind a damaged "
             << "header, or another store's); mkjournal does not replace it. "
             << "Point osd_journal at this OSD's journal or at a new device; "
             << "if this device's contents are lost anyway, zero its first "
             << "128 KiB (dd if=/dev/zero of=" << journal_path
             << " bs=64K count=2 conv=notrunc,fsync) and run "
             << "ceph-osd --mkjournal again" << dendl;
        r = -EEXIST;
        goto out;
      }
    }
    if (r < 0) {
      int er = clean_header ? 0 : _missing_journal_was_empty(err.str());
      if (er < 0) {
        r = er;
        goto out;
      }
      dout(0) << "mkjournal: no journal of this store to keep at "
              << journal_path << " (" << err.str() << "): making a new one"
              << dendl;
      err.str("");
    } else if (!clean) {
      derr << "journal " << journal_path << " holds transactions that are "
           << "not in the object files yet (after a crash, or the merge "
           << "window a stop left there); run ceph-osd --flush-journal "
           << "before making a new journal" << dendl;
      r = -EBUSY;  // _close_all closes the journal as it is
      goto out;
    } else {
      journal->close(true);
    }
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    // Above every sn the object files and the DB may carry: the fence (a
    // crash leaves mimstore_next_sn, written by umount, behind them).
    uint64_t start = 1;
    _read_meta_u64("mimstore_next_sn", &start);
    r = _read_sn_fence();
    if (r == -ENOENT) {
      dout(0) << "no sn fence recorded (a store last mounted by a mimstore "
              << "without one): the new journal starts at the last clean "
              << "stop's sn " << start << dendl;
      r = 0;
    } else if (r < 0) {
      goto out;
    }
    start = std::max(start, sn_fence + 1);
    dout(1) << "mkjournal: the new journal starts at sn " << start << dendl;
    r = journal->create(fsid, start, err);
    if (r == 0) {
      r = journal->close(true);
    } else {
      derr << err.str() << dendl;
    }
    if (r == 0) {
      r = _record_journal_empty(true);
    }
  }
 out:
  _close_all(JournalEnd::AS_IS);
  return r;
}

int MIMStore::flush_journal()
{
  if (mounted) {
    // A running OSD: its clean shutdown (osd_journal_flush_on_shutdown),
    // `ceph daemon osd.N flush_journal`, or ceph-osd --flush-journal
    // between its mount and umount (patch 0012). Everything applied so far
    // goes to the object files now, and the umount that follows writes
    // back the rest and leaves the journal empty, instead of keeping the
    // merge window in it.
    umount_writes_back = true;
    // (waits for everything queued to apply, sweeps, then syncs: the
    // checkpoint moves past what was written back)
    int r = _write_back_all();
    if (r < 0) {
      derr << "flush_journal: writing the merge window back failed: "
           << cpp_strerror(r) << dendl;
      return r;
    }
    dout(1) << "flush_journal: written back; checkpoint "
            << durability.checkpoint() << ", next sn "
            << sequencer.next_sn() << dendl;
    return 0;
  }
  // Offline: mount replays and checkpoints everything; a umount that
  // writes back leaves the journal empty.
  int r = mount();
  if (r < 0) {
    return r;
  }
  umount_writes_back = true;
  return umount();
}

int MIMStore::dump_journal(std::ostream& out)
{
  int r = _open_offline("dump_journal");
  if (r < 0) {
    return r;
  }
  journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
  std::ostringstream err;
  bool clean;
  r = journal->open(fsid, &clean, err);
  if (r == 0) {
    r = journal->dump(out);
  } else {
    out << err.str() << std::endl;
  }
  _close_all(JournalEnd::AS_IS);
  return r;
}
