// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: data checksums, the write side (docs/plan-checksums.md; the
 * chunk arithmetic and value format are core/csum_group.h, the keys
 * OmapStore's MIM_C).
 *
 * Every change of an object file's bytes goes through change(): with the
 * object's stripe lock held, it reads the states of the chunks the change
 * covers only in part and (verify) checks their old bytes, runs the file
 * change, then takes each touched chunk's new state from what the file
 * holds now and puts them in one OmapStore batch, before the caller
 * releases the stripe lock (rule R1: a reader under that lock sees old
 * bytes with old states or new with new). The batch is not synced: the
 * sync before a checkpoint makes it durable with the data, and replay
 * derives the states of every chunk a replayed op touches again (R3), so a
 * crash between the two leaves nothing inconsistent once replay is done.
 *
 * State rules: a chunk covered whole by zeros (zero, truncate) is ZERO
 * without a read; every other touched chunk gets the state of its bytes in
 * the file after the change (crc32c, or ZERO when all zeros; bytes past the
 * end count as zeros). BAD is sticky: a chunk that was BAD, or whose old
 * bytes fail verification, stays BAD unless the change covers it whole.
 *
 * Thread safety: no state of its own but counters and the last read error
 * (last_error_lock); callers serialize the changes of one object (its
 * stripe lock).
 */
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/hobject.h"
#include "include/common_fwd.h"

class coll_t;

#include "core/csum_group.h"
#include "core/thread_annotations.h"

namespace mimstore {

class OmapStore;
class ObjectFiles;
class ObjectFD;
using ObjectFDRef = std::shared_ptr<ObjectFD>;

class Checksums {
 public:
  /// The chunk order of every store so far: 4 KiB chunks, as BlueStore
  /// checksums on an HDD (the value format allows 12..16).
  static constexpr unsigned ORDER = 12;
  /// <osd data>/mimstore_csum_complete: written by mkfs, so every chunk
  /// with data has a state. A store raised from format 3 lacks it: its
  /// older chunks have none (UNKNOWN) and read unverified.
  static constexpr const char* COMPLETE_META = "mimstore_csum_complete";

  /// `logger` may be null (offline tools); order is the store's chunk
  /// order, fixed at mkfs. With `debug_verify` (mimstore_debug_verify_csums)
  /// every change and rebase is checked after it (debug_verify), and a
  /// difference aborts.
  Checksums(CephContext* cct, OmapStore* omap, ObjectFiles* files,
            unsigned order, PerfCounters* logger, bool debug_verify);

  unsigned order() const { return order_; }
  uint64_t chunk_size() const { return uint64_t(1) << order_; }

  /// What a change does to the bytes it covers.
  enum class Kind {
    DATA,   ///< new bytes (write, write back, clone_range)
    ZEROS,  ///< zeros (zero; truncate's cut-off part)
  };

  /// A chunk's new bytes without a read (a direct write's buffer): fills
  /// chunk_size() bytes at `dst` for the chunk at offset `off` and returns
  /// true, or false (the chunk is read back from the file).
  using ChunkSource = std::function<bool(uint64_t off, char* dst)>;

  /// A change of `extents` of oid's file f, whose size before it is
  /// old_size: reads what it must before, runs apply() (the file change;
  /// its error is returned and nothing is recorded), then records the new
  /// states. `verify` checks the old bytes of chunks covered in part (live
  /// ops; replay takes the file as it finds it). With `drop_past`, every
  /// chunk wholly at or past that offset is forgotten (a truncate). A
  /// chunk that cannot be read (before or after) becomes BAD.
  /// REQUIRES: the object's stripe lock.
  int change(const ghobject_t& oid, const ObjectFDRef& f,
             const std::vector<mim::Extent>& extents, uint64_t old_size,
             Kind kind, bool verify, const std::function<int()>& apply,
             uint64_t drop_past = UINT64_MAX,
             const ChunkSource& source = nullptr);

  /// Replay of a merged write (its bytes go to the cache, not the file):
  /// the chunks it covers in part take the state of what the file holds
  /// now, unverified, BAD kept (the file may hold a write back the crash
  /// cut short, or the state may be newer than the bytes). Chunks it covers
  /// whole are left: the cache serves them until their write back.
  /// REQUIRES: the object's stripe lock (or replay: no other thread).
  int rebase(const ghobject_t& oid, const ObjectFDRef& f,
             const mim::Extent& e);

  /// Replay: every chunk of the object takes the state of the file's
  /// bytes, unverified, and no state is left past its end (after a
  /// replayed clear took a later incarnation's states with the old one's).
  int rebuild(const ghobject_t& oid, const ObjectFDRef& f);
  /// rebuild() of the file of cid/oid if there is one (else 0).
  int rebuild(const coll_t& cid, const ghobject_t& oid);

  /// A complete store (COMPLETE_META): a chunk without a state was never
  /// written and must read as zeros. Set at mount.
  void set_complete(bool c) { complete_ = c; }
  bool complete() const { return complete_; }

  /// A read's check: chunks first .. first+n-1 of oid's file, whose bytes
  /// are at buf (n * chunk_size(), zeros past the end), each against its
  /// state but those skip(c) names (the cache covers them whole, rule R4).
  /// A mismatch is read again from the device, the chunk's pages dropped
  /// from the page cache first (a bad page, or a bad transfer, is not rot);
  /// if that matches, its bytes replace buf's. Returns 0, or -EIO for a
  /// chunk that is BAD or still differs (logged, counted), or a read error.
  /// With `bad` (fsck, clone_range), every chunk is checked, the failing
  /// ones are appended to it and 0 is returned; else it stops at the
  /// first. REQUIRES: the object's stripe lock.
  int verify_read(const ghobject_t& oid, const ObjectFDRef& f, uint64_t first,
                  uint64_t n, char* buf,
                  const std::function<bool(uint64_t)>& skip,
                  std::vector<uint64_t>* bad = nullptr);

  /// verify_read of the chunks of oid's file f holding [off, off+len)
  /// (read from the file, a span at a time), every one checked but those
  /// skip(c) names; the failing ones are appended to *bad. For fsck-deep
  /// and clone_range. REQUIRES: the object's stripe lock.
  int check_range(const ghobject_t& oid, const ObjectFDRef& f, uint64_t off,
                  uint64_t len, const std::function<bool(uint64_t)>& skip,
                  std::vector<uint64_t>* bad);
  /// clone_range's source: the chunks of oid's file f holding [off,
  /// off+len) read and checked as a read checks them (none may be in the
  /// cache); the part of the range in chunks that fail goes to *bad. A
  /// clone of rot must not get a crc of its own. REQUIRES: the stripe lock.
  int check_source(const ghobject_t& oid, const ObjectFDRef& f, uint64_t off,
                   uint64_t len, std::vector<mim::Extent>* bad);
  /// Every chunk of oid touching `extents` becomes BAD (one batch).
  int mark_bad(const ghobject_t& oid, const std::vector<mim::Extent>& extents);

  /// The last chunk a read found bad ("<oid> bytes <off>~<len>"), for the
  /// health warning; empty if none since mount.
  std::string last_error() const;

  /// Tests and mimstore_debug_verify_csums: every chunk of [off, off+len)
  /// of the file against its recorded state. 0, or the number of chunks
  /// whose state does not match the file's bytes (each logged), or an
  /// error. BAD matches nothing (the runs that use this inject no rot);
  /// UNKNOWN matches anything, or with `strict` (a complete store) only
  /// zeros.
  int debug_verify(const ghobject_t& oid, const ObjectFDRef& f, uint64_t off,
                   uint64_t len, bool strict = false);

 private:
  CephContext* const cct;
  OmapStore* const omap;
  ObjectFiles* const files;
  const unsigned order_;
  PerfCounters* const logger;
  const bool debug_verify_changes;
  bool complete_ = false;  ///< set at mount, before any read or change
  mutable mim::Mutex last_error_lock;
  std::string last_error_ MIM_GUARDED_BY(last_error_lock);

  /// Chunk c's bytes as the file holds them (zeros past the end) into buf
  /// (chunk_size() bytes); reads of adjacent chunks are the caller's to
  /// batch (read_span).
  int read_chunk(const ObjectFDRef& f, uint64_t c, char* buf);
  /// Chunks first..last (inclusive) into buf, zeros past the end.
  int read_span(const ObjectFDRef& f, uint64_t first, uint64_t last,
                std::string* buf);
  /// change()'s first step: the chunks `plan` covers in part that are BAD,
  /// or (verify) whose old bytes fail their state, into *bad.
  int check_old(const ghobject_t& oid, const ObjectFDRef& f,
                const std::vector<mim::ChunkPlan>& plan, bool verify,
                std::set<uint64_t>* bad);
  /// The recorded states of chunks first..last.
  int states(const ghobject_t& oid, uint64_t first, uint64_t last,
             std::map<uint64_t, std::pair<mim::ChunkState, uint32_t>>* out);
  /// Does the image match a recorded state? UNKNOWN: yes.
  static bool matches(mim::ChunkState s, uint32_t crc, const char* p,
                      size_t n);
  /// A chunk whose bytes at p did not match state s: read once more from
  /// the device (its clean pages dropped first); 1, the new bytes at p,
  /// when they match now (counted, logged); 0 when not; or a read error.
  int settled_by_reread(const ghobject_t& oid, const ObjectFDRef& f,
                        uint64_t c, mim::ChunkState s, uint32_t crc, char* p);
  /// verify_read of one chunk that did not match: settled_by_reread, else
  /// -EIO (logged, counted); a read error is returned as it is.
  int reread_chunk(const ghobject_t& oid, const ObjectFDRef& f, uint64_t c,
                   mim::ChunkState s, uint32_t crc, char* p);
  void inc(int idx, uint64_t v = 1);
  /// debug_verify_changes: these chunks (sorted) of the file against
  /// their states, aborting on a difference. Only the chunks changed: a
  /// chunk the cache covers whole may differ after a replay (rule R4).
  void check_after(const ghobject_t& oid, const ObjectFDRef& f,
                   const std::vector<uint64_t>& chunks, const char* what);
};

}  // namespace mimstore
