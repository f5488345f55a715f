// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "MIMJournal.h"

#include <cstring>
#include <random>
#include <sstream>

#include "common/ceph_context.h"
#include "common/debug.h"
#include "common/errno.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore.journal(" << conf.journal_path << ") "

using ceph::bufferlist;

namespace mimstore {

namespace {

uint64_t random_generation()
{
  std::random_device rd;
  uint64_t g = (uint64_t(rd()) << 32) ^ rd();
  return g ? g : 1;
}

mim::fsid_t to_fsid(const uuid_d& u)
{
  mim::fsid_t f;
  memcpy(f.data(), u.bytes(), f.size());
  return f;
}

uuid_d from_fsid(const mim::fsid_t& f)
{
  uuid_d u;
  memcpy(u.uuid.data, f.data(), f.size());
  return u;
}

}  // namespace

MIMJournal::MIMJournal(CephContext* cct, mim::IoEnv* io, const MIMConfig& conf,
                       PerfCounters* logger)
  : cct(cct), io(io), conf(conf), dev(io, conf),
    writer(cct, io, this->conf, logger, dev)
{
}

MIMJournal::~MIMJournal()
{
  ceph_assert(!writer.running());
  dev.close();
}

int MIMJournal::create(const uuid_d& fsid, sn_t start_sn, std::ostream& err)
{
  if (dev.fd() < 0) {
    int r = dev.open(true, err);
    if (r < 0) {
      return r;
    }
  }
  // Zero both header slots first: a stale header of an earlier store must
  // never be picked over ours.
  AlignedBuf zero(2 * dev.block_size(), dev.block_size());
  int r = dev.write_sync(0, zero.p, 2 * dev.block_size());
  if (r < 0) {
    err << "cannot write journal " << conf.journal_path << ": "
        << cpp_strerror(r);
    return r;
  }
  mim::JournalHeader h;
  h.fsid = to_fsid(fsid);
  h.generation = random_generation();
  h.block_size = dev.block_size();
  h.flags = mim::JOURNAL_FLAG_CLEAN;
  h.journal_size = dev.geo().area_end;
  h.header_seq = 1;
  h.start_off = dev.geo().area_start;
  h.start_sn = start_sn;
  h.committed_up_to = start_sn - 1;
  r = dev.write_header(h);
  if (r < 0) {
    err << "cannot write the header of journal " << conf.journal_path << ": "
        << cpp_strerror(r);
    return r;
  }
  mim::MutexLock l(header_lock);
  header = h;
  dout(1) << "created journal: " << (dev.geo().area_len() >> 20)
          << " MiB, block " << dev.block_size() << ", start sn " << start_sn
          << dendl;
  return 0;
}

bool MIMJournal::header_is_clean_of(const uuid_d& fsid)
{
  if (dev.fd() < 0) {
    return false;
  }
  mim::JournalHeader h;
  std::ostringstream ignored;
  return dev.read_header(&h, ignored) == 0 && h.fsid == to_fsid(fsid) &&
         (h.flags & mim::JOURNAL_FLAG_CLEAN);
}

int MIMJournal::open(const uuid_d& fsid, bool* clean, std::ostream& err)
{
  int r = dev.open(false, err);
  if (r < 0) {
    return r;
  }
  mim::JournalHeader h;
  r = dev.read_header(&h, err);
  if (r < 0) {
    return r;
  }
  if (h.fsid != to_fsid(fsid)) {
    err << "journal " << conf.journal_path << " belongs to store "
        << from_fsid(h.fsid) << ", not to this one (" << fsid << "): it is "
        << "another OSD's journal or a stale one. Point osd_journal at this "
        << "OSD's journal; only if that is lost, point it at a new device "
        << "and run ceph-osd --mkjournal (transactions in a lost journal are "
        << "lost)";
    return -EINVAL;
  }
  if (h.journal_size > dev.device_size()) {
    err << "journal " << conf.journal_path << " is shorter ("
        << dev.device_size() << " bytes) than its header says ("
        << h.journal_size << "): truncated or the wrong partition";
    return -EINVAL;
  }
  if (conf.journal_block_size && h.block_size != conf.journal_block_size) {
    dout(0) << "journal " << conf.journal_path << " was made with "
            << h.block_size << "-byte blocks and keeps them; "
            << "mimstore_journal_block_size = " << conf.journal_block_size
            << " applies to a journal made from now on (ceph-osd "
            << "--mkjournal after a clean stop)" << dendl;
  }
  dev.adopt(h);
  *clean = h.flags & mim::JOURNAL_FLAG_CLEAN;
  mim::MutexLock l(header_lock);
  header = h;
  return 0;
}

int MIMJournal::judge_scan_end(const mim::ScanResult& res, std::ostream& err)
{
  if (res.end == mim::ScanResult::CORRUPT_ACKED) {
    err << "journal " << conf.journal_path << " is damaged: replay stops at "
        << "offset " << res.end_off << " (sn " << res.next_sn << ": "
        << res.detail << "), but transactions up to sn " << res.acked_up_to
        << " were durable and may have been acknowledged";
    if (!conf.journal_ignore_corruption) {
      err << ". Mounting would silently lose them; restore the journal "
          << "device, or set mimstore_journal_ignore_corruption = true to "
          << "mount with everything before sn " << res.next_sn;
      return -EIO;
    }
    derr << "journal damaged at offset " << res.end_off << " (sn "
         << res.next_sn << "), acknowledged up to sn " << res.acked_up_to
         << "; mimstore_journal_ignore_corruption is set: continuing "
         << "without them" << dendl;
  } else if (res.end == mim::ScanResult::TORN_OR_CORRUPT) {
    dout(1) << "journal ends with a torn entry at " << res.end_off << " (sn "
            << res.next_sn << "): normal after a crash, it was never "
            << "acknowledged (" << res.detail << ")" << dendl;
  }
  return 0;
}

int MIMJournal::check(bool* keepable, std::ostream& err)
{
  *keepable = false;
  mim::JournalHeader h;
  {
    mim::MutexLock l(header_lock);
    h = header;
  }
  if (h.flags & mim::JOURNAL_FLAG_CLEAN) {
    return 0;
  }
  mim::ScanResult res;
  int r = mim::scan_journal(
    h, mim::read_fn_for(io, dev.fd()),
    [](sn_t, uint64_t, std::string_view) { return 0; }, &res);
  if (r < 0) {
    err << "reading journal " << conf.journal_path << " failed: "
        << cpp_strerror(r) << " (" << res.detail << ")";
    return r;
  }
  r = judge_scan_end(res, err);
  if (r < 0) {
    return r;
  }
  *keepable = mim::keeps_generation(res, h.block_size);
  dout(1) << "journal holds " << res.entries << " entries from sn "
          << h.start_sn << " to " << res.next_sn << " ("
          << mim::scan_end_name(res.stop) << "); "
          << res.in_flight_offs.size() << " in-flight entries beyond its "
          << "end; " << (*keepable ? "keepable" : "not keepable") << dendl;
  checked = std::move(res);
  checked_valid = true;
  return 0;
}

int MIMJournal::replay(const ApplyFn& apply, sn_t* next_sn, std::ostream& err)
{
  mim::JournalHeader h;
  {
    mim::MutexLock l(header_lock);
    h = header;
  }
  mim::ScanResult res;
  if (h.flags & mim::JOURNAL_FLAG_CLEAN) {
    *next_sn = h.start_sn;
    replay_end_off = h.start_off;
    replay_result_valid = false;
    return 0;
  }
  mim::ScanOptions opts;
  // check() searched beyond the end already: one lap of the area is enough
  opts.check_acked = !checked_valid;
  replayed = mim::BatchIndex();
  sn_t batch_first = 0;  // the batch being replayed, 0 before the first
  uint64_t batch_off = 0;
  replaying = true;
  int r = mim::scan_journal(
    h, mim::read_fn_for(io, dev.fd()),
    [&](sn_t sn, uint64_t off, std::string_view payload) -> int {
      if (off % h.block_size == 0) {
        if (batch_first) {
          replayed.push(batch_first, sn - 1, batch_off);
        }
        batch_first = sn;
        batch_off = off;
      }
      // One buffer: a write's data in the decoded transaction points into
      // it, so the store finds its offset in the payload by address.
      ceph::bufferptr bp = ceph::buffer::create(payload.size());
      memcpy(bp.c_str(), payload.data(), payload.size());
      bufferlist bl;
      bl.append(std::move(bp));
      return apply(sn, off + mim::ENTRY_HEADER_SIZE, bl);
    },
    &res, opts);
  replaying = false;
  if (batch_first && batch_first < res.next_sn) {
    replayed.push(batch_first, res.next_sn - 1, batch_off);
  }
  if (r < 0) {
    err << "reading journal " << conf.journal_path << " failed: "
        << cpp_strerror(r) << " (" << res.detail << ")";
    return r;
  }
  if (r > 0 || res.stopped_by_callback) {
    err << "applying journal entry sn " << res.next_sn << " failed";
    return -EIO;
  }
  if (checked_valid) {
    if (res.end_off != checked.end_off || res.next_sn != checked.next_sn) {
      err << "journal " << conf.journal_path << " changed between its check "
          << "and its replay (end " << checked.end_off << ", sn "
          << checked.next_sn << ", then " << res.end_off << ", sn "
          << res.next_sn << "): is another process writing it?";
      return -EIO;
    }
    // the same walk: the check's result also has what lies beyond the end
    res = std::move(checked);
    checked_valid = false;
  } else {
    r = judge_scan_end(res, err);
    if (r < 0) {
      return r;
    }
  }
  dout(1) << "replayed " << res.entries << " entries from sn " << h.start_sn
          << " to " << res.next_sn << dendl;
  *next_sn = res.next_sn;
  replay_result = res;
  replay_result_valid = true;
  return 0;
}

int MIMJournal::start(sn_t next_sn)
{
  mim::JournalHeader h;
  {
    mim::MutexLock l(header_lock);
    h = header;
  }
  uint64_t gen = random_generation();
  if (replay_result_valid) {
    h = mim::header_after_replay(h, replay_result, gen);
  } else {
    // clean: nothing to replay; a new generation all the same, so entries
    // of the previous cycle can never be taken for new ones
    h.generation = gen;
    h.flags &= ~mim::JOURNAL_FLAG_CLEAN;
    h.header_seq++;
    h.start_off = dev.geo().normalize(replay_end_off);
  }
  // (above the replay's end only after a salvage mount: the new
  // generation starts there, nothing between is ever written)
  ceph_assert(h.start_sn <= next_sn);
  h.start_sn = next_sn;
  h.committed_up_to = next_sn - 1;
  int r = dev.write_header(h);
  if (r < 0) {
    derr << "cannot write the journal header: " << cpp_strerror(r) << dendl;
    return r;
  }
  {
    mim::MutexLock l(header_lock);
    header = h;
  }
  return writer.start(gen, h.start_off, h.start_off, next_sn,
                      mim::BatchIndex());
}

int MIMJournal::start_keeping(sn_t next_sn)
{
  ceph_assert(replay_result_valid &&
              mim::keeps_generation(replay_result, dev.block_size()));
  mim::JournalHeader h;
  {
    mim::MutexLock l(header_lock);
    h = header;
  }
  // Entries of this generation beyond the end would be taken for the new
  // ones once the writer's batches reach them: a zero block over each
  // first (durable when written: the fd is O_DSYNC).
  const uint64_t bs = dev.block_size();
  AlignedBuf zero(bs, bs);
  for (uint64_t off : replay_result.in_flight_offs) {
    int r = dev.write_sync(off, zero.p, bs);
    if (r < 0) {
      derr << "cannot erase the in-flight entry at journal offset " << off
           << ": " << cpp_strerror(r) << dendl;
      return r;
    }
  }
  const uint64_t head = dev.geo().normalize(replay_result.end_off);
  dout(1) << "keeping " << replayed.live_entries() << " replayed entries "
          << "(sn " << h.start_sn << " to " << next_sn - 1 << ", "
          << mim::area_used(dev.geo(), h.start_off, head) << " bytes); "
          << replay_result.in_flight_offs.size() << " in-flight entries "
          << "erased beyond the end" << dendl;
  return writer.start(h.generation, h.start_off, head, next_sn,
                      std::move(replayed));
}

int MIMJournal::read_extent(uint64_t off, uint64_t len, char* dst)
{
  if (replaying) {
    // the scanner validated the entry being replayed and every one before
    if (off < dev.geo().area_start || off + len > dev.geo().area_end) {
      return -ERANGE;
    }
  } else if (!writer.is_live(off, len)) {
    return -ERANGE;
  }
  const uint64_t bs = dev.block_size();
  const uint64_t a = off / bs * bs;
  const uint64_t e = (off + len + bs - 1) / bs * bs;
  AlignedBuf b(e - a, bs);
  int r = dev.read_at(a, e - a, b.p);
  if (r < 0) {
    return r;
  }
  memcpy(dst, b.p + (off - a), len);
  return 0;
}

int MIMJournal::set_checkpoint(sn_t checkpoint)
{
  // Lock order: header_lock, then the writer's lock.
  mim::MutexLock hl(header_lock);
  JournalWriter::Trim t = writer.trim(checkpoint);
  mim::JournalHeader h = header;
  h.header_seq++;
  h.start_off = t.new_tail;
  h.start_sn = t.start_sn;
  h.committed_up_to = t.committed_up_to;
  // The header moves first; only then may the space behind it be reused.
  int r = dev.write_header(h);
  if (r < 0) {
    return r;
  }
  header = h;
  writer.set_tail(t.new_tail);
  return 0;
}

int MIMJournal::close(bool clean)
{
  writer.stop();
  int r = 0;
  if (clean && dev.fd() >= 0) {
    mim::MutexLock hl(header_lock);
    mim::JournalHeader h = header;
    sn_t committed;
    if (header.generation && writer.drained(&committed)) {
      h.flags |= mim::JOURNAL_FLAG_CLEAN;
      h.header_seq++;
      h.committed_up_to = committed ? committed : h.committed_up_to;
      r = dev.write_header(h);
      if (r == 0) {
        header = h;
      }
    }
  }
  dev.close();
  return r;
}

int MIMJournal::dump(std::ostream& out)
{
  mim::JournalHeader h;
  {
    mim::MutexLock l(header_lock);
    h = header;
  }
  out << "journal " << conf.journal_path << "\n"
      << "  fsid " << from_fsid(h.fsid) << " generation " << std::hex
      << h.generation << std::dec << " block " << h.block_size << " size "
      << h.journal_size << "\n"
      << "  start_off " << h.start_off << " start_sn " << h.start_sn
      << " committed_up_to " << h.committed_up_to
      << ((h.flags & mim::JOURNAL_FLAG_CLEAN) ? " CLEAN" : "") << "\n";
  if (h.flags & mim::JOURNAL_FLAG_CLEAN) {
    return 0;
  }
  mim::ScanResult res;
  int r = mim::scan_journal(
    h, mim::read_fn_for(io, dev.fd()),
    [&](sn_t sn, uint64_t off, std::string_view payload) -> int {
      out << "  sn " << sn << " off " << off << " len " << payload.size()
          << "\n";
      return 0;
    },
    &res);
  out << "  end: " << mim::scan_end_name(res.end) << " at " << res.end_off
      << " next sn " << res.next_sn << " (" << res.detail << ")\n";
  return r;
}

}  // namespace mimstore
