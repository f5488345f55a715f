// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the power-loss model for the omap database (RocksDB).
 *
 * Under fault injection (mimstore_debug_fault with a crash point) the
 * store's own files go through mim::FaultIoEnv, which rolls back what was
 * not synced when the "power" goes. RocksDB writes its files itself; this
 * rocksdb::Env, handed to KeyValueDB::create the way BlueStore hands over
 * BlueRocksEnv, puts them under the same model:
 *
 *  - every writable file (WAL, MANIFEST, SST, CURRENT's temp file, a
 *    recycled WAL) remembers how far it was appended and how far it was
 *    synced (Sync/Fsync; RangeSync is not durability);
 *  - crash() cuts each such file at a seeded point between its synced
 *    length and its written length (mode "drop": at the synced length;
 *    "keep": nothing is cut), as a volatile write cache would;
 *  - from crash() on, a thread that reaches an append, sync or namespace
 *    change halts there (after_crash, by default: wait until the process
 *    is gone), so no RocksDB thread writes after the cut. It must not see
 *    an IOError either: the store would take the failed omap write for a
 *    real one and abort before the crash callback's _exit, and the crash
 *    test would see a child killed by a signal instead of a power cut.
 *
 * Namespace operations (create, rename, delete) are durable at once, as
 * with FaultIoEnv's meta=off; a file created but never synced is left
 * empty. A recycled WAL is cut to its synced length like any other file,
 * where a real crash would leave the old log's bytes after it: RocksDB
 * reads both as the end of the log.
 *
 * Injected errors: the fault spec's "dbwrite" and "dbsync" rules fail the
 * Nth matching append or sync (path: a substring of the file's) with
 * NoSpace (enospc) or IOError (any other errno), without doing it, as a
 * disk that fails or fills under RocksDB would.
 *
 * Locking: `lock` (shared by every write and sync, exclusive in crash())
 * makes the cut atomic against RocksDB's threads; `files_lock` guards
 * `files` (RocksDB may sync a WAL from one thread while another appends);
 * `rules_lock` guards the fail rules and their counts. Order: lock, then
 * files_lock or rules_lock.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>

#include <vector>

#include <rocksdb/env.h>

#include "core/fault_io_env.h"

namespace mimstore {

class CrashRocksEnv : public rocksdb::EnvWrapper {
 public:
  enum class Mode { RANDOM, DROP, KEEP };

  CrashRocksEnv(rocksdb::Env* base, uint64_t seed, Mode mode);

  /// The power goes: cut every file to what a disk could hold now; from
  /// here on every write halts its thread. Called from FaultIoEnv's crash
  /// callback, before _exit. Returns the number of files cut short; with
  /// `what`, says per file what was synced, written and kept.
  int crash(std::string* what = nullptr);

  /// What a thread runs when it reaches a write after crash(); it must
  /// not return. Default: wait for the signal or _exit that ends the
  /// process. Tests set one that exits with a code they recognise.
  void set_after_crash(std::function<void()> f);
  /// The spec's fail rules; those with dbwrite or dbsync are kept. Set
  /// before the database opens.
  void set_fail_rules(const std::vector<mim::fail_rule_t>& rules);
  /// The error a rule injects into this append (sync false) or sync of
  /// `f`, or OK. Counts the call against the matching rules.
  rocksdb::Status injected(const std::string& f, bool sync);

  rocksdb::Status NewWritableFile(
    const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
    const rocksdb::EnvOptions& o) override;
  rocksdb::Status ReopenWritableFile(
    const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
    const rocksdb::EnvOptions& o) override;
  rocksdb::Status ReuseWritableFile(
    const std::string& f, const std::string& old_f,
    std::unique_ptr<rocksdb::WritableFile>* r,
    const rocksdb::EnvOptions& o) override;
  rocksdb::Status RenameFile(const std::string& src,
                             const std::string& dst) override;
  rocksdb::Status DeleteFile(const std::string& f) override;

  // For the wrapped files.
  struct FileState {
    uint64_t written = 0;  ///< bytes appended (end of file as written)
    uint64_t synced = 0;   ///< bytes durable
  };
  /// Run op with `lock` shared, so crash() cannot cut in the middle of it;
  /// after the crash, halt the thread instead.
  template <class Op>
  rocksdb::Status unless_crashed(Op&& op) {
    std::shared_lock l(lock);
    if (is_crashed) {
      l.unlock();
      halt();
    }
    return op();
  }
  /// The file was written up to `end`. REQUIRES: inside unless_crashed.
  void note_write(const std::string& f, uint64_t end);
  /// The file is durable up to `end`. REQUIRES: inside unless_crashed.
  void note_sync(const std::string& f, uint64_t end);

 private:
  /// Track a file opened for writing at `start` (0: created or recycled).
  void track(const std::string& f, uint64_t start);
  [[noreturn]] void halt();

  std::shared_mutex lock;
  bool is_crashed = false;                  ///< GUARDED_BY(lock)
  std::mutex files_lock;
  std::map<std::string, FileState> files;  ///< by path; GUARDED_BY(files_lock)
  std::mutex rules_lock;
  std::vector<mim::fail_rule_t> rules;      ///< GUARDED_BY(rules_lock)
  std::vector<uint64_t> rule_seen;          ///< GUARDED_BY(rules_lock)
  std::mt19937_64 rng;                      ///< used in crash() only
  std::function<void()> after_crash;        ///< GUARDED_BY(lock)
  Mode mode;
};

}  // namespace mimstore
