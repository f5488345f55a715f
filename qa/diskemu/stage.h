// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the drive's media cache (on-platter staging of random writes),
 * as bookkeeping of staged extents.
 *
 * Current nearline drives with their volatile write cache disabled (WCD)
 * still take 2-3x more random 4 KiB writes than reads at QD16 (Seagate
 * Exos X24: 168 read / 550 write IOPS; Exos M 30TB: 170 / 350): they write
 * a random write first to a reserved band of the platters, where no
 * positioning on its home track is needed, and copy it home later. The
 * staged copy is on the media: it survives a power cut, and a FLUSH does
 * not wait for it to go home.
 *
 * Here: extents [off, off+len) of the emulated disk's address space that
 * are staged and not yet home. Extents never overlap: a newer staged write
 * cuts what it covers out of older ones, and a write that goes home
 * directly cuts its range out (its data is newer). Each extent keeps the
 * sequence number of the write it came from, so a destage of an old
 * extent removes only what is still that write's.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace diskemu {

struct Staged {
  uint64_t off = 0, len = 0;
  uint64_t seq = 0;
  uint64_t end() const { return off + len; }
};

class MediaCache {
 public:
  explicit MediaCache(uint64_t capacity) : capacity_(capacity) {}

  uint64_t capacity() const { return capacity_; }
  uint64_t bytes() const { return bytes_; }
  bool empty() const { return ext_.empty(); }
  size_t extents() const { return ext_.size(); }
  bool fits(uint64_t len) const { return bytes_ + len <= capacity_; }

  /// A write staged: [off, off+len) now lives in the band.
  void insert(uint64_t off, uint64_t len);
  /// A write that went home directly (or a discard): its range is no
  /// longer staged.
  void invalidate(uint64_t off, uint64_t len) { carve(off, len); }
  /// Bytes of [off, off+len) that are staged.
  uint64_t covered(uint64_t off, uint64_t len) const;
  /// Destage candidates: up to `window` extents nearest `head` by offset,
  /// half at or after it, the rest before it (the drive sorts what it
  /// destages and takes what is near the arm).
  std::vector<Staged> near(uint64_t head, size_t window) const;
  /// A destage of `s` reached home: remove what is still s's write.
  void complete_destage(const Staged& s);

 private:
  void carve(uint64_t off, uint64_t len);

  uint64_t capacity_;
  uint64_t bytes_ = 0;
  uint64_t seq_ = 0;
  std::map<uint64_t, Staged> ext_;   ///< by offset
};

}  // namespace diskemu
