// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: data checksums, the chunk arithmetic and the value format
 * (Ceph-free; docs/plan-checksums.md).
 *
 * An object's data is cut into chunks of 2^order bytes (4 KiB by default).
 * Each chunk has a state and, in state CRC, the crc32c (core/crc32c.h) of
 * its 2^order bytes, the bytes past the object's end counted as zeros.
 * Sixteen consecutive chunks form a group, stored as one RocksDB value
 * under the object (OmapStore's MIM_C prefix, key nid + be32(group)).
 *
 * Value grammar (v1), every integer little-endian:
 *
 *   value  := version:u8 (=1) order:u8 states:u32 crc:u32 *
 *   states := 2 bits per chunk, chunk i of the group in bits 2i..2i+1
 *   crc    := one per chunk in state CRC, in chunk order (so a value is
 *             6 + 4 * (CRC chunks) bytes, at most 70)
 *
 * States: UNKNOWN (0) no checksum: never written, past the end, or data
 * written before the store kept checksums; CRC (1) the crc is known; ZERO
 * (2) the chunk reads as zeros; BAD (3) the chunk is known rotten, reads
 * give -EIO until it is rewritten whole.
 *
 * A value is also a patch: a chunk in state UNKNOWN leaves the chunk as it
 * is. merge(left, right) takes right's state wherever right's is not
 * UNKNOWN. That is associative, so RocksDB may combine operands in any
 * grouping (the store registers it as a merge operator): a write back puts
 * its patches blind and never reads the old value.
 *
 * A value that does not decode (another version, another order, a length
 * that does not match its states) is never repaired by a merge: merging
 * into or with it gives a value that does not decode either, so every read
 * of those chunks fails and fsck counts the error.
 */
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mim {

enum class ChunkState : uint8_t {
  UNKNOWN = 0,
  CRC = 1,
  ZERO = 2,
  BAD = 3,
};
const char* chunk_state_name(ChunkState s);

constexpr uint8_t CSUM_VALUE_VERSION = 1;
constexpr unsigned CSUM_GROUP_CHUNKS = 16;
/// Chunk sizes the store accepts: 4 KiB (the default, as BlueStore on an
/// HDD) to 64 KiB.
constexpr unsigned CSUM_MIN_ORDER = 12;
constexpr unsigned CSUM_MAX_ORDER = 16;
/// Longest encoded value.
constexpr size_t CSUM_VALUE_MAX = 6 + 4 * CSUM_GROUP_CHUNKS;

/// One group's states and crcs. crcs[i] means something only while chunk
/// i is in state CRC (set() keeps the others 0, so equal groups compare
/// equal).
struct CsumGroup {
  uint32_t states = 0;
  std::array<uint32_t, CSUM_GROUP_CHUNKS> crcs{};

  ChunkState state(unsigned i) const {
    return ChunkState((states >> (2 * i)) & 3);
  }
  uint32_t crc(unsigned i) const { return crcs[i]; }
  void set(unsigned i, ChunkState s, uint32_t crc = 0);
  /// Every chunk UNKNOWN: as a patch, changes nothing; as a value, the
  /// same as no value.
  bool empty() const { return states == 0; }
  /// Right's state wherever it is not UNKNOWN (the merge operator's rule).
  void merge_from(const CsumGroup& right);
  bool operator==(const CsumGroup& o) const {
    return states == o.states && crcs == o.crcs;
  }

  std::string encode(unsigned order) const;
  /// 0, or -EINVAL when `v` is not a v1 value of chunk order `order`.
  static int decode(std::string_view v, unsigned order, CsumGroup* out);
};

/// The merge operator on encoded values: left is the value so far, right
/// the operand. Both v1 of the same order: their merge. Otherwise the one
/// that does not decode (left first), or, when both decode with different
/// orders, a value that does not decode: never a silent repair.
std::string csum_merge_values(std::string_view left, std::string_view right);
/// A value that never decodes (version 0), for the case above.
std::string csum_poisoned_value();

/// A group's chunk range and a chunk's place in it.
inline uint32_t csum_group_of(uint64_t chunk) {
  return uint32_t(chunk / CSUM_GROUP_CHUNKS);
}
inline unsigned csum_index_in_group(uint64_t chunk) {
  return unsigned(chunk % CSUM_GROUP_CHUNKS);
}
/// The highest chunk index a key can hold (be32 group numbers).
constexpr uint64_t CSUM_MAX_CHUNK = uint64_t(UINT32_MAX) * CSUM_GROUP_CHUNKS +
                                    (CSUM_GROUP_CHUNKS - 1);

/// How a change covers one chunk.
enum class ChunkCover : uint8_t {
  FULL,          ///< the new bytes cover it whole: no old bytes needed
  PARTIAL,       ///< old bytes needed for the rest (read-modify-write)
  PARTIAL_TAIL,  ///< the rest lies wholly at or past the old end: zeros,
                 ///< no read
};

struct ChunkPlan {
  uint64_t chunk = 0;
  ChunkCover cover = ChunkCover::FULL;
  bool operator==(const ChunkPlan& o) const {
    return chunk == o.chunk && cover == o.cover;
  }
};

struct Extent {
  uint64_t off = 0;
  uint64_t len = 0;
};

/// Every chunk the union of `extents` (any order, may overlap, empty ones
/// ignored) touches, in chunk order, with how it is covered; `old_size` is
/// the object's size before the change. Two writes that together cover a
/// chunk make it FULL.
std::vector<ChunkPlan> plan_chunks(std::vector<Extent> extents,
                                   unsigned order, uint64_t old_size);

/// Per-chunk updates gathered into one patch per group (only the named
/// chunks set; the rest UNKNOWN, so the patch leaves them as they are).
struct ChunkUpdate {
  uint64_t chunk = 0;
  ChunkState state = ChunkState::UNKNOWN;
  uint32_t crc = 0;
};
std::map<uint32_t, CsumGroup> group_patches(
  const std::vector<ChunkUpdate>& updates);

/// Truncation to `size`: chunks from the first one wholly past `size` on
/// must read as zeros if the object grows again. Returns the group that
/// holds that first chunk and its patch (those chunks ZERO); every later
/// group is to be deleted (`*first_deleted_group`). The chunk that holds
/// `size` (when `size` is not on a chunk bound) is the caller's: its bytes
/// past `size` become zeros, a read-modify-write.
CsumGroup truncate_patch(uint64_t size, unsigned order,
                         uint32_t* boundary_group,
                         uint64_t* first_deleted_group);

/// The state a chunk's bytes get: ZERO when all are zeros, else CRC with
/// its crc32c.
ChunkUpdate chunk_update_of(uint64_t chunk, const char* p, size_t n);
bool is_all_zero(const char* p, size_t n);

}  // namespace mim
