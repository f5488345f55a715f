// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the drive's volatile write cache, as bookkeeping of dirty data.
 *
 * A write acknowledged from the cache becomes a segment [off, off+len) with
 * its payload (or none, when replaying a trace). Segments never overlap: a
 * new write cuts what it covers out of older ones, so they can be destaged
 * in any order (the drive reorders destages like commands).
 *
 * Invariant (flush): after a FLUSH that arrived when the newest acknowledged
 * write had sequence number S completes, every byte written by a write with
 * sequence <= S holds that write's data or a newer write's. A segment
 * therefore carries flush_seq = the lowest sequence number of the data it
 * replaced (its own if none): a flush for S must wait for every segment
 * with flush_seq <= S, including a newer write that superseded an older
 * unflushed one.
 *
 * Power cut: everything still here is lost; with `torn`, each 512-byte
 * sector of it reaches the platter or not, decided by a hash of (seed,
 * sector number) so a seed always tears the same way.
 */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

namespace diskemu {

using Payload = std::shared_ptr<const std::vector<char>>;

/// Bytes for the platter (the backing file). data is null when the cache
/// holds no payloads (trace replay); `keep` holds the buffer alive.
struct PlatterWrite {
  uint64_t off = 0, len = 0;
  const char* data = nullptr;
  Payload keep;
};

struct Segment {
  uint64_t off = 0, len = 0;
  uint64_t seq = 0;          ///< the write it came from
  uint64_t flush_seq = 0;    ///< <= seq, see the invariant above
  int64_t acked = 0;         ///< when the write was acknowledged (ns)
  Payload buf;               ///< may be null
  size_t buf_off = 0;        ///< where off's byte is in buf
  uint64_t end() const { return off + len; }
};

class WriteCache {
 public:
  explicit WriteCache(uint64_t capacity) : capacity_(capacity) {}

  uint64_t capacity() const { return capacity_; }
  uint64_t dirty() const { return dirty_; }
  bool empty() const { return segs_.empty(); }
  size_t segments() const { return segs_.size(); }
  /// Whether a write of len can be admitted now. A write larger than the
  /// whole cache is never cached (the drive writes it through).
  bool fits(uint64_t len) const { return dirty_ + len <= capacity_; }
  uint64_t last_seq() const { return last_seq_; }

  /// Admit an acknowledged write; returns its sequence number.
  uint64_t insert(uint64_t off, uint64_t len, int64_t acked, Payload buf,
                  size_t buf_off);
  /// Any dirty data that a flush for `seq` must wait for?
  bool has_through(uint64_t seq) const;
  /// The `window` oldest segments (by flush_seq, then offset) with
  /// flush_seq <= upto: the drive's destage candidates.
  std::vector<const Segment*> oldest(size_t window, uint64_t upto) const;
  /// A destage of (off, len, seq) has reached the platter: remove what is
  /// left of it (newer writes inside the range stay) and return it.
  std::vector<PlatterWrite> complete_destage(uint64_t off, uint64_t len,
                                             uint64_t seq);
  /// Bytes of [off, off+len) held here.
  uint64_t covered(uint64_t off, uint64_t len) const;
  /// Copies of the cached pieces of [off, off+len), for overlaying a read
  /// of the platter. Pieces without payload are skipped.
  std::vector<PlatterWrite> overlay(uint64_t off, uint64_t len) const;
  /// Drop [off, off+len) (discard: the platter range is being zeroed).
  void discard(uint64_t off, uint64_t len);
  /// Everything, for writing out now (fast mode); the cache is emptied.
  std::vector<PlatterWrite> drain();
  /// Power cut; returns the sectors that made it (torn) or nothing.
  std::vector<PlatterWrite> cut(uint64_t seed, bool torn);
  /// Whether sector `lba` survives a torn cut with `seed`.
  static bool torn_keeps(uint64_t seed, uint64_t lba);

  const std::map<uint64_t, Segment>& segments_by_offset() const { return segs_; }

 private:
  void add(const Segment& s);
  std::map<uint64_t, Segment>::iterator erase(std::map<uint64_t, Segment>::iterator it);
  /// Cut [off, off+len) out of every segment; returns the lowest
  /// flush_seq removed (UINT64_MAX if none).
  uint64_t carve(uint64_t off, uint64_t len);

  uint64_t capacity_;
  uint64_t dirty_ = 0;
  uint64_t last_seq_ = 0;
  std::map<uint64_t, Segment> segs_;                       ///< by offset
  std::set<std::tuple<uint64_t, uint64_t>> by_age_;        ///< (flush_seq, off)
};

}  // namespace diskemu
