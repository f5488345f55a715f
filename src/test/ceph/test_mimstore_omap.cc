// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's omap layer (OmapStore) on a real RocksDB, and the object key
 * it files records under (ObjectKey).
 */
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "global/global_context.h"
#include "kv/KeyValueDB.h"

#include "ObjectKey.h"
#include "OmapStore.h"
#include "mimstore_test_util.h"

using ceph::bufferlist;
using mimstore::OmapStore;
using mimstore::object_key;
using std::map;
using std::set;
using std::string;

namespace {

ghobject_t obj(const string& name, uint32_t hash = 7, int64_t pool = 1)
{
  return ghobject_t(hobject_t(object_t(name), "", CEPH_NOSNAP, hash, pool,
                              ""));
}

SequencerPosition at(uint64_t seq, uint32_t op = 0)
{
  return SequencerPosition(seq, 0, op);
}

bufferlist bl(const string& s)
{
  bufferlist b;
  b.append(s);
  return b;
}

map<string, bufferlist> kv(std::initializer_list<std::pair<string, string>> l)
{
  map<string, bufferlist> m;
  for (auto& [k, v] : l) {
    m[k] = bl(v);
  }
  return m;
}

map<string, string> strs(const map<string, bufferlist>& m)
{
  map<string, string> out;
  for (auto& [k, v] : m) {
    out[k] = v.to_str();
  }
  return out;
}

class MIMStoreOmap : public ::testing::Test {
 protected:
  mimtest::StoreDir d;
  std::unique_ptr<KeyValueDB> db;
  std::unique_ptr<OmapStore> om;

  void SetUp() override { open(true); }

  void open(bool create)
  {
    om.reset();
    db.reset(KeyValueDB::create(g_ceph_context, "rocksdb", d.root + "/omdb"));
    ASSERT_TRUE(db);
    ASSERT_EQ(0, OmapStore::register_merge_operators(db.get()));
    std::stringstream err;
    ASSERT_EQ(0, create ? db->create_and_open(err) : db->open(err))
      << err.str();
    om = std::make_unique<OmapStore>(g_ceph_context, db.get());
    ASSERT_EQ(0, om->init());
  }

  map<string, string> keys(const ghobject_t& o)
  {
    map<string, bufferlist> m;
    EXPECT_EQ(0, om->get(o, nullptr, &m));
    return strs(m);
  }

  map<string, string> xattrs(const ghobject_t& o)
  {
    map<string, bufferlist> m;
    EXPECT_EQ(0, om->get_all_xattrs(o, &m));
    return strs(m);
  }

  string header(const ghobject_t& o)
  {
    bufferlist h;
    EXPECT_EQ(0, om->get_header(o, &h));
    return h.to_str();
  }

  int check()
  {
    std::ostringstream ss;
    int r = om->check(ss, false);
    EXPECT_EQ(0, r) << ss.str();
    return r;
  }
};

}  // namespace

TEST_F(MIMStoreOmap, KeysHeaderAndXattrsPerObject)
{
  auto a = obj("a"), b = obj("b");
  EXPECT_TRUE(keys(a).empty());  // no record: empty, not an error
  ASSERT_EQ(0, om->set_keys(a, kv({{"k1", "v1"}, {"k2", "v2"}}), nullptr));
  ASSERT_EQ(0, om->set_header(a, bl("H"), nullptr));
  ASSERT_EQ(0, om->set_xattrs(a, kv({{"_", "oi"}, {"snapset", "s"}}),
                              nullptr));
  ASSERT_EQ(0, om->set_keys(b, kv({{"k1", "other"}}), nullptr));
  EXPECT_EQ((map<string, string>{{"k1", "v1"}, {"k2", "v2"}}), keys(a));
  EXPECT_EQ((map<string, string>{{"k1", "other"}}), keys(b));
  EXPECT_EQ("H", header(a));
  EXPECT_EQ("", header(b));
  EXPECT_EQ((map<string, string>{{"_", "oi"}, {"snapset", "s"}}), xattrs(a));

  map<string, bufferlist> got;
  ASSERT_EQ(0, om->get_values(a, {"k2", "nope"}, &got));
  EXPECT_EQ((map<string, string>{{"k2", "v2"}}), strs(got));
  set<string> present;
  ASSERT_EQ(0, om->check_keys(a, {"k1", "nope"}, &present));
  EXPECT_EQ((set<string>{"k1"}), present);
  got.clear();
  ASSERT_EQ(0, om->get_xattrs(a, {"snapset", "nope"}, &got));
  EXPECT_EQ((map<string, string>{{"snapset", "s"}}), strs(got));

  ASSERT_EQ(0, om->rm_keys(a, {"k1"}, nullptr));
  ASSERT_EQ(0, om->remove_xattrs(a, {"_"}, nullptr));
  EXPECT_EQ((map<string, string>{{"k2", "v2"}}), keys(a));
  EXPECT_EQ((map<string, string>{{"snapset", "s"}}), xattrs(a));
  EXPECT_EQ(-ENOENT, om->rm_keys(obj("none"), {"k"}, nullptr));

  // A clear of keys and header leaves the xattrs; a clear, nothing.
  ASSERT_EQ(0, om->clear_keys_header(a, nullptr));
  EXPECT_TRUE(keys(a).empty());
  EXPECT_EQ("", header(a));
  EXPECT_EQ((map<string, string>{{"snapset", "s"}}), xattrs(a));
  ASSERT_EQ(0, om->remove_all_xattrs(a, nullptr));
  EXPECT_TRUE(xattrs(a).empty());
  ASSERT_EQ(0, om->set_keys(a, kv({{"k3", "v3"}}), nullptr));
  ASSERT_EQ(0, om->clear(a, nullptr));
  EXPECT_TRUE(keys(a).empty());
  EXPECT_EQ(-ENOENT, om->clear(a, nullptr));
  std::vector<ghobject_t> ls;
  ASSERT_EQ(0, om->list_objects(&ls));
  EXPECT_EQ(std::vector<ghobject_t>{b}, ls);
  EXPECT_EQ((map<string, string>{{"k1", "other"}}), keys(b));
  check();
}

TEST_F(MIMStoreOmap, KeyRangeIsHalfOpen)
{
  auto a = obj("a");
  ASSERT_EQ(0, om->set_keys(a, kv({{"a", "1"}, {"b", "2"}, {"c", "3"},
                                   {"d", "4"}}), nullptr));
  ASSERT_EQ(0, om->rm_key_range(a, "b", "d", nullptr));
  EXPECT_EQ((map<string, string>{{"a", "1"}, {"d", "4"}}), keys(a));
  ASSERT_EQ(0, om->rm_key_range(a, "z", "a", nullptr));  // empty range
  EXPECT_EQ(2u, keys(a).size());
}

// FileStore's replay rule, as DBObjectMap kept it: an op at or before the
// record's stamp is skipped; stamps come from guards (sync) and clones,
// and never go back.
TEST_F(MIMStoreOmap, StampSkipsReplayedOpsAndNeverGoesBack)
{
  auto a = obj("a");
  auto p5 = at(5), p7 = at(7), p6 = at(6), p8 = at(8);
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at5"}}), &p5));
  // A plain write does not stamp: an older replayed op still applies.
  auto p4 = at(4);
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at4"}}), &p4));
  ASSERT_EQ(0, om->sync(a, p7));
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at6"}}), &p6));
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at7"}}), &p7));
  EXPECT_EQ("at4", keys(a)["k"]);  // both skipped
  ASSERT_EQ(0, om->sync(a, p6));   // a replayed older guard
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at7b"}}), &p7));
  EXPECT_EQ("at4", keys(a)["k"]);  // still stamped at 7
  ASSERT_EQ(0, om->rm_keys(a, {"k"}, &p6));
  ASSERT_EQ(0, om->clear(a, &p7));
  EXPECT_EQ("at4", keys(a)["k"]);
  // A clear of keys and header keeps the stamp.
  ASSERT_EQ(0, om->clear_keys_header(a, &p8));
  EXPECT_TRUE(keys(a).empty());
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "at7c"}}), &p7));
  EXPECT_TRUE(keys(a).empty());
  // Without a position (not replay), an op always applies.
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "now"}}), nullptr));
  EXPECT_EQ("now", keys(a)["k"]);
  // sync on an object without a record stamps nothing (and makes none).
  ASSERT_EQ(0, om->sync(obj("none"), p8));
  std::vector<ghobject_t> ls;
  ASSERT_EQ(0, om->list_objects(&ls));
  EXPECT_EQ(1u, ls.size());
}

TEST_F(MIMStoreOmap, CloneCopiesAllAndStampsTheDestination)
{
  auto a = obj("a"), b = obj("b"), none = obj("none");
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "v"}}), nullptr));
  ASSERT_EQ(0, om->set_header(a, bl("H"), nullptr));
  ASSERT_EQ(0, om->set_xattrs(a, kv({{"_", "oi"}}), nullptr));
  ASSERT_EQ(0, om->set_keys(b, kv({{"old", "x"}}), nullptr));
  auto p10 = at(10), p9 = at(9), p11 = at(11);
  ASSERT_EQ(0, om->clone(a, b, &p10));
  EXPECT_EQ((map<string, string>{{"k", "v"}}), keys(b));
  EXPECT_EQ("H", header(b));
  EXPECT_EQ((map<string, string>{{"_", "oi"}}), xattrs(b));
  // Copies, not shares: the source changes alone.
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "changed"}}), nullptr));
  EXPECT_EQ("v", keys(b)["k"]);
  // The destination is stamped: a replayed op before the clone is skipped,
  // and so is the clone itself replayed.
  ASSERT_EQ(0, om->set_keys(b, kv({{"k", "at9"}}), &p9));
  ASSERT_EQ(0, om->clone(a, b, &p10));
  EXPECT_EQ("v", keys(b)["k"]);
  // Without a position (not replay) onto an existing destination: its
  // record is made again, with the copy under it.
  auto c = obj("c");
  ASSERT_EQ(0, om->set_keys(c, kv({{"mine", "x"}}), nullptr));
  ASSERT_EQ(0, om->clone(a, c, nullptr));
  EXPECT_EQ((map<string, string>{{"k", "changed"}}), keys(c));
  EXPECT_EQ((map<string, string>{{"_", "oi"}}), xattrs(c));
  // A clone from an object without omap leaves the destination without.
  ASSERT_EQ(0, om->clone(none, b, &p11));
  EXPECT_TRUE(keys(b).empty());
  EXPECT_TRUE(xattrs(b).empty());
  check();
}

TEST_F(MIMStoreOmap, IterateFromABoundAndStop)
{
  auto a = obj("a");
  ASSERT_EQ(0, om->set_keys(a, kv({{"a", "1"}, {"b", "2"}, {"c", "3"}}),
                            nullptr));
  ASSERT_EQ(0, om->set_keys(obj("b"), kv({{"a", "other"}}), nullptr));
  auto collect = [&](const string& start, bool after, size_t stop_at) {
    std::vector<string> seen;
    int r = om->iterate(a, start, after, [&](std::string_view k,
                                             std::string_view v) {
      seen.push_back(string(k) + "=" + string(v));
      return seen.size() == stop_at ? OmapStore::Visit::STOP
                                    : OmapStore::Visit::NEXT;
    });
    return std::make_pair(r, seen);
  };
  EXPECT_EQ(std::make_pair(0, std::vector<string>{"a=1", "b=2", "c=3"}),
            collect("", false, 0));
  EXPECT_EQ(std::make_pair(0, std::vector<string>{"b=2", "c=3"}),
            collect("b", false, 0));
  EXPECT_EQ(std::make_pair(0, std::vector<string>{"c=3"}),
            collect("b", true, 0));
  EXPECT_EQ(std::make_pair(1, std::vector<string>{"a=1", "b=2"}),
            collect("", false, 2));
  // An object without omap: nothing, and 0 (the OSD aborts on < 0).
  int calls = 0;
  EXPECT_EQ(0, om->iterate(obj("none"), "", false,
                           [&](std::string_view, std::string_view) {
                             ++calls;
                             return OmapStore::Visit::NEXT;
                           }));
  EXPECT_EQ(0, calls);

  // The cursor (Reef's get_omap_iterator) sees one snapshot.
  auto c = om->cursor(a);
  ASSERT_EQ(0, c->seek_to_first());
  ASSERT_EQ(0, om->set_keys(a, kv({{"aa", "new"}}), nullptr));
  std::vector<string> seen;
  for (; c->valid(); c->next()) {
    seen.push_back(c->key() + "=" + c->value().to_str());
  }
  EXPECT_EQ((std::vector<string>{"a=1", "b=2", "c=3"}), seen);
  EXPECT_EQ(0, c->status());
  auto n = om->cursor(obj("none"));
  ASSERT_EQ(0, n->seek_to_first());
  EXPECT_FALSE(n->valid());
}

TEST_F(MIMStoreOmap, NidsSurviveAReopen)
{
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(0, om->set_keys(obj("a" + std::to_string(i)),
                              kv({{"k", std::to_string(i)}}), nullptr));
  }
  ASSERT_EQ(0, om->sync());
  open(false);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(0, om->set_keys(obj("b" + std::to_string(i)),
                              kv({{"k", "b"}}), nullptr));
  }
  // A new object's nid never is an old one's: each keeps its own keys.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(std::to_string(i), keys(obj("a" + std::to_string(i)))["k"]);
  }
  check();
}

// Two writers' batches can reach RocksDB in either order, and a crash
// keeps a prefix: a record whose batch survived must never see its nid
// handed out again. The counter goes ahead of the nids in a batch of its
// own (here: the first record's batch is lost, the second's kept).
TEST_F(MIMStoreOmap, NidCounterIsDurableBeforeItsNids)
{
  std::map<string, bufferlist> none;
  uint64_t na = 0, nb = 0;
  KeyValueDB::Transaction ta = db->get_transaction();
  KeyValueDB::Transaction tb = db->get_transaction();
  ASSERT_EQ(0, om->import(ta, obj("a"), SequencerPosition(), nullptr, none,
                          &na));
  ASSERT_EQ(0, om->import(tb, obj("b"), SequencerPosition(), nullptr, none,
                          &nb));
  om->import_key(tb, nb, "k", bl("b's"));
  ASSERT_EQ(0, db->submit_transaction_sync(tb));  // ta never lands
  open(false);
  for (string o : {"c", "d", "e"}) {
    ASSERT_EQ(0, om->set_keys(obj(o), kv({{"k", o}}), nullptr));
  }
  EXPECT_EQ("b's", keys(obj("b"))["k"]);
  check();
}

TEST_F(MIMStoreOmap, CheckFindsAndRepairsKeysWithoutARecord)
{
  auto a = obj("a");
  ASSERT_EQ(0, om->set_keys(a, kv({{"k", "v"}}), nullptr));
  KeyValueDB::Transaction t = db->get_transaction();
  t->set(OmapStore::OMAP_PREFIX, mimstore::nid_key(999) + "stray", bl("x"));
  ASSERT_EQ(0, db->submit_transaction_sync(t));
  std::ostringstream ss;
  EXPECT_EQ(1, om->check(ss, false));
  EXPECT_NE(string::npos, ss.str().find("without a record")) << ss.str();
  std::ostringstream rs;
  EXPECT_EQ(0, om->check(rs, true));
  check();
  EXPECT_EQ("v", keys(a)["k"]);
}

TEST_F(MIMStoreOmap, RemoveAllLeavesOtherPrefixes)
{
  ASSERT_EQ(0, om->set_keys(obj("a"), kv({{"k", "v"}}), nullptr));
  KeyValueDB::Transaction t = db->get_transaction();
  t->set("MIM_WB", "rec", bl("x"));
  ASSERT_EQ(0, db->submit_transaction_sync(t));
  ASSERT_EQ(0, om->remove_all());
  std::vector<ghobject_t> ls;
  ASSERT_EQ(0, om->list_objects(&ls));
  EXPECT_TRUE(ls.empty());
  bufferlist got;
  EXPECT_EQ(0, db->get("MIM_WB", "rec", &got));
}

// ---- data checksums (MIM_C)

namespace {

using mim::ChunkState;
using mim::CsumGroup;

CsumGroup group_with(std::initializer_list<std::tuple<unsigned, ChunkState,
                                                       uint32_t>> l)
{
  CsumGroup g;
  for (auto& [i, s, c] : l) {
    g.set(i, s, c);
  }
  return g;
}

map<uint32_t, CsumGroup> csums(OmapStore& om, const ghobject_t& o)
{
  map<uint32_t, CsumGroup> m;
  EXPECT_EQ(0, om.csum_get(o, 0, UINT32_MAX, &m));
  return m;
}

}  // namespace

// Patches merge blind, across batches and a reopen (the operator must be
// registered again), and never reach another object.
TEST_F(MIMStoreOmap, ChecksumPatchesMerge)
{
  auto a = obj("a"), b = obj("b");
  EXPECT_TRUE(csums(*om, a).empty());  // no record: nothing, not an error
  ASSERT_EQ(0, om->csum_update(a, {{0, group_with({{0, ChunkState::CRC, 10},
                                                    {1, ChunkState::CRC, 11}})},
                                   {3, group_with({{15, ChunkState::ZERO, 0}})}}));
  ASSERT_EQ(0, om->csum_update(a, {{0, group_with({{1, ChunkState::BAD, 0},
                                                    {2, ChunkState::CRC, 12}})}}));
  ASSERT_EQ(0, om->csum_update(b, {{0, group_with({{0, ChunkState::CRC, 99}})}}));
  auto check_a = [&]() {
    auto m = csums(*om, a);
    ASSERT_EQ(2u, m.size());
    EXPECT_EQ(group_with({{0, ChunkState::CRC, 10}, {1, ChunkState::BAD, 0},
                          {2, ChunkState::CRC, 12}}), m[0]);
    EXPECT_EQ(group_with({{15, ChunkState::ZERO, 0}}), m[3]);
  };
  check_a();
  ASSERT_EQ(0, om->sync());
  open(false);
  check_a();
  EXPECT_EQ(99u, csums(*om, b)[0].crc(0));
  // A range read returns only the groups asked for.
  map<uint32_t, CsumGroup> m;
  ASSERT_EQ(0, om->csum_get(a, 1, 3, &m));
  EXPECT_EQ(1u, m.size());
  EXPECT_EQ(1u, m.count(3));
  check();
}

// A truncate drops whole groups past the end and patches the boundary one
// in the same batch; a group dropped and patched starts afresh.
TEST_F(MIMStoreOmap, ChecksumDropFromAGroup)
{
  auto a = obj("a");
  for (uint32_t g = 0; g < 4; ++g) {
    ASSERT_EQ(0, om->csum_update(a, {{g, group_with({{0, ChunkState::CRC, g},
                                                      {5, ChunkState::CRC, 7}})}}));
  }
  ASSERT_EQ(0, om->csum_update(a, {{1, group_with({{6, ChunkState::ZERO, 0}})},
                                   {2, group_with({{1, ChunkState::CRC, 5}})}},
                               2));
  auto m = csums(*om, a);
  ASSERT_EQ(3u, m.size());
  EXPECT_EQ(group_with({{0, ChunkState::CRC, 1}, {5, ChunkState::CRC, 7},
                        {6, ChunkState::ZERO, 0}}), m[1]);
  EXPECT_EQ(group_with({{1, ChunkState::CRC, 5}}), m[2]);
  EXPECT_EQ(0u, m.count(3));
}

// Checksums follow the object as its xattrs do: a clone copies them (so
// rot copied by a reflink is still caught), a remove drops them, an omap
// clear or an rmattrs keeps them.
TEST_F(MIMStoreOmap, ChecksumsFollowTheObject)
{
  auto a = obj("a"), c = obj("c");
  auto g0 = group_with({{2, ChunkState::CRC, 42}});
  ASSERT_EQ(0, om->csum_update(a, {{0, g0}}));
  ASSERT_EQ(0, om->set_xattrs(a, kv({{"_", "oi"}}), nullptr));
  ASSERT_EQ(0, om->csum_update(c, {{7, g0}}));
  SequencerPosition five = at(5);
  ASSERT_EQ(0, om->clone(a, c, &five));
  auto m = csums(*om, c);
  ASSERT_EQ(1u, m.size());  // the destination's own groups are gone
  EXPECT_EQ(g0, m[0]);
  ASSERT_EQ(0, om->clear_keys_header(a, nullptr));
  ASSERT_EQ(0, om->remove_all_xattrs(a, nullptr));
  EXPECT_EQ(g0, csums(*om, a)[0]);
  ASSERT_EQ(0, om->clear(a, nullptr));
  EXPECT_TRUE(csums(*om, a).empty());
  // A checksum change takes no stamp: a stamp later than the data change
  // must not skip it (the data change was applied).
  ASSERT_EQ(0, om->sync(c, at(100)));
  ASSERT_EQ(0, om->csum_update(c, {{0, group_with({{2, ChunkState::BAD, 0}})}}));
  EXPECT_EQ(ChunkState::BAD, csums(*om, c)[0].state(2));
  check();
  // remove_all takes the checksums too.
  ASSERT_EQ(0, om->remove_all());
  KeyValueDB::Iterator it = db->get_iterator(OmapStore::CSUM_PREFIX);
  it->seek_to_first();
  EXPECT_FALSE(it->valid());
}

// A group that does not decode reads as all bad and fails check (repair
// leaves it: deleting it would let rot read unverified); a group of no
// record is an orphan, as any key is.
TEST_F(MIMStoreOmap, ChecksumGroupThatDoesNotDecode)
{
  auto a = obj("a");
  ASSERT_EQ(0, om->csum_update(a, {{0, group_with({{0, ChunkState::CRC, 1}})}}));
  auto m = csums(*om, a);
  ASSERT_EQ(1u, m.size());
  uint64_t nid = 0;
  {
    KeyValueDB::Iterator it = db->get_iterator(OmapStore::CSUM_PREFIX);
    it->seek_to_first();
    ASSERT_TRUE(it->valid());
    string k = it->key();
    for (int i = 0; i < 8; ++i) {
      nid = (nid << 8) | uint8_t(k[i]);
    }
  }
  KeyValueDB::Transaction t = db->get_transaction();
  t->set(OmapStore::CSUM_PREFIX, mimstore::csum_key(nid, 1), bl("junk"));
  t->set(OmapStore::CSUM_PREFIX, mimstore::csum_key(nid + 500, 0),
         bl(group_with({{0, ChunkState::ZERO, 0}}).encode(12)));
  ASSERT_EQ(0, db->submit_transaction_sync(t));
  // A merge into it keeps it undecodable.
  ASSERT_EQ(0, om->csum_update(a, {{1, group_with({{3, ChunkState::CRC, 3}})}}));
  m = csums(*om, a);
  ASSERT_EQ(2u, m.size());
  for (unsigned i = 0; i < mim::CSUM_GROUP_CHUNKS; ++i) {
    EXPECT_EQ(ChunkState::BAD, m[1].state(i));
  }
  std::ostringstream ss;
  EXPECT_EQ(2, om->check(ss, false));
  EXPECT_NE(string::npos, ss.str().find("do not decode")) << ss.str();
  EXPECT_NE(string::npos, ss.str().find("without a record")) << ss.str();
  std::ostringstream rs;
  EXPECT_EQ(1, om->check(rs, true));  // the orphan goes, the junk stays
  std::ostringstream ss2;
  EXPECT_EQ(1, om->check(ss2, false));
}

// The record key sorts as ghobject_t does: random objects over every
// field, strings with the escaped bytes and bytes above 0x7f.
TEST(MIMStoreObjectKey, SortsAsGhobject)
{
  std::mt19937 rng(42);
  const string alphabet = string("!#$~\x7f\x80\xff" "abzAZ09_.<=>", 19) +
    string(1, '\0');
  auto rstr = [&](size_t max) {
    string s;
    size_t n = rng() % (max + 1);
    for (size_t i = 0; i < n; ++i) {
      s.push_back(alphabet[rng() % alphabet.size()]);
    }
    return s;
  };
  std::vector<ghobject_t> objs;
  for (int i = 0; i < 3000; ++i) {
    string name = rstr(3);
    string key;
    switch (rng() % 3) {
    case 0: break;
    case 1: key = name; break;
    default: key = rstr(3); break;
    }
    int64_t pools[] = {-3, -1, 0, 1, 2, hobject_t::POOL_META,
                       std::numeric_limits<int64_t>::max()};
    uint64_t snaps[] = {0, 1, 5, CEPH_NOSNAP, CEPH_SNAPDIR};
    uint32_t hash = (rng() % 4 == 0) ? 0xffffffff : rng() % 8;
    ghobject_t o(hobject_t(object_t(name), key, snapid_t(snaps[rng() % 5]),
                           hash, pools[rng() % 7], rstr(2)),
                 rng() % 3 == 0 ? ghobject_t::NO_GEN : rng() % 3,
                 shard_id_t(static_cast<int8_t>(rng() % 4) - 1));
    objs.push_back(o);
  }
  std::vector<ghobject_t> by_cmp = objs, by_key = objs;
  std::sort(by_cmp.begin(), by_cmp.end());
  std::stable_sort(by_key.begin(), by_key.end(),
                   [](const ghobject_t& a, const ghobject_t& b) {
                     return object_key(a) < object_key(b);
                   });
  for (size_t i = 0; i < objs.size(); ++i) {
    ASSERT_EQ(object_key(by_cmp[i]), object_key(by_key[i]))
      << "at " << i << ": " << by_cmp[i] << " vs " << by_key[i];
  }
  // Distinct objects, distinct keys (cmp's equals aside).
  for (size_t i = 1; i < by_cmp.size(); ++i) {
    if (by_cmp[i - 1] < by_cmp[i]) {
      ASSERT_NE(object_key(by_cmp[i - 1]), object_key(by_cmp[i]))
        << by_cmp[i - 1] << " and " << by_cmp[i];
    }
  }
}
