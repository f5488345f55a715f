// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the journal device (an NVMe partition or a file): opening and
 * locking it, its geometry, header I/O and synchronous reads and writes.
 * The journal proper (MIMJournal) decides what to write where.
 *
 * Locking: none. open() and adopt() run before any journal thread starts
 * and close() after they stop; in between fd, block size and geometry are
 * constant, and the I/O calls are safe from any thread.
 */
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>
#include <string>

#include "MIMConfig.h"
#include "core/io_env.h"
#include "core/journal_format.h"

namespace mimstore {

/// A block-aligned buffer for O_DIRECT I/O.
struct AlignedBuf {
  char* p = nullptr;
  size_t len = 0;
  AlignedBuf(size_t n, size_t align) : len(n) {
    if (posix_memalign(reinterpret_cast<void**>(&p), align, n) != 0) {
      throw std::bad_alloc();
    }
    memset(p, 0, n);
  }
  ~AlignedBuf() { free(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
};

class JournalDevice {
 public:
  JournalDevice(mim::IoEnv* io, const MIMConfig& conf)
    : io_(io), conf_(conf) {}
  ~JournalDevice() { close(); }
  JournalDevice(const JournalDevice&) = delete;
  JournalDevice& operator=(const JournalDevice&) = delete;

  /// Open (with `create`: create or size a journal file) and lock the
  /// device; measure its geometry. Refuses one smaller than
  /// min_journal_bytes(). Errors are explained in `err`.
  int open(bool create, std::ostream& err);
  void close();
  /// Take the block size and geometry a valid header records.
  void adopt(const mim::JournalHeader& h);

  int fd() const { return fd_; }
  /// The journal's block size: chosen by open() (mimstore_journal_block_size,
  /// or the device's physical block size), then the header's (adopt()).
  uint32_t block_size() const { return block_size_; }
  const mim::JournalGeometry& geo() const { return geo_; }
  /// Bytes of the file or device.
  uint64_t device_size() const { return dev_size_; }

  int read_at(uint64_t off, size_t len, char* buf);
  /// A write that is durable when it returns (the fd is O_DSYNC).
  int write_sync(uint64_t off, const char* buf, size_t len);
  int write_header(const mim::JournalHeader& h);
  /// The newer valid one of the two header slots, at whatever block size
  /// the journal was made with (then adopt() it).
  int read_header(mim::JournalHeader* h, std::ostream& err);
  /// Whether a header's magic sits where a header slot is for any block
  /// size a journal can have (offset 0, or one block in), the header valid
  /// or not. -EBADF when nothing is open (open() failed before its fd).
  /// mkjournal's test before it replaces a journal it could not open.
  int find_header_magic(bool* found, std::ostream& err);
  /// Sequential append throughput (bytes/s) with batch-sized O_DIRECT
  /// writes over the area. Only before the journal holds data.
  int measure_throughput(uint64_t* bytes_per_sec);

 private:
  /// -ENOENT with what to fix when a missing journal path must not be
  /// made a file: a name under /dev other than /dev/shm.
  static int refuse_volatile_journal_file(const std::string& path,
                                          std::ostream& err);
  int choose_block_size(const std::string& path, std::ostream& err);
  /// The device's size, checked against what the journal needs and can
  /// address; a journal file being made is sized and its blocks reserved.
  int set_size(bool create, std::ostream& err);

  mim::IoEnv* const io_;
  const MIMConfig conf_;
  int fd_ = -1;
  bool is_block_device_ = false;
  uint32_t lbs_ = 512;          ///< logical block size: O_DIRECT's unit
  uint32_t block_size_ = mim::JOURNAL_DEFAULT_BLOCK_SIZE;
  uint64_t dev_size_ = 0;
  mim::JournalGeometry geo_;
};

}  // namespace mimstore
