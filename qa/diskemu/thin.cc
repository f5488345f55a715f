// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
#include "thin.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace diskemu {

ThinFile::~ThinFile() { close(); }

void ThinFile::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

bool ThinFile::open(const std::string& path, uint64_t size, std::string* err) {
  close();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    *err = "open " + path + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd_, &st) < 0 || (static_cast<uint64_t>(st.st_size) != size &&
                              ftruncate(fd_, static_cast<off_t>(size)) < 0)) {
    *err = "size " + path + ": " + strerror(errno);
    close();
    return false;
  }
  size_ = size;
  return true;
}

bool ThinFile::all_zero(const char* p, size_t n) {
  // Most data is not zero and shows it in its first bytes.
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (w) {
      return false;
    }
  }
  for (; i < n; i++) {
    if (p[i]) {
      return false;
    }
  }
  return true;
}

int ThinFile::read(uint64_t off, char* buf, size_t len) const {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd_, buf + done, len - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -errno;
    }
    if (n == 0) {
      memset(buf + done, 0, len - done);   // past the end
      break;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

static int pwrite_all(int fd, const char* p, size_t len, uint64_t off) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd, p + done, len - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

int ThinFile::punch(uint64_t off, uint64_t len) {
  if (len == 0) {
    return 0;
  }
  if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                static_cast<off_t>(off), static_cast<off_t>(len)) < 0) {
    return -errno;
  }
  punched_ += len;
  return 0;
}

int ThinFile::write(uint64_t off, const char* buf, size_t len) {
  // Runs of pieces split at CHUNK file boundaries, zero or not.
  size_t pos = 0;
  while (pos < len) {
    uint64_t a = off + pos;
    size_t piece = std::min<size_t>(len - pos, CHUNK - a % CHUNK);
    bool zero = all_zero(buf + pos, piece);
    size_t run = piece;
    while (pos + run < len) {
      size_t next = std::min<size_t>(len - pos - run, CHUNK);
      if (all_zero(buf + pos + run, next) != zero) {
        break;
      }
      run += next;
    }
    int r = zero ? punch(a, run) : pwrite_all(fd_, buf + pos, run, a);
    if (r < 0) {
      return r;
    }
    if (!zero) {
      written_ += run;
    }
    pos += run;
  }
  return 0;
}

uint64_t ThinFile::allocated() const {
  struct stat st;
  if (fstat(fd_, &st) < 0) {
    return 0;
  }
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

}  // namespace diskemu
