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
  void lock_twice() {
    mim::MutexLock a(mu);  // expected-note {{mutex acquired here}}
    mim::MutexLock b(mu);  // expected-warning {{acquiring mutex 'mu' that is already held}}
  }

  // What the core does, accepted without a warning.
  void ok_scoped() {
    mim::MutexLock l(mu);
    bump_locked();
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

  mim::Mutex mu;
  std::condition_variable cond;
  int v MIM_GUARDED_BY(mu) = 0;
};

}  // namespace mim_lockcheck
