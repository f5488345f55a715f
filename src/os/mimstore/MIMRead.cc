// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's reads: exists, stat, read, fiemap, xattrs and omap. Each
 * waits until the collection's queued transactions are applied, then reads
 * the object file under the object's stripe lock and lays over it what the
 * merge cache still holds.
 */
#include "MIMStore.h"

#include "common/debug.h"
#include "common/errno.h"
#include "kv/KeyValueDB.h"

#include "Checksums.h"
#include "ObjectFiles.h"
#include "ObjectName.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using ceph::bufferptr;

using namespace mimstore;

namespace {

/// The part of read() the cache does not cover whole: the object file's
/// bytes of [a, a+w) (whole chunks: a checksum covers a whole chunk) into
/// buf, zeros past its end, each chunk checked against its checksum but
/// those the cache's extents `ext` cover whole (rule R4: after a replay
/// their file bytes may be older than their states; the cache's bytes go
/// over them, checked by their journal copy's crc); with !check
/// (mimstore_csum_verify off) none is checked.
/// REQUIRES: the object's stripe lock.
int read_file_verified(ObjectFiles* files, Checksums* csums,
                       const ghobject_t& oid, const ObjectFDRef& f,
                       uint64_t a, uint64_t w, char* buf,
                       const std::vector<mim::CachedExtent>& ext, bool check)
{
  const uint64_t cs = csums->chunk_size();
  uint64_t fsize = 0;
  int r = files->size(f, &fsize);
  if (r < 0) {
    return r;
  }
  const uint64_t fend = (fsize + cs - 1) / cs * cs;
  const uint64_t n = fend > a ? std::min(w, fend - a) : 0;
  if (n) {
    r = files->read_into(f, a, n, buf);
    if (r < 0) {
      return r;
    }
    memset(buf + r, 0, n - r);
    r = !check ? 0 : csums->verify_read(oid, f, a / cs, n / cs, buf,
                           [&](uint64_t chunk) {
                             return mim::extents_cover(ext, chunk * cs, cs);
                           });
    if (r < 0) {
      return r;
    }
  }
  memset(buf + n, 0, w - n);
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------
// reads

int MIMStore::_object_size(const coll_t& cid, const ghobject_t& oid,
                           const ObjectFDRef& f, uint64_t* size)
{
  int r = files->size(f, size);
  if (r < 0) {
    return r;
  }
  uint64_t end;
  if (htmll->cached_end(cid.to_str(), object_file_name(oid), &end)) {
    *size = std::max(*size, end);
  }
  return 0;
}

int MIMStore::_open_for_read(CollectionHandle& ch, const ghobject_t& oid,
                             ReadHandle* h)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  auto c = static_cast<Collection*>(ch.get());
  h->fname = object_file_name(oid);
  h->lock = std::unique_lock(obj_locks.of(c->name, h->fname));
  r = files->open_object(c->cid, oid, OpenMode::EXISTING, &h->f);
  if (r < 0) {
    return r;
  }
  return _object_size(c->cid, oid, h->f, &h->size);
}

int MIMStore::_check_object(CollectionHandle& ch, const ghobject_t& oid)
{
  auto c = static_cast<Collection*>(ch.get());
  sequencer.wait_applied(c->queued_sn_for(oid));
  return c->has(oid) ? 0 : -ENOENT;
}

bool MIMStore::exists(CollectionHandle& ch, const ghobject_t& oid)
{
  return _check_object(ch, oid) == 0;
}

int MIMStore::stat(CollectionHandle& ch, const ghobject_t& oid,
                   struct stat* st, bool allow_eio)
{
  ReadHandle h;
  int r = _open_for_read(ch, oid, &h);
  if (r < 0) {
    return r;
  }
  memset(st, 0, sizeof(*st));
  st->st_size = h.size;
  st->st_blksize = 4096;
  st->st_blocks = (h.size + 4095) / 4096;
  st->st_nlink = 1;
  return 0;
}

int MIMStore::read(CollectionHandle& ch, const ghobject_t& oid,
                   uint64_t offset, size_t len, bufferlist& bl,
                   uint32_t op_flags)
{
  auto c = static_cast<Collection*>(ch.get());
  ReadHandle h;
  int r = _open_for_read(ch, oid, &h);
  if (r < 0) {
    return r;
  }
  if (offset >= h.size) {
    bl.clear();
    return 0;
  }
  if (len == 0 || offset + len > h.size) {
    len = h.size - offset;
  }
  // The file's bytes, zeros where it has none, then the cached extents on
  // top (the cache always holds the newest bytes). A range the cache covers
  // whole is not read from the file: on an HDD that read is a seek, for a
  // read of data still in the merge window. (The object lock keeps the
  // flush thread from writing back and dropping these extents meanwhile.)
  // One lookup over the whole chunks the read touches (at most a chunk
  // more at each end, in the same seek): the extents laid on top and the
  // chunks left unchecked must be the same (a merged write takes no
  // object lock, and a second lookup could see one the first did not).
  const uint64_t cs = csums->chunk_size();
  const uint64_t a = offset - offset % cs;
  const uint64_t w = (offset + len + cs - 1) / cs * cs - a;
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(c->name, h.fname, a, w, &ext);
  bufferptr bp = ceph::buffer::create(len);
  std::string wide;
  char* buf = bp.c_str();  // holds [a, a+w) when the read is whole chunks
  if (a != offset || w != len) {
    wide.resize(w);
    buf = wide.data();
  }
  if (mim::extents_cover(ext, offset, len)) {
    logger->inc(l_mimstore_reads_from_cache);
  } else {
    r = read_file_verified(files.get(), csums.get(), oid, h.f, a, w, buf,
                           ext, conf.csum_verify);
    if (r < 0) {
      // -EIO goes back to the OSD, which repairs the object from a replica
      derr << __func__ << " " << c->cid << " " << oid << " read failed: "
           << cpp_strerror(r) << dendl;
      return r;
    }
  }
  for (auto& e : ext) {
    if (e.end() <= offset || e.offset >= offset + len) {
      continue;  // a neighbour's bytes in an edge chunk: not returned
    }
    if (conf.debug_verify_journal_data) {
      _verify_journal_copy(e.data, "read");
    }
    r = _fetch(e.data, buf + (e.offset - a));
    if (r < 0) {
      return r;  // -EIO: the OSD repairs the object from a replica
    }
  }
  if (buf != bp.c_str()) {
    memcpy(bp.c_str(), buf + (offset - a), len);
  }
  bl.clear();  // like the other stores, read replaces what bl held
  bl.append(std::move(bp));
  return len;
}

int MIMStore::fiemap(CollectionHandle& ch, const ghobject_t& oid,
                     uint64_t offset, size_t len,
                     std::map<uint64_t, uint64_t>& destmap)
{
  auto c = static_cast<Collection*>(ch.get());
  ReadHandle h;
  int r = _open_for_read(ch, oid, &h);
  if (r < 0) {
    return r;
  }
  if (offset >= h.size) {
    return 0;
  }
  len = std::min<uint64_t>(len, h.size - offset);
  std::map<uint64_t, uint64_t> m;
  r = files->fiemap(h.f, offset, len, &m);
  if (r < 0) {
    return r;
  }
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(c->name, h.fname, offset, len, &ext);
  // union of the file's data ranges and the cached extents, merged
  for (auto& e : ext) {
    m[e.offset] = std::max(m[e.offset], e.data.length);
  }
  uint64_t cur_off = 0, cur_len = 0;
  bool have = false;
  for (auto& [o, l] : m) {
    if (have && o <= cur_off + cur_len) {
      cur_len = std::max(cur_len, o + l - cur_off);
      continue;
    }
    if (have) {
      destmap[cur_off] = cur_len;
    }
    cur_off = o;
    cur_len = l;
    have = true;
  }
  if (have) {
    destmap[cur_off] = cur_len;
  }
  return 0;
}

int MIMStore::fiemap(CollectionHandle& ch, const ghobject_t& oid,
                     uint64_t offset, size_t len, bufferlist& bl)
{
  std::map<uint64_t, uint64_t> m;
  int r = fiemap(ch, oid, offset, len, m);
  if (r >= 0) {
    encode(m, bl);
  }
  return r;
}

int MIMStore::getattr(CollectionHandle& ch, const ghobject_t& oid,
                      const char* name, bufferptr& value)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  std::map<string, bufferlist> got;
  r = omap->get_xattrs(oid, {string(name)}, &got);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  auto p = got.find(name);
  if (p == got.end()) {
    return -ENODATA;
  }
  value = bufferptr(p->second.c_str(), p->second.length());
  return 0;
}

int MIMStore::getattrs(CollectionHandle& ch, const ghobject_t& oid,
                       std::map<string, bufferptr, std::less<>>& aset)
{
  aset.clear();  // exactly the object's (Tentacle's contract)
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  std::map<string, bufferlist> got;
  r = omap->get_all_xattrs(oid, &got);
  if (r < 0) {
    return r;
  }
  for (auto& [k, v] : got) {
    aset.emplace(k, bufferptr(v.c_str(), v.length()));
  }
  return 0;
}

// ---------------------------------------------------------------------------
// omap reads

int MIMStore::omap_get(CollectionHandle& ch, const ghobject_t& oid,
                       bufferlist* header, std::map<string, bufferlist>* out)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  r = omap->get(oid, header, out);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_header(CollectionHandle& ch, const ghobject_t& oid,
                              bufferlist* header, bool allow_eio)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  r = omap->get_header(oid, header);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_keys(CollectionHandle& ch, const ghobject_t& oid,
                            std::set<string>* keys)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  r = omap->get_keys(oid, keys);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_values(CollectionHandle& ch, const ghobject_t& oid,
                              const std::set<string>& keys,
                              std::map<string, bufferlist>* out)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  r = omap->get_values(oid, keys, out);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_check_keys(CollectionHandle& ch, const ghobject_t& oid,
                              const std::set<string>& keys,
                              std::set<string>* out)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  r = omap->check_keys(oid, keys, out);
  return r == -ENOENT ? 0 : r;
}

#if CEPH_RELEASE < 20
namespace {

/// Reef's omap iterator over an OmapStore cursor.
class OmapIterator : public ObjectMap::ObjectMapIteratorImpl {
 public:
  explicit OmapIterator(std::unique_ptr<OmapStore::Cursor> c)
    : c(std::move(c)) {}
  int seek_to_first() override { return c->seek_to_first(); }
  int upper_bound(const string& after) override
  {
    return c->upper_bound(after);
  }
  int lower_bound(const string& to) override { return c->lower_bound(to); }
  bool valid() override { return c->valid(); }
  int next() override { return c->next(); }
  string key() override { return c->key(); }
  bufferlist value() override { return c->value(); }
  int status() override { return c->status(); }

 private:
  std::unique_ptr<OmapStore::Cursor> c;
};

}  // namespace

ObjectMap::ObjectMapIterator MIMStore::get_omap_iterator(
  CollectionHandle& ch, const ghobject_t& oid)
{
  if (_check_object(ch, oid) < 0) {
    return ObjectMap::ObjectMapIterator();
  }
  return std::make_shared<OmapIterator>(omap->cursor(oid));
}
#else
int MIMStore::omap_iterate(
  CollectionHandle& ch, const ghobject_t& oid, omap_iter_seek_t start_from,
  std::function<omap_iter_ret_t(std::string_view, std::string_view)> visitor)
{
  int r = _check_object(ch, oid);
  if (r < 0) {
    return r;
  }
  // An object without omap gives 0: the OSD aborts on an error here.
  return omap->iterate(
    oid, start_from.seek_position,
    start_from.seek_type == omap_iter_seek_t::UPPER_BOUND,
    [&](std::string_view k, std::string_view v) {
      return visitor(k, v) == omap_iter_ret_t::STOP ? OmapStore::Visit::STOP
                                                    : OmapStore::Visit::NEXT;
    });
}
#endif

