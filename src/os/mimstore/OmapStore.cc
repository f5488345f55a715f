// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "OmapStore.h"

#include <optional>
#include <ostream>

#include "common/debug.h"
#include "include/encoding.h"

#include "ObjectKey.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore omap "

using std::string;
using ceph::bufferlist;

namespace mimstore {

namespace {

/// nids are taken in blocks: the counter is written once per block.
constexpr uint64_t NID_BLOCK = 1024;
const string NID_MAX_KEY = "nid_max";
const string ALL_PREFIXES[] = {
  OmapStore::RECORD_PREFIX, OmapStore::HEADER_PREFIX, OmapStore::OMAP_PREFIX,
  OmapStore::XATTR_PREFIX, OmapStore::STATE_PREFIX, OmapStore::CSUM_PREFIX};

/// The checksum groups' merge (core/csum_group.h): the name is recorded
/// by RocksDB, so it names the value version.
class CsumMergeOperator : public KeyValueDB::MergeOperator {
 public:
  void merge_nonexistent(const char* rdata, size_t rlen,
                         string* new_value) override {
    new_value->assign(rdata, rlen);
  }
  void merge(const char* ldata, size_t llen, const char* rdata, size_t rlen,
             string* new_value) override {
    *new_value = mim::csum_merge_values(std::string_view(ldata, llen),
                                        std::string_view(rdata, rlen));
  }
  const char* name() const override { return "mimstore_csum_v1"; }
};

uint64_t be64_at(const string& s, size_t at)
{
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  }
  return v;
}

bool starts_with(const string& s, const string& p)
{
  return s.compare(0, p.size(), p) == 0;
}

/// The group of a MIM_C key (be64(nid) + be32(group)).
uint32_t csum_key_group(const string& k)
{
  return uint32_t(be64_at(k, 4) & 0xffffffffu);
}

int decode_csum_group(bufferlist v, unsigned order,
                      mim::CsumGroup* g)
{
  return mim::CsumGroup::decode(std::string_view(v.c_str(), v.length()),
                                order, g);
}

}  // namespace

string nid_key(uint64_t nid)
{
  string k;
  append_be(nid, 8, &k);
  return k;
}

string csum_key(uint64_t nid, uint64_t group)
{
  string k = nid_key(nid);
  append_be(group, 4, &k);
  return k;
}

int OmapStore::register_merge_operators(KeyValueDB* db)
{
  return db->set_merge_operator(CSUM_PREFIX,
                                std::make_shared<CsumMergeOperator>());
}

void OmapStore::Record::encode(bufferlist& bl) const
{
  ENCODE_START(1, 1, bl);
  encode(nid, bl);
  encode(stamp, bl);
  encode(oid, bl);
  ENCODE_FINISH(bl);
}

void OmapStore::Record::decode(bufferlist::const_iterator& p)
{
  DECODE_START(1, p);
  decode(nid, p);
  decode(stamp, p);
  decode(oid, p);
  DECODE_FINISH(p);
}

OmapStore::OmapStore(CephContext* cct, KeyValueDB* db)
  : cct(cct), db(db)
{
}

int OmapStore::init(unsigned order)
{
  csum_order = order;
  bufferlist bl;
  int r = db->get(STATE_PREFIX, NID_MAX_KEY, &bl);
  if (r == -ENOENT) {
    return 0;
  }
  if (r < 0) {
    return r;
  }
  if (bl.length() != 8) {
    derr << "the omap database's nid counter is " << bl.length()
         << " bytes, not 8: damaged" << dendl;
    return -EIO;
  }
  mim::MutexLock l(nid_lock);
  nid_max = be64_at(bl.to_str(), 0);
  nid_last = nid_max;
  return 0;
}

size_t OmapStore::stripe(const ghobject_t& oid) const
{
  return (oid.hobj.get_hash() ^ std::hash<string>()(oid.hobj.oid.name)) %
    STRIPES;
}

int OmapStore::decode_record(const bufferlist& bl, Record* rec) const
{
  try {
    auto p = bl.cbegin();
    rec->decode(p);
  } catch (const ceph::buffer::error& e) {
    derr << "an omap record does not decode: " << e.what() << dendl;
    return -EIO;
  }
  return 0;
}

int OmapStore::read_record(const ghobject_t& oid, Record* rec)
{
  bufferlist bl;
  int r = db->get(RECORD_PREFIX, object_key(oid), &bl);
  return r < 0 ? r : decode_record(bl, rec);
}

int OmapStore::read_record(KeyValueDB::WholeSpaceIterator& it,
                           const string& okey, Record* rec)
{
  int r = it->lower_bound(RECORD_PREFIX, okey);
  if (r < 0) {
    return r;
  }
  if (!it->valid() || !it->raw_key_is_prefixed(RECORD_PREFIX) ||
      it->key() != okey) {
    return it->status() < 0 ? it->status() : -ENOENT;
  }
  return decode_record(it->value(), rec);
}

bool OmapStore::covered(const Record& rec, const SequencerPosition* spos) const
{
  if (spos && *spos <= rec.stamp) {
    ldout(cct, 10) << "skip the op at " << *spos << " on " << rec.oid
                   << ": stamped " << rec.stamp << dendl;
    return true;
  }
  return false;
}

void OmapStore::put_record(KeyValueDB::Transaction t, const Record& rec)
{
  bufferlist bl;
  rec.encode(bl);
  t->set(RECORD_PREFIX, object_key(rec.oid), bl);
}

int OmapStore::record_for_write(const ghobject_t& oid,
                                KeyValueDB::Transaction t, Record* rec,
                                bool* existed)
{
  int r = read_record(oid, rec);
  if (r == 0) {
    *existed = true;
    return 0;
  }
  if (r != -ENOENT) {
    return r;
  }
  *existed = false;
  rec->oid = oid;
  rec->stamp = SequencerPosition();
  {
    mim::MutexLock l(nid_lock);
    if (nid_last + 1 >= nid_max) {
      // Its own batch, before any nid of the new block is handed out:
      // RocksDB keeps a prefix of its batches, so whatever batch of a
      // record survives a crash, the counter past its nid does too. (In
      // the record's batch it would not: two writers' batches can reach
      // the WAL in either order.)
      KeyValueDB::Transaction bump = db->get_transaction();
      bufferlist bl;
      bl.append(nid_key(nid_last + 1 + NID_BLOCK));
      bump->set(STATE_PREFIX, NID_MAX_KEY, bl);
      int r = db->submit_transaction(bump);
      if (r < 0) {
        return r;
      }
      nid_max = nid_last + 1 + NID_BLOCK;
    }
    rec->nid = ++nid_last;
  }
  put_record(t, *rec);
  return 0;
}

void OmapStore::drop_nid(KeyValueDB::Transaction t, uint64_t nid,
                         bool keys_header, bool xattrs, bool csums)
{
  string from = nid_key(nid), to = nid_key(nid + 1);
  if (keys_header) {
    t->rm_range_keys(OMAP_PREFIX, from, to);
    t->rmkey(HEADER_PREFIX, from);
  }
  if (xattrs) {
    t->rm_range_keys(XATTR_PREFIX, from, to);
  }
  if (csums) {
    t->rm_range_keys(CSUM_PREFIX, from, to);
  }
}

int OmapStore::write_op(const ghobject_t& oid, const SequencerPosition* spos,
                        bool create,
                        const std::function<void(KeyValueDB::Transaction,
                                                 const Record&)>& fill)
{
  mim::MutexLock l(locks[stripe(oid)]);
  KeyValueDB::Transaction t = db->get_transaction();
  Record rec;
  bool existed = true;
  int r = create ? record_for_write(oid, t, &rec, &existed)
                 : read_record(oid, &rec);
  if (r < 0) {
    return r;
  }
  if (existed && covered(rec, spos)) {
    return 0;
  }
  fill(t, rec);
  return db->submit_transaction(t);
}

int OmapStore::set_under(const char* prefix, const ghobject_t& oid,
                         const std::map<string, bufferlist>& set,
                         const SequencerPosition* spos)
{
  return write_op(oid, spos, true, [&](auto t, const Record& rec) {
    string nk = nid_key(rec.nid);
    for (auto& [k, v] : set) {
      t->set(prefix, nk + k, v);
    }
  });
}

int OmapStore::rm_under(const char* prefix, const ghobject_t& oid,
                        const std::set<string>& keys,
                        const SequencerPosition* spos)
{
  return write_op(oid, spos, false, [&](auto t, const Record& rec) {
    string nk = nid_key(rec.nid);
    for (auto& k : keys) {
      t->rmkey(prefix, nk + k);
    }
  });
}

int OmapStore::set_keys(const ghobject_t& oid,
                        const std::map<string, bufferlist>& set,
                        const SequencerPosition* spos)
{
  return set_under(OMAP_PREFIX, oid, set, spos);
}

int OmapStore::set_header(const ghobject_t& oid, const bufferlist& bl,
                          const SequencerPosition* spos)
{
  return write_op(oid, spos, true, [&](auto t, const Record& rec) {
    t->set(HEADER_PREFIX, nid_key(rec.nid), bl);
  });
}

int OmapStore::rm_keys(const ghobject_t& oid, const std::set<string>& keys,
                       const SequencerPosition* spos)
{
  return rm_under(OMAP_PREFIX, oid, keys, spos);
}

int OmapStore::rm_key_range(const ghobject_t& oid, const string& first,
                            const string& last, const SequencerPosition* spos)
{
  if (!(first < last)) {
    return 0;
  }
  return write_op(oid, spos, false, [&](auto t, const Record& rec) {
    string nk = nid_key(rec.nid);
    t->rm_range_keys(OMAP_PREFIX, nk + first, nk + last);
  });
}

int OmapStore::clear_keys_header(const ghobject_t& oid,
                                 const SequencerPosition* spos)
{
  return write_op(oid, spos, false, [&](auto t, const Record& rec) {
    drop_nid(t, rec.nid, true, false, false);
  });
}

int OmapStore::clear(const ghobject_t& oid, const SequencerPosition* spos)
{
  return write_op(oid, spos, false, [&](auto t, const Record& rec) {
    drop_nid(t, rec.nid, true, true, true);
    t->rmkey(RECORD_PREFIX, object_key(oid));
  });
}

int OmapStore::set_xattrs(const ghobject_t& oid,
                          const std::map<string, bufferlist>& set,
                          const SequencerPosition* spos)
{
  return set_under(XATTR_PREFIX, oid, set, spos);
}

int OmapStore::remove_xattrs(const ghobject_t& oid,
                             const std::set<string>& names,
                             const SequencerPosition* spos)
{
  return rm_under(XATTR_PREFIX, oid, names, spos);
}

int OmapStore::remove_all_xattrs(const ghobject_t& oid,
                                 const SequencerPosition* spos)
{
  return write_op(oid, spos, false, [&](auto t, const Record& rec) {
    drop_nid(t, rec.nid, false, true, false);
  });
}

int OmapStore::clone(const ghobject_t& from, const ghobject_t& to,
                     const SequencerPosition* spos)
{
  if (from == to) {
    return 0;
  }
  size_t a = std::min(stripe(from), stripe(to));
  size_t b = std::max(stripe(from), stripe(to));
  mim::MutexLock la(locks[a]);
  std::optional<mim::MutexLock> lb;
  if (a != b) {
    lb.emplace(locks[b]);
  }
  KeyValueDB::Transaction t = db->get_transaction();
  Record rec;
  int r = read_record(to, &rec);
  bool existed = r == 0;
  if (existed) {
    if (covered(rec, spos)) {
      return 0;
    }
    drop_nid(t, rec.nid, true, true, true);
    t->rmkey(RECORD_PREFIX, object_key(to));
  } else if (r != -ENOENT) {
    return r;
  }
  // The source's keys from one snapshot (its writers wait on its stripe).
  KeyValueDB::WholeSpaceIterator it = db->get_wholespace_iterator();
  Record src;
  r = read_record(it, object_key(from), &src);
  if (r == -ENOENT) {
    return db->submit_transaction(t);
  }
  if (r < 0) {
    return r;
  }
  if (!existed) {
    r = record_for_write(to, t, &rec, &existed);  // a nid for the copy
    if (r < 0) {
      return r;
    }
  }
  // Put even when it existed: its record was deleted above in this batch,
  // and its nid is reused for the copy.
  rec.stamp = spos ? *spos : SequencerPosition();
  put_record(t, rec);
  string snk = nid_key(src.nid), dnk = nid_key(rec.nid);
  for (const char* prefix :
       {OMAP_PREFIX, XATTR_PREFIX, HEADER_PREFIX, CSUM_PREFIX}) {
    std::map<string, bufferlist> kv;
    r = read_prefixed(it, prefix, snk, &kv);
    if (r < 0) {
      return r;
    }
    for (auto& [k, v] : kv) {
      t->set(prefix, dnk + k, v);
    }
  }
  return db->submit_transaction(t);
}

int OmapStore::csum_update(const ghobject_t& oid,
                           const std::map<uint32_t, mim::CsumGroup>& patches,
                           uint64_t drop_from_group)
{
  return write_op(oid, nullptr, true, [&](auto t, const Record& rec) {
    if (drop_from_group <= UINT32_MAX) {
      // Before the merges: a patch of a dropped group starts it afresh.
      t->rm_range_keys(CSUM_PREFIX, csum_key(rec.nid, drop_from_group),
                       nid_key(rec.nid + 1));
    }
    for (auto& [group, patch] : patches) {
      if (patch.empty()) {
        continue;
      }
      bufferlist bl;
      bl.append(patch.encode(csum_order));
      t->merge(CSUM_PREFIX, csum_key(rec.nid, group), bl);
    }
  });
}

int OmapStore::csum_get(const ghobject_t& oid, uint32_t first, uint32_t last,
                        std::map<uint32_t, mim::CsumGroup>* out)
{
  KeyValueDB::WholeSpaceIterator it;
  string nk;
  int r = snapshot(oid, &it, &nk);
  if (r < 0) {
    return r == -ENOENT ? 0 : r;
  }
  const uint64_t nid = be64_at(nk, 0);
  const string end = last == UINT32_MAX ? nid_key(nid + 1)
                                        : csum_key(nid, uint64_t(last) + 1);
  for (it->lower_bound(CSUM_PREFIX, csum_key(nid, first));
       it->valid() && it->raw_key_is_prefixed(CSUM_PREFIX); it->next()) {
    string k = it->key();
    if (!(k < end)) {
      break;
    }
    if (k.size() != 12) {
      continue;  // not a group key; check() reports it
    }
    uint32_t group = csum_key_group(k);
    mim::CsumGroup g;
    if (decode_csum_group(it->value(), csum_order, &g) < 0) {
      derr << "the checksums of " << oid << " chunks "
           << uint64_t(group) * mim::CSUM_GROUP_CHUNKS << ".. do not decode: "
           << "those chunks read as bad" << dendl;
      for (unsigned i = 0; i < mim::CSUM_GROUP_CHUNKS; ++i) {
        g.set(i, mim::ChunkState::BAD);
      }
    }
    (*out)[group] = g;
  }
  return it->status() < 0 ? it->status() : 0;
}

int OmapStore::sync()
{
  KeyValueDB::Transaction t = db->get_transaction();
  return db->submit_transaction_sync(t);
}

int OmapStore::sync(const ghobject_t& oid, const SequencerPosition& spos)
{
  mim::MutexLock l(locks[stripe(oid)]);
  KeyValueDB::Transaction t = db->get_transaction();
  Record rec;
  int r = read_record(oid, &rec);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  // Never back: a replayed guard of an older op (an earlier incarnation
  // of the name) must not let ops after it apply again.
  if (r == 0 && spos > rec.stamp) {
    rec.stamp = spos;
    put_record(t, rec);
  }
  return db->submit_transaction_sync(t);
}

// ---------------------------------------------------------------------------
// reads

int OmapStore::read_prefixed(KeyValueDB::WholeSpaceIterator& it,
                             const string& prefix, const string& nk,
                             std::map<string, bufferlist>* out)
{
  for (it->lower_bound(prefix, nk);
       it->valid() && it->raw_key_is_prefixed(prefix); it->next()) {
    string k = it->key();
    if (!starts_with(k, nk)) {
      break;
    }
    (*out)[k.substr(8)] = it->value();
  }
  return it->status() < 0 ? it->status() : 0;
}

int OmapStore::snapshot(const ghobject_t& oid,
                        KeyValueDB::WholeSpaceIterator* it, string* nk)
{
  *it = db->get_wholespace_iterator();
  Record rec;
  int r = read_record(*it, object_key(oid), &rec);
  if (r == 0) {
    *nk = nid_key(rec.nid);
  }
  return r;
}

int OmapStore::read_named(KeyValueDB::WholeSpaceIterator& it,
                          const string& prefix, const string& nk,
                          const std::set<string>& names,
                          std::map<string, bufferlist>* out)
{
  for (auto& k : names) {
    int r = it->lower_bound(prefix, nk + k);
    if (r < 0) {
      return r;
    }
    if (it->valid() && it->raw_key_is_prefixed(prefix) &&
        it->key() == nk + k) {
      (*out)[k] = it->value();
    }
  }
  return it->status() < 0 ? it->status() : 0;
}

int OmapStore::read_object(const ghobject_t& oid, const string& prefix,
                           const std::set<string>* names,
                           std::map<string, bufferlist>* out)
{
  KeyValueDB::WholeSpaceIterator it;
  string nk;
  int r = snapshot(oid, &it, &nk);
  if (r < 0) {
    return r == -ENOENT ? 0 : r;
  }
  return names ? read_named(it, prefix, nk, *names, out)
               : read_prefixed(it, prefix, nk, out);
}

int OmapStore::get(const ghobject_t& oid, bufferlist* header,
                   std::map<string, bufferlist>* out)
{
  KeyValueDB::WholeSpaceIterator it;
  string nk;
  int r = snapshot(oid, &it, &nk);
  if (r < 0) {
    return r == -ENOENT ? 0 : r;
  }
  if (header) {
    std::map<string, bufferlist> h;
    r = read_named(it, HEADER_PREFIX, nk, {string()}, &h);
    if (r < 0) {
      return r;
    }
    if (!h.empty()) {
      header->claim_append(h.begin()->second);
    }
  }
  return out ? read_prefixed(it, OMAP_PREFIX, nk, out) : 0;
}

int OmapStore::get_header(const ghobject_t& oid, bufferlist* header)
{
  return get(oid, header, nullptr);
}

int OmapStore::get_keys(const ghobject_t& oid, std::set<string>* keys)
{
  int r = iterate(oid, string(), false, [&](std::string_view k,
                                            std::string_view) {
    keys->emplace(k);
    return Visit::NEXT;
  });
  return r < 0 ? r : 0;
}

int OmapStore::get_values(const ghobject_t& oid,
                          const std::set<string>& keys,
                          std::map<string, bufferlist>* out)
{
  return read_object(oid, OMAP_PREFIX, &keys, out);
}

int OmapStore::check_keys(const ghobject_t& oid,
                          const std::set<string>& keys,
                          std::set<string>* out)
{
  std::map<string, bufferlist> got;
  int r = get_values(oid, keys, &got);
  for (auto& [k, v] : got) {
    out->insert(k);
  }
  return r;
}

int OmapStore::get_xattrs(const ghobject_t& oid,
                          const std::set<string>& names,
                          std::map<string, bufferlist>* out)
{
  return read_object(oid, XATTR_PREFIX, &names, out);
}

int OmapStore::get_all_xattrs(const ghobject_t& oid,
                              std::map<string, bufferlist>* out)
{
  return read_object(oid, XATTR_PREFIX, nullptr, out);
}

int OmapStore::iterate(const ghobject_t& oid, const string& start, bool after,
                       const std::function<Visit(std::string_view,
                                                 std::string_view)>& fn)
{
  auto c = cursor(oid);
  int r = after ? c->upper_bound(start) : c->lower_bound(start);
  for (; r == 0 && c->valid(); r = c->next()) {
    string k = c->key();
    bufferlist v = c->value();
    if (fn(k, std::string_view(v.c_str(), v.length())) == Visit::STOP) {
      return 1;
    }
  }
  return r < 0 ? r : c->status();
}

std::unique_ptr<OmapStore::Cursor> OmapStore::cursor(const ghobject_t& oid)
{
  KeyValueDB::WholeSpaceIterator it;
  string nk;  // stays empty without a record (or on an error: status())
  int r = snapshot(oid, &it, &nk);
  auto c = std::make_unique<Cursor>(std::move(it), std::move(nk));
  c->error = r == -ENOENT ? 0 : r;
  return c;
}

OmapStore::Cursor::Cursor(KeyValueDB::WholeSpaceIterator it, string nid_key)
  : it(std::move(it)), nid_key(std::move(nid_key))
{
}

int OmapStore::Cursor::seek_to_first()
{
  return lower_bound(string());
}

int OmapStore::Cursor::lower_bound(const string& to)
{
  return nid_key.empty() ? 0 : it->lower_bound(OMAP_PREFIX, nid_key + to);
}

int OmapStore::Cursor::upper_bound(const string& after)
{
  return nid_key.empty() ? 0 : it->upper_bound(OMAP_PREFIX, nid_key + after);
}

bool OmapStore::Cursor::valid()
{
  return !nid_key.empty() && it->valid() &&
    it->raw_key_is_prefixed(OMAP_PREFIX) && starts_with(it->key(), nid_key);
}

int OmapStore::Cursor::next()
{
  return it->next();
}

string OmapStore::Cursor::key()
{
  return it->key().substr(8);
}

bufferlist OmapStore::Cursor::value()
{
  return it->value();
}

int OmapStore::Cursor::status()
{
  return error < 0 ? error : nid_key.empty() ? 0 : it->status();
}

// ---------------------------------------------------------------------------
// listing, checks, migration

int OmapStore::get_stamp(const ghobject_t& oid, SequencerPosition* stamp)
{
  Record rec;
  int r = read_record(oid, &rec);
  if (r == 0) {
    *stamp = rec.stamp;
  }
  return r;
}

int OmapStore::import(KeyValueDB::Transaction t, const ghobject_t& oid,
                      const SequencerPosition& stamp,
                      const bufferlist* header,
                      const std::map<string, bufferlist>& xattrs,
                      uint64_t* nid)
{
  Record rec;
  bool existed = false;
  int r = record_for_write(oid, t, &rec, &existed);
  if (r < 0) {
    return r;
  }
  if (existed) {
    derr << "import: " << oid << " has a record already" << dendl;
    return -EEXIST;
  }
  rec.stamp = stamp;
  put_record(t, rec);
  string nk = nid_key(rec.nid);
  if (header) {
    t->set(HEADER_PREFIX, nk, *header);
  }
  for (auto& [k, v] : xattrs) {
    t->set(XATTR_PREFIX, nk + k, v);
  }
  *nid = rec.nid;
  return 0;
}

void OmapStore::import_key(KeyValueDB::Transaction t, uint64_t nid,
                           const string& key, const bufferlist& value)
{
  t->set(OMAP_PREFIX, nid_key(nid) + key, value);
}

int OmapStore::list_objects(std::vector<ghobject_t>* out)
{
  KeyValueDB::Iterator it = db->get_iterator(RECORD_PREFIX);
  for (it->seek_to_first(); it->valid(); it->next()) {
    Record rec;
    int r = decode_record(it->value(), &rec);
    if (r < 0) {
      return r;
    }
    out->push_back(rec.oid);
  }
  return it->status();
}

int OmapStore::check(std::ostream& out, bool repair)
{
  int errors = 0;
  std::map<uint64_t, ghobject_t> nids;
  // One iterator, one view of the database: a live store keeps writing
  // (a write back's checksum batch makes a record and its groups at once),
  // and records read before a batch with keys read after it would look
  // like keys without a record.
  KeyValueDB::WholeSpaceIterator it = db->get_wholespace_iterator();
  {
    for (it->seek_to_first(RECORD_PREFIX);
         it->valid() && it->raw_key_is_prefixed(RECORD_PREFIX); it->next()) {
      Record rec;
      if (decode_record(it->value(), &rec) < 0) {
        out << "a record does not decode; ";
        ++errors;
        continue;
      }
      if (object_key(rec.oid) != it->key()) {
        out << "the record of " << rec.oid << " is under another key; ";
        ++errors;
      }
      auto [p, fresh] = nids.emplace(rec.nid, rec.oid);
      if (!fresh) {
        out << rec.oid << " and " << p->second << " share nid " << rec.nid
            << "; ";
        ++errors;
      }
    }
    if (it->status() < 0) {
      return it->status();
    }
  }
  KeyValueDB::Transaction t = db->get_transaction();
  if (!nids.empty()) {
    uint64_t top = nids.rbegin()->first;
    mim::MutexLock l(nid_lock);
    if (top >= nid_max) {
      out << "nid " << top << " at or above the counter " << nid_max << "; ";
      if (repair) {
        nid_max = nid_last = top + NID_BLOCK;
        bufferlist bl;
        bl.append(nid_key(nid_max));
        t->set(STATE_PREFIX, NID_MAX_KEY, bl);
      } else {
        ++errors;
      }
    }
  }
  for (const char* prefix :
       {OMAP_PREFIX, XATTR_PREFIX, HEADER_PREFIX, CSUM_PREFIX}) {
    for (it->seek_to_first(prefix);
         it->valid() && it->raw_key_is_prefixed(prefix); it->next()) {
      string k = it->key();
      uint64_t nid = k.size() >= 8 ? be64_at(k, 0) : 0;
      bool csum = prefix == CSUM_PREFIX;
      if (k.size() >= 8 && nids.count(nid) && !(csum && k.size() != 12)) {
        if (csum) {
          mim::CsumGroup g;
          if (decode_csum_group(it->value(), csum_order, &g) < 0) {
            // Not repaired: dropping it would make rot read unverified.
            out << "the checksums of " << nids[nid] << " group "
                << csum_key_group(k) << " do not decode; ";
            ++errors;
          }
        }
        continue;
      }
      out << prefix << " key of nid " << nid << " without a record; ";
      if (repair) {
        t->rmkey(prefix, k);
      } else {
        ++errors;
      }
    }
    if (it->status() < 0) {
      return it->status();
    }
  }
  if (repair) {
    int r = db->submit_transaction_sync(t);
    if (r < 0) {
      return r;
    }
  }
  return errors;
}

int OmapStore::remove_all()
{
  KeyValueDB::Transaction t = db->get_transaction();
  for (auto& p : ALL_PREFIXES) {
    t->rmkeys_by_prefix(p);
  }
  int r = db->submit_transaction_sync(t);
  if (r == 0) {
    mim::MutexLock l(nid_lock);
    nid_last = nid_max = 0;
  }
  return r;
}

}  // namespace mimstore
