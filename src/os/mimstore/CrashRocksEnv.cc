// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the power-loss model for the omap database. See the header.
 */
#include "CrashRocksEnv.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <sstream>

namespace mimstore {

namespace {

using rocksdb::Slice;
using rocksdb::Status;

/// A RocksDB file that reports its appends and syncs to the env.
class CrashFile : public rocksdb::WritableFileWrapper {
 public:
  CrashFile(CrashRocksEnv* env, std::string path,
            std::unique_ptr<rocksdb::WritableFile> f, uint64_t start)
    : rocksdb::WritableFileWrapper(f.get()), env(env), path(std::move(path)),
      file(std::move(f)), end(start) {}

  Status Append(const Slice& data) override {
    return env->unless_crashed([&] {
      Status s = env->injected(path, false);
      if (!s.ok()) {
        return s;
      }
      s = file->Append(data);
      if (s.ok()) {
        written_to(end + data.size());
      }
      return s;
    });
  }
  Status Append(const Slice& data,
                const rocksdb::DataVerificationInfo&) override {
    return Append(data);
  }
  Status PositionedAppend(const Slice& data, uint64_t off) override {
    return env->unless_crashed([&] {
      Status s = env->injected(path, false);
      if (!s.ok()) {
        return s;
      }
      s = file->PositionedAppend(data, off);
      if (s.ok()) {
        written_to(std::max<uint64_t>(end, off + data.size()));
      }
      return s;
    });
  }
  Status PositionedAppend(const Slice& data, uint64_t off,
                          const rocksdb::DataVerificationInfo&) override {
    return PositionedAppend(data, off);
  }
  Status Truncate(uint64_t size) override {
    return env->unless_crashed([&] {
      Status s = file->Truncate(size);
      if (s.ok()) {
        written_to(size);
      }
      return s;
    });
  }
  Status Flush() override {
    return env->unless_crashed([&] { return file->Flush(); });
  }
  Status Sync() override { return sync(false); }
  Status Fsync() override { return sync(true); }
  // Durability comes from Sync/Fsync only; RangeSync just starts writeback.
  Status RangeSync(uint64_t off, uint64_t n) override {
    return env->unless_crashed([&] { return file->RangeSync(off, n); });
  }
  Status Close() override {
    // Close flushes RocksDB's buffer to the OS (not to the disk).
    return env->unless_crashed([&] { return file->Close(); });
  }

 private:
  void written_to(uint64_t e) {
    end = e;
    env->note_write(path, e);
  }
  Status sync(bool full) {
    return env->unless_crashed([&] {
      uint64_t upto = end;  // appends racing with the sync are not covered
      Status s = env->injected(path, true);
      if (!s.ok()) {
        return s;
      }
      s = full ? file->Fsync() : file->Sync();
      if (s.ok()) {
        env->note_sync(path, upto);
      }
      return s;
    });
  }

  CrashRocksEnv* env;
  std::string path;
  std::unique_ptr<rocksdb::WritableFile> file;
  std::atomic<uint64_t> end;
};

}  // namespace

CrashRocksEnv::CrashRocksEnv(rocksdb::Env* base, uint64_t seed, Mode mode)
  : rocksdb::EnvWrapper(base), rng(seed ^ 0x726f636b73ull), mode(mode)
{
}

void CrashRocksEnv::set_after_crash(std::function<void()> f)
{
  std::unique_lock l(lock);
  after_crash = std::move(f);
}

void CrashRocksEnv::halt()
{
  std::function<void()> f;
  {
    std::shared_lock l(lock);
    f = after_crash;
  }
  if (f) {
    f();
  }
  for (;;) {
    ::pause();  // the crash callback's _exit ends this
  }
}

void CrashRocksEnv::track(const std::string& f, uint64_t start)
{
  std::lock_guard l(files_lock);
  auto p = files.find(f);
  if (p == files.end()) {
    // Not written through this env before: what it holds is durable
    // (an earlier run's file, or nothing).
    files[f] = FileState{start, start};
  } else {
    p->second.written = start;
    p->second.synced = std::min(p->second.synced, start);
  }
}

void CrashRocksEnv::set_fail_rules(const std::vector<mim::fail_rule_t>& all)
{
  std::lock_guard l(rules_lock);
  rules.clear();
  for (const auto& r : all) {
    if (r.ops & (mim::FAULT_OP_DB_WRITE | mim::FAULT_OP_DB_SYNC)) {
      rules.push_back(r);
    }
  }
  rule_seen.assign(rules.size(), 0);
}

rocksdb::Status CrashRocksEnv::injected(const std::string& f, bool sync)
{
  const uint32_t op = sync ? mim::FAULT_OP_DB_SYNC : mim::FAULT_OP_DB_WRITE;
  std::lock_guard l(rules_lock);
  for (size_t i = 0; i < rules.size(); ++i) {
    const mim::fail_rule_t& r = rules[i];
    if (!(r.ops & op) ||
        (!r.path.empty() && f.find(r.path) == std::string::npos)) {
      continue;
    }
    const uint64_t seen = ++rule_seen[i];
    if (seen == r.nth || (r.and_after && seen > r.nth)) {
      const std::string what = std::string("injected by mimstore_debug_fault (") +
        (sync ? "dbsync " : "dbwrite ") + f + ")";
      return r.err == ENOSPC ? Status::NoSpace(what) : Status::IOError(what);
    }
  }
  return Status::OK();
}

rocksdb::Status CrashRocksEnv::NewWritableFile(
  const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
  const rocksdb::EnvOptions& o)
{
  return unless_crashed([&] {
    Status s = target()->NewWritableFile(f, r, o);
    if (s.ok()) {
      track(f, 0);
      *r = std::make_unique<CrashFile>(this, f, std::move(*r), 0);
    }
    return s;
  });
}

rocksdb::Status CrashRocksEnv::ReopenWritableFile(
  const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
  const rocksdb::EnvOptions& o)
{
  return unless_crashed([&] {
    uint64_t size = 0;
    Status s = target()->GetFileSize(f, &size);
    if (!s.ok() && !s.IsNotFound()) {
      return s;
    }
    s = target()->ReopenWritableFile(f, r, o);
    if (s.ok()) {
      track(f, size);
      *r = std::make_unique<CrashFile>(this, f, std::move(*r), size);
    }
    return s;
  });
}

rocksdb::Status CrashRocksEnv::ReuseWritableFile(
  const std::string& f, const std::string& old_f,
  std::unique_ptr<rocksdb::WritableFile>* r, const rocksdb::EnvOptions& o)
{
  return unless_crashed([&] {
    Status s = target()->ReuseWritableFile(f, old_f, r, o);
    if (s.ok()) {
      {
        std::lock_guard fl(files_lock);
        files.erase(old_f);
      }
      track(f, 0);  // rewritten from its start
      *r = std::make_unique<CrashFile>(this, f, std::move(*r), 0);
    }
    return s;
  });
}

rocksdb::Status CrashRocksEnv::RenameFile(const std::string& src,
                                          const std::string& dst)
{
  return unless_crashed([&] {
    Status s = target()->RenameFile(src, dst);
    if (s.ok()) {
      std::lock_guard fl(files_lock);
      files.erase(dst);
      auto p = files.find(src);
      if (p != files.end()) {
        files[dst] = p->second;
        files.erase(p);
      }
    }
    return s;
  });
}

rocksdb::Status CrashRocksEnv::DeleteFile(const std::string& f)
{
  return unless_crashed([&] {
    Status s = target()->DeleteFile(f);
    if (s.ok() || s.IsNotFound()) {
      std::lock_guard fl(files_lock);
      files.erase(f);
    }
    return s;
  });
}

void CrashRocksEnv::note_write(const std::string& f, uint64_t end)
{
  std::lock_guard l(files_lock);
  auto p = files.find(f);
  if (p != files.end()) {
    p->second.written = end;
  }
}

void CrashRocksEnv::note_sync(const std::string& f, uint64_t end)
{
  std::lock_guard l(files_lock);
  auto p = files.find(f);
  if (p != files.end()) {
    p->second.synced = std::max(p->second.synced, end);
  }
}

int CrashRocksEnv::crash(std::string* what)
{
  std::unique_lock l(lock);
  std::lock_guard fl(files_lock);
  if (is_crashed) {
    return 0;
  }
  is_crashed = true;
  int cut = 0;
  std::ostringstream ss;
  ss << "power cut in RocksDB's files:";
  for (auto& [path, st] : files) {
    if (st.written <= st.synced || mode == Mode::KEEP) {
      continue;
    }
    uint64_t keep = st.synced;
    if (mode == Mode::RANDOM) {
      keep += rng() % (st.written - st.synced + 1);
    }
    if (keep < st.written && ::truncate(path.c_str(), keep) == 0) {
      ++cut;
    }
    ss << "\n  " << path << ": synced " << st.synced << ", written "
       << st.written << ", kept " << keep;
  }
  if (what) {
    *what = ss.str();
  }
  return cut;
}

}  // namespace mimstore
