// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: an IoEnv that injects faults and crashes. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 *
 * FaultIoEnv wraps a real IoEnv (normally PosixIoEnv) and can
 *
 *  (a) fail the Nth operation matching a filter (op kind, path substring)
 *      with a chosen errno; the failed operation is not performed;
 *  (b) model a volatile write cache: every write, truncate and fallocate
 *      that is not yet durable is remembered with the pre-image of the
 *      range it overwrote and the file size before it. crash() undoes them
 *      in reverse order, each one independently kept, dropped (pre-image
 *      and old size restored) or torn (a random subset of its 512-byte
 *      sectors reverted), chosen by a seeded RNG;
 *  (c) crash at the Nth I/O (pwritev, fsync/fdatasync/syncfs, aio submit,
 *      and with meta=xfs the metadata operations of (d); the Nth is not
 *      performed): roll back as in (b) and (d), then call the crash
 *      callback (a forked store child passes _exit; tests may throw or set
 *      a flag). After a crash every call except close() fails with -EIO;
 *  (d) with meta=xfs (opt-in), model XFS's metadata log: file creation
 *      (open with O_CREAT of a name that did not exist), mkdir, rmdir,
 *      unlink, rename, link, fsetxattr, fremovexattr, clone_file and
 *      clone_range form one ordered sequence. Any successful fsync or
 *      fdatasync (of any file or directory), syncfs, or write through an
 *      O_DSYNC fd forces the log: every earlier metadata op is durable.
 *      At a crash the ops after the last force are cut at a seeded point:
 *      a prefix is kept, the rest undone newest first, interleaved with
 *      (b)'s write rollback in issue order.
 *
 * Durability model:
 *  - fsync/fdatasync of any fd of a file makes durable that file's writes
 *    that had completed when it was called (pwritev returned, or the aio
 *    completion was reaped); syncfs does so for every file (all
 *    filesystems: a simplification).
 *  - writes through an O_DSYNC/O_SYNC fd are durable when they complete.
 *  - O_DIRECT alone is not durable (the device has a volatile cache).
 *  - meta=off (default): rename, unlink, link, mkdir, rmdir, xattrs, file
 *    creation and clones are durable at once; they are never rolled back.
 *  - meta=xfs: as (d). XFS puts directory entries in the same log, so an
 *    fsync of the directory and an fsync of any other file are the same
 *    log force (ext4 data=ordered is similar: one journal); a missing
 *    directory fsync is NOT caught, though a filesystem without ordered
 *    metadata would need it. fdatasync forces the log only if the file's
 *    metadata changed on real XFS; here it always does. A reaped O_DSYNC
 *    aio write covers the ops issued before it was submitted.
 *    Undo works on the real filesystem: an unlinked file (or a file
 *    replaced by rename) is first hard-linked into a hidden trash
 *    directory, TRASH_DIR under the first directory this env saw on that
 *    filesystem (else next to the file); the link goes once the op is
 *    durable, and the trash directory once it is empty. list_dir hides
 *    it. An op that cannot be undone (the trash link failed) is kept at a
 *    crash, and with it every earlier op. O_TRUNC at open is not modelled.
 *  - Files are told apart by (st_dev, st_ino); a block device is treated as
 *    a file whose size never changes.
 *  - Each file with unsynced writes keeps a private O_RDWR fd open (for
 *    pre-images and rollback), so user fds may be closed or the file
 *    renamed or unlinked before the crash.
 *  - Pre-images are read (buffered) before each write: slow and memory
 *    hungry; test use only.
 *
 * Spec string (store option or tests), comma-separated items:
 *
 *   spec   := item ("," item)*
 *   item   := "crash_at=" N          crash at the Nth counted I/O (1-based)
 *           | "seed=" N              RNG seed for crash outcomes (default 0)
 *           | "mode=" mode           outcome of each unsynced write
 *           | "meta=" ("xfs"|"off")  metadata crash model (default off)
 *           | "fail=" rule           may repeat
 *           | "delay=" delay         may repeat
 *           | "corrupt=" corrupt     may repeat
 *   mode   := "random" | "drop" | "keep" | "tear"
 *   rule   := ops ":" [path] ":" err "@" N ["+"]
 *   delay  := ("read" | "write" | "writeback") ":" [path] ":" MS "@" N ["+"]
 *   corrupt := "read" ":" [path] ":" OFF "@" N ["+"]
 *   ops    := op ("|" op)*
 *   op     := "read" | "write" | "aio" | "sync" | "fsync" | "trunc" | "open"
 *           | "meta" | "xattr" | "clone" | "submit" | "any"
 *           | "dbwrite" | "dbsync"
 *   err    := "eio" | "enospc" | "edquot" | "erofs" | "efbig" | "enoent"
 *           | "enodata" | decimal errno
 *
 * e.g. "crash_at=1234,seed=7,mode=tear", "fail=write:journal:eio@5",
 * "fail=sync::eio@3+" (every sync from the 3rd on), "crash_at=99,meta=xfs".
 * A delay holds the Nth matching pread (and every later one with "+") for
 * MS milliseconds before it is served, outside the env's lock, so only the
 * reading thread waits: a disk that is slow for one object, or an OSD
 * thread held in the store (qa/crash/laggy-pg.sh). "writeback" holds a
 * writeback start (sync_file_range without waiting) the same way: a disk
 * whose queue is full. "write" holds a pwritev the same way, before it
 * reaches the file: a buffered write waiting for a page the kernel is
 * writing back (stable pages, a folio locked behind a full queue).
 * A corrupt rule flips the low bit of the byte at file offset OFF in what
 * the Nth matching pread or pread_cached covering OFF returns (and every
 * later one with "+"); the file is untouched: a bad page or a bad transfer,
 * which a second read from the device does not repeat (without "+").
 * `path` is a substring of the path the fd was opened with (or of a
 * metadata op's path); empty matches all; it cannot contain ',' or ':'.
 * "write" is pwritev only, "aio" is aio_submit_write (the failure is
 * delivered as the completion result), "submit" is aio_submit_write
 * failing itself (returns the error, nothing queued), "sync" and "fsync"
 * both mean fsync, fdatasync and syncfs, "trunc" is ftruncate and
 * fallocate, "meta" is rename, unlink, link, mkdir, rmdir; "any" is all
 * of these. "dbwrite" and "dbsync" are the omap database's appends and
 * syncs (RocksDB writes its files itself: the store's CrashRocksEnv takes
 * these rules, with the same path and count rules, enospc as RocksDB's
 * NoSpace and any other errno as its IOError). With
 * meta=xfs, `mode` also sets how many metadata ops survive a crash: all
 * (keep), none that can be undone (drop), or a seeded random prefix
 * (random, tear).
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/io_env.h"

namespace mim {

enum fault_op_t : uint32_t {
  FAULT_OP_READ = 1u << 0,
  FAULT_OP_WRITE = 1u << 1,
  FAULT_OP_AIO = 1u << 2,
  FAULT_OP_SYNC = 1u << 3,
  FAULT_OP_TRUNC = 1u << 4,
  FAULT_OP_OPEN = 1u << 5,
  FAULT_OP_META = 1u << 6,
  FAULT_OP_XATTR = 1u << 7,
  FAULT_OP_CLONE = 1u << 8,
  /// aio_submit_write itself fails (io_submit's own error: nothing is
  /// queued, no completion comes); FAULT_OP_AIO's error is the
  /// completion's, as a device reports it. A rule with both is AIO's.
  FAULT_OP_SUBMIT = 1u << 9,
  FAULT_OP_ANY = 0x3ff,
  /// The omap database's appends and syncs (RocksDB's own files, served
  /// by the store's CrashRocksEnv, not by this env): never in "any".
  FAULT_OP_DB_WRITE = 1u << 10,
  FAULT_OP_DB_SYNC = 1u << 11,
};

enum class crash_mode_t { RANDOM, DROP, KEEP, TEAR };

/// Crash model for namespace and inode metadata operations.
enum class meta_model_t {
  OFF,  ///< durable at once (the default)
  XFS,  ///< one ordered log, forced by any fsync/fdatasync/syncfs
};

/// A metadata operation under meta=xfs, for crash reports.
enum class meta_kind_t {
  CREATE,       ///< open(O_CREAT) of a name that did not exist
  MKDIR,
  RMDIR,
  UNLINK,
  RENAME,
  LINK,
  SETXATTR,
  REMOVEXATTR,
  CLONE,        ///< clone_file or clone_range (of the destination)
};
const char* meta_kind_name(meta_kind_t k);
/// The spec's name of one fault_op_t bit ("?" for anything else).
const char* fault_op_name(uint32_t op);

struct fail_rule_t {
  uint32_t ops = FAULT_OP_ANY;  ///< fault_op_t bits
  std::string path;             ///< substring; empty matches every path
  int err = EIO;                ///< positive errno
  uint64_t nth = 1;             ///< the Nth matching op fails (1-based)
  bool and_after = false;       ///< ... and every later matching op
};

/// What a delay rule holds.
enum class delay_op_t { READ, WRITE, WRITEBACK };

/// A pread, pwritev or writeback start held before it is served (spec item
/// "delay=").
struct delay_rule_t {
  delay_op_t op = delay_op_t::READ;
  std::string path;             ///< substring; empty matches every path
  uint32_t ms = 0;              ///< how long
  uint64_t nth = 1;             ///< the Nth matching op waits (1-based)
  bool and_after = false;       ///< ... and every later matching op
};

/// What a pread returns with one bit flipped (spec item "corrupt=").
struct corrupt_rule_t {
  std::string path;             ///< substring; empty matches every path
  uint64_t off = 0;             ///< the file offset of the byte
  uint64_t nth = 1;             ///< the Nth read covering it (1-based)
  bool and_after = false;       ///< ... and every later one
};

struct fault_spec_t {
  uint64_t crash_at = 0;        ///< 0: never
  uint64_t seed = 0;
  crash_mode_t mode = crash_mode_t::RANDOM;
  meta_model_t meta = meta_model_t::OFF;
  std::vector<fail_rule_t> fails;
  std::vector<delay_rule_t> delays;
  std::vector<corrupt_rule_t> corrupts;
};

/// Parse the grammar above. -EINVAL with *err naming the bad item.
int parse_fault_spec(const std::string& spec, fault_spec_t* out,
                     std::string* err);

class FaultIoEnv : public IoEnv {
 public:
  /// What crash() did to one unsynced write.
  struct rollback_t {
    enum Outcome { KEPT, DROPPED, TORN } outcome;
    std::string path;           ///< the path the file was first opened as
    uint64_t off = 0;
    uint64_t len = 0;
    std::vector<bool> reverted; ///< TORN: per sector of [off, off+len),
                                ///< split at 512-byte file offsets
  };
  /// What crash() did to one metadata op that was not yet durable
  /// (meta=xfs).
  struct meta_rollback_t {
    meta_kind_t kind = meta_kind_t::CREATE;
    std::string path;      ///< rename/link: from; xattrs/clone: the file
    std::string path2;     ///< rename/link: to; xattrs: the name
    bool kept = false;     ///< in the kept prefix: not undone
    bool undoable = true;  ///< false: could not be undone, so it and
                           ///< every earlier op were kept
    int err = 0;           ///< -errno: the undo failed (the op stays)
  };

  /// `base` is not owned and must outlive this.
  explicit FaultIoEnv(IoEnv* base);
  ~FaultIoEnv() override;

  void set_spec(const fault_spec_t& s);
  /// Parse and apply a spec string; -EINVAL and *err if it does not parse.
  int set_spec(const std::string& s, std::string* err);
  void add_fail_rule(const fail_rule_t& r);
  void clear_fail_rules();
  /// Crash when the Nth counted I/O is attempted (0: never), then call cb
  /// (with the env locked, so no other thread sees post-crash EIO first)
  /// with what the cut did (crash_summary's text), for the log of a
  /// failing crash point.
  void set_crash_at(uint64_t n);
  void set_crash_callback(std::function<void(const std::string&)> cb);
  void set_seed(uint64_t seed);
  void set_crash_mode(crash_mode_t m);

  /// Roll back every unsynced write now and fail all further I/O. Waits
  /// (up to a few seconds) for aio writes in flight in the base env first.
  void crash();
  /// As crash_at's cut, at a point the caller names instead of an I/O
  /// count (a test's hook): crash now, then call the crash callback with
  /// the env still locked, so no other thread sees an EIO first.
  void crash_here(const std::string& where);
  bool crashed() const;
  /// Counted I/Os attempted so far (pwritev, syncs, aio submits; with
  /// meta=xfs also the metadata ops of the model).
  uint64_t io_count() const;
  /// Reads a delay rule held so far.
  uint64_t delayed_reads() const;
  /// Writes (pwritev) a delay rule held so far.
  uint64_t delayed_writes() const;
  /// Writeback starts a delay rule held so far.
  uint64_t delayed_writebacks() const;
  /// Reads a corrupt rule changed so far.
  uint64_t corrupted_reads() const;
  /// Writes not yet durable.
  size_t unsynced_writes() const;
  /// Metadata ops not yet durable (meta=xfs).
  size_t unsynced_meta_ops() const;
  /// Per write undone or kept by the last crash, newest first.
  std::vector<rollback_t> last_crash_report() const;
  /// Per metadata op undone or kept by the last crash, newest first (the
  /// kept ones, the prefix, come last).
  std::vector<meta_rollback_t> last_meta_report() const;
  /// The last crash in words: the I/O it struck, each unsynced write's
  /// outcome and each metadata op's (kept or undone), newest first.
  std::string crash_summary() const;

  /// Name of the hidden directory holding unlinked files until their
  /// unlink is durable (meta=xfs).
  static constexpr const char* TRASH_DIR = ".faultio-trash";

  // IoEnv
  int open(const std::string& path, int flags, mode_t mode, int* fd) override;
  int close(int fd) override;
  ssize_t pread(int fd, void* buf, size_t len, uint64_t off) override;
  ssize_t pread_cached(int fd, void* buf, size_t len,
                       uint64_t off) override;
  ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt,
                  uint64_t off) override;
  int fsync(int fd) override;
  int fdatasync(int fd) override;
  int syncfs(int fd) override;
  /// Passed through, never injected, never counted, and it makes nothing
  /// durable (the model keeps the range's writes undoable until a sync).
  int writeback(int fd, uint64_t off, uint64_t len, bool wait) override;
  /// Passed through (after a crash: -EIO), never counted.
  int drop_cache(int fd, uint64_t off, uint64_t len) override;
  int ftruncate(int fd, uint64_t size) override;
  int fallocate(int fd, int mode, uint64_t off, uint64_t len) override;
  int fstat(int fd, struct stat* st) override;
  int stat(const std::string& path, struct stat* st) override;
  int get_size(int fd, uint64_t* size) override;
  int get_logical_block_size(int fd, uint32_t* bs) override;
  int get_physical_block_size(int fd, uint32_t* bs) override;
  int physical_offset(int fd, uint64_t off, uint64_t* phys) override;
  int rename(const std::string& from, const std::string& to) override;
  int unlink(const std::string& path) override;
  int link(const std::string& from, const std::string& to) override;
  int mkdir(const std::string& path, mode_t mode) override;
  int rmdir(const std::string& path) override;
  /// With meta=xfs, TRASH_DIR is left out.
  int list_dir(const std::string& path,
               std::vector<std::string>* names) override;
  int clone_file(int src_fd, int dst_fd) override;
  int clone_range(int src_fd, uint64_t src_off, uint64_t len, int dst_fd,
                  uint64_t dst_off) override;
  int fsetxattr(int fd, const std::string& name, const void* val, size_t len,
                int flags) override;
  int fgetxattr(int fd, const std::string& name, std::string* val) override;
  int fremovexattr(int fd, const std::string& name) override;
  int aio_setup(int max_inflight) override;
  int aio_submit_write(int fd, const struct iovec* iov, int iovcnt,
                       uint64_t off, void* cookie) override;
  int aio_reap(int min_events, int max_events,
               std::vector<std::pair<void*, ssize_t>>* done,
               int timeout_ms) override;
  int aio_inflight() override;

 private:
  using inode_key_t = std::pair<dev_t, ino_t>;
  struct file_t {
    std::string path;        ///< as first opened
    int shadow_fd = -1;      ///< private O_RDWR fd; -1 if never writable
    int meta_fd = -1;        ///< private fd (a dup) for undoing xattr ops
                             ///< when there is no shadow_fd
    bool is_blk = false;
    int user_fds = 0;
    size_t pending = 0;      ///< records and meta records referring to it
  };
  struct fd_t {
    std::shared_ptr<file_t> file;
    std::string path;
    bool sync_writes = false;  ///< O_DSYNC or O_SYNC
  };
  /// One modification not yet durable.
  struct record_t {
    uint64_t seq = 0;
    std::shared_ptr<file_t> file;
    uint64_t off = 0;
    uint64_t len = 0;
    std::string pre;         ///< old bytes of [off, min(off+len, old_size))
    uint64_t old_size = 0;   ///< UINT64_MAX for block devices
    uint64_t new_size = 0;
    bool completed = false;  ///< pwritev returned / aio completion reaped
    bool durable_on_completion = false;
    bool size_op = false;    ///< truncate/fallocate (never torn)
  };
  /// A directory's attributes, to make it again (rmdir, rename over it).
  struct dir_attrs_t {
    mode_t mode = 0755;
    std::vector<std::pair<std::string, std::string>> xattrs;
  };
  /// One metadata op not yet durable (meta=xfs), with what undoes it.
  struct meta_rec_t {
    uint64_t seq = 0;
    meta_kind_t kind = meta_kind_t::CREATE;
    std::string path;        ///< see meta_rollback_t
    std::string path2;
    inode_key_t key{};       ///< create/mkdir: at path; link/rename: at
                             ///< path2; checked before the undo
    bool undoable = true;
    std::string trash;       ///< unlink, rename over a file: the victim's
                             ///< link in the trash
    bool restore_dir = false;  ///< rmdir, rename over a directory
    dir_attrs_t dir;
    inode_key_t dir_key{};   ///< the removed directory
    std::shared_ptr<file_t> file;  ///< xattrs, clone: holds its fd open
    bool had_value = false;  ///< xattrs: the name existed before
    std::string value;       ///< xattrs: old value; clone: pre-image
    uint64_t off = 0;        ///< clone: destination range start
    uint64_t old_size = 0;   ///< clone: destination size before
  };
  struct aio_op_t {
    void* cookie = nullptr;
    uint64_t seq = 0;        ///< record, 0 if none
  };
  enum class Gate { GO, FAIL, CRASH };

  /// The gate of pread and pread_cached: -errno of a fault rule, else 0
  /// and in *delay_ms how long a delay rule holds this read (counted).
  int read_gate(int fd, uint32_t* delay_ms);

  // REQUIRES: lock_ is held (all *_locked below).
  /// *rule_ops (if given): the failing rule's ops. An aio write also
  /// matches FAULT_OP_SUBMIT rules.
  Gate gate_locked(uint32_t op, const std::string& path, bool counted,
                   int* err, uint32_t* rule_ops = nullptr);
  /// How long an `op` of `path` is to wait (delay rules), counting it.
  uint32_t delay_locked(delay_op_t op, const std::string& path);
  /// The corrupt rules on n bytes read at off from fd into buf.
  void corrupt_locked(int fd, char* buf, ssize_t n, uint64_t off);
  /// pread or pread_cached's result r, after the corrupt rules.
  ssize_t after_read(int fd, void* buf, ssize_t r, uint64_t off);
  std::string path_of_locked(int fd) const;
  /// `cause`: what struck, for the summary ("I/O 7 (sync path)").
  void crash_locked(const std::string& cause = "crash()");
  std::string summarize_crash_locked(const std::string& cause) const;
  static constexpr size_t MAX_SUMMARY_LINES = 200;  ///< per kind
  int capture_locked(const fd_t& f, uint64_t off, uint64_t len,
                     record_t* rec);
  void mark_durable_locked(const file_t* file);  ///< nullptr: all files
  void drop_record_locked(std::map<uint64_t, record_t>::iterator it);
  void maybe_release_locked(const std::shared_ptr<file_t>& file);
  void rollback_write_locked(record_t& rec, rollback_t* rep);
  int after_crash();  ///< calls the callback outside the lock; -EIO

  // meta=xfs (all REQUIRE lock_)
  bool meta_on_locked() const { return spec_.meta == meta_model_t::XFS; }
  void note_home_locked(dev_t dev, const std::string& dir);
  /// Hard-link `path` into the trash; "" if that failed.
  std::string trash_link_locked(const std::string& path, dev_t dev,
                                uint64_t seq);
  /// One trash link less (unlinking it first if `remove`); the trash
  /// directory goes when it is empty.
  void trash_release_locked(const std::string& link, bool remove);
  int capture_dir_locked(const std::string& path, dir_attrs_t* out);
  int restore_dir_locked(const std::string& path, const dir_attrs_t& a,
                         inode_key_t old_key);
  /// The file_t of fd's inode with an fd of ours open on it; nullptr if
  /// that failed.
  std::shared_ptr<file_t> inode_handle_locked(int fd);
  void add_meta_locked(meta_rec_t&& m);
  /// The log force: every metadata op issued before `below_seq` is durable.
  void force_meta_log_locked(uint64_t below_seq);
  void finish_meta_locked(meta_rec_t& m);  ///< durable: free trash, fds
  int undo_meta_locked(meta_rec_t& m);
  int xattr_op_locked(int fd, const std::string& name, const void* val,
                      size_t len, int flags, bool remove);
  int clone_op_locked(int src_fd, uint64_t src_off, uint64_t len,
                      int dst_fd, uint64_t dst_off, bool whole);

  IoEnv* const base_;  ///< constant after construction

  mutable std::mutex lock_;  ///< protects everything below
  fault_spec_t spec_;
  std::vector<uint64_t> rule_seen_;
  std::vector<uint64_t> delay_seen_;  ///< matching reads per delay rule
  std::vector<uint64_t> corrupt_seen_;  ///< covering reads per rule
  std::function<void(const std::string&)> crash_cb_;
  std::mt19937_64 rng_;
  uint64_t io_count_ = 0;
  uint64_t delayed_reads_ = 0;
  uint64_t delayed_writes_ = 0;
  uint64_t delayed_writebacks_ = 0;
  uint64_t corrupted_reads_ = 0;
  bool crashed_ = false;
  uint64_t next_seq_ = 1;
  std::map<int, fd_t> fds_;
  std::map<std::pair<dev_t, ino_t>, std::shared_ptr<file_t>> files_;
  std::map<uint64_t, record_t> records_;   ///< by seq, i.e. issue order
  std::vector<std::pair<void*, ssize_t>> fake_completions_;
  std::vector<rollback_t> last_report_;
  // meta=xfs
  std::map<uint64_t, meta_rec_t> meta_ops_;   ///< by seq: not yet durable
  std::map<dev_t, std::string> trash_home_;   ///< first dir seen per fs
  std::map<std::string, int> trash_dirs_;     ///< trash dir -> its links
  std::vector<meta_rollback_t> last_meta_report_;
  std::string crash_summary_;  ///< set by crash_locked

  std::atomic<int> base_inflight_{0};  ///< aio writes submitted to base_
};

}  // namespace mim
