// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal's writer and reaper threads. See the header.
 */
#include "JournalWriter.h"

#include <algorithm>
#include <chrono>

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

JournalWriter::JournalWriter(CephContext* cct, mim::IoEnv* io,
                             const MIMConfig& conf, PerfCounters* logger,
                             JournalDevice& dev)
  : cct(cct), io(io), conf(conf), logger(logger), dev(dev)
{
}

JournalWriter::~JournalWriter()
{
  ceph_assert(!writer.joinable());
  ceph_assert(!reaper.joinable());
}

int JournalWriter::start(uint64_t gen, uint64_t tail_off, uint64_t head_off,
                         sn_t next_sn, mim::BatchIndex live)
{
  ceph_assert(live.empty() == (tail_off == head_off));
  {
    mim::MutexLock l(lock);
    generation = gen;
    tail = tail_off;
    head = head_off;
    index = std::move(live);
    committed_up_to = next_sn - 1;
    stopping = false;
  }
  if (conf.journal_aio) {
    int r = io->aio_setup(conf.journal_max_inflight + 1);
    if (r < 0) {
      derr << "cannot set up aio: " << cpp_strerror(r) << dendl;
      return r;
    }
  }
  {
    mim::MutexLock l(lock);
    writer_running = true;
  }
  // named for top -H and gdb; 15 characters at most
  writer = make_named_thread("mim_jwrite", [this] { writer_loop(); });
  if (conf.journal_aio) {
    reaper = make_named_thread("mim_jreap", [this] { reaper_loop(); });
  }
  return 0;
}

void JournalWriter::submit(sn_t sn, bufferlist&& payload, Callback on_durable)
{
  mim::MutexLock l(lock);
  ceph_assert(!stopping);
  queue.push_back(Pending{sn, std::move(payload), std::move(on_durable)});
  writer_cond.notify_one();
}

uint64_t JournalWriter::used() const
{
  mim::MutexLock l(lock);
  return mim::area_used(dev.geo(), tail, head);
}

uint64_t JournalWriter::used_since(sn_t sn) const
{
  mim::MutexLock l(lock);
  bool oldest = false;
  const std::optional<mim::BatchRange> b = index.batch_from(sn, &oldest);
  if (!b) {
    return 0;
  }
  if (oldest) {
    return mim::area_used(dev.geo(), tail, head);
  }
  // Batches are padded: counting from the batch's start charges the
  // padding too, which is what fills the journal with small transactions.
  return mim::area_used(dev.geo(), b->off, head);
}

bool JournalWriter::writer_has_work_locked() const
{
  return (stopping && queue.empty()) ||
         (!queue.empty() && inflight.size() < conf.journal_max_inflight);
}

void JournalWriter::writer_loop()
{
  mim::UniqueLock l(lock);
  auto last_pressure = std::chrono::steady_clock::time_point();
  while (true) {
    while (!writer_has_work_locked()) {
      writer_cond.wait(l.get());
    }
    if (queue.empty()) {
      break;  // stopping
    }
    auto batch = form_batch_locked();
    if (!wait_for_space_locked(batch->len)) {
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
    issue_batch(bp, pl);
    l.lock();
  }
}

std::unique_ptr<JournalWriter::Batch> JournalWriter::form_batch_locked()
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
    batch->payload_offs.push_back(
      batch->enc->add_txn(p.sn, committed_up_to, segs));
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

bool JournalWriter::wait_for_space_locked(uint64_t len)
{
  // Never overwrite an entry the checkpoint still needs: wait for space.
  bool waited = false;
  while (!mim::batch_fits(dev.geo(), tail, head, len) && !sticky_error) {
    if (!waited) {
      if (logger) {
        logger->inc(l_mimstore_journal_full_waits);
      }
      space_wait_since_ns = now_ns();
    }
    waited = true;
    lock.unlock();
    if (on_pressure) {
      on_pressure();
    }
    lock.lock();
    mim::wait_for(writer_cond, lock, std::chrono::milliseconds(100));
  }
  space_wait_since_ns = 0;
  return !sticky_error;
}

JournalWriter::Batch* JournalWriter::place_batch_locked(
  std::unique_ptr<Batch> batch, mim::BatchPlacement* pl, bool* pressure)
{
  int r = mim::place_batch(dev.geo(), head, batch->len, pl);
  ceph_assert(r == 0);
  batch->off = pl->off;
  batch->end = pl->next_head;
  index.push(batch->first_sn, batch->last_sn, pl->off);
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

void JournalWriter::issue_batch(Batch* bp, const mim::BatchPlacement& pl)
{
  struct iovec iov[1] = {{const_cast<char*>(bp->buf), bp->len}};
  if (conf.journal_aio) {
    int wrap_r = 0;
    if (pl.wrap) {
      struct iovec w = {bp->wrap_buf, dev.block_size()};
      wrap_r = io->aio_submit_write(dev.fd(), &w, 1, pl.wrap_off, bp);
      if (debug_point) {
        debug_point("journal:wrap_submitted");
      }
    }
    int r = io->aio_submit_write(dev.fd(), iov, 1, pl.off, bp);
    if (pl.wrap && debug_point) {
      debug_point("journal:wrap_batch_submitted");
    }
    // A write that was not submitted ends here, one that was in the
    // reaper. Once both are submitted, bp is the reaper's alone (it may
    // already be completed and freed); while one is not, ios_left keeps
    // bp from completing. Only the reaper completes batches, even a
    // failed one: completing here too would run callbacks on two threads
    // at once, out of sn order, before the failed batch stops the store.
    mim::MutexLock l(lock);
    if (wrap_r < 0) {
      io_finished_locked(bp, wrap_r);
    }
    if (r < 0) {
      io_finished_locked(bp, r);
    }
    reaper_cond.notify_one();
  } else {
    int r = 0;
    if (pl.wrap) {
      r = dev.write_sync(pl.wrap_off, bp->wrap_buf, dev.block_size());
      if (debug_point) {
        debug_point("journal:wrap_submitted");
      }
    }
    if (r == 0) {
      r = dev.write_sync(pl.off, bp->buf, bp->len);
      if (pl.wrap && debug_point) {
        debug_point("journal:wrap_batch_submitted");
      }
    }
    mim::MutexLock l(lock);
    bp->error = r;
    bp->ios_left = 0;
    bp->done = true;
    complete_ready();
  }
}

void JournalWriter::io_finished_locked(Batch* bp, int64_t res)
{
  if (res < 0) {
    bp->error = int(res);
  }
  if (--bp->ios_left == 0) {
    bp->done = true;
  }
}

void JournalWriter::complete_ready()
{
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
    std::vector<uint64_t> offs = std::move(b->payload_offs);
    const uint64_t batch_off = b->off;
    if (b->wrap_buf) {
      free(b->wrap_buf);
      b->wrap_buf = nullptr;
    }
    // keep a few encoders: their buffers are large and aligned
    if (free_encoders.size() <= conf.journal_max_inflight) {
      free_encoders.push_back(std::move(b->enc));
    }
    writer_cond.notify_all();
    lock.unlock();
    for (size_t i = 0; i < cbs.size(); ++i) {
      cbs[i](batch_off + offs[i]);
    }
    lock.lock();
  }
}

void JournalWriter::reaper_loop()
{
  std::vector<std::pair<void*, ssize_t>> done;
  mim::UniqueLock l(lock);
  while (true) {
    while (inflight.empty() && !(stopping && !writer_running)) {
      reaper_cond.wait(l.get());
    }
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
      io_finished_locked(static_cast<Batch*>(cookie), res);
    }
    complete_ready();
  }
}

JournalWriter::Trim JournalWriter::trim(sn_t checkpoint)
{
  mim::MutexLock l(lock);
  index.trim_below(checkpoint);
  // Replay starts at a block boundary (the format's rule), so at the
  // batch that holds the checkpoint: the few entries before it in that
  // batch are replayed again, which replay tolerates like any other
  // already-applied entry.
  Trim t;
  if (index.empty()) {
    t.new_tail = head;
    t.start_sn = checkpoint;
  } else {
    ceph_assert(index.first_sn() == checkpoint);
    t.new_tail = index.front().off;
    t.start_sn = index.front().first_sn;
  }
  t.committed_up_to = committed_up_to;
  return t;
}

void JournalWriter::set_tail(uint64_t new_tail)
{
  mim::MutexLock l(lock);
  tail = new_tail;
  writer_cond.notify_all();
}

bool JournalWriter::drained(sn_t* committed) const
{
  mim::MutexLock l(lock);
  *committed = committed_up_to;
  return index.empty() && tail == head;
}

void JournalWriter::stop()
{
  {
    mim::MutexLock l(lock);
    stopping = true;
    writer_cond.notify_all();
  }
  if (writer.joinable()) {
    writer.join();
  }
  {
    mim::MutexLock l(lock);
    writer_running = false;
    reaper_cond.notify_all();
  }
  if (reaper.joinable()) {
    reaper.join();
  }
}

}  // namespace mimstore
