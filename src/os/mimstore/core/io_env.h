// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the I/O seam. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 *
 * Every file and device access of the store goes through an IoEnv, so
 * tests can swap in FaultIoEnv (fault_io_env.h) to fail operations or to
 * crash with unsynced writes rolled back.
 *
 * Conventions: every method returns 0 (or a byte count) on success and
 * -errno on failure, never -1 with errno. pread/pwritev loop over EINTR and
 * short transfers: pread returns fewer bytes than asked only at end of
 * file; pwritev returns the full length or an error. Methods may be called
 * from several threads at once.
 */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mim {

class IoEnv {
 public:
  virtual ~IoEnv();

  // ---- files ----

  /// open(2); O_CLOEXEC is added. With O_DIRECT on a filesystem that does
  /// not support it (tmpfs) the error is -EINVAL and the error log says so.
  virtual int open(const std::string& path, int flags, mode_t mode,
                   int* fd) = 0;
  virtual int close(int fd) = 0;
  /// Returns the bytes read: len, or fewer only at end of file.
  virtual ssize_t pread(int fd, void* buf, size_t len, uint64_t off) = 0;
  /// pread of bytes already in memory (the page cache) only: the bytes
  /// read (fewer only at end of file), -EAGAIN if any of them would have
  /// to come from the device (preadv2 RWF_NOWAIT), -EOPNOTSUPP where that
  /// cannot be told. The caller decides whether a device read is worth it.
  virtual ssize_t pread_cached(int /*fd*/, void* /*buf*/, size_t /*len*/,
                               uint64_t /*off*/) {
    return -EOPNOTSUPP;
  }
  /// Returns the total iov length or -errno. After an error an unknown
  /// prefix of the range may have been written.
  virtual ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt,
                          uint64_t off) = 0;
  ssize_t pwrite(int fd, const void* buf, size_t len, uint64_t off);

  virtual int fsync(int fd) = 0;
  virtual int fdatasync(int fd) = 0;
  /// syncfs(2) of the filesystem holding fd.
  virtual int syncfs(int fd) = 0;
  /// sync_file_range(2): start writing [off, off+len) of fd's dirty pages
  /// to the device; with `wait`, also wait for the range's writeback to
  /// finish. Makes nothing durable (no metadata, no device cache flush):
  /// it paces the writeback that a later fsync/syncfs would otherwise
  /// push out all at once. -EINVAL/-ENOSYS/-ESPIPE: not supported here.
  virtual int writeback(int fd, uint64_t off, uint64_t len, bool wait) = 0;
  /// posix_fadvise(POSIX_FADV_DONTNEED): drop [off, off+len)'s clean pages
  /// from the page cache, so the next read of them goes to the device (a
  /// checksum mismatch is read again from the disk before it is called an
  /// error). Dirty pages stay: they are the file's newest bytes.
  virtual int drop_cache(int /*fd*/, uint64_t /*off*/, uint64_t /*len*/) {
    return -EOPNOTSUPP;
  }
  virtual int ftruncate(int fd, uint64_t size) = 0;
  virtual int fallocate(int fd, int mode, uint64_t off, uint64_t len) = 0;
  virtual int fstat(int fd, struct stat* st) = 0;
  virtual int stat(const std::string& path, struct stat* st) = 0;
  /// Size of a regular file, or of a block device (BLKGETSIZE64).
  virtual int get_size(int fd, uint64_t* size) = 0;
  /// The alignment O_DIRECT needs: BLKSSZGET for a block device, the
  /// filesystem's direct-I/O offset alignment (statx) for a file, else 512.
  virtual int get_logical_block_size(int fd, uint32_t* bs) = 0;
  /// The unit the device writes without a read-modify-write: BLKPBSZGET
  /// for a block device (for NVMe, Linux reports the smaller of the
  /// preferred write granularity and the atomic write unit), the
  /// filesystem's block size (st_blksize) for a file. Never below the
  /// logical block size. The journal's block size defaults to this.
  virtual int get_physical_block_size(int fd, uint32_t* bs) = 0;
  /// Where byte `off` of a file sits on its device (FS_IOC_FIEMAP), for
  /// ordering writeback by disk address; a hint, stale as soon as the file
  /// changes. -ENODATA: a hole, or not allocated yet (delayed allocation);
  /// -EOPNOTSUPP: the filesystem has no FIEMAP (tmpfs).
  virtual int physical_offset(int fd, uint64_t off, uint64_t* phys) = 0;

  // ---- namespace (durable at once under FaultIoEnv, unless meta=xfs) ----

  virtual int rename(const std::string& from, const std::string& to) = 0;
  virtual int unlink(const std::string& path) = 0;
  virtual int link(const std::string& from, const std::string& to) = 0;
  virtual int mkdir(const std::string& path, mode_t mode) = 0;
  virtual int rmdir(const std::string& path) = 0;
  /// Names in a directory, without "." and "..", in no particular order.
  virtual int list_dir(const std::string& path,
                       std::vector<std::string>* names) = 0;

  // ---- clones: -EOPNOTSUPP or -EXDEV mean "copy instead" ----

  /// ioctl(FICLONE): make dst_fd share all of src_fd's data.
  virtual int clone_file(int src_fd, int dst_fd) = 0;
  /// ioctl(FICLONERANGE); offsets and len must be block aligned (else
  /// -EINVAL); the fallback (copying) is the caller's.
  virtual int clone_range(int src_fd, uint64_t src_off, uint64_t len,
                          int dst_fd, uint64_t dst_off) = 0;

  // ---- xattrs (replay guards) ----

  virtual int fsetxattr(int fd, const std::string& name, const void* val,
                        size_t len, int flags) = 0;
  /// -ENODATA if absent.
  virtual int fgetxattr(int fd, const std::string& name,
                        std::string* val) = 0;
  virtual int fremovexattr(int fd, const std::string& name) = 0;

  // ---- asynchronous writes (the journal) ----
  //
  // One queue per IoEnv. aio_submit_write returns once the write is queued;
  // the iov array is copied, the buffers must stay valid and unchanged
  // until the completion is reaped. A completion reports the full length
  // or -errno (short transfers are continued internally). Submitting and
  // reaping may happen on different threads.

  /// Create the queue for up to max_inflight writes. Once.
  virtual int aio_setup(int max_inflight) = 0;
  /// -EAGAIN if max_inflight writes are already in flight.
  virtual int aio_submit_write(int fd, const struct iovec* iov, int iovcnt,
                               uint64_t off, void* cookie) = 0;
  /// Wait up to timeout_ms (-1: forever) until at least min_events writes
  /// (capped at the number in flight) completed, append at most max_events
  /// (cookie, result) pairs to *done and return how many, or -errno.
  virtual int aio_reap(int min_events, int max_events,
                       std::vector<std::pair<void*, ssize_t>>* done,
                       int timeout_ms) = 0;
  /// Writes submitted and not yet reaped.
  virtual int aio_inflight() = 0;

  // ---- diagnostics ----

  /// Where explanations of errors go (e.g. why O_DIRECT failed with
  /// EINVAL). Default: stderr. The store points it at its log.
  using ErrorLog = std::function<void(const std::string&)>;
  void set_error_log(ErrorLog log) { error_log_ = std::move(log); }

 protected:
  void log_error(const std::string& msg) const;

 private:
  ErrorLog error_log_;
};

/// The real thing: POSIX calls, libaio for aio_*.
std::unique_ptr<IoEnv> make_posix_io_env();

/// Whether syncfs(2) on a kernel of this release (uname -r: "6.1.0-18-amd64")
/// reports the write-back errors of the files it syncs: from Linux 5.8 on.
/// Before, a data file's failed write back went unreported, and the store
/// would checkpoint past it. A release that does not parse counts as new.
bool syncfs_reports_errors(const std::string& kernel_release);

/// Text for a -errno value, e.g. "Input/output error (-5)".
std::string io_error_string(int err);

}  // namespace mim
