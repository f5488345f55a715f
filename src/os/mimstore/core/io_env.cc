// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the I/O seam, POSIX implementation. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/io_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <libaio.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <vector>

namespace mim {

IoEnv::~IoEnv() = default;

ssize_t IoEnv::pwrite(int fd, const void* buf, size_t len, uint64_t off)
{
  struct iovec iov = {const_cast<void*>(buf), len};
  return pwritev(fd, &iov, 1, off);
}

void IoEnv::log_error(const std::string& msg) const
{
  if (error_log_) {
    error_log_(msg);
  } else {
    std::cerr << "mimstore io: " << msg << std::endl;
  }
}

std::string io_error_string(int err)
{
  return std::string(strerror(err < 0 ? -err : err)) + " (" +
         std::to_string(err) + ")";
}

namespace {

class PosixIoEnv : public IoEnv {
 public:
  PosixIoEnv() = default;
  ~PosixIoEnv() override;

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
  int writeback(int fd, uint64_t off, uint64_t len, bool wait) override;
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
  struct AioReq {
    struct iocb cb;
    std::vector<struct iovec> iov;  ///< what is left to write
    int fd = -1;
    uint64_t off = 0;               ///< where iov goes
    size_t total = 0;
    size_t done = 0;
    void* cookie = nullptr;
  };

  void explain_direct_einval(int fd, const char* op, uint64_t off,
                             const struct iovec* iov, int iovcnt);
  /// Whether every page of [off, off + len) is in the page cache, asked
  /// with mincore(2) on a mapping of the range: 1, 0, -EOPNOTSUPP where
  /// the file cannot be mapped, or -errno. Clipped at the end of the file
  /// (*len is cut to it).
  int range_resident(int fd, uint64_t off, size_t* len);
  /// pread and pread_cached: the whole range, or to the end of the file;
  /// with RWF_NOWAIT, -EAGAIN at the first page not in memory.
  ssize_t read_loop(int fd, void* buf, size_t len, uint64_t off, int flags);
  // REQUIRES: aio_lock_ is held.
  int submit_locked(AioReq* req);
  // REQUIRES: aio_lock_ is held.
  void release_locked(AioReq* req);

  std::mutex aio_lock_;  ///< protects the aio state below
  io_context_t ctx_ = 0;  ///< constant after aio_setup
  std::vector<std::unique_ptr<AioReq>> reqs_;
  std::vector<AioReq*> free_reqs_;
  int inflight_ = 0;
};

int errno_or(int fallback)
{
  return errno ? -errno : fallback;
}

/// Drop the first `n` bytes of an iovec list.
void advance_iov(std::vector<struct iovec>* iov, size_t n)
{
  size_t i = 0;
  while (i < iov->size() && n >= (*iov)[i].iov_len) {
    n -= (*iov)[i].iov_len;
    ++i;
  }
  iov->erase(iov->begin(), iov->begin() + i);
  if (n && !iov->empty()) {
    (*iov)[0].iov_base = static_cast<char*>((*iov)[0].iov_base) + n;
    (*iov)[0].iov_len -= n;
  }
}

PosixIoEnv::~PosixIoEnv()
{
  if (ctx_) {
    io_destroy(ctx_);
  }
}

void PosixIoEnv::explain_direct_einval(int fd, const char* op, uint64_t off,
                                       const struct iovec* iov, int iovcnt)
{
  int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || !(fl & O_DIRECT)) {
    return;
  }
  uint32_t align = 512;
  get_logical_block_size(fd, &align);
  char buf[512];
  int bad = -1;
  for (int i = 0; i < iovcnt; ++i) {
    if (reinterpret_cast<uintptr_t>(iov[i].iov_base) % align ||
        iov[i].iov_len % align) {
      bad = i;
      break;
    }
  }
  if (off % align == 0 && bad < 0) {
    snprintf(buf, sizeof(buf),
             "%s on O_DIRECT fd %d at offset %" PRIu64 " failed with EINVAL "
             "although offset, lengths and buffers are %u-aligned",
             op, fd, off, align);
  } else if (bad >= 0) {
    snprintf(buf, sizeof(buf),
             "%s on O_DIRECT fd %d failed with EINVAL: buffer %d (address %p, "
             "length %zu) is not aligned to the direct-I/O alignment of %u "
             "bytes; use block-aligned (posix_memalign) buffers and lengths",
             op, fd, bad, iov[bad].iov_base, iov[bad].iov_len, align);
  } else {
    snprintf(buf, sizeof(buf),
             "%s on O_DIRECT fd %d failed with EINVAL: offset %" PRIu64
             " is not a multiple of the direct-I/O alignment of %u bytes",
             op, fd, off, align);
  }
  log_error(buf);
}

int PosixIoEnv::open(const std::string& path, int flags, mode_t mode, int* fd)
{
  int r;
  do {
    r = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    int err = -errno;
    if (err == -EINVAL && (flags & O_DIRECT)) {
      log_error("open(" + path + ") with O_DIRECT failed with EINVAL: the "
                "filesystem does not support direct I/O (tmpfs does not); "
                "put the journal on a block device or on ext4/xfs");
    }
    return err;
  }
  *fd = r;
  return 0;
}

int PosixIoEnv::close(int fd)
{
  // Never retry close(2) on EINTR: on Linux the fd is gone already.
  return ::close(fd) < 0 ? -errno : 0;
}

ssize_t PosixIoEnv::pread(int fd, void* buf, size_t len, uint64_t off)
{
  return read_loop(fd, buf, len, off, 0);
}

ssize_t PosixIoEnv::pread_cached(int fd, void* buf, size_t len,
                                 uint64_t off)
{
  // RWF_NOWAIT alone is not a probe: on a miss the kernel starts the
  // readahead for the range (filemap_get_pages) before it answers -EAGAIN,
  // so a "not cached" answer costs the disk a read nobody uses (measured:
  // all of the 64 GiB sweep's HDD reads in write-only runs, docs/store.md).
  // mincore(2) asks without I/O; the read keeps RWF_NOWAIT for a page
  // dropped in between, and is the whole probe where mapping fails.
  int r = range_resident(fd, off, &len);
  if (r == 0) {
    return -EAGAIN;
  }
  if (r < 0 && r != -EOPNOTSUPP) {
    return r;
  }
  return read_loop(fd, buf, len, off, RWF_NOWAIT);
}

int PosixIoEnv::range_resident(int fd, uint64_t off, size_t* len)
{
  struct stat st;
  if (::fstat(fd, &st) < 0) {
    return -errno;
  }
  const uint64_t size = st.st_size;
  if (off >= size || *len == 0) {
    *len = 0;
    return 1;  // nothing to read: end of file
  }
  *len = std::min<uint64_t>(*len, size - off);
  static const uint64_t page = ::sysconf(_SC_PAGESIZE);
  const uint64_t start = off / page * page;
  const uint64_t end = off + *len;
  const size_t maplen = end - start;
  void* m = ::mmap(nullptr, maplen, PROT_READ, MAP_SHARED, fd, start);
  if (m == MAP_FAILED) {
    // A file system that cannot map the file cannot be asked either.
    return errno == ENODEV || errno == EACCES ? -EOPNOTSUPP : -errno;
  }
  std::vector<unsigned char> vec((maplen + page - 1) / page);
  int r = ::mincore(m, maplen, vec.data()) < 0 ? -errno : 1;
  ::munmap(m, maplen);
  if (r == 1 && std::any_of(vec.begin(), vec.end(),
                            [](unsigned char v) { return !(v & 1); })) {
    r = 0;
  }
  return r;
}

ssize_t PosixIoEnv::read_loop(int fd, void* buf, size_t len, uint64_t off,
                              int flags)
{
  size_t done = 0;
  while (done < len) {
    struct iovec iov = {static_cast<char*>(buf) + done, len - done};
    // With RWF_NOWAIT a short read means either end of file or that the
    // next page is not cached; the next call tells which (0, or -EAGAIN).
    ssize_t r = ::preadv2(fd, &iov, 1, off + done, flags);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      int err = -errno;
      if (flags & RWF_NOWAIT) {
        // A file system without RWF_NOWAIT reads refuses the flag.
        return err == -EOPNOTSUPP || err == -EINVAL ? -EOPNOTSUPP : err;
      }
      if (err == -EINVAL) {
        explain_direct_einval(fd, "pread", off + done, &iov, 1);
      }
      return err;
    }
    if (r == 0) {
      break;  // end of file
    }
    done += r;
  }
  return done;
}

ssize_t PosixIoEnv::pwritev(int fd, const struct iovec* iov, int iovcnt,
                            uint64_t off)
{
  std::vector<struct iovec> left(iov, iov + iovcnt);
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    total += iov[i].iov_len;
  }
  size_t done = 0;
  while (done < total) {
    int n = std::min<int>(left.size(), IOV_MAX);
    ssize_t r = ::pwritev(fd, left.data(), n, off + done);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      int err = -errno;
      if (err == -EINVAL) {
        explain_direct_einval(fd, "pwritev", off + done, left.data(), n);
      }
      return err;
    }
    if (r == 0) {
      // No progress and no error: do not spin.
      return -EIO;
    }
    done += r;
    advance_iov(&left, r);
  }
  return total;
}

int PosixIoEnv::fsync(int fd)
{
  return ::fsync(fd) < 0 ? -errno : 0;
}

int PosixIoEnv::fdatasync(int fd)
{
  return ::fdatasync(fd) < 0 ? -errno : 0;
}

int PosixIoEnv::syncfs(int fd)
{
  return ::syncfs(fd) < 0 ? -errno : 0;
}

int PosixIoEnv::writeback(int fd, uint64_t off, uint64_t len, bool wait)
{
  unsigned flags = SYNC_FILE_RANGE_WRITE;
  if (wait) {
    flags |= SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER;
  }
  int r;
  do {
    r = ::sync_file_range(fd, off, len, flags);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int PosixIoEnv::drop_cache(int fd, uint64_t off, uint64_t len)
{
  // Returns the error itself, not -1 and errno.
  return -::posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
}

int PosixIoEnv::ftruncate(int fd, uint64_t size)
{
  int r;
  do {
    r = ::ftruncate(fd, size);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int PosixIoEnv::fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
  int r;
  do {
    r = ::fallocate(fd, mode, off, len);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int PosixIoEnv::fstat(int fd, struct stat* st)
{
  return ::fstat(fd, st) < 0 ? -errno : 0;
}

int PosixIoEnv::stat(const std::string& path, struct stat* st)
{
  return ::stat(path.c_str(), st) < 0 ? -errno : 0;
}

int PosixIoEnv::get_size(int fd, uint64_t* size)
{
  struct stat st;
  if (::fstat(fd, &st) < 0) {
    return -errno;
  }
  if (S_ISBLK(st.st_mode)) {
    uint64_t s = 0;
    if (::ioctl(fd, BLKGETSIZE64, &s) < 0) {
      return -errno;
    }
    *size = s;
    return 0;
  }
  *size = st.st_size;
  return 0;
}

int PosixIoEnv::physical_offset(int fd, uint64_t off, uint64_t* phys)
{
  // One extent is enough: the one holding `off`, or the next after a hole.
  alignas(struct fiemap) char buf[sizeof(struct fiemap) +
                                  sizeof(struct fiemap_extent)] = {};
  auto* fm = reinterpret_cast<struct fiemap*>(buf);
  fm->fm_start = off;
  fm->fm_length = 1;
  fm->fm_extent_count = 1;
  if (::ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
    return errno == ENOTTY ? -EOPNOTSUPP : -errno;
  }
  const struct fiemap_extent& e = fm->fm_extents[0];
  if (fm->fm_mapped_extents == 0 || off < e.fe_logical ||
      off - e.fe_logical >= e.fe_length ||
      (e.fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC))) {
    return -ENODATA;
  }
  *phys = e.fe_physical + (off - e.fe_logical);
  return 0;
}

int PosixIoEnv::get_logical_block_size(int fd, uint32_t* bs)
{
  struct stat st;
  if (::fstat(fd, &st) < 0) {
    return -errno;
  }
  if (S_ISBLK(st.st_mode)) {
    int s = 0;
    if (::ioctl(fd, BLKSSZGET, &s) < 0) {
      return -errno;
    }
    *bs = s;
    return 0;
  }
#ifdef STATX_DIOALIGN
  struct statx stx;
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align) {
    *bs = std::max<uint32_t>(stx.stx_dio_offset_align, 512);
    return 0;
  }
#endif
  *bs = 512;
  return 0;
}

int PosixIoEnv::get_physical_block_size(int fd, uint32_t* bs)
{
  uint32_t lbs = 512;
  int r = get_logical_block_size(fd, &lbs);
  if (r < 0) {
    return r;
  }
  struct stat st;
  if (::fstat(fd, &st) < 0) {
    return -errno;
  }
  uint32_t pbs = 0;
  if (S_ISBLK(st.st_mode)) {
    unsigned int s = 0;
    if (::ioctl(fd, BLKPBSZGET, &s) < 0) {
      return -errno;
    }
    pbs = s;
  } else {
    pbs = st.st_blksize > 0 ? uint32_t(st.st_blksize) : 0;
  }
  *bs = std::max(pbs, lbs);
  return 0;
}

int PosixIoEnv::rename(const std::string& from, const std::string& to)
{
  return ::rename(from.c_str(), to.c_str()) < 0 ? -errno : 0;
}

int PosixIoEnv::unlink(const std::string& path)
{
  return ::unlink(path.c_str()) < 0 ? -errno : 0;
}

int PosixIoEnv::link(const std::string& from, const std::string& to)
{
  return ::link(from.c_str(), to.c_str()) < 0 ? -errno : 0;
}

int PosixIoEnv::mkdir(const std::string& path, mode_t mode)
{
  return ::mkdir(path.c_str(), mode) < 0 ? -errno : 0;
}

int PosixIoEnv::rmdir(const std::string& path)
{
  return ::rmdir(path.c_str()) < 0 ? -errno : 0;
}

int PosixIoEnv::list_dir(const std::string& path,
                         std::vector<std::string>* names)
{
  DIR* d = ::opendir(path.c_str());
  if (!d) {
    return -errno;
  }
  names->clear();
  for (;;) {
    errno = 0;
    struct dirent* de = ::readdir(d);
    if (!de) {
      int err = errno_or(0);
      ::closedir(d);
      return err;
    }
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
      continue;
    }
    names->emplace_back(de->d_name);
  }
}

int normalize_clone_error(int err)
{
  // Filesystems without reflink answer ENOTTY (no such ioctl) or
  // EOPNOTSUPP; callers only need to know "copy instead".
  if (err == -ENOTTY || err == -ENOSYS) {
    return -EOPNOTSUPP;
  }
  return err;
}

int PosixIoEnv::clone_file(int src_fd, int dst_fd)
{
  if (::ioctl(dst_fd, FICLONE, src_fd) < 0) {
    return normalize_clone_error(-errno);
  }
  return 0;
}

int PosixIoEnv::clone_range(int src_fd, uint64_t src_off, uint64_t len,
                            int dst_fd, uint64_t dst_off)
{
  struct file_clone_range r;
  r.src_fd = src_fd;
  r.src_offset = src_off;
  r.src_length = len;
  r.dest_offset = dst_off;
  if (::ioctl(dst_fd, FICLONERANGE, &r) < 0) {
    return normalize_clone_error(-errno);
  }
  return 0;
}

int PosixIoEnv::fsetxattr(int fd, const std::string& name, const void* val,
                          size_t len, int flags)
{
  return ::fsetxattr(fd, name.c_str(), val, len, flags) < 0 ? -errno : 0;
}

int PosixIoEnv::fgetxattr(int fd, const std::string& name, std::string* val)
{
  for (;;) {
    ssize_t n = ::fgetxattr(fd, name.c_str(), nullptr, 0);
    if (n < 0) {
      return -errno;
    }
    val->resize(n);
    ssize_t r = ::fgetxattr(fd, name.c_str(), val->data(), n);
    if (r < 0) {
      if (errno == ERANGE) {
        continue;  // grew between the two calls
      }
      return -errno;
    }
    val->resize(r);
    return 0;
  }
}

int PosixIoEnv::fremovexattr(int fd, const std::string& name)
{
  return ::fremovexattr(fd, name.c_str()) < 0 ? -errno : 0;
}

int PosixIoEnv::aio_setup(int max_inflight)
{
  std::lock_guard l(aio_lock_);
  if (ctx_) {
    return -EEXIST;
  }
  if (max_inflight <= 0) {
    return -EINVAL;
  }
  io_context_t ctx = 0;
  int r = io_setup(max_inflight, &ctx);
  if (r < 0) {
    if (r == -EAGAIN) {
      log_error("io_setup(" + std::to_string(max_inflight) + ") failed with "
                "EAGAIN: the system-wide limit fs.aio-max-nr is reached");
    }
    return r;
  }
  ctx_ = ctx;
  for (int i = 0; i < max_inflight; ++i) {
    reqs_.push_back(std::make_unique<AioReq>());
    free_reqs_.push_back(reqs_.back().get());
  }
  return 0;
}

int PosixIoEnv::submit_locked(AioReq* req)
{
  io_prep_pwritev(&req->cb, req->fd, req->iov.data(), req->iov.size(),
                  req->off);
  req->cb.data = req;
  struct iocb* cbs[1] = {&req->cb};
  int r;
  do {
    r = io_submit(ctx_, 1, cbs);
  } while (r == -EINTR);
  if (r == 1) {
    return 0;
  }
  if (r == -EINVAL) {
    explain_direct_einval(req->fd, "aio write", req->off, req->iov.data(),
                          req->iov.size());
  }
  return r < 0 ? r : -EAGAIN;
}

void PosixIoEnv::release_locked(AioReq* req)
{
  req->iov.clear();
  req->cookie = nullptr;
  free_reqs_.push_back(req);
  --inflight_;
}

int PosixIoEnv::aio_submit_write(int fd, const struct iovec* iov, int iovcnt,
                                 uint64_t off, void* cookie)
{
  std::lock_guard l(aio_lock_);
  if (!ctx_) {
    return -EINVAL;
  }
  if (free_reqs_.empty()) {
    return -EAGAIN;
  }
  AioReq* req = free_reqs_.back();
  req->iov.assign(iov, iov + iovcnt);
  req->fd = fd;
  req->off = off;
  req->total = 0;
  for (int i = 0; i < iovcnt; ++i) {
    req->total += iov[i].iov_len;
  }
  req->done = 0;
  req->cookie = cookie;
  int r = submit_locked(req);
  if (r < 0) {
    req->iov.clear();
    return r;
  }
  free_reqs_.pop_back();
  ++inflight_;
  return 0;
}

int PosixIoEnv::aio_reap(int min_events, int max_events,
                         std::vector<std::pair<void*, ssize_t>>* done,
                         int timeout_ms)
{
  if (!ctx_) {
    return -EINVAL;
  }
  if (max_events <= 0) {
    return 0;
  }
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(
    timeout_ms < 0 ? 0 : timeout_ms);
  std::vector<struct io_event> ev(max_events);
  int reported = 0;
  for (;;) {
    long want_min;
    {
      std::lock_guard l(aio_lock_);
      want_min = std::clamp(min_events - reported, 0, inflight_);
    }
    struct timespec ts;
    struct timespec* tsp = nullptr;
    if (timeout_ms >= 0) {
      auto left = std::max(clock::duration::zero(), deadline - clock::now());
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
      ts.tv_sec = ns.count() / 1000000000;
      ts.tv_nsec = ns.count() % 1000000000;
      tsp = &ts;
    }
    int n = io_getevents(ctx_, want_min, max_events - reported, ev.data(),
                         tsp);
    if (n == -EINTR) {
      continue;
    }
    if (n < 0) {
      return reported ? reported : n;
    }
    std::lock_guard l(aio_lock_);
    for (int i = 0; i < n; ++i) {
      AioReq* req = static_cast<AioReq*>(ev[i].data);
      long res = static_cast<long>(ev[i].res);
      if (res < 0) {
        if (res == -EINVAL) {
          explain_direct_einval(req->fd, "aio write", req->off,
                                req->iov.data(), req->iov.size());
        }
        done->emplace_back(req->cookie, res);
        ++reported;
        release_locked(req);
        continue;
      }
      req->done += res;
      if (req->done == req->total) {
        done->emplace_back(req->cookie, static_cast<ssize_t>(req->total));
        ++reported;
        release_locked(req);
        continue;
      }
      if (res == 0) {
        done->emplace_back(req->cookie, -EIO);  // no progress
        ++reported;
        release_locked(req);
        continue;
      }
      // Short write: continue with the rest, report when all is written.
      advance_iov(&req->iov, res);
      req->off += res;
      int r = submit_locked(req);
      if (r < 0) {
        done->emplace_back(req->cookie, r);
        ++reported;
        release_locked(req);
      }
    }
    if (reported >= min_events || reported >= max_events || want_min == 0 ||
        (timeout_ms >= 0 && clock::now() >= deadline)) {
      return reported;
    }
  }
}

int PosixIoEnv::aio_inflight()
{
  std::lock_guard l(aio_lock_);
  return inflight_;
}

}  // anonymous namespace

std::unique_ptr<IoEnv> make_posix_io_env()
{
  return std::make_unique<PosixIoEnv>();
}

bool syncfs_reports_errors(const std::string& kernel_release)
{
  unsigned major = 0, minor = 0;
  if (sscanf(kernel_release.c_str(), "%u.%u", &major, &minor) != 2) {
    return true;
  }
  return major > 5 || (major == 5 && minor >= 8);
}

}  // namespace mim
