// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: lock mistakes the annotations must catch (qa/lock-annotations.sh
 * compiles this with clang -verify: each warning marked below must be
 * reported, and nothing else). If a change to core/thread_annotations.h stops the
 * analysis from seeing one of these, the check fails. Never linked.
 */
#include "core/thread_annotations.h"

#include <condition_variable>

namespace mim_lockcheck {

class Guarded {
 public:
  int read_without_lock() {
    return v;  // expected-warning {{reading variable 'v' requires holding mutex 'mu'}}
  }
  void write_without_lock() {
    v = 1;  // expected-warning {{writing variable 'v' requires holding mutex 'mu' exclusively}}
  }
  void call_without_lock() {
    bump_locked();  // expected-warning {{calling function 'bump_locked' requires holding mutex 'mu' exclusively}}
  }
  void write_after_unlock() {
    mim::UniqueLock l(mu);
    l.unlock();
    v = 2;  // expected-warning {{writing variable 'v' requires holding mutex 'mu' exclusively}}
  }
  void wait_without_lock() {
    mim::wait(cond, mu);  // expected-warning {{calling function 'wait' requires holding mutex 'mu' exclusively}}
  }
  void write_under_read_lock() {
    mim::ReadLock l(smu);
    s = 1;  // expected-warning {{writing variable 's' requires holding mutex 'smu' exclusively}}
  }
  int read_without_shared_lock() {
    return s;  // expected-warning {{reading variable 's' requires holding mutex 'smu'}}
  }
  void lock_twice() {
    mim::MutexLock a(mu);  // expected-note {{mutex acquired here}}
    mim::MutexLock b(mu);  // expected-warning {{acquiring mutex 'mu' that is already held}}
  }

  // What the core does, accepted without a warning.
  void ok_scoped() {
    mim::MutexLock l(mu);
    bump_locked();
  }
  void ok_wait_in_a_locked_helper() {
    mim::MutexLock l(mu);
    wait_locked();
  }
  int ok_shared() {
    mim::ReadLock l(smu);
    return s;
  }
  void ok_exclusive() {
    mim::WriteLock l(smu);
    s = 2;
  }
  void ok_relock_and_wait() {
    mim::UniqueLock l(mu);
    l.unlock();
    l.lock();
    while (v == 0) {
      cond.wait(l.get());
    }
    ++v;
  }

 private:
  void bump_locked() MIM_REQUIRES(mu) { ++v; }
  void wait_locked() MIM_REQUIRES(mu) {
    while (v == 0) {
      mim::wait(cond, mu);
    }
    mim::wait_for(cond, mu, std::chrono::milliseconds(1));
  }

  mim::Mutex mu;
  std::condition_variable cond;
  int v MIM_GUARDED_BY(mu) = 0;
  mim::SharedMutex smu;
  int s MIM_GUARDED_BY(smu) = 0;
};

}  // namespace mim_lockcheck
