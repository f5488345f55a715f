// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: data checksums, the write side (see Checksums.h).
 */
#include "Checksums.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "common/debug.h"
#include "common/errno.h"
#include "common/perf_counters.h"

#include "MIMPerf.h"
#include "ObjectFiles.h"
#include "OmapStore.h"
#include "core/crc32c.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore csum "

using std::string;
using mim::ChunkCover;
using mim::ChunkState;
using mim::ChunkUpdate;

namespace mimstore {

namespace {

/// Chunks read back per pread: bounds the buffer of a large change.
constexpr uint64_t SPAN_CHUNKS = 256;

std::string to_hex(uint32_t v)
{
  char b[9];
  snprintf(b, sizeof(b), "%08x", v);
  return b;
}

}  // namespace

Checksums::Checksums(CephContext* cct, OmapStore* omap, ObjectFiles* files,
                     unsigned order, PerfCounters* logger, bool debug_verify)
  : cct(cct), omap(omap), files(files), order_(order), logger(logger),
    debug_verify_changes(debug_verify)
{
}

void Checksums::check_after(const ghobject_t& oid, const ObjectFDRef& f,
                            const std::vector<uint64_t>& chunks,
                            const char* what)
{
  const uint64_t cs = chunk_size();
  for (size_t i = 0; i < chunks.size();) {
    size_t j = i + 1;
    while (j < chunks.size() && chunks[j] == chunks[j - 1] + 1) {
      ++j;
    }
    int r = debug_verify(oid, f, chunks[i] * cs, (j - i) * cs);
    if (r != 0) {
      derr << "mimstore_debug_verify_csums: after " << what << " of " << oid
           << " chunks " << chunks[i] << ".." << chunks[j - 1] << ": "
           << (r < 0 ? cpp_strerror(r) : std::to_string(r) + " wrong")
           << dendl;
      ceph_abort_msg("data checksums do not match the file after a change");
    }
    i = j;
  }
}

void Checksums::inc(int idx, uint64_t v)
{
  if (logger) {
    logger->inc(idx, v);
  }
}

int Checksums::read_span(const ObjectFDRef& f, uint64_t first, uint64_t last,
                         string* buf)
{
  const uint64_t cs = chunk_size();
  uint64_t len = (last - first + 1) * cs;
  buf->assign(len, '\0');
  int r = files->read_into(f, first * cs, len, buf->data());
  // Short at the end of the file: the rest stays zeros, as the crc counts.
  return r < 0 ? r : 0;
}

int Checksums::read_chunk(const ObjectFDRef& f, uint64_t c, char* buf)
{
  const uint64_t cs = chunk_size();
  memset(buf, 0, cs);
  int r = files->read_into(f, c * cs, cs, buf);
  return r < 0 ? r : 0;
}

int Checksums::states(const ghobject_t& oid, uint64_t first, uint64_t last,
                      std::map<uint64_t,
                               std::pair<ChunkState, uint32_t>>* out)
{
  std::map<uint32_t, mim::CsumGroup> groups;
  int r = omap->csum_get(oid, mim::csum_group_of(first),
                         mim::csum_group_of(last), &groups);
  if (r < 0) {
    return r;
  }
  for (auto& [g, grp] : groups) {
    for (unsigned i = 0; i < mim::CSUM_GROUP_CHUNKS; ++i) {
      uint64_t c = uint64_t(g) * mim::CSUM_GROUP_CHUNKS + i;
      if (c >= first && c <= last && grp.state(i) != ChunkState::UNKNOWN) {
        (*out)[c] = {grp.state(i), grp.crc(i)};
      }
    }
  }
  return 0;
}

bool Checksums::matches(ChunkState s, uint32_t crc, const char* p, size_t n)
{
  switch (s) {
  case ChunkState::UNKNOWN:
    return true;
  case ChunkState::CRC:
    return mim::crc32c(0, p, n) == crc;
  case ChunkState::ZERO:
    return mim::is_all_zero(p, n);
  case ChunkState::BAD:
    return false;
  }
  return false;
}

int Checksums::check_old(const ghobject_t& oid, const ObjectFDRef& f,
                         const std::vector<mim::ChunkPlan>& plan, bool verify,
                         std::set<uint64_t>* bad)
{
  const uint64_t cs = chunk_size();
  std::vector<uint64_t> partial;
  for (auto& p : plan) {
    if (p.cover != ChunkCover::FULL) {
      partial.push_back(p.chunk);
    }
  }
  if (partial.empty()) {
    return 0;
  }
  std::map<uint64_t, std::pair<ChunkState, uint32_t>> old;
  int r = states(oid, partial.front(), partial.back(), &old);
  if (r < 0) {
    return r;
  }
  string img(cs, '\0');
  for (auto& p : plan) {
    auto o = old.find(p.chunk);
    if (p.cover == ChunkCover::FULL || o == old.end()) {
      continue;
    }
    // PARTIAL_TAIL: every byte it keeps is past the old end, zeros; its
    // new bytes are all known, so it is not checked and BAD goes.
    if (p.cover != ChunkCover::PARTIAL) {
      continue;
    }
    if (o->second.first == ChunkState::BAD) {
      bad->insert(p.chunk);
      continue;
    }
    if (!verify) {
      continue;
    }
    r = read_chunk(f, p.chunk, img.data());
    inc(l_mimstore_csum_rmw_reads);
    if (r < 0) {
      derr << oid << " chunk " << p.chunk << " of " << f->path
           << " cannot be read before a partial overwrite ("
           << cpp_strerror(r) << "): marked bad" << dendl;
      inc(l_mimstore_csum_bad_marked);
      bad->insert(p.chunk);
      continue;
    }
    // No second read from the disk here, as a read does: a write back's
    // gap bytes in this chunk came from the same (maybe bad) page, and
    // would be written back under a new crc. Marked bad, the chunk fails
    // its reads until the OSD repairs the object from another copy.
    if (!matches(o->second.first, o->second.second, img.data(), cs)) {
      derr << oid << " chunk " << p.chunk << " (bytes " << p.chunk * cs
           << "~" << cs << " of " << f->path << ") does not match its "
           << mim::chunk_state_name(o->second.first)
           << " checksum before a partial overwrite: marked bad" << dendl;
      inc(l_mimstore_csum_bad_marked);
      bad->insert(p.chunk);
    }
  }
  return 0;
}

int Checksums::change(const ghobject_t& oid, const ObjectFDRef& f,
                      const std::vector<mim::Extent>& extents,
                      uint64_t old_size, Kind kind, bool verify,
                      const std::function<int()>& apply, uint64_t drop_past,
                      const ChunkSource& source)
{
  const uint64_t cs = chunk_size();
  // Chunks wholly at or past drop_past are the truncate patch's.
  const uint64_t dropped = drop_past == UINT64_MAX
    ? UINT64_MAX : (drop_past + cs - 1) / cs;
  auto plan = mim::plan_chunks(extents, order_, old_size);
  plan.erase(std::remove_if(plan.begin(), plan.end(),
                            [&](const mim::ChunkPlan& p) {
                              return p.chunk >= dropped ||
                                p.chunk > mim::CSUM_MAX_CHUNK;
                            }),
             plan.end());

  // Before the change: the chunks it covers in part keep BAD, and (verify)
  // their old bytes must match their state, or they become BAD: a partial
  // overwrite must not bless rot it did not overwrite.
  std::set<uint64_t> bad;
  int r = check_old(oid, f, plan, verify, &bad);
  if (r < 0) {
    return r;
  }

  r = apply();
  if (r < 0) {
    return r;
  }

  // After: each touched chunk's state from the file, but whole chunks of
  // zeros (known without a read) and bad ones.
  std::vector<ChunkUpdate> ups;
  std::vector<uint64_t> reread;
  string buf(cs, '\0');
  for (auto& p : plan) {
    if (bad.count(p.chunk)) {
      ups.push_back({p.chunk, ChunkState::BAD, 0});
    } else if (p.cover == ChunkCover::FULL && kind == Kind::ZEROS) {
      ups.push_back({p.chunk, ChunkState::ZERO, 0});
    } else if (p.cover == ChunkCover::FULL && source &&
               source(p.chunk * cs, buf.data())) {
      ups.push_back(mim::chunk_update_of(p.chunk, buf.data(), cs));
    } else {
      reread.push_back(p.chunk);
    }
  }
  for (size_t i = 0; i < reread.size();) {
    // A run of consecutive chunks, at most SPAN_CHUNKS, in one read.
    size_t j = i + 1;
    while (j < reread.size() && reread[j] == reread[j - 1] + 1 &&
           j - i < SPAN_CHUNKS) {
      ++j;
    }
    r = read_span(f, reread[i], reread[j - 1], &buf);
    for (size_t k = i; k < j; ++k) {
      // (written, but unreadable: nothing to take a crc of)
      ups.push_back(r < 0 ? ChunkUpdate{reread[k], ChunkState::BAD, 0}
                    : mim::chunk_update_of(reread[k],
                                           buf.data() + (k - i) * cs, cs));
    }
    if (r < 0) {
      derr << oid << " chunks " << reread[i] << ".." << reread[j - 1]
           << " of " << f->path << " cannot be read back after a change ("
           << cpp_strerror(r) << "): marked bad" << dendl;
      inc(l_mimstore_csum_bad_marked, j - i);
    }
    i = j;
  }
  std::map<uint32_t, mim::CsumGroup> patches;
  uint64_t drop_from = OmapStore::CSUM_KEEP_GROUPS;
  if (dropped != UINT64_MAX) {
    uint32_t boundary = 0;
    mim::CsumGroup tp = mim::truncate_patch(drop_past, order_, &boundary,
                                            &drop_from);
    if (dropped <= mim::CSUM_MAX_CHUNK) {
      patches[boundary] = tp;
    }
  }
  for (auto& u : ups) {
    patches[mim::csum_group_of(u.chunk)].set(mim::csum_index_in_group(u.chunk),
                                             u.state, u.crc);
  }
  if (patches.empty() && drop_from == OmapStore::CSUM_KEEP_GROUPS) {
    return 0;
  }
  inc(l_mimstore_csum_updates);
  r = omap->csum_update(oid, patches, drop_from);
  if (r == 0 && debug_verify_changes) {
    std::vector<uint64_t> touched;
    for (auto& p : plan) {
      touched.push_back(p.chunk);
    }
    check_after(oid, f, touched, "a change");
  }
  return r;
}

int Checksums::rebase(const ghobject_t& oid, const ObjectFDRef& f,
                      const mim::Extent& e)
{
  uint64_t size = 0;
  int r = files->size(f, &size);
  if (r < 0) {
    return r;
  }
  const uint64_t cs = chunk_size();
  std::vector<mim::ChunkUpdate> ups;
  auto plan = mim::plan_chunks({e}, order_, size);
  std::vector<uint64_t> partial;
  for (auto& p : plan) {
    if (p.cover != ChunkCover::FULL && p.chunk <= mim::CSUM_MAX_CHUNK) {
      partial.push_back(p.chunk);
    }
  }
  if (partial.empty()) {
    return 0;
  }
  std::map<uint64_t, std::pair<ChunkState, uint32_t>> old;
  r = states(oid, partial.front(), partial.back(), &old);
  if (r < 0) {
    return r;
  }
  string img(cs, '\0');
  for (uint64_t c : partial) {
    auto o = old.find(c);
    if (o != old.end() && o->second.first == ChunkState::BAD) {
      continue;
    }
    r = read_chunk(f, c, img.data());
    if (r < 0) {
      return r;
    }
    auto u = mim::chunk_update_of(c, img.data(), cs);
    if (o != old.end() && o->second.first == u.state &&
        o->second.second == u.crc) {
      continue;
    }
    ups.push_back(u);
  }
  if (ups.empty()) {
    return 0;
  }
  inc(l_mimstore_csum_replay_rebased, ups.size());
  dout(10) << "replay: " << ups.size() << " chunks of " << oid
           << " take the state of the file's bytes" << dendl;
  r = omap->csum_update(oid, mim::group_patches(ups));
  if (r == 0 && debug_verify_changes) {
    check_after(oid, f, partial, "a replay rebase");
  }
  return r;
}

int Checksums::rebuild(const ghobject_t& oid, const ObjectFDRef& f)
{
  uint64_t size = 0;
  int r = files->size(f, &size);
  if (r < 0) {
    return r;
  }
  const uint64_t cs = chunk_size();
  const uint64_t chunks = std::min((size + cs - 1) / cs, mim::CSUM_MAX_CHUNK);
  std::vector<ChunkUpdate> ups;
  string buf;
  for (uint64_t c0 = 0; c0 < chunks; c0 += SPAN_CHUNKS) {
    uint64_t c1 = std::min(chunks - 1, c0 + SPAN_CHUNKS - 1);
    r = read_span(f, c0, c1, &buf);
    if (r < 0) {
      return r;
    }
    for (uint64_t c = c0; c <= c1; ++c) {
      ups.push_back(mim::chunk_update_of(c, buf.data() + (c - c0) * cs, cs));
    }
  }
  inc(l_mimstore_csum_replay_rebased, ups.size());
  dout(10) << "replay: rebuilt the checksums of " << oid << " (" << chunks
           << " chunks) from its file" << dendl;
  // Whole groups only: past the last chunk's group nothing is left, and in
  // it the chunks past the end are ZERO (truncate's patch).
  uint32_t boundary = 0;
  uint64_t drop_from = 0;
  mim::CsumGroup tp = mim::truncate_patch(chunks * cs, order_, &boundary,
                                          &drop_from);
  std::map<uint32_t, mim::CsumGroup> patches;
  patches[boundary] = tp;
  for (auto& u : ups) {
    patches[mim::csum_group_of(u.chunk)].set(mim::csum_index_in_group(u.chunk),
                                             u.state, u.crc);
  }
  return omap->csum_update(oid, patches, drop_from);
}

int Checksums::rebuild(const coll_t& cid, const ghobject_t& oid)
{
  ObjectFDRef f;
  int r = files->open_object(cid, oid, OpenMode::EXISTING, &f);
  if (r == -ENOENT) {
    return 0;
  }
  return r < 0 ? r : rebuild(oid, f);
}

int Checksums::verify_read(const ghobject_t& oid, const ObjectFDRef& f,
                           uint64_t first, uint64_t n, char* buf,
                           const std::function<bool(uint64_t)>& skip,
                           std::vector<uint64_t>* bad)
{
  if (n == 0 || first > mim::CSUM_MAX_CHUNK) {
    return 0;
  }
  const uint64_t last = std::min(first + n - 1, mim::CSUM_MAX_CHUNK);
  std::map<uint64_t, std::pair<ChunkState, uint32_t>> st;
  int r = states(oid, first, last, &st);
  if (r < 0) {
    return r;
  }
  const uint64_t cs = chunk_size();
  uint64_t verified = 0, unverified = 0;
  int ret = 0;
  for (uint64_t c = first; c <= last; ++c) {
    if (skip && skip(c)) {
      continue;
    }
    auto s = st.find(c);
    std::pair<ChunkState, uint32_t> want{ChunkState::UNKNOWN, 0};
    if (s != st.end()) {
      want = s->second;
    } else if (complete_) {
      want.first = ChunkState::ZERO;  // never written
    } else {
      ++unverified;  // written before the store kept checksums
      continue;
    }
    char* p = buf + (c - first) * cs;
    ++verified;
    if (!matches(want.first, want.second, p, cs)) {
      ret = reread_chunk(oid, f, c, want.first, want.second, p);
      if (ret < 0 && !bad) {
        break;
      }
      if (ret < 0) {
        bad->push_back(c);
      }
    }
  }
  inc(l_mimstore_csum_verified, verified);
  inc(l_mimstore_csum_unverified, unverified);
  return bad ? 0 : ret;
}

int Checksums::check_range(const ghobject_t& oid, const ObjectFDRef& f,
                           uint64_t off, uint64_t len,
                           const std::function<bool(uint64_t)>& skip,
                           std::vector<uint64_t>* bad)
{
  const uint64_t cs = chunk_size();
  uint64_t size = 0;
  int r = files->size(f, &size);
  if (r < 0) {
    return r;
  }
  const uint64_t end = std::min(off + len, size);
  string buf;
  for (uint64_t c0 = off / cs; c0 * cs < end; c0 += SPAN_CHUNKS) {
    const uint64_t c1 = std::min((end - 1) / cs, c0 + SPAN_CHUNKS - 1);
    r = read_span(f, c0, c1, &buf);
    if (r == 0) {
      r = verify_read(oid, f, c0, c1 - c0 + 1, buf.data(), skip, bad);
    }
    if (r < 0) {
      return r;
    }
  }
  return 0;
}

int Checksums::check_source(const ghobject_t& oid, const ObjectFDRef& f,
                            uint64_t off, uint64_t len,
                            std::vector<mim::Extent>* bad)
{
  const uint64_t cs = chunk_size();
  std::vector<uint64_t> chunks;
  int r = check_range(oid, f, off, len, nullptr, &chunks);
  for (uint64_t c : chunks) {
    const uint64_t b = std::max(c * cs, off);
    bad->push_back({b, std::min((c + 1) * cs, off + len) - b});
  }
  return r;
}

int Checksums::mark_bad(const ghobject_t& oid,
                        const std::vector<mim::Extent>& extents)
{
  std::vector<ChunkUpdate> ups;
  for (auto& p : mim::plan_chunks(extents, order_, 0)) {
    if (p.chunk <= mim::CSUM_MAX_CHUNK) {
      ups.push_back({p.chunk, ChunkState::BAD, 0});
    }
  }
  if (ups.empty()) {
    return 0;
  }
  inc(l_mimstore_csum_bad_marked, ups.size());
  derr << ups.size() << " chunks of " << oid << " marked bad: copied from "
       << "chunks that failed their checksum" << dendl;
  return omap->csum_update(oid, mim::group_patches(ups));
}

int Checksums::settled_by_reread(const ghobject_t& oid,
                                 const ObjectFDRef& f, uint64_t c,
                                 ChunkState s, uint32_t crc, char* p)
{
  const uint64_t cs = chunk_size();
  const uint32_t found = mim::crc32c(0, p, cs);
  string img(cs, '\0');
  // Clean pages only: a dirty one is the file's newest bytes, and stays.
  f->io->drop_cache(f->fd, c * cs, cs);
  int r = read_chunk(f, c, img.data());
  if (r < 0) {
    return r;
  }
  if (matches(s, crc, img.data(), cs)) {
    memcpy(p, img.data(), cs);
    inc(l_mimstore_csum_retried_ok);
    dout(1) << oid << " chunk " << c << " of " << f->path << " did not "
            << "match its checksum in the page cache (crc " << std::hex
            << found << std::dec << "), and did when read again from "
            << "the disk" << dendl;
    return 1;
  }
  // Not left in the cache: the write back's gap probe must not take it.
  f->io->drop_cache(f->fd, c * cs, cs);
  return 0;
}

int Checksums::reread_chunk(const ghobject_t& oid, const ObjectFDRef& f,
                            uint64_t c, ChunkState s, uint32_t crc, char* p)
{
  const uint64_t cs = chunk_size();
  const uint32_t found = mim::crc32c(0, p, cs);
  if (s != ChunkState::BAD) {
    int r = settled_by_reread(oid, f, c, s, crc, p);
    if (r < 0) {
      return r;  // an I/O error, not a checksum's: the caller reports it
    }
    if (r == 1) {
      return 0;
    }
  }
  uint64_t phys = 0;
  const bool mapped = f->io->physical_offset(f->fd, c * cs, &phys) == 0;
  inc(l_mimstore_csum_errors);
  {
    std::ostringstream what;
    what << oid << " bytes " << c * cs << "~" << cs;
    mim::MutexLock l(last_error_lock);
    last_error_ = what.str();
  }
  derr << "checksum error: " << oid << " bytes " << c * cs << "~" << cs
       << " (" << f->path << (mapped ? ", disk offset " +
                              std::to_string(phys) : std::string())
       << "): " << (s == ChunkState::BAD
                    ? std::string("marked bad by an earlier check")
                    : std::string("expected ") + mim::chunk_state_name(s) +
                      (s == ChunkState::CRC ? " crc " + to_hex(crc) : "") +
                      ", found crc " + to_hex(found) +
                      (mim::is_all_zero(p, cs) ? " (zeros)" : ""))
       << "; the read returns -EIO, and the OSD repairs the object from "
       << "another copy" << dendl;
  return -EIO;
}

std::string Checksums::last_error() const
{
  mim::MutexLock l(last_error_lock);
  return last_error_;
}

int Checksums::debug_verify(const ghobject_t& oid, const ObjectFDRef& f,
                            uint64_t off, uint64_t len, bool strict)
{
  uint64_t size = 0;
  int r = files->size(f, &size);
  if (r < 0) {
    return r;
  }
  const uint64_t cs = chunk_size();
  if (len == 0 || off >= size) {
    return 0;
  }
  uint64_t first = off / cs;
  uint64_t last = (std::min(off + len, size) - 1) / cs;
  std::map<uint64_t, std::pair<ChunkState, uint32_t>> st;
  r = states(oid, first, last, &st);
  if (r < 0) {
    return r;
  }
  int wrong = 0;
  string buf;
  for (uint64_t c0 = first; c0 <= last; c0 += SPAN_CHUNKS) {
    uint64_t c1 = std::min(last, c0 + SPAN_CHUNKS - 1);
    r = read_span(f, c0, c1, &buf);
    if (r < 0) {
      return r;
    }
    for (uint64_t c = c0; c <= c1; ++c) {
      auto s = st.find(c);
      std::pair<ChunkState, uint32_t> want{ChunkState::UNKNOWN, 0};
      if (s != st.end()) {
        want = s->second;
      } else if (strict) {
        want.first = ChunkState::ZERO;  // no state: never written
      } else {
        continue;
      }
      const char* p = buf.data() + (c - c0) * cs;
      if (!matches(want.first, want.second, p, cs)) {
        derr << "debug verify: " << oid << " chunk " << c << " is "
             << (s == st.end() ? "without a state"
                 : mim::chunk_state_name(want.first)) << " (crc "
             << std::hex << want.second << ") but the file holds crc "
             << mim::crc32c(0, p, cs) << std::dec
             << (mim::is_all_zero(p, cs) ? " (zeros)" : "") << dendl;
        ++wrong;
      }
    }
  }
  return wrong;
}

}  // namespace mimstore
