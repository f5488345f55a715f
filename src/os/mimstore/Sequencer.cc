// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: transaction order, throttle and apply progress. See the header.
 */
#include "Sequencer.h"

#include "MIMPerf.h"

namespace mimstore {

void Sequencer::reset(sn_t next_sn, uint64_t ops, uint64_t bytes,
                      PerfCounters* l)
{
  {
    mim::MutexLock sl(submit_lock);
    next = next_sn;
    next_relaxed = next_sn;
    queued_ops = 0;
    queued_bytes = 0;
    max_ops = ops;
    max_bytes = bytes;
    logger = l;
  }
  mim::MutexLock al(apply_lock);
  applied = next_sn - 1;
}

Sequencer::sn_t Sequencer::next_sn() const
{
  mim::MutexLock l(submit_lock);
  return next;
}

Sequencer::sn_t Sequencer::admit(uint64_t bytes,
                                 const std::function<void(sn_t)>& submit)
{
  mim::MutexLock l(submit_lock);
  // Bound what is queued but not applied, so a slow data disk pushes back
  // on the OSD instead of growing memory without limit. One transaction
  // larger than the byte limit still goes, alone.
  if (!room_locked(bytes)) {
    if (logger) {
      logger->inc(l_mimstore_throttle_waits);
    }
    do {
      mim::wait(submit_cond, submit_lock);
    } while (!room_locked(bytes));
  }
  ++queued_ops;
  queued_bytes += bytes;
  if (logger) {
    logger->set(l_mimstore_queue_ops, queued_ops);
    logger->set(l_mimstore_queue_bytes, queued_bytes);
  }
  sn_t sn = next++;
  next_relaxed = next;
  submit(sn);
  return sn;
}

bool Sequencer::room_locked(uint64_t bytes) const
{
  return queued_ops < max_ops &&
         (!queued_ops || queued_bytes + bytes <= max_bytes);
}

void Sequencer::release(uint64_t bytes)
{
  mim::MutexLock l(submit_lock);
  --queued_ops;
  queued_bytes -= bytes;
  if (logger) {
    logger->set(l_mimstore_queue_ops, queued_ops);
    logger->set(l_mimstore_queue_bytes, queued_bytes);
  }
  submit_cond.notify_all();
}

void Sequencer::push(const ApplyItem& item)
{
  mim::MutexLock l(apply_lock);
  queue.push_back(item);
  apply_cond.notify_one();
}

bool Sequencer::pop(ApplyItem* item)
{
  mim::MutexLock l(apply_lock);
  while (!stopping && queue.empty()) {
    mim::wait(apply_cond, apply_lock);
  }
  if (queue.empty()) {
    return false;  // stop requested and drained
  }
  *item = queue.front();
  queue.pop_front();
  return true;
}

void Sequencer::start()
{
  mim::MutexLock l(apply_lock);
  stopping = false;
}

void Sequencer::stop()
{
  mim::MutexLock l(apply_lock);
  stopping = true;
  apply_cond.notify_all();
}

void Sequencer::set_applied(sn_t sn)
{
  mim::MutexLock l(apply_lock);
  applied = sn;
  applied_cond.notify_all();
}

void Sequencer::wait_applied(sn_t want)
{
  if (applied >= want) {
    return;
  }
  mim::MutexLock l(apply_lock);
  while (applied < want) {
    mim::wait(applied_cond, apply_lock);
  }
}

void Sequencer::wait_applied_all()
{
  wait_applied(next_sn() - 1);
}

bool Sequencer::flush_commit(sn_t want, Context* c)
{
  mim::MutexLock l(apply_lock);
  if (applied >= want) {
    return true;
  }
  commit_waiters.emplace(want, c);
  return false;
}

void Sequencer::take_commit_waiters(sn_t sn, std::list<Context*>* out)
{
  mim::MutexLock l(apply_lock);
  while (!commit_waiters.empty() && commit_waiters.begin()->first <= sn) {
    out->push_back(commit_waiters.begin()->second);
    commit_waiters.erase(commit_waiters.begin());
  }
}

size_t Sequencer::queue_length() const
{
  mim::MutexLock l(apply_lock);
  return queue.size();
}

size_t Sequencer::waiters() const
{
  mim::MutexLock l(apply_lock);
  return commit_waiters.size();
}

}  // namespace mimstore
