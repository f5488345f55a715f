// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: which lock protects what, written so that a compiler checks it.
 * Ceph-free.
 *
 * clang's thread safety analysis (-Wthread-safety) follows capabilities
 * through the code: a member MIM_GUARDED_BY(mu) is read or written only
 * with mu held, a function MIM_REQUIRES(mu) is called only with mu held,
 * MIM_EXCLUDES(mu) only without. std::mutex and std::lock_guard carry no
 * annotations in libstdc++, so the core's locks are mim::Mutex, taken with
 * mim::MutexLock (a lock_guard) or mim::UniqueLock (to drop it inside a
 * scope); mim::SharedMutex with WriteLock/ReadLock. The Ceph-free tier
 * compiles core/ with clang and -Werror=thread-safety (qa/run-tests.sh,
 * "lock annotations"); the Ceph tier does the same for the store's units
 * around it, which use these types too (qa/lock-annotations.sh --store).
 * With gcc the macros are empty and the types cost what std::mutex costs.
 *
 * Condition variables: wait() releases and retakes the lock inside; to the
 * analysis the lock is held across the call, which is what the code after
 * it may assume. A wait's predicate is written as the loop around wait()
 * (not a lambda: the analysis does not know a lambda runs under the lock).
 * A function that REQUIRES a lock and waits uses mim::wait(cv, mu); one
 * that drops the lock inside calls mu.unlock() and mu.lock() itself.
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define MIM_TSA(x) __attribute__((x))
#else
#define MIM_TSA(x)
#endif

#define MIM_CAPABILITY(x) MIM_TSA(capability(x))
#define MIM_SCOPED_CAPABILITY MIM_TSA(scoped_lockable)
#define MIM_GUARDED_BY(x) MIM_TSA(guarded_by(x))
#define MIM_PT_GUARDED_BY(x) MIM_TSA(pt_guarded_by(x))
#define MIM_REQUIRES(...) MIM_TSA(requires_capability(__VA_ARGS__))
#define MIM_REQUIRES_SHARED(...) MIM_TSA(requires_shared_capability(__VA_ARGS__))
#define MIM_ACQUIRE(...) MIM_TSA(acquire_capability(__VA_ARGS__))
#define MIM_ACQUIRE_SHARED(...) MIM_TSA(acquire_shared_capability(__VA_ARGS__))
#define MIM_RELEASE(...) MIM_TSA(release_capability(__VA_ARGS__))
#define MIM_RELEASE_SHARED(...) MIM_TSA(release_shared_capability(__VA_ARGS__))
#define MIM_RELEASE_GENERIC(...) MIM_TSA(release_generic_capability(__VA_ARGS__))
#define MIM_TRY_ACQUIRE(...) MIM_TSA(try_acquire_capability(__VA_ARGS__))
#define MIM_EXCLUDES(...) MIM_TSA(locks_excluded(__VA_ARGS__))
#define MIM_RETURN_CAPABILITY(x) MIM_TSA(lock_returned(x))
#define MIM_NO_THREAD_SAFETY_ANALYSIS MIM_TSA(no_thread_safety_analysis)

namespace mim {

/// std::mutex as a capability the analysis can follow.
class MIM_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() MIM_ACQUIRE() { m_.lock(); }
  void unlock() MIM_RELEASE() { m_.unlock(); }
  bool try_lock() MIM_TRY_ACQUIRE(true) { return m_.try_lock(); }

  /// For UniqueLock and wait() only (a condition variable needs the
  /// std::mutex).
  std::mutex& native() { return m_; }

 private:
  std::mutex m_;
};

/// std::lock_guard for a Mutex.
class MIM_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) MIM_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() MIM_RELEASE() { m_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& m_;
};

/// std::unique_lock for a Mutex: held from construction to destruction,
/// unless unlock()ed in between; get() is what a std::condition_variable
/// waits with.
class MIM_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& m) MIM_ACQUIRE(m) : l_(m.native()) {}
  ~UniqueLock() MIM_RELEASE() {}
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  void lock() MIM_ACQUIRE() { l_.lock(); }
  void unlock() MIM_RELEASE() { l_.unlock(); }
  std::unique_lock<std::mutex>& get() { return l_; }

 private:
  std::unique_lock<std::mutex> l_;
};

/// Wait on `cv` in a function that holds `m` without a UniqueLock of its
/// own (one that REQUIRES m, or holds it through a MutexLock): the lock is
/// released during the wait and held again on return, as with
/// std::condition_variable::wait. Spurious wake-ups happen: loop on the
/// predicate around it.
inline void wait(std::condition_variable& cv, Mutex& m) MIM_REQUIRES(m)
{
  std::unique_lock<std::mutex> l(m.native(), std::adopt_lock);
  cv.wait(l);
  l.release();  // still held: the caller's lock, not this function's
}

/// wait() for at most `d`.
template <class Rep, class Period>
std::cv_status wait_for(std::condition_variable& cv, Mutex& m,
                        const std::chrono::duration<Rep, Period>& d)
  MIM_REQUIRES(m)
{
  std::unique_lock<std::mutex> l(m.native(), std::adopt_lock);
  std::cv_status s = cv.wait_for(l, d);
  l.release();
  return s;
}

/// std::shared_mutex as a capability: writers hold it exclusively, readers
/// shared; a member GUARDED_BY it is read under either and written only
/// under the exclusive hold.
class MIM_CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() MIM_ACQUIRE() { m_.lock(); }
  void unlock() MIM_RELEASE() { m_.unlock(); }
  void lock_shared() MIM_ACQUIRE_SHARED() { m_.lock_shared(); }
  void unlock_shared() MIM_RELEASE_SHARED() { m_.unlock_shared(); }

 private:
  std::shared_mutex m_;
};

/// std::lock_guard for a SharedMutex, exclusive.
class MIM_SCOPED_CAPABILITY WriteLock {
 public:
  explicit WriteLock(SharedMutex& m) MIM_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~WriteLock() MIM_RELEASE() { m_.unlock(); }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;

 private:
  SharedMutex& m_;
};

/// std::shared_lock for a SharedMutex, held for the scope.
class MIM_SCOPED_CAPABILITY ReadLock {
 public:
  explicit ReadLock(SharedMutex& m) MIM_ACQUIRE_SHARED(m) : m_(m) {
    m_.lock_shared();
  }
  ~ReadLock() MIM_RELEASE_GENERIC() { m_.unlock_shared(); }
  ReadLock(const ReadLock&) = delete;
  ReadLock& operator=(const ReadLock&) = delete;

 private:
  SharedMutex& m_;
};

}  // namespace mim
