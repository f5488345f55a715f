// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the "platter", a sparse backing file.
 *
 * Zeros are not stored: a write is split at 4 KiB file boundaries, runs of
 * all-zero pieces become holes (fallocate PUNCH_HOLE | KEEP_SIZE, which
 * also zeroes a partial block in place) and only the rest is written. So a
 * prefill of zeros or a discard costs no space, and an image of hundreds of
 * GiB takes what its non-zero data takes.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace diskemu {

class ThinFile {
 public:
  ThinFile() = default;
  ~ThinFile();
  ThinFile(const ThinFile&) = delete;
  ThinFile& operator=(const ThinFile&) = delete;

  /// Open or create path, sized to `size` (sparse). False and *err on error.
  bool open(const std::string& path, uint64_t size, std::string* err);
  void close();

  /// 0 or -errno. Bytes past the end read as zeros.
  int read(uint64_t off, char* buf, size_t len) const;
  /// 0 or -errno.
  int write(uint64_t off, const char* buf, size_t len);
  /// Make [off, off+len) read as zeros without storing them.
  int punch(uint64_t off, uint64_t len);

  uint64_t size() const { return size_; }
  /// Space the file takes (st_blocks * 512).
  uint64_t allocated() const;
  uint64_t bytes_written() const { return written_; }
  uint64_t bytes_punched() const { return punched_; }

  static bool all_zero(const char* p, size_t n);
  static constexpr uint64_t CHUNK = 4096;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::atomic<uint64_t> written_{0}, punched_{0};
};

}  // namespace diskemu
