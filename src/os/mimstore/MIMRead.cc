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

/// The part of read() the cache does not cover whole: [offset, offset+len)
/// of the object file f into dst, zeros past its end, its chunks checked
/// against their checksums (all but those the cache covers whole).
/// REQUIRES: the object's stripe lock.
int read_file_verified(ObjectFiles* files, const mim::Htmll* htmll,
                       Checksums* csums, const std::string& cname,
                       const std::string& fname, const ghobject_t& oid,
                       const ObjectFDRef& f, uint64_t offset, uint64_t len,
                       char* dst)
{
  // The file's bytes of whole chunks (a checksum covers a whole chunk): at
  // most a chunk more at each end, in the same seek, none for aligned
  // reads; up to the file's end rounded up, past which there are zeros.
  const uint64_t cs = csums->chunk_size();
  uint64_t fsize = 0;
  int r = files->size(f, &fsize);
  if (r < 0) {
    return r;
  }
  const uint64_t a = offset - offset % cs;
  auto up = [cs](uint64_t x) { return (x + cs - 1) / cs * cs; };
  const uint64_t e = std::min(up(offset + len), up(fsize));
  if (e <= offset) {
    memset(dst, 0, len);  // all past the file's end (cached bytes go over)
    return 0;
  }
  std::string wide;
  char* buf = dst;
  if (a != offset || e - a > len) {
    wide.resize(e - a);
    buf = wide.data();
  }
  r = files->read_into(f, a, e - a, buf);
  if (r < 0) {
    return r;
  }
  memset(buf + r, 0, e - a - r);
  // Chunks the cache covers whole are not checked (rule R4: after a replay
  // their file bytes may be older than their states); the cache's bytes go
  // over them, checked by their journal copy's crc.
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(cname, fname, a, e - a, &ext);
  r = csums->verify_read(oid, f, a / cs, (e - a) / cs, buf,
                         [&](uint64_t chunk) {
                           return mim::extents_cover(ext, chunk * cs, cs);
                         });
  if (r < 0) {
    return r;
  }
  if (buf != dst) {
    uint64_t n = std::min(len, e - offset);
    memcpy(dst, buf + (offset - a), n);
    memset(dst + n, 0, len - n);
  } else if (e - a < len) {
    memset(dst + (e - a), 0, len - (e - a));
  }
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
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(c->name, h.fname, offset, len, &ext);
  bufferptr bp = ceph::buffer::create(len);
  if (mim::extents_cover(ext, offset, len)) {
    logger->inc(l_mimstore_reads_from_cache);
  } else {
    r = read_file_verified(files.get(), htmll.get(), csums.get(), c->name,
                           h.fname, oid, h.f, offset, len, bp.c_str());
    if (r < 0) {
      // -EIO goes back to the OSD, which repairs the object from a replica
      derr << __func__ << " " << c->cid << " " << oid << " read failed: "
           << cpp_strerror(r) << dendl;
      return r;
    }
  }
  for (auto& e : ext) {
    if (conf.debug_verify_journal_data) {
      _verify_journal_copy(e.data, "read");
    }
    r = _fetch(e.data, bp.c_str() + (e.offset - offset));
    if (r < 0) {
      return r;  // -EIO: the OSD repairs the object from a replica
    }
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

