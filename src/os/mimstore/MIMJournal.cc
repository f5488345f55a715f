// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "MIMJournal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "common/Thread.h"
#include "common/ceph_context.h"
#include "common/debug.h"
#include "common/errno.h"
#include "common/perf_counters.h"

#include "MIMPerf.h"

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
  : cct(cct), io(io), conf(conf), logger(logger), dev(io, conf)
{
}

MIMJournal::~MIMJournal()
{
  ceph_assert(!writer.joinable());
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
  std::lock_guard l(header_lock);
  header = h;
  dout(1) << "created journal: " << (dev.geo().area_len() >> 20)
          << " MiB, block " << dev.block_size() << ", start sn " << start_sn
          << dendl;
  return 0;
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
        << "OSD's journal; only if it is lost, run ceph-osd --mkjournal "
        << "(transactions in a lost journal are lost)";
    return -EINVAL;
  }
  if (h.journal_size > dev.geo().area_end) {
    err << "journal " << conf.journal_path << " is shorter ("
        << dev.geo().area_end << " bytes) than its header says ("
        << h.journal_size << "): truncated or the wrong partition";
    return -EINVAL;
  }
  dev.adopt(h);
  *clean = h.flags & mim::JOURNAL_FLAG_CLEAN;
  std::lock_guard l(header_lock);
  header = h;
  return 0;
}

int MIMJournal::replay(const std::function<int(sn_t, bufferlist&)>& apply,
                       sn_t* next_sn, std::ostream& err)
{
  mim::JournalHeader h;
  {
    std::lock_guard l(header_lock);
    h = header;
  }
  mim::ScanResult res;
  if (h.flags & mim::JOURNAL_FLAG_CLEAN) {
    *next_sn = h.start_sn;
    replay_end_off = h.start_off;
    replay_result_valid = false;
    return 0;
  }
  int r = mim::scan_journal(
    h, mim::read_fn_for(io, dev.fd()),
    [&](sn_t sn, uint64_t off, std::string_view payload) -> int {
      bufferlist bl;
      bl.append(payload.data(), payload.size());
      return apply(sn, bl);
    },
    &res);
  if (r < 0) {
    err << "reading journal " << conf.journal_path << " failed: "
        << cpp_strerror(r) << " (" << res.detail << ")";
    return r;
  }
  if (r > 0 || res.stopped_by_callback) {
    err << "applying journal entry sn " << res.next_sn << " failed";
    return -EIO;
  }
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
    std::lock_guard l(header_lock);
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
  ceph_assert(h.start_sn == next_sn);
  h.committed_up_to = next_sn - 1;
  int r = dev.write_header(h);
  if (r < 0) {
    derr << "cannot write the journal header: " << cpp_strerror(r) << dendl;
    return r;
  }
  {
    std::lock_guard l(header_lock);
    header = h;
  }
  {
    std::lock_guard l(lock);
    generation = gen;
    head = tail = h.start_off;
    committed_up_to = next_sn - 1;
    stopping = false;
  }
  if (conf.journal_aio) {
    r = io->aio_setup(conf.journal_max_inflight + 1);
    if (r < 0) {
      derr << "cannot set up aio: " << cpp_strerror(r) << dendl;
      return r;
    }
  }
  {
    std::lock_guard l(lock);
    writer_running = true;
  }
  // named for top -H and gdb; 15 characters at most
  writer = make_named_thread("mim_jwrite", [this] { writer_loop(); });
  if (conf.journal_aio) {
    reaper = make_named_thread("mim_jreap", [this] { reaper_loop(); });
  }
  return 0;
}

void MIMJournal::submit(sn_t sn, bufferlist&& payload, Callback on_durable)
{
  std::lock_guard l(lock);
  ceph_assert(!stopping);
  queue.push_back(Pending{sn, std::move(payload), std::move(on_durable)});
  writer_cond.notify_one();
}

uint64_t MIMJournal::used() const
{
  std::lock_guard l(lock);
  return mim::area_used(dev.geo(), tail, head);
}

uint64_t MIMJournal::used_since(sn_t sn) const
{
  std::lock_guard l(lock);
  auto p = std::lower_bound(
    index.begin(), index.end(), sn,
    [](const IndexEntry& e, sn_t v) { return e.sn < v; });
  if (p == index.end()) {
    return 0;
  }
  if (p == index.begin()) {
    return mim::area_used(dev.geo(), tail, head);
  }
  // Batches are padded: counting from the batch's start charges the
  // padding too, which is what fills the journal with small transactions.
  return mim::area_used(dev.geo(), p->batch_off, head);
}

void MIMJournal::writer_loop()
{
  std::unique_lock l(lock);
  auto last_pressure = std::chrono::steady_clock::time_point();
  while (true) {
    writer_cond.wait(l, [this] {
      return (stopping && queue.empty()) ||
             (!queue.empty() && inflight.size() < conf.journal_max_inflight);
    });
    if (queue.empty()) {
      break;  // stopping
    }
    auto batch = form_batch_locked();
    if (!wait_for_space_locked(l, batch->len)) {
      // Nothing more is made durable; commits stop, the OSD notices.
      break;
    }
    mim::BatchPlacement pl;
    bool pressure = false;
    Batch* bp = place_batch_locked(std::move(batch), &pl, &pressure);
    l.unlock();
    if (pressure && on_pressure &&
        std::chrono::steady_clock::now() - last_pressure >
          std::chrono::milliseconds(50)) {
      last_pressure = std::chrono::steady_clock::now();
      on_pressure();
    }
    issue_batch(l, bp, pl);
  }
}

std::unique_ptr<MIMJournal::Batch> MIMJournal::form_batch_locked()
{
  auto batch = std::make_unique<Batch>();
  if (!free_encoders.empty()) {
    batch->enc = std::move(free_encoders.back());
    free_encoders.pop_back();
    batch->enc->reset(generation);
  } else {
    batch->enc =
      std::make_unique<mim::BatchEncoder>(dev.block_size(), generation);
  }
  // Group commit: everything queued, up to the batch limits; an entry
  // larger than the limit goes alone.
  while (!queue.empty() &&
         batch->enc->entries() < conf.journal_max_batch_entries &&
         (batch->enc->empty() ||
          batch->enc->size_with(queue.front().payload.length()) <=
            conf.journal_max_batch_bytes)) {
    Pending& p = queue.front();
    mim::Segments segs;
    for (auto& b : p.payload.buffers()) {
      if (b.length()) {
        segs.emplace_back(b.c_str(), b.length());
      }
    }
    batch->enc->add_txn(p.sn, committed_up_to, segs);
    batch->cbs.push_back(std::move(p.cb));
    queue.pop_front();
  }
  batch->first_sn = batch->enc->first_sn();
  batch->last_sn = batch->enc->last_sn();
  std::tie(batch->buf, batch->len) = batch->enc->finish();
  if (batch->len > dev.geo().area_len() / 2) {
    derr << "a transaction batch of " << batch->len << " bytes does not fit "
         << "in half of the journal (" << dev.geo().area_len()
         << " bytes): raise osd_journal_size or use a larger journal "
         << "partition" << dendl;
    ceph_abort_msg("mimstore: transaction larger than the journal");
  }
  return batch;
}

bool MIMJournal::wait_for_space_locked(std::unique_lock<ceph::mutex>& l,
                                       uint64_t len)
{
  // Never overwrite an entry the checkpoint still needs: wait for space.
  bool waited = false;
  while (!mim::batch_fits(dev.geo(), tail, head, len) && !sticky_error) {
    if (!waited && logger) {
      logger->inc(l_mimstore_journal_full_waits);
    }
    waited = true;
    l.unlock();
    if (on_pressure) {
      on_pressure();
    }
    l.lock();
    writer_cond.wait_for(l, std::chrono::milliseconds(100));
  }
  return !sticky_error;
}

MIMJournal::Batch* MIMJournal::place_batch_locked(
  std::unique_ptr<Batch> batch, mim::BatchPlacement* pl, bool* pressure)
{
  int r = mim::place_batch(dev.geo(), head, batch->len, pl);
  ceph_assert(r == 0);
  batch->off = pl->off;
  batch->end = pl->next_head;
  for (sn_t sn = batch->first_sn; sn <= batch->last_sn; ++sn) {
    index.push_back(IndexEntry{sn, pl->off, batch->first_sn});
  }
  if (pl->wrap) {
    if (posix_memalign(reinterpret_cast<void**>(&batch->wrap_buf),
                       dev.block_size(), dev.block_size()) != 0) {
      ceph_abort_msg("out of memory");
    }
    mim::encode_wrap(batch->wrap_buf, dev.block_size(), generation,
                     batch->first_sn, committed_up_to);
    if (logger) {
      logger->inc(l_mimstore_journal_wrap);
    }
  }
  head = pl->next_head;
  uint64_t used_now = mim::area_used(dev.geo(), tail, head);
  *pressure = used_now > conf.journal_pressure_ratio * dev.geo().area_len();
  Batch* bp = batch.get();
  bp->ios_left = pl->wrap ? 2 : 1;
  inflight.push_back(std::move(batch));
  if (logger) {
    logger->inc(l_mimstore_journal_batches);
    logger->inc(l_mimstore_journal_entries, bp->last_sn - bp->first_sn + 1);
    logger->inc(l_mimstore_journal_bytes, bp->len);
    logger->inc(l_mimstore_journal_batch_entries,
                bp->last_sn - bp->first_sn + 1);
    logger->set(l_mimstore_journal_used_bytes, used_now);
  }
  return bp;
}

void MIMJournal::issue_batch(std::unique_lock<ceph::mutex>& l, Batch* bp,
                             const mim::BatchPlacement& pl)
{
  struct iovec iov[1] = {{const_cast<char*>(bp->buf), bp->len}};
  int r;
  if (conf.journal_aio) {
    if (pl.wrap) {
      struct iovec w = {bp->wrap_buf, dev.block_size()};
      r = io->aio_submit_write(dev.fd(), &w, 1, pl.wrap_off, bp);
      if (r < 0) {
        l.lock();
        bp->error = r;
        bp->ios_left--;
        l.unlock();
      }
    }
    r = io->aio_submit_write(dev.fd(), iov, 1, pl.off, bp);
    l.lock();
    if (r < 0) {
      bp->error = r;
      if (--bp->ios_left == 0) {
        bp->done = true;
        complete_ready(l);
      }
    }
    reaper_cond.notify_one();
  } else {
    r = 0;
    if (pl.wrap) {
      r = dev.write_sync(pl.wrap_off, bp->wrap_buf, dev.block_size());
    }
    if (r == 0) {
      r = dev.write_sync(pl.off, bp->buf, bp->len);
    }
    l.lock();
    bp->error = r;
    bp->ios_left = 0;
    bp->done = true;
    complete_ready(l);
  }
}

void MIMJournal::complete_ready(std::unique_lock<ceph::mutex>& l)
{
  // REQUIRES: lock held (l). Completes finished batches at the front, in sn
  // order; callbacks run with the lock released.
  while (!inflight.empty() && inflight.front()->done) {
    std::unique_ptr<Batch> b = std::move(inflight.front());
    inflight.pop_front();
    if (b->error < 0) {
      derr << "journal write of sn " << b->first_sn << ".." << b->last_sn
           << " failed: " << cpp_strerror(b->error) << dendl;
      sticky_error = b->error;
      // An acknowledged-looking state without a durable journal entry would
      // be a lie: stop here. The entries were never acknowledged.
      ceph_abort_msg("mimstore: journal write failed");
    }
    committed_up_to = b->last_sn;
    std::vector<Callback> cbs = std::move(b->cbs);
    if (b->wrap_buf) {
      free(b->wrap_buf);
      b->wrap_buf = nullptr;
    }
    // keep a few encoders: their buffers are large and aligned
    if (free_encoders.size() <= conf.journal_max_inflight) {
      free_encoders.push_back(std::move(b->enc));
    }
    writer_cond.notify_all();
    l.unlock();
    for (auto& cb : cbs) {
      cb();
    }
    l.lock();
  }
}

void MIMJournal::reaper_loop()
{
  std::vector<std::pair<void*, ssize_t>> done;
  std::unique_lock l(lock);
  while (true) {
    reaper_cond.wait(l, [this] {
      return !inflight.empty() || (stopping && !writer_running);
    });
    if (inflight.empty()) {
      break;
    }
    l.unlock();
    done.clear();
    int r = io->aio_reap(1, 64, &done, 200);
    l.lock();
    if (r < 0 && r != -EINTR) {
      derr << "aio reap failed: " << cpp_strerror(r) << dendl;
      ceph_abort_msg("mimstore: journal aio failed");
    }
    for (auto& [cookie, res] : done) {
      Batch* b = static_cast<Batch*>(cookie);
      if (res < 0) {
        b->error = int(res);
      }
      if (--b->ios_left == 0) {
        b->done = true;
      }
    }
    complete_ready(l);
  }
}

int MIMJournal::set_checkpoint(sn_t checkpoint)
{
  // Lock order: header_lock, then lock.
  std::lock_guard hl(header_lock);
  uint64_t new_tail;
  sn_t cut, start_sn;
  {
    std::lock_guard l(lock);
    while (!index.empty() && index.front().sn < checkpoint) {
      index.pop_front();
    }
    // Replay starts at a block boundary (the format's rule), so at the
    // batch that holds the checkpoint: the few entries before it in that
    // batch are replayed again, which replay tolerates like any other
    // already-applied entry.
    if (index.empty()) {
      new_tail = head;
      start_sn = checkpoint;
    } else {
      ceph_assert(index.front().sn == checkpoint);
      new_tail = index.front().batch_off;
      start_sn = index.front().batch_first_sn;
    }
    cut = committed_up_to;
  }
  mim::JournalHeader h = header;
  h.header_seq++;
  h.start_off = new_tail;
  h.start_sn = start_sn;
  h.committed_up_to = cut;
  // The header moves first; only then may the space behind it be reused.
  int r = dev.write_header(h);
  if (r < 0) {
    return r;
  }
  header = h;
  std::lock_guard l(lock);
  tail = new_tail;
  writer_cond.notify_all();
  return 0;
}

int MIMJournal::close(bool clean)
{
  {
    std::lock_guard l(lock);
    stopping = true;
    writer_cond.notify_all();
  }
  if (writer.joinable()) {
    writer.join();
  }
  {
    std::lock_guard l(lock);
    writer_running = false;
    reaper_cond.notify_all();
  }
  if (reaper.joinable()) {
    reaper.join();
  }
  int r = 0;
  if (clean && dev.fd() >= 0) {
    std::lock_guard hl(header_lock);
    mim::JournalHeader h = header;
    std::lock_guard l(lock);
    if (header.generation && index.empty() && tail == head) {
      h.flags |= mim::JOURNAL_FLAG_CLEAN;
      h.header_seq++;
      h.committed_up_to = committed_up_to ? committed_up_to :
        h.committed_up_to;
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
    std::lock_guard l(header_lock);
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
