// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "JournalDevice.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "common/errno.h"
#include "core/batch_index.h"

namespace mimstore {

int JournalDevice::open(bool create, std::ostream& err)
{
  const std::string& path = conf_.journal_path;
  struct stat st;
  int r = io_->stat(path, &st);
  const bool making_file = r == -ENOENT && create;
  if (making_file) {
    r = refuse_volatile_journal_file(path, err);
    if (r < 0) {
      return r;
    }
    st.st_mode = S_IFREG;
  } else if (r < 0) {
    err << "journal " << path << ": " << cpp_strerror(r)
        << (r == -ENOENT ? " (set osd_journal to this OSD's journal device "
                           "or file, or run ceph-osd --mkjournal)" : "");
    return r;
  }
  is_block_device_ = S_ISBLK(st.st_mode);
  if (!is_block_device_ && !S_ISREG(st.st_mode)) {
    err << "journal " << path << " is neither a block device nor a file";
    return -EINVAL;
  }
  int flags = O_RDWR | O_CLOEXEC | O_DSYNC;
  if (conf_.journal_dio) {
    flags |= O_DIRECT;
  }
  if (is_block_device_) {
    flags |= O_EXCL;  // nobody else (another OSD, a mount) may use it
  } else if (create) {
    flags |= O_CREAT;
  }
  if (making_file) {
    // The path was not there: O_EXCL refuses a dangling symbolic link
    // (stat follows it) instead of making a file wherever it points, as a
    // link to a journal device that is missing today would be.
    flags |= O_EXCL;
  }
  r = io_->open(path, flags, 0644, &fd_);
  if (r < 0) {
    fd_ = -1;
    if (making_file && r == -EEXIST) {
      struct stat again;
      if (io_->stat(path, &again) == 0) {
        err << "journal " << path << " appeared while it was being made "
            << "(another process making it?): try again";
        return -EEXIST;
      }
      err << "journal " << path << " is a symbolic link to a path that does "
          << "not exist: is the journal device missing? (point osd_journal "
          << "at the journal device, or remove the link for a journal file)";
      return -ENOENT;
    }
    err << "cannot open journal " << path << ": " << cpp_strerror(r);
    if (r == -EBUSY) {
      err << " (the device is in use: another OSD's journal, or mounted)";
    } else if (r == -EACCES || r == -EROFS || r == -EPERM) {
      err << " (the journal must be writable by the OSD)";
    } else if (r == -EINVAL && conf_.journal_dio) {
      err << " (the filesystem holding it does not support O_DIRECT; use a "
             "block device, or set mimstore_journal_dio = false)";
    }
    return r;
  }
  if (!is_block_device_ && ::flock(fd_, LOCK_EX | LOCK_NB) < 0) {
    r = -errno;
    err << "journal " << path << " is in use by another process (another "
        << "OSD?): " << cpp_strerror(r);
    io_->close(fd_);
    fd_ = -1;
    return -EBUSY;
  }
  r = choose_block_size(path, err);
  if (r < 0) {
    return r;
  }
  return set_size(create, err);
}


int JournalDevice::set_size(bool create, std::ostream& err)
{
  const std::string& path = conf_.journal_path;
  int r = 0;
  // A journal file being made gets osd_journal_size, checked below before
  // the file is touched.
  const bool sizing = !is_block_device_ && create && conf_.journal_size_mb;
  uint64_t size = 0;
  if (sizing) {
    size = conf_.journal_size_mb << 20;
  } else {
    r = io_->get_size(fd_, &size);
    if (r < 0) {
      err << "cannot get the size of journal " << path << ": "
          << cpp_strerror(r);
      return r;
    }
  }
  uint64_t need = min_journal_bytes(conf_);
  if (size < need) {
    err << "journal " << path << " is " << (size >> 20) << " MiB; mimstore "
        << "needs at least " << (need >> 20) << " MiB with "
        << "mimstore_journal_max_batch_bytes = "
        << conf_.journal_max_batch_bytes << " (use a larger partition, or "
        << "raise osd_journal_size for a journal file)";
    return -ENOSPC;
  }
  if (size > mim::BatchIndex::MAX_AREA_BYTES) {
    // The writer's index keeps offsets in 32 bits of 512-byte units.
    err << "journal " << path << " is " << size << " bytes; mimstore uses "
        << "journals of at most " << mim::BatchIndex::MAX_AREA_BYTES
        << " bytes (2 TiB less 512): use a smaller partition";
    return -EFBIG;
  }
  if (sizing) {
    // Reserve the file's blocks now: a sparse journal on a filesystem that
    // fills up later fails a journal write mid-run, and the store stops.
    // Reserved before the size is set, so a failure leaves an existing
    // file (and the header recording its size) as it was.
    r = io_->fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, size);
    if (r < 0 && r != -EOPNOTSUPP) {
      err << "cannot reserve " << (size >> 20) << " MiB for journal file "
          << path << ": " << cpp_strerror(r);
      if (r == -ENOSPC || r == -EDQUOT) {
        err << " (free space on its filesystem, lower osd_journal_size, or "
               "use a partition)";
      }
      return r;
    }
    r = io_->ftruncate(fd_, size);
    if (r < 0) {
      err << "cannot size journal file " << path << " to "
          << conf_.journal_size_mb << " MiB: " << cpp_strerror(r);
      return r;
    }
  }
  dev_size_ = size;
  geo_ = mim::JournalGeometry(size, block_size_);
  return 0;
}


int JournalDevice::refuse_volatile_journal_file(const std::string& path,
                                               std::ostream& err)
{
  // A name under /dev is a device's: when it is missing (a typo, a device
  // not there yet), a file made there would be a journal in devtmpfs, in
  // memory, and every acknowledged write lost at a power cut. /dev/shm is
  // where one puts a memory-backed file on purpose (tests, benchmarks).
  static const std::string dev = "/dev/", shm = "/dev/shm/";
  std::error_code ec;
  const std::string p =
    std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec || p.compare(0, dev.size(), dev) != 0 ||
      p.compare(0, shm.size(), shm) == 0) {
    return 0;
  }
  err << "journal " << path << " does not exist, and a journal under /dev "
      << "must be a block device (check the device name and that the device "
      << "is present; a file made there would be in memory)";
  return -ENOENT;
}


int JournalDevice::choose_block_size(const std::string& path,
                                     std::ostream& err)
{
  uint32_t pbs = 0;
  io_->get_logical_block_size(fd_, &lbs_);
  io_->get_physical_block_size(fd_, &pbs);
  if (conf_.journal_block_size) {
    if (conf_.journal_block_size < lbs_) {
      err << "mimstore_journal_block_size = " << conf_.journal_block_size
          << " is below the logical block size of journal " << path << " ("
          << lbs_ << " bytes), which O_DIRECT writes must be multiples of: "
          << "set it to at least " << lbs_ << ", or to 0 for the device's "
          << "physical block size";
      return -EINVAL;
    }
    block_size_ = conf_.journal_block_size;
    return 0;
  }
  // The physical block size, if it is one a journal can use; a device that
  // reports something odd gets the 4 KiB Ceph's own journals use.
  uint32_t want = std::max(pbs, lbs_);
  if ((want & (want - 1)) != 0 || want < mim::JOURNAL_MIN_BLOCK_SIZE ||
      want > mim::JOURNAL_MAX_BLOCK_SIZE) {
    want = std::max<uint32_t>(mim::JOURNAL_DEFAULT_BLOCK_SIZE, lbs_);
  }
  block_size_ = want;
  return 0;
}


int JournalDevice::read_at(uint64_t off, size_t len, char* buf)
{
  ssize_t r = io_->pread(fd_, buf, len, off);
  if (r < 0) {
    return r;
  }
  return size_t(r) == len ? 0 : -ENODATA;
}


int JournalDevice::write_sync(uint64_t off, const char* buf, size_t len)
{
  // The fd_ is O_DSYNC: a completed write is durable.
  struct iovec v = {const_cast<char*>(buf), len};
  ssize_t r = io_->pwritev(fd_, &v, 1, off);
  return r < 0 ? int(r) : 0;
}


int JournalDevice::write_header(const mim::JournalHeader& h)
{
  AlignedBuf b(block_size_, block_size_);
  mim::encode_header(h, b.p);
  return write_sync(mim::header_slot_offset(h.header_seq, block_size_), b.p,
                    block_size_);
}


int JournalDevice::read_header(mim::JournalHeader* h, std::ostream& err)
{
  // The block size is the journal's own, fixed when it was made; the option
  // or the device may say otherwise today. Look for the header slots at the
  // expected size first, then at every other size the journal can have.
  std::vector<uint32_t> sizes = {block_size_};
  for (uint32_t bs = mim::JOURNAL_MIN_BLOCK_SIZE;
       bs <= mim::JOURNAL_MAX_BLOCK_SIZE; bs *= 2) {
    if (bs != block_size_ && bs >= lbs_) {
      sizes.push_back(bs);
    }
  }
  int first_r = 0;
  std::string first_why;
  bool any_magic = false;  ///< at the expected size's slots
  for (uint32_t bs : sizes) {
    AlignedBuf b(2 * bs, std::max(bs, lbs_));
    int r = read_at(0, 2 * bs, b.p);
    if (r < 0 && bs == block_size_) {
      err << "cannot read the header of journal " << conf_.journal_path
          << ": " << cpp_strerror(r);
      return r;
    }
    std::string why;
    int which;
    if (r == 0) {
      r = mim::pick_header(b.p, b.p + bs, bs, h, &which, &why);
    }
    if (r == 0) {
      return 0;
    }
    if (bs == block_size_) {
      first_r = r;
      first_why = why;
      any_magic = mim::has_header_magic(b.p) ||
                  mim::has_header_magic(b.p + bs);
    }
  }
  err << "journal " << conf_.journal_path << " has no valid header: "
      << first_why;
  if (first_r == -EINVAL && !any_magic) {
    // neither slot is a journal's: mkjournal makes one here
    err << " (not a mimstore journal: point osd_journal at this OSD's "
           "journal, or run ceph-osd --mkjournal)";
  } else if (first_r == -EPROTONOSUPPORT) {
    err << " (written by a newer mimstore)";
  }
  return first_r;
}


int JournalDevice::find_header_magic(bool* found, std::ostream& err)
{
  *found = false;
  if (fd_ < 0) {
    return -EBADF;
  }
  uint64_t size = 0;
  int r = io_->get_size(fd_, &size);
  if (r < 0) {
    err << "cannot get the size of journal " << conf_.journal_path << ": "
        << cpp_strerror(r);
    return r;
  }
  // Slot B of the largest block size ends at 2 * JOURNAL_MAX_BLOCK_SIZE.
  size_t len = std::min<uint64_t>(2 * mim::JOURNAL_MAX_BLOCK_SIZE, size);
  len -= len % lbs_;
  if (len < 8) {
    return 0;
  }
  AlignedBuf b(len, std::max<uint32_t>(lbs_, 4096));
  r = read_at(0, len, b.p);
  if (r < 0) {
    err << "cannot read the start of journal " << conf_.journal_path << ": "
        << cpp_strerror(r);
    return r;
  }
  *found = mim::has_header_magic(b.p);
  for (uint32_t bs = mim::JOURNAL_MIN_BLOCK_SIZE;
       !*found && bs <= mim::JOURNAL_MAX_BLOCK_SIZE && bs + 8 <= len;
       bs *= 2) {
    *found = mim::has_header_magic(b.p + bs);
  }
  return 0;
}


int JournalDevice::measure_throughput(uint64_t* bytes_per_sec)
{
  // Appends of the largest batch size, like the writer issues under load,
  // over at most 64 MiB or about half a second of the area.
  size_t chunk = std::min<uint64_t>(conf_.journal_max_batch_bytes,
                                    geo_.area_len() / 4);
  chunk -= chunk % block_size_;
  AlignedBuf b(chunk, block_size_);
  memset(b.p, 0xa5, chunk);
  uint64_t limit = std::min<uint64_t>(geo_.area_len() - chunk, 64ull << 20);
  uint64_t done = 0;
  auto start = std::chrono::steady_clock::now();
  double secs = 0;
  while (done + chunk <= limit) {
    int r = write_sync(geo_.area_start + done, b.p, chunk);
    if (r < 0) {
      return r;
    }
    done += chunk;
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start).count();
    if (secs > 0.5) {
      break;
    }
  }
  *bytes_per_sec = secs > 0 ? uint64_t(done / secs) : 0;
  return *bytes_per_sec ? 0 : -EIO;
}

void JournalDevice::close()
{
  if (fd_ >= 0) {
    io_->close(fd_);
    fd_ = -1;
  }
}

void JournalDevice::adopt(const mim::JournalHeader& h)
{
  block_size_ = h.block_size;
  geo_ = mim::JournalGeometry(h);
}

}  // namespace mimstore
