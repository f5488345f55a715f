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
    std::lock_guard sl(submit_lock);
    next = next_sn;
    queued_ops = 0;
    queued_bytes = 0;
    max_ops = ops;
    max_bytes = bytes;
    logger = l;
  }
  std::lock_guard al(apply_lock);
  applied = next_sn - 1;
}

Sequencer::sn_t Sequencer::next_sn() const
{
  std::lock_guard l(submit_lock);
  return next;
}

Sequencer::sn_t Sequencer::admit(uint64_t bytes,
                                 const std::function<void(sn_t)>& submit)
{
  std::unique_lock l(submit_lock);
  // Bound what is queued but not applied, so a slow data disk pushes back
  // on the OSD instead of growing memory without limit. One transaction
  // larger than the byte limit still goes, alone.
  auto room = [&] {
    return queued_ops < max_ops &&
           (!queued_ops || queued_bytes + bytes <= max_bytes);
  };
  if (!room()) {
    if (logger) {
      logger->inc(l_mimstore_throttle_waits);
    }
    submit_cond.wait(l, room);
  }
  ++queued_ops;
  queued_bytes += bytes;
  if (logger) {
    logger->set(l_mimstore_queue_ops, queued_ops);
    logger->set(l_mimstore_queue_bytes, queued_bytes);
  }
  sn_t sn = next++;
  submit(sn);
  return sn;
}

void Sequencer::release(uint64_t bytes)
{
  std::lock_guard l(submit_lock);
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
  std::lock_guard l(apply_lock);
  queue.push_back(item);
  apply_cond.notify_one();
}

bool Sequencer::pop(ApplyItem* item)
{
  std::unique_lock l(apply_lock);
  apply_cond.wait(l, [this] { return stopping || !queue.empty(); });
  if (queue.empty()) {
    return false;  // stop requested and drained
  }
  *item = queue.front();
  queue.pop_front();
  return true;
}

void Sequencer::start()
{
  std::lock_guard l(apply_lock);
  stopping = false;
}

void Sequencer::stop()
{
  std::lock_guard l(apply_lock);
  stopping = true;
  apply_cond.notify_all();
}

void Sequencer::set_applied(sn_t sn)
{
  std::lock_guard l(apply_lock);
  applied = sn;
  applied_cond.notify_all();
}

void Sequencer::wait_applied(sn_t want)
{
  if (applied >= want) {
    return;
  }
  std::unique_lock l(apply_lock);
  applied_cond.wait(l, [&] { return applied >= want; });
}

void Sequencer::wait_applied_all()
{
  wait_applied(next_sn() - 1);
}

bool Sequencer::flush_commit(sn_t want, Context* c)
{
  std::lock_guard l(apply_lock);
  if (applied >= want) {
    return true;
  }
  commit_waiters.emplace(want, c);
  return false;
}

void Sequencer::commit_waiters_to(sn_t sn, Finisher& f)
{
  std::lock_guard l(apply_lock);
  while (!commit_waiters.empty() && commit_waiters.begin()->first <= sn) {
    f.queue(commit_waiters.begin()->second);
    commit_waiters.erase(commit_waiters.begin());
  }
}

size_t Sequencer::queue_length() const
{
  std::lock_guard l(apply_lock);
  return queue.size();
}

size_t Sequencer::waiters() const
{
  std::lock_guard l(apply_lock);
  return commit_waiters.size();
}

}  // namespace mimstore
