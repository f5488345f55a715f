// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore unit tests for two store units, without a mounted store:
 * ObjectName (the file name of an object: every ghobject_t field round
 * trips through it, special bytes are escaped, names above
 * LONG_NAME_THRESHOLD take the long form L_<hash>_<sha1>, garbage does not
 * decode, and a seeded random check that distinct objects never share a
 * file name) and ObjectFiles (the object files on the data filesystem, on
 * a real scratch directory through the POSIX IoEnv: mkfs/open/close,
 * collections and their bits, creating, listing and decoding objects
 * including long-named ones, data ops, the fd cache, move/link/unlink,
 * replay guards of objects and collections, and tombstones), and
 * WrittenBackRecords (on a real RocksDB: what a sync records, what replay
 * may skip, what the checkpoint and the next mount delete).
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "common/ceph_crypto.h"
#include "global/global_context.h"

#include "kv/KeyValueDB.h"

#include "ObjectFiles.h"
#include "ObjectName.h"
#include "WrittenBack.h"
#include "core/fault_io_env.h"
#include "core/io_env.h"
#include "mimstore_test_util.h"

using namespace std::string_literals;
using ceph::bufferlist;
using mimstore::ObjectFDRef;
using mimstore::ObjectFiles;
using mimstore::OpenMode;
using mimstore::GuardState;
using mimstore::LONG_NAME_THRESHOLD;
using mimstore::decode_object_name;
using mimstore::encode_object_name;
using mimstore::is_long_file_name;
using mimstore::long_name_xattr;
using mimstore::object_file_name;

namespace {

// Copies of hobject.h's in-class constants: those have no out-of-line
// definition, so they must not be bound to references (gtest's macros do).
constexpr gen_t NO_GEN = ghobject_t::NO_GEN;
constexpr int64_t META_POOL = hobject_t::POOL_META;
constexpr int64_t POOL_MIN = std::numeric_limits<int64_t>::min();
constexpr int64_t POOL_MAX = std::numeric_limits<int64_t>::max();

ghobject_t make_obj(const std::string& name, const std::string& key = "",
                    uint64_t snap = CEPH_NOSNAP, uint32_t hash = 7,
                    int64_t pool = 1, const std::string& nspace = "",
                    gen_t gen = NO_GEN,
                    shard_id_t shard = shard_id_t::NO_SHARD)
{
  return ghobject_t(hobject_t(object_t(name), key, snapid_t(snap), hash, pool,
                              nspace),
                    gen, shard);
}

std::string hex8(uint32_t v)
{
  char buf[16];
  snprintf(buf, sizeof(buf), "%08X", v);
  return buf;
}

std::string sha1_hex(const std::string& s)
{
  ceph::crypto::SHA1 sha;
  sha.Update(reinterpret_cast<const unsigned char*>(s.data()), s.size());
  unsigned char digest[ceph::crypto::SHA1::digest_size];
  sha.Final(digest);
  std::string out;
  for (unsigned char c : digest) {
    char buf[4];
    snprintf(buf, sizeof(buf), "%02X", c);
    out += buf;
  }
  return out;
}

std::vector<std::string> split_fields(const std::string& s)
{
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find('_', start);
    if (p == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + 1;
  }
}

std::string join_fields(const std::vector<std::string>& f)
{
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (i) {
      out.push_back('_');
    }
    out += f[i];
  }
  return out;
}

/// Every field of `o` survives encode/decode, and the encoded name is a
/// valid file name component with exactly eight '_'-separated fields.
void check_round_trip(const ghobject_t& o)
{
  const std::string full = encode_object_name(o);
  SCOPED_TRACE("encoded name " + full);
  EXPECT_EQ(std::string::npos, full.find('/'));
  EXPECT_EQ(std::string::npos, full.find('\0'));
  EXPECT_EQ(8u, split_fields(full).size());
  EXPECT_FALSE(is_long_file_name(full));
  ghobject_t back;
  ASSERT_TRUE(decode_object_name(full, &back));
  EXPECT_EQ(o, back);
  // field by field too, so a failure names the field
  EXPECT_EQ(o.hobj.get_hash(), back.hobj.get_hash());
  EXPECT_EQ(o.hobj.pool, back.hobj.pool);
  EXPECT_EQ(uint64_t(o.hobj.snap), uint64_t(back.hobj.snap));
  EXPECT_EQ(o.generation, back.generation);
  EXPECT_EQ(int(o.shard_id.id), int(back.shard_id.id));
  EXPECT_EQ(o.hobj.nspace, back.hobj.nspace);
  EXPECT_EQ(o.hobj.get_key(), back.hobj.get_key());
  EXPECT_EQ(o.hobj.oid.name, back.hobj.oid.name);
  EXPECT_FALSE(back.is_max());
}

}  // namespace

// ---------------------------------------------------------------------------
// ObjectName

TEST(MIMStoreObjectName, FormatIsTheDocumentedGrammar)
{
  // <hash:8 hex>_<pool:dec>_<snap:16 hex>_<gen:16 hex>_<shard:dec>_<nspace>_
  // <key>_<name>
  ghobject_t o = make_obj("obj", "k", CEPH_NOSNAP, 0xABCD, 3, "ns", NO_GEN,
                          shard_id_t::NO_SHARD);
  EXPECT_EQ("0000ABCD_3_FFFFFFFFFFFFFFFE_FFFFFFFFFFFFFFFF_-1_ns_k_obj",
            encode_object_name(o));
  ghobject_t p = make_obj("a_b/c%", "", 0x2A, 0xDEADBEEF, -1, "", 5,
                          shard_id_t(2));
  EXPECT_EQ("DEADBEEF_-1_000000000000002A_0000000000000005_2___a%5Fb%2Fc%25",
            encode_object_name(p));
  // a short name is its own file name
  EXPECT_EQ(encode_object_name(o), object_file_name(o));
}

TEST(MIMStoreObjectName, RoundTripsEveryField)
{
  for (uint32_t hash : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xDEADBEEFu,
                        0xFFFFFFFFu}) {
    check_round_trip(make_obj("h", "", CEPH_NOSNAP, hash));
  }
  hobject_t base(object_t("p"), "", CEPH_NOSNAP, 9, 5, "");
  for (int64_t pool : {int64_t(0), int64_t(1), int64_t(12345), META_POOL,
                       hobject_t::get_temp_pool(0),
                       hobject_t::get_temp_pool(7), int64_t(-1000),
                       POOL_MIN, POOL_MAX}) {
    check_round_trip(make_obj("p", "", CEPH_NOSNAP, 9, pool));
  }
  // the temp object of a PG, as the OSD makes it
  ghobject_t temp(base.make_temp_hobject("temp_recovering_1.0_42"));
  EXPECT_TRUE(temp.hobj.is_temp());
  check_round_trip(temp);
  for (uint64_t snap : {uint64_t(0), uint64_t(1), uint64_t(42),
                        uint64_t(CEPH_NOSNAP), uint64_t(CEPH_SNAPDIR),
                        uint64_t(CEPH_NOSNAP) - 1}) {
    check_round_trip(make_obj("s", "", snap));
  }
  for (gen_t gen : {gen_t(0), gen_t(1), gen_t(0x123456789ABCDEF0ull),
                    NO_GEN - 1, NO_GEN}) {
    check_round_trip(make_obj("g", "", CEPH_NOSNAP, 7, 1, "", gen));
  }
  for (int shard : {-128, -1, 0, 1, 2, 127}) {
    check_round_trip(make_obj("sh", "", CEPH_NOSNAP, 7, 1, "", NO_GEN,
                              shard_id_t(int8_t(shard))));
  }
  check_round_trip(make_obj("sh", "", CEPH_NOSNAP, 7, 1, "", 3,
                            shard_id_t::NO_SHARD));
  // strings: empty, separators, escapes, NUL, non-ASCII, every byte
  std::string every_byte;
  for (int c = 0; c < 256; ++c) {
    every_byte.push_back(char(c));
  }
  const std::vector<std::string> strings = {
    "", "x", "_", "__", "a_b_c", "/", "a/b", "%", "%41", "%%", "a\0b"s,
    "\0"s, ".", "..", "-", " ", "tab\there", "\xc3\xa9t\xc3\xa9",
    "\xe2\x82\xac", "\xff", "\x80" "abc", "L_", every_byte};
  for (auto& s : strings) {
    SCOPED_TRACE("string of " + std::to_string(s.size()) + " bytes");
    check_round_trip(make_obj(s));
    check_round_trip(make_obj("n", "", CEPH_NOSNAP, 7, 1, s));
    check_round_trip(make_obj("n", s));
    check_round_trip(make_obj(s, "key_" + s, CEPH_SNAPDIR, 0xFFFFFFFF, -3,
                              s, 0, shard_id_t(1)));
  }
  // a key equal to the name is no key (hobject_t clears it)
  ghobject_t same = make_obj("same", "same");
  EXPECT_EQ("", same.hobj.get_key());
  check_round_trip(same);
  // the PG meta object: empty name, a real pool
  check_round_trip(ghobject_t::make_pgmeta(4, 0x1234, shard_id_t(3)));
  check_round_trip(ghobject_t::make_pgmeta(4, 0x1234, shard_id_t::NO_SHARD));
}

TEST(MIMStoreObjectName, FieldsChangeTheName)
{
  // every field is part of the name: changing any one changes it
  const ghobject_t o = make_obj("n", "k", 5, 7, 1, "ns", 2, shard_id_t(1));
  const std::vector<ghobject_t> others = {
    make_obj("m", "k", 5, 7, 1, "ns", 2, shard_id_t(1)),
    make_obj("n", "j", 5, 7, 1, "ns", 2, shard_id_t(1)),
    make_obj("n", "", 5, 7, 1, "ns", 2, shard_id_t(1)),
    make_obj("n", "k", 6, 7, 1, "ns", 2, shard_id_t(1)),
    make_obj("n", "k", 5, 8, 1, "ns", 2, shard_id_t(1)),
    make_obj("n", "k", 5, 7, 2, "ns", 2, shard_id_t(1)),
    make_obj("n", "k", 5, 7, 1, "nt", 2, shard_id_t(1)),
    make_obj("n", "k", 5, 7, 1, "", 2, shard_id_t(1)),
    make_obj("n", "k", 5, 7, 1, "ns", 3, shard_id_t(1)),
    make_obj("n", "k", 5, 7, 1, "ns", 2, shard_id_t(2)),
    make_obj("n", "k", 5, 7, 1, "ns", 2, shard_id_t::NO_SHARD),
  };
  const std::string name = object_file_name(o);
  for (auto& other : others) {
    ASSERT_FALSE(other == o);
    EXPECT_NE(name, object_file_name(other)) << other;
  }
  // separators inside a field cannot shift the field boundaries
  EXPECT_NE(object_file_name(make_obj("b", "a")),
            object_file_name(make_obj("a_b")));
  EXPECT_NE(object_file_name(make_obj("b", "", CEPH_NOSNAP, 7, 1, "a")),
            object_file_name(make_obj("a_b")));
}

TEST(MIMStoreObjectName, LongNameThreshold)
{
  const uint32_t hash = 0x00C0FFEE;
  const size_t fixed =
    encode_object_name(make_obj("", "", CEPH_NOSNAP, hash)).size();
  ASSERT_LT(fixed + 2, LONG_NAME_THRESHOLD);

  // at the threshold: the full name, not the long form
  const std::string at(LONG_NAME_THRESHOLD - fixed, 'a');
  ghobject_t o_at = make_obj(at, "", CEPH_NOSNAP, hash);
  ASSERT_EQ(LONG_NAME_THRESHOLD, encode_object_name(o_at).size());
  EXPECT_EQ(encode_object_name(o_at), object_file_name(o_at));
  EXPECT_FALSE(is_long_file_name(object_file_name(o_at)));
  ghobject_t o_below = make_obj(at.substr(1), "", CEPH_NOSNAP, hash);
  EXPECT_EQ(encode_object_name(o_below), object_file_name(o_below));
  EXPECT_FALSE(is_long_file_name(object_file_name(o_below)));

  // one byte above: L_<hash:8 hex>_<sha1 of the full name:40 hex>
  ghobject_t o_over = make_obj(at + "a", "", CEPH_NOSNAP, hash);
  const std::string full = encode_object_name(o_over);
  ASSERT_EQ(LONG_NAME_THRESHOLD + 1, full.size());
  const std::string fname = object_file_name(o_over);
  EXPECT_TRUE(is_long_file_name(fname));
  EXPECT_EQ("L_" + hex8(hash) + "_" + sha1_hex(full), fname);
  EXPECT_EQ(2u + 8 + 1 + 40, fname.size());
  // the long form does not decode by itself; the full name still does
  ghobject_t back;
  EXPECT_FALSE(decode_object_name(fname, &back));
  ASSERT_TRUE(decode_object_name(full, &back));
  EXPECT_EQ(o_over, back);

  // the threshold applies to the escaped length: a name of '_' (three
  // bytes each when escaped) goes long far below 200 raw bytes
  const size_t n = (LONG_NAME_THRESHOLD - fixed) / 3;
  ghobject_t u_at = make_obj(std::string(n, '_'), "", CEPH_NOSNAP, hash);
  ghobject_t u_over = make_obj(std::string(n + 1, '_'), "", CEPH_NOSNAP,
                               hash);
  EXPECT_LE(encode_object_name(u_at).size(), LONG_NAME_THRESHOLD);
  EXPECT_FALSE(is_long_file_name(object_file_name(u_at)));
  EXPECT_GT(encode_object_name(u_over).size(), LONG_NAME_THRESHOLD);
  EXPECT_TRUE(is_long_file_name(object_file_name(u_over)));
  EXPECT_LT(u_over.hobj.oid.name.size(), LONG_NAME_THRESHOLD);
}

TEST(MIMStoreObjectName, LongNamesAndTheirXattrs)
{
  const std::string big(300, 'x');
  ghobject_t a = make_obj(big + "a", "", CEPH_NOSNAP, 0x11);
  ghobject_t b = make_obj(big + "b", "", CEPH_NOSNAP, 0x11);
  ghobject_t c = make_obj(big + "a", "", CEPH_NOSNAP, 0x12);
  ghobject_t d = make_obj(big + "a", "", CEPH_NOSNAP, 0x11, 1, "", 4);
  const std::string fa = object_file_name(a), fb = object_file_name(b),
                    fc = object_file_name(c), fd = object_file_name(d);
  for (auto* f : {&fa, &fb, &fc, &fd}) {
    EXPECT_TRUE(is_long_file_name(*f)) << *f;
  }
  // different objects, different file names, different name xattrs
  EXPECT_NE(fa, fb);
  EXPECT_NE(fa, fc);
  EXPECT_NE(fa, fd);
  EXPECT_NE(long_name_xattr(fa), long_name_xattr(fb));
  EXPECT_NE(long_name_xattr(fa), long_name_xattr(fc));
  EXPECT_NE(long_name_xattr(fa), long_name_xattr(fd));
  // the same object, the same names (deterministic)
  EXPECT_EQ(fa, object_file_name(make_obj(big + "a", "", CEPH_NOSNAP, 0x11)));
  // the xattr is a user xattr named by the name's sha1
  EXPECT_EQ("user.mim.name." + sha1_hex(encode_object_name(a)),
            long_name_xattr(fa));
  // the hash is in the long form (hash order of a listing is kept)
  EXPECT_EQ("L_00000011_", fa.substr(0, 11));
  EXPECT_EQ("L_00000012_", fc.substr(0, 11));
}

TEST(MIMStoreObjectName, IsLongFileName)
{
  EXPECT_FALSE(is_long_file_name(""));
  EXPECT_FALSE(is_long_file_name("L"));
  EXPECT_FALSE(is_long_file_name("L_"));
  EXPECT_TRUE(is_long_file_name("L_x"));
  EXPECT_FALSE(is_long_file_name("l_00000000_x"));
  EXPECT_FALSE(is_long_file_name("LL_00000000_x"));
  // full names start with hex digits, never with 'L'
  EXPECT_FALSE(is_long_file_name(encode_object_name(make_obj("L_"))));
  EXPECT_FALSE(is_long_file_name(encode_object_name(
    make_obj("x", "", CEPH_NOSNAP, 0xFFFFFFFF))));
}

TEST(MIMStoreObjectName, DecodeRejectsGarbage)
{
  const ghobject_t o = make_obj("obj", "", 5, 0xABCD, 3, "ns", 9,
                                shard_id_t(1));
  const std::vector<std::string> good = split_fields(encode_object_name(o));
  ASSERT_EQ(8u, good.size());
  ghobject_t back;
  // the control: the unmodified fields decode
  ASSERT_TRUE(decode_object_name(join_fields(good), &back));
  EXPECT_EQ(o, back);

  auto with = [&](size_t field, const std::string& v) {
    auto f = good;
    f[field] = v;
    return join_fields(f);
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
    // wrong field count
    {"empty", ""},
    {"one field", good[0]},
    {"seven fields",
     join_fields(std::vector<std::string>(good.begin(), good.end() - 1))},
    {"nine fields", join_fields(good) + "_x"},
    {"only separators", "_______"},
    // hash: 8 upper-case hex digits
    {"hash lower case", with(0, "0000abcd")},
    {"hash short", with(0, "ABCD")},
    {"hash long", with(0, "00000ABCD")},
    {"hash not hex", with(0, "0000ABCG")},
    {"hash empty", with(0, "")},
    // pool: canonical decimal
    {"pool empty", with(1, "")},
    {"pool leading zero", with(1, "03")},
    {"pool plus", with(1, "+3")},
    {"pool minus zero", with(1, "-0")},
    {"pool space", with(1, " 3")},
    {"pool trailing", with(1, "3x")},
    {"pool hex", with(1, "0x3")},
    {"pool overflow", with(1, "99999999999999999999")},
    // snap and generation: 16 upper-case hex digits
    {"snap short", with(2, "000000000000005")},
    {"snap long", with(2, "00000000000000005")},
    {"snap lower case", with(2, "00000000000000ff")},
    {"snap sign", with(2, "-000000000000005")},
    {"gen not hex", with(3, "000000000000000G")},
    {"gen empty", with(3, "")},
    // shard: canonical decimal in int8 range
    {"shard too big", with(4, "128")},
    {"shard too small", with(4, "-129")},
    {"shard leading zero", with(4, "01")},
    {"shard empty", with(4, "")},
    // escaped components
    {"nspace lone percent", with(5, "%")},
    {"nspace short escape", with(5, "n%4")},
    {"nspace bad escape", with(5, "%zz")},
    {"nspace lower-case escape", with(5, "%2f")},
    {"nspace escaped plain byte", with(5, "%41")},
    {"nspace raw space", with(5, "a b")},
    {"nspace raw high byte", with(5, "a\xff")},
    {"key raw percent sign at end", with(6, "k%")},
    {"name escaped plain byte", with(7, "%6Fbj")},
    {"name raw NUL", with(7, "o\0bj"s)},
    // hobject_t never has a key equal to its name
    {"key equals name", with(6, "obj")},
    // the long form names a file; only its xattr decodes
    {"long form",
     object_file_name(make_obj(std::string(300, 'x'), "", 5, 0xABCD))},
    {"long form prefix", "L_0000ABCD"},
  };
  for (auto& [what, name] : bad) {
    ASSERT_NE(join_fields(good), name) << what;
    EXPECT_FALSE(decode_object_name(name, &back)) << what << ": " << name;
  }
}

TEST(MIMStoreObjectName, RandomObjectsRoundTripAndNeverCollide)
{
  std::mt19937_64 rng(20240611);
  // few symbols, many of them special, so that near-collisions are common
  static const char SYMBOLS[] = {'a', 'b', 'A', '0', '9', '.', '-', '_', '/',
                                 '%', ' ', '\0', '\x80', '\xc3', '\xff'};
  auto random_string = [&](size_t max_len) {
    size_t len = rng() % (max_len + 1);
    std::string s;
    for (size_t i = 0; i < len; ++i) {
      s.push_back(SYMBOLS[rng() % sizeof(SYMBOLS)]);
    }
    return s;
  };
  auto pick = [&](auto... v) {
    using T = std::common_type_t<decltype(v)...>;
    const T values[] = {T(v)...};
    return values[rng() % sizeof...(v)];
  };

  const int N = 5000;
  std::map<std::string, ghobject_t> by_file_name;
  std::set<ghobject_t> distinct;
  int long_names = 0;
  for (int i = 0; i < N; ++i) {
    // names mostly short, some long enough (escaped) for the long form
    size_t max_len = pick(4, 4, 4, 12, 40, 120);
    std::string name = random_string(max_len);
    std::string key;
    switch (rng() % 4) {
    case 0:
      key = random_string(3);
      break;
    case 1:
      key = name;  // cleared by hobject_t
      break;
    default:
      break;
    }
    std::string nspace = rng() % 2 ? random_string(3) : "";
    uint32_t hash = rng() % 2 ? uint32_t(rng()) : pick(0u, 1u, 0xFFFFFFFFu);
    int64_t pool = rng() % 4 ? pick(int64_t(0), int64_t(1), META_POOL,
                                    hobject_t::get_temp_pool(1), POOL_MIN,
                                    POOL_MAX)
                             : int64_t(rng());
    uint64_t snap = rng() % 4 ? pick(uint64_t(0), uint64_t(1),
                                     uint64_t(CEPH_NOSNAP),
                                     uint64_t(CEPH_SNAPDIR))
                              : uint64_t(rng());
    gen_t gen = rng() % 4 ? pick(gen_t(0), gen_t(1), NO_GEN) : gen_t(rng());
    shard_id_t shard = rng() % 4 ? shard_id_t(int8_t(pick(-1, 0, 1, 127,
                                                          -128)))
                                 : shard_id_t(int8_t(rng()));
    ghobject_t o = make_obj(name, key, snap, hash, pool, nspace, gen, shard);

    const std::string full = encode_object_name(o);
    const std::string fname = object_file_name(o);
    ghobject_t back;
    ASSERT_TRUE(decode_object_name(full, &back)) << i << ": " << full;
    ASSERT_EQ(o, back) << i << ": " << full;
    ASSERT_EQ(full.size() > LONG_NAME_THRESHOLD, is_long_file_name(fname))
      << i << ": " << full;
    if (is_long_file_name(fname)) {
      ++long_names;
    } else {
      ASSERT_EQ(full, fname);
    }
    // one object, one file name; distinct objects, distinct file names
    auto [it, inserted] = by_file_name.emplace(fname, o);
    ASSERT_TRUE(inserted || it->second == o)
      << i << ": " << o << " and " << it->second << " share " << fname;
    distinct.insert(o);
  }
  EXPECT_EQ(distinct.size(), by_file_name.size());
  // the generator is not degenerate
  EXPECT_GT(distinct.size(), size_t(N / 2));
  EXPECT_GT(long_names, 0);
  EXPECT_LT(long_names, N);
}

// ---------------------------------------------------------------------------
// ObjectFiles

namespace {

const coll_t CID(spg_t(pg_t(0, 1)));
const coll_t CID2(spg_t(pg_t(1, 1)));
const coll_t CID_SHARD(spg_t(pg_t(2, 1), shard_id_t(1)));

bufferlist pattern(size_t len, char seed)
{
  std::string s(len, '\0');
  for (size_t i = 0; i < len; ++i) {
    s[i] = char(seed + i * 31 + i / 4096);
  }
  bufferlist bl;
  bl.append(s);
  return bl;
}

std::string basename_of(const std::string& path)
{
  return path.substr(path.rfind('/') + 1);
}

/// Ranges sorted, disjoint and inside [lo, hi).
bool well_formed(const std::map<uint64_t, uint64_t>& m, uint64_t lo,
                 uint64_t hi)
{
  uint64_t prev_end = lo;
  for (auto& [off, len] : m) {
    if (len == 0 || off < prev_end || off + len > hi) {
      return false;
    }
    prev_end = off + len;
  }
  return true;
}

/// The ranges of `m` (sorted, disjoint) cover [off, off+len).
bool covers(const std::map<uint64_t, uint64_t>& m, uint64_t off,
            uint64_t len)
{
  uint64_t pos = off;
  for (auto& [o, l] : m) {
    if (o <= pos && o + l > pos) {
      pos = o + l;
    }
  }
  return pos >= off + len;
}

}  // namespace

class MIMStoreObjectFiles : public ::testing::Test {
 protected:
  void SetUp() override
  {
    ASSERT_NO_FATAL_FAILURE(start(16));
  }

  /// (Re)make the ObjectFiles on the scratch directory with an fd cache of
  /// `fd_cache_size`, mkfs (idempotent) and open it.
  void start(uint32_t fd_cache_size)
  {
    files.reset();
    files = std::make_unique<ObjectFiles>(g_ceph_context, io.get(), dir.data,
                                          fd_cache_size);
    ASSERT_EQ(0, files->mkfs());
    ASSERT_EQ(0, files->open());
  }

  std::string coll_path(const coll_t& c) const
  {
    return files->coll_dir(c.to_str());
  }

  std::string path_of(const coll_t& c, const ghobject_t& o) const
  {
    return files->object_path(c.to_str(), object_file_name(o));
  }

  std::set<ghobject_t> list(const coll_t& c,
                            std::vector<std::string>* bad = nullptr)
  {
    std::set<ghobject_t> out;
    EXPECT_EQ(0, files->list_objects(c, &out, bad));
    return out;
  }

  std::set<coll_t> collections()
  {
    std::vector<coll_t> v;
    EXPECT_EQ(0, files->list_collections(&v));
    return std::set<coll_t>(v.begin(), v.end());
  }

  std::string read_all(const ObjectFDRef& f)
  {
    uint64_t sz = 0;
    EXPECT_EQ(0, files->size(f, &sz));
    bufferlist bl;
    int r = files->read(f, 0, sz, &bl);
    EXPECT_EQ(int64_t(sz), int64_t(r));
    return bl.to_str();
  }

  /// A file in a collection directory, made behind ObjectFiles' back.
  void make_file(const std::string& path, const std::string& xattr = "",
                 const std::string& value = "")
  {
    int fd = -1;
    ASSERT_EQ(0, io->open(path, O_WRONLY | O_CREAT, 0644, &fd));
    if (!xattr.empty()) {
      ASSERT_EQ(0, io->fsetxattr(fd, xattr, value.data(), value.size(), 0));
    }
    ASSERT_EQ(0, io->close(fd));
  }

  // Destroyed in reverse order: the files before the IoEnv they use, the
  // directory last.
  mimtest::StoreDir dir;
  std::unique_ptr<mim::IoEnv> io = mim::make_posix_io_env();
  std::unique_ptr<ObjectFiles> files;
};

TEST_F(MIMStoreObjectFiles, MkfsOpenClose)
{
  mimtest::StoreDir d;
  ObjectFiles f(g_ceph_context, io.get(), d.data, 4);
  // not made yet
  EXPECT_EQ(-ENOENT, f.open());
  ASSERT_EQ(0, f.mkfs());
  struct stat st;
  ASSERT_EQ(0, io->stat(d.data + "/objects", &st));
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  // mkfs again is harmless
  EXPECT_EQ(0, f.mkfs());
  ASSERT_EQ(0, f.open());
  EXPECT_EQ(0, f.sync_all());
  ASSERT_EQ(0, f.create_collection(CID, 0));
  ObjectFDRef o;
  ASSERT_EQ(0, f.open_object(CID, make_obj("kept"), OpenMode::CREATE, &o));
  ASSERT_EQ(0, f.write(o, 0, pattern(100, 'k')));
  o.reset();
  f.close();
  f.close();  // twice is harmless
  // what was made survives a close and a reopen
  ASSERT_EQ(0, f.open());
  std::set<ghobject_t> objs;
  ASSERT_EQ(0, f.list_objects(CID, &objs, nullptr));
  EXPECT_EQ(std::set<ghobject_t>{make_obj("kept")}, objs);
  ASSERT_EQ(0, f.open_object(CID, make_obj("kept"), OpenMode::EXISTING, &o));
  uint64_t sz = 0;
  ASSERT_EQ(0, f.size(o, &sz));
  EXPECT_EQ(uint64_t(100), sz);
  o.reset();
  f.close();

  // a data directory that does not exist
  ObjectFiles missing(g_ceph_context, io.get(), d.root + "/nonexistent", 4);
  EXPECT_EQ(-ENOENT, missing.mkfs());
  EXPECT_EQ(-ENOENT, missing.open());
}

TEST_F(MIMStoreObjectFiles, Collections)
{
  EXPECT_TRUE(collections().empty());
  const coll_t temp = CID.get_temp();
  ASSERT_EQ(0, files->create_collection(CID, 3));
  ASSERT_EQ(0, files->create_collection(CID2, 0));
  ASSERT_EQ(0, files->create_collection(CID_SHARD, 1));
  ASSERT_EQ(0, files->create_collection(coll_t::meta(), 0));
  ASSERT_EQ(0, files->create_collection(temp, 0));
  // the caller judges -EEXIST; the existing bits stay
  EXPECT_EQ(-EEXIST, files->create_collection(CID, 5));
  // a directory that is no collection is ignored
  ASSERT_EQ(0, io->mkdir(files->coll_dir("lost+found"), 0755));
  EXPECT_EQ((std::set<coll_t>{CID, CID2, CID_SHARD, coll_t::meta(), temp}),
            collections());

  int bits = -1;
  ASSERT_EQ(0, files->get_collection_bits(CID, &bits));
  EXPECT_EQ(3, bits);
  ASSERT_EQ(0, files->get_collection_bits(CID2, &bits));
  EXPECT_EQ(0, bits);
  ASSERT_EQ(0, files->set_collection_bits(CID, 7));
  ASSERT_EQ(0, files->get_collection_bits(CID, &bits));
  EXPECT_EQ(7, bits);
  ASSERT_EQ(0, files->get_collection_bits(CID_SHARD, &bits));
  EXPECT_EQ(1, bits);
  const coll_t absent(spg_t(pg_t(9, 1)));
  EXPECT_EQ(-ENOENT, files->get_collection_bits(absent, &bits));
  EXPECT_EQ(-ENOENT, files->set_collection_bits(absent, 1));
  std::set<ghobject_t> objs;
  EXPECT_EQ(-ENOENT, files->list_objects(absent, &objs, nullptr));

  // not empty: refused
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, make_obj("o"), OpenMode::CREATE, &f));
  f.reset();
  EXPECT_EQ(-ENOTEMPTY, files->remove_collection(CID));
  EXPECT_EQ(1u, collections().count(CID));
  ASSERT_EQ(0, files->remove_object(CID, make_obj("o")));
  EXPECT_EQ(0, files->remove_collection(CID));
  EXPECT_EQ(0u, collections().count(CID));
  EXPECT_EQ(-ENOENT, files->get_collection_bits(CID, &bits));
  EXPECT_EQ(-ENOENT, files->remove_collection(CID));
  EXPECT_EQ(0, files->remove_collection(temp));
  EXPECT_EQ((std::set<coll_t>{CID2, CID_SHARD, coll_t::meta()}),
            collections());
}

TEST_F(MIMStoreObjectFiles, OpenCreateAndList)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t o = make_obj("a_b/c%\0d"s, "key", 4, 0x1234, 1, "ns", 2,
                                shard_id_t(1));
  const ghobject_t lo = make_obj(std::string(300, 'L') + "/\xff", "", 4,
                                 0x5678);
  ASSERT_TRUE(is_long_file_name(object_file_name(lo)));
  ObjectFDRef f, lf;
  // absent, and create=false does not make it
  EXPECT_EQ(-ENOENT, files->open_object(CID, o, OpenMode::EXISTING, &f));
  EXPECT_EQ(nullptr, f);
  EXPECT_EQ(-ENOENT, files->open_object(CID, lo, OpenMode::EXISTING, &lf));
  EXPECT_TRUE(list(CID).empty());

  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  ASSERT_NE(nullptr, f);
  EXPECT_EQ(path_of(CID, o), f->path);
  ASSERT_EQ(0, files->open_object(CID, lo, OpenMode::CREATE, &lf));
  ASSERT_NE(nullptr, lf);
  EXPECT_EQ(path_of(CID, lo), lf->path);
  // the long file carries its full name in its name xattr
  std::string stored;
  ASSERT_EQ(0, io->fgetxattr(lf->fd,
                             long_name_xattr(object_file_name(lo)), &stored));
  EXPECT_EQ(encode_object_name(lo), stored);

  std::vector<std::string> bad;
  EXPECT_EQ((std::set<ghobject_t>{o, lo}), list(CID, &bad));
  EXPECT_TRUE(bad.empty());

  // create=true on an existing object opens it, keeping its data
  ASSERT_EQ(0, files->write(f, 0, pattern(10, 'x')));
  f.reset();
  lf.reset();
  files->forget(path_of(CID, o));
  files->forget(path_of(CID, lo));
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  EXPECT_EQ(pattern(10, 'x').to_str(), read_all(f));
  ASSERT_EQ(0, files->open_object(CID, lo, OpenMode::EXISTING, &lf));
  EXPECT_EQ(path_of(CID, lo), lf->path);
  // open_by_name finds the same file by collection and file name
  ObjectFDRef byname;
  ASSERT_EQ(0, files->open_by_name(CID.to_str(), object_file_name(o),
                                   &byname));
  EXPECT_EQ(pattern(10, 'x').to_str(), read_all(byname));
  EXPECT_EQ(-ENOENT, files->open_by_name(CID.to_str(), "00000000_nothing",
                                         &byname));
}

TEST_F(MIMStoreObjectFiles, BornPosition)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const SequencerPosition born(0x123456789Aull, 3, 4);
  ObjectFDRef f, g;
  ASSERT_EQ(0, files->open_object(CID, make_obj("born"),
                                  OpenMode::CREATE, &f, &born));
  SequencerPosition got;
  ASSERT_EQ(0, files->get_born(f, &got));
  EXPECT_EQ(born, got);
  // only a file the call creates records it
  f.reset();
  files->forget(path_of(CID, make_obj("born")));
  const SequencerPosition later(0x123456789Bull, 0, 0);
  ASSERT_EQ(0, files->open_object(CID, make_obj("born"),
                                  OpenMode::CREATE, &f, &later));
  ASSERT_EQ(0, files->get_born(f, &got));
  EXPECT_EQ(born, got);
  // none recorded
  ASSERT_EQ(0, files->open_object(CID, make_obj("plain"),
                                  OpenMode::CREATE, &g));
  EXPECT_EQ(-ENODATA, files->get_born(g, &got));
  // a long-named object gets both its name and its position
  const ghobject_t lo = make_obj(std::string(250, 'b'));
  ObjectFDRef lf;
  ASSERT_EQ(0, files->open_object(CID, lo, OpenMode::CREATE, &lf, &born));
  ASSERT_EQ(0, files->get_born(lf, &got));
  EXPECT_EQ(born, got);
  EXPECT_EQ((std::set<ghobject_t>{make_obj("born"), make_obj("plain"), lo}),
            list(CID));
}

TEST_F(MIMStoreObjectFiles, ListObjectsSkipsStrayAndIncomplete)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t o = make_obj("real");
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  const std::string dir = coll_path(CID);
  // a file that is no object name
  const std::string stray = dir + "/garbage";
  ASSERT_NO_FATAL_FAILURE(make_file(stray));
  // a long file name whose xattr holds a name that is not long: decodes,
  // but is not the object's canonical file name
  const std::string sha0(40, '0');
  const std::string noncanon = dir + "/L_00000007_" + sha0;
  ASSERT_NO_FATAL_FAILURE(make_file(
    noncanon, long_name_xattr(basename_of(noncanon)),
    encode_object_name(make_obj("short"))));
  // a long file without its name xattr: a create that crashed
  const std::string incomplete = dir + "/L_00000007_" + std::string(40, 'A');
  ASSERT_NO_FATAL_FAILURE(make_file(incomplete));

  std::vector<std::string> bad;
  EXPECT_EQ(std::set<ghobject_t>{o}, list(CID, &bad));
  EXPECT_EQ((std::set<std::string>{stray, noncanon}),
            std::set<std::string>(bad.begin(), bad.end()));
  struct stat st;
  // the incomplete create is removed, the others are left for fsck
  EXPECT_EQ(-ENOENT, io->stat(incomplete, &st));
  EXPECT_EQ(0, io->stat(stray, &st));
  EXPECT_EQ(0, io->stat(noncanon, &st));
  // bad may be null
  std::set<ghobject_t> out;
  EXPECT_EQ(0, files->list_objects(CID, &out, nullptr));
  EXPECT_EQ(std::set<ghobject_t>{o}, out);
}

TEST_F(MIMStoreObjectFiles, WriteReadSizeTruncate)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, make_obj("data"), OpenMode::CREATE, &f));
  uint64_t sz = 1;
  ASSERT_EQ(0, files->size(f, &sz));
  EXPECT_EQ(uint64_t(0), sz);

  // a bufferlist of several buffers
  const std::string head = "hello ";
  const std::string body = pattern(5000, 'q').to_str();
  bufferlist bl;
  bl.push_back(ceph::bufferptr(head.data(), head.size()));
  bl.push_back(ceph::bufferptr(body.data(), body.size()));
  ASSERT_EQ(2u, bl.get_num_buffers());
  ASSERT_EQ(0, files->write(f, 100, bl));
  ASSERT_EQ(0, files->size(f, &sz));
  EXPECT_EQ(uint64_t(100 + head.size() + body.size()), sz);
  EXPECT_EQ(std::string(100, '\0') + head + body, read_all(f));

  bufferlist part;
  EXPECT_EQ(6, files->read(f, 100, 6, &part));
  EXPECT_EQ(head, part.to_str());
  // short at the end of the file, empty past it
  part.clear();
  EXPECT_EQ(3, files->read(f, sz - 3, 10, &part));
  EXPECT_EQ(body.substr(body.size() - 3), part.to_str());
  part.clear();
  EXPECT_EQ(0, files->read(f, sz, 10, &part));
  EXPECT_EQ(0u, part.length());
  EXPECT_EQ(0, files->read(f, 0, 0, &part));
  EXPECT_EQ(0u, part.length());
  char buf[5];
  EXPECT_EQ(5, files->read_into(f, 100, 5, buf));
  EXPECT_EQ("hello", std::string(buf, 5));

  // overwrite in the middle
  ASSERT_EQ(0, files->write(f, 102, pattern(3, 'Z')));
  part.clear();
  EXPECT_EQ(6, files->read(f, 100, 6, &part));
  EXPECT_EQ("he" + pattern(3, 'Z').to_str() + " ", part.to_str());

  // truncate down, then up (zeros)
  ASSERT_EQ(0, files->truncate(f, 103));
  ASSERT_EQ(0, files->size(f, &sz));
  EXPECT_EQ(uint64_t(103), sz);
  EXPECT_EQ(std::string(100, '\0') + "he" + pattern(1, 'Z').to_str(),
            read_all(f));
  ASSERT_EQ(0, files->truncate(f, 8192));
  ASSERT_EQ(0, files->size(f, &sz));
  EXPECT_EQ(uint64_t(8192), sz);
  std::string all = read_all(f);
  EXPECT_EQ(std::string(8192 - 103, '\0'), all.substr(103));
  ASSERT_EQ(0, files->truncate(f, 0));
  EXPECT_EQ("", read_all(f));

  // the data is in the file, not only behind this fd
  ASSERT_EQ(0, files->write(f, 0, pattern(4096, 'w')));
  f.reset();
  files->forget(path_of(CID, make_obj("data")));
  ASSERT_EQ(0, files->open_object(CID, make_obj("data"),
                                  OpenMode::EXISTING, &f));
  EXPECT_EQ(pattern(4096, 'w').to_str(), read_all(f));
}

TEST_F(MIMStoreObjectFiles, Zero)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, make_obj("z"), OpenMode::CREATE, &f));
  std::string want(16384, 'x');
  bufferlist bl;
  bl.append(want);
  ASSERT_EQ(0, files->write(f, 0, bl));

  // inside the file: zeros, size kept
  ASSERT_EQ(0, files->zero(f, 1000, 2000));
  want.replace(1000, 2000, 2000, '\0');
  EXPECT_EQ(want, read_all(f));
  // across the end: extends the file
  ASSERT_EQ(0, files->zero(f, 16000, 1000));
  want.replace(16000, 384, 384, '\0');
  want.append(616, '\0');
  EXPECT_EQ(want, read_all(f));
  // length zero: nothing, even past the end
  ASSERT_EQ(0, files->zero(f, 30000, 0));
  uint64_t sz = 0;
  ASSERT_EQ(0, files->size(f, &sz));
  EXPECT_EQ(uint64_t(17000), sz);
  // wholly past the end: extends with zeros
  ASSERT_EQ(0, files->zero(f, 20000, 100));
  want.append(3100, '\0');
  EXPECT_EQ(want, read_all(f));
}

TEST_F(MIMStoreObjectFiles, Fiemap)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, make_obj("sparse"),
                                  OpenMode::CREATE, &f));
  ASSERT_EQ(0, files->write(f, 0, pattern(4096, 'a')));
  ASSERT_EQ(0, files->write(f, 65536, pattern(4096, 'b')));
  ASSERT_EQ(0, io->fsync(f->fd));  // allocated, not delayed
  const uint64_t size = 65536 + 4096;

  std::map<uint64_t, uint64_t> m;
  ASSERT_EQ(0, files->fiemap(f, 0, 1 << 20, &m));
  EXPECT_TRUE(well_formed(m, 0, size));
  EXPECT_TRUE(covers(m, 0, 4096));
  EXPECT_TRUE(covers(m, 65536, 4096));
  if (::lseek(f->fd, 0, SEEK_HOLE) == 4096) {
    // the filesystem reports the hole: then exactly the two extents
    EXPECT_EQ((std::map<uint64_t, uint64_t>{{0, 4096}, {65536, 4096}}), m);
  }
  // clipped to the asked range and to the file
  m.clear();
  ASSERT_EQ(0, files->fiemap(f, 1000, 100, &m));
  EXPECT_EQ((std::map<uint64_t, uint64_t>{{1000, 100}}), m);
  m.clear();
  ASSERT_EQ(0, files->fiemap(f, 65536 + 100, 1 << 20, &m));
  EXPECT_EQ((std::map<uint64_t, uint64_t>{{65636, 3996}}), m);
  // past the end: nothing
  m.clear();
  ASSERT_EQ(0, files->fiemap(f, size, 4096, &m));
  EXPECT_TRUE(m.empty());
  // an empty file: nothing
  ObjectFDRef e;
  ASSERT_EQ(0, files->open_object(CID, make_obj("empty"),
                                  OpenMode::CREATE, &e));
  m.clear();
  ASSERT_EQ(0, files->fiemap(e, 0, 4096, &m));
  EXPECT_TRUE(m.empty());
}

TEST_F(MIMStoreObjectFiles, CloneAndCloneRange)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ObjectFDRef src, dst, dst2;
  ASSERT_EQ(0, files->open_object(CID, make_obj("src"),
                                  OpenMode::CREATE, &src));
  ASSERT_EQ(0, files->open_object(CID, make_obj("dst"),
                                  OpenMode::CREATE, &dst));
  ASSERT_EQ(0, files->open_object(CID, make_obj("dst2"),
                                  OpenMode::CREATE, &dst2));
  const std::string data = pattern(10000, 's').to_str();
  bufferlist bl;
  bl.append(data);
  ASSERT_EQ(0, files->write(src, 0, bl));
  ASSERT_EQ(0, files->write(dst, 0, pattern(20000, 'd')));

  // dst becomes a copy: the longer old data is gone
  ASSERT_EQ(0, files->clone(src, dst));
  EXPECT_EQ(data, read_all(dst));
  // the copy is independent of the source
  ASSERT_EQ(0, files->write(src, 0, pattern(10, 'n')));
  EXPECT_EQ(data, read_all(dst));

  // a range reaching past the source's end reads zeros there
  ASSERT_EQ(0, files->clone_range(dst, 5000, 8000, dst2, 100));
  EXPECT_EQ(std::string(100, '\0') + data.substr(5000) +
              std::string(3000, '\0'),
            read_all(dst2));
}

TEST_F(MIMStoreObjectFiles, FdCacheEviction)
{
  ASSERT_NO_FATAL_FAILURE(start(2));
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t a = make_obj("a"), b = make_obj("b"), c = make_obj("c");
  ObjectFDRef fa, fb, fc;
  ASSERT_EQ(0, files->open_object(CID, a, OpenMode::CREATE, &fa));
  ASSERT_EQ(0, files->write(fa, 0, pattern(100, 'a')));
  ASSERT_EQ(0, files->open_object(CID, b, OpenMode::CREATE, &fb));
  ASSERT_EQ(0, files->write(fb, 0, pattern(200, 'b')));
  ASSERT_EQ(0, files->open_object(CID, c, OpenMode::CREATE, &fc));
  ASSERT_EQ(0, files->write(fc, 0, pattern(300, 'c')));
  // cache, most recent first: c, b (a evicted)

  ObjectFDRef again;
  ASSERT_EQ(0, files->open_object(CID, c, OpenMode::EXISTING, &again));
  EXPECT_EQ(fc.get(), again.get()) << "c should still be cached";
  // cache: c, b

  ObjectFDRef fa2;
  ASSERT_EQ(0, files->open_object(CID, a, OpenMode::EXISTING, &fa2));
  EXPECT_NE(fa.get(), fa2.get()) << "a should have been evicted";
  EXPECT_EQ(pattern(100, 'a').to_str(), read_all(fa2));
  // an evicted fd stays usable while it is referenced
  EXPECT_EQ(pattern(100, 'a').to_str(), read_all(fa));
  // cache: a, c (b evicted)

  ObjectFDRef fb2;
  ASSERT_EQ(0, files->open_object(CID, b, OpenMode::EXISTING, &fb2));
  EXPECT_NE(fb.get(), fb2.get()) << "b should have been evicted";
  EXPECT_EQ(pattern(200, 'b').to_str(), read_all(fb2));
  // cache: b, a (c evicted)

  ASSERT_EQ(0, files->open_object(CID, a, OpenMode::EXISTING, &again));
  EXPECT_EQ(fa2.get(), again.get()) << "a should be cached";
  ASSERT_EQ(0, files->open_object(CID, c, OpenMode::EXISTING, &again));
  EXPECT_NE(fc.get(), again.get()) << "c should have been evicted";
  EXPECT_EQ(pattern(300, 'c').to_str(), read_all(again));
  EXPECT_EQ((std::set<ghobject_t>{a, b, c}), list(CID));
}

TEST_F(MIMStoreObjectFiles, ForgetDropsStaleFd)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t o = make_obj("gone");
  ObjectFDRef f;
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  ASSERT_EQ(0, files->write(f, 0, pattern(10, 'g')));
  const std::string path = f->path;
  ASSERT_EQ(path_of(CID, o), path);
  f.reset();  // only the cache holds it now
  // removed behind the cache's back
  ASSERT_EQ(0, io->unlink(path));
  // the cache still answers for the name (this is why forget exists)
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::EXISTING, &f));
  f.reset();
  files->forget(path);
  EXPECT_EQ(-ENOENT, files->open_object(CID, o, OpenMode::EXISTING, &f));
  EXPECT_EQ(nullptr, f);
  // forgetting an unknown path is harmless
  files->forget(path);
  files->forget(coll_path(CID) + "/never-opened");
}

TEST_F(MIMStoreObjectFiles, RemoveObject)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t o = make_obj("rm");
  const ghobject_t lo = make_obj(std::string(260, 'r'));
  ObjectFDRef f, lf;
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));  // cached
  ASSERT_EQ(0, files->write(f, 0, pattern(10, 'r')));
  ASSERT_EQ(0, files->open_object(CID, lo, OpenMode::CREATE, &lf));
  f.reset();
  lf.reset();
  ASSERT_EQ(0, files->remove_object(CID, o));
  ASSERT_EQ(0, files->remove_object(CID, lo));
  // removal drops the cached fd too
  EXPECT_EQ(-ENOENT, files->open_object(CID, o, OpenMode::EXISTING, &f));
  EXPECT_EQ(-ENOENT, files->open_object(CID, lo, OpenMode::EXISTING, &lf));
  EXPECT_EQ(-ENOENT, files->remove_object(CID, o));
  EXPECT_TRUE(list(CID).empty());
  // a new object of the same name starts empty
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  EXPECT_EQ("", read_all(f));
}

TEST_F(MIMStoreObjectFiles, MoveObject)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ASSERT_EQ(0, files->create_collection(CID2, 0));
  const ghobject_t o = make_obj("mv");
  const ghobject_t lo = make_obj(std::string(260, 'm'));
  ObjectFDRef f, lf, old;
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  ASSERT_EQ(0, files->write(f, 0, pattern(50, 'n')));
  ASSERT_EQ(0, files->open_object(CID, lo, OpenMode::CREATE, &lf));
  ASSERT_EQ(0, files->write(lf, 0, pattern(60, 'l')));
  // the destination already has o (cached): it is replaced
  ASSERT_EQ(0, files->open_object(CID2, o, OpenMode::CREATE, &old));
  ASSERT_EQ(0, files->write(old, 0, pattern(70, 'o')));
  f.reset();
  lf.reset();
  old.reset();

  ASSERT_EQ(0, files->move_object(CID, CID2, o));
  ASSERT_EQ(0, files->move_object(CID, CID2, lo));
  EXPECT_TRUE(list(CID).empty());
  // the long name's xattr moved with it: it still decodes
  EXPECT_EQ((std::set<ghobject_t>{o, lo}), list(CID2));
  EXPECT_EQ(-ENOENT, files->open_object(CID, o, OpenMode::EXISTING, &f));
  EXPECT_EQ(-ENOENT, files->open_object(CID, lo, OpenMode::EXISTING, &lf));
  ASSERT_EQ(0, files->open_object(CID2, o, OpenMode::EXISTING, &f));
  EXPECT_EQ(pattern(50, 'n').to_str(), read_all(f));
  ASSERT_EQ(0, files->open_object(CID2, lo, OpenMode::EXISTING, &lf));
  EXPECT_EQ(pattern(60, 'l').to_str(), read_all(lf));
  // nothing to move
  EXPECT_EQ(-ENOENT, files->move_object(CID, CID2, make_obj("none")));
}

namespace {

/// Runs `hook` once, right after the open of `path` returned: the
/// interleaving of an open with an op of another thread, made exact.
class OpenHookEnv : public mim::FaultIoEnv {
 public:
  explicit OpenHookEnv(mim::IoEnv* base) : FaultIoEnv(base) {}
  int open(const std::string& p, int flags, mode_t mode, int* fd) override
  {
    int r = FaultIoEnv::open(p, flags, mode, fd);
    if (r == 0 && p == path && hook) {
      auto h = std::move(hook);
      hook = nullptr;
      h();
    }
    return r;
  }
  std::string path;
  std::function<void()> hook;
};

}  // namespace

// Issue 61 item 3: an open of S/O (a reader's, not under the object's
// stripe lock) that raced a split's move of O to D cached its fd after
// the move's forget, mapping S/O to the inode now at D/O. A later create of
// S/O (after a split back, or a new object of that name) got that fd and
// made no file: its writes went to D/O, and S/O's data was gone after an
// eviction or a remount. The same for an open racing a remove. Now a
// forget after the rename (or unlink) and an insert that yields to any
// forget since its lookup keep the stale fd out of the cache.
TEST_F(MIMStoreObjectFiles, OpenRacingAMoveOrRemoveCachesNoStaleFd)
{
  for (bool remove : {false, true}) {
    SCOPED_TRACE(remove ? "remove" : "move");
    OpenHookEnv env(io.get());
    ObjectFiles f2(g_ceph_context, &env, dir.data, 16);
    ASSERT_EQ(0, f2.open());
    const coll_t S = remove ? CID_SHARD : CID, D = CID2;
    if (!remove) {
      ASSERT_EQ(0, f2.create_collection(S, 0));
      ASSERT_EQ(0, f2.create_collection(D, 0));
    } else {
      ASSERT_EQ(0, f2.create_collection(S, 0));
    }
    const ghobject_t o = make_obj(remove ? "rm-race" : "mv-race");
    {
      ObjectFDRef w;
      ASSERT_EQ(0, f2.open_object(S, o, OpenMode::CREATE, &w));
      ASSERT_EQ(0, f2.write(w, 0, pattern(40, 'a')));
    }
    f2.forget(path_of(S, o));  // the reader's open below misses the cache
    env.path = path_of(S, o);
    env.hook = [&] {
      if (remove) {
        ASSERT_EQ(0, f2.remove_object(S, o));
      } else {
        ASSERT_EQ(0, f2.move_object(S, D, o));
      }
    };
    ObjectFDRef reader;
    ASSERT_EQ(0, f2.open_object(S, o, OpenMode::EXISTING, &reader));
    ASSERT_FALSE(env.hook) << "the hook did not run";
    reader.reset();
    // A new object of the same name: a new file, its own data.
    ObjectFDRef n;
    ASSERT_EQ(0, f2.open_object(S, o, OpenMode::CREATE, &n));
    ASSERT_EQ(0, f2.write(n, 0, pattern(30, 'b')));
    n.reset();
    struct stat st;
    ASSERT_EQ(0, io->stat(path_of(S, o), &st)) << "no file made at S/O";
    EXPECT_EQ(30, st.st_size);
    if (!remove) {
      ObjectFDRef m;
      ASSERT_EQ(0, f2.open_object(D, o, OpenMode::EXISTING, &m));
      EXPECT_EQ(pattern(40, 'a').to_str(), read_all(m))
        << "the moved object was written through S/O's stale fd";
    }
  }
}

TEST_F(MIMStoreObjectFiles, LinkAndUnlinkName)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ASSERT_EQ(0, files->create_collection(CID2, 0));
  const ghobject_t o1 = make_obj("one"), o2 = make_obj("two");
  const ghobject_t l1 = make_obj(std::string(240, '1'));
  const ghobject_t l2 = make_obj(std::string(240, '2'));
  ObjectFDRef f1, f2;
  ASSERT_EQ(0, files->open_object(CID, o1, OpenMode::CREATE, &f1));
  ASSERT_EQ(0, files->write(f1, 0, pattern(30, '1')));

  // a second name for the same inode
  ASSERT_EQ(0, files->link_object(CID, o1, CID, o2));
  EXPECT_EQ(-EEXIST, files->link_object(CID, o1, CID, o2));
  ASSERT_EQ(0, files->open_object(CID, o2, OpenMode::EXISTING, &f2));
  EXPECT_EQ(pattern(30, '1').to_str(), read_all(f2));
  ASSERT_EQ(0, files->write(f2, 0, pattern(5, 'T')));
  bufferlist bl;
  ASSERT_EQ(5, files->read(f1, 0, 5, &bl));
  EXPECT_EQ(pattern(5, 'T').to_str(), bl.to_str()) << "not the same inode";
  const std::string data = read_all(f1);

  // a long new name: its xattr is set, so it decodes at once
  ASSERT_EQ(0, files->link_object(CID, o1, CID, l1));
  EXPECT_EQ((std::set<ghobject_t>{o1, o2, l1}), list(CID));

  // drop the first name: the inode lives on under the others
  f1.reset();
  ASSERT_EQ(0, files->unlink_name(CID, o1));
  EXPECT_EQ(-ENOENT, files->open_object(CID, o1, OpenMode::EXISTING, &f1));
  EXPECT_EQ((std::set<ghobject_t>{o2, l1}), list(CID));
  EXPECT_EQ(data, read_all(f2));

  // long to long, across collections
  ASSERT_EQ(0, files->link_object(CID, l1, CID2, l2));
  EXPECT_EQ(std::set<ghobject_t>{l2}, list(CID2));
  ASSERT_EQ(0, files->unlink_name(CID, l1));
  EXPECT_EQ(std::set<ghobject_t>{o2}, list(CID));
  EXPECT_EQ(std::set<ghobject_t>{l2}, list(CID2));
  ObjectFDRef fl2;
  ASSERT_EQ(0, files->open_object(CID2, l2, OpenMode::EXISTING, &fl2));
  EXPECT_EQ(data, read_all(fl2));
  // the unlinked long name's xattr left the inode, the other one stayed
  std::string v;
  EXPECT_EQ(-ENODATA, io->fgetxattr(fl2->fd,
                                    long_name_xattr(object_file_name(l1)),
                                    &v));
  ASSERT_EQ(0, io->fgetxattr(fl2->fd, long_name_xattr(object_file_name(l2)),
                             &v));
  EXPECT_EQ(encode_object_name(l2), v);

  // no source
  const ghobject_t none = make_obj("none");
  EXPECT_EQ(-ENOENT, files->link_object(CID, none, CID, make_obj("x")));
  EXPECT_EQ(-ENOENT, files->link_object(CID, none, CID, l1));
  EXPECT_EQ(-ENOENT, files->unlink_name(CID, none));
}

TEST_F(MIMStoreObjectFiles, ObjectGuards)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  const ghobject_t o = make_obj("guarded");
  ObjectFDRef f, g;
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::CREATE, &f));
  ASSERT_EQ(0, files->open_object(CID, make_obj("other"),
                                  OpenMode::CREATE, &g));
  SequencerPosition got;
  bool in_progress = true;
  EXPECT_EQ(-ENODATA, files->get_guard(f, &got, &in_progress));

  const SequencerPosition p1(0x123456789ABCull, 2, 3);
  ASSERT_EQ(0, files->set_guard(f, p1, GuardState::IN_PROGRESS));
  in_progress = false;
  ASSERT_EQ(0, files->get_guard(f, &got, &in_progress));
  EXPECT_EQ(p1, got);
  EXPECT_TRUE(in_progress);

  const SequencerPosition p2(0x123456789ABDull, 0, 0);
  ASSERT_EQ(0, files->set_guard(f, p2, GuardState::DONE));  // closed
  in_progress = true;
  ASSERT_EQ(0, files->get_guard(f, &got, &in_progress));
  EXPECT_EQ(p2, got);
  EXPECT_FALSE(in_progress);

  // per object, and on the file (seen through a new fd)
  EXPECT_EQ(-ENODATA, files->get_guard(g, &got, &in_progress));
  f.reset();
  files->forget(path_of(CID, o));
  ASSERT_EQ(0, files->open_object(CID, o, OpenMode::EXISTING, &f));
  in_progress = true;
  ASSERT_EQ(0, files->get_guard(f, &got, &in_progress));
  EXPECT_EQ(p2, got);
  EXPECT_FALSE(in_progress);
}

TEST_F(MIMStoreObjectFiles, CollectionGuards)
{
  ASSERT_EQ(0, files->create_collection(CID, 0));
  ASSERT_EQ(0, files->create_collection(CID2, 0));
  SequencerPosition got;
  bool in_progress = true;
  EXPECT_EQ(-ENODATA, files->get_collection_guard(CID, &got, &in_progress));
  EXPECT_EQ(-ENODATA, files->get_collection_guard(CID, &got));

  const SequencerPosition p1(77, 1, 2);
  ASSERT_EQ(0, files->set_collection_guard(CID, p1, GuardState::IN_PROGRESS));
  in_progress = false;
  ASSERT_EQ(0, files->get_collection_guard(CID, &got, &in_progress));
  EXPECT_EQ(p1, got);
  EXPECT_TRUE(in_progress);

  const SequencerPosition p2(78, 0, 5);
  ASSERT_EQ(0, files->set_collection_guard(CID, p2, GuardState::DONE));
  in_progress = true;
  ASSERT_EQ(0, files->get_collection_guard(CID, &got, &in_progress));
  EXPECT_EQ(p2, got);
  EXPECT_FALSE(in_progress);
  // in_progress may be left out
  got = SequencerPosition();
  ASSERT_EQ(0, files->get_collection_guard(CID, &got));
  EXPECT_EQ(p2, got);

  // per collection; a missing one has none
  EXPECT_EQ(-ENODATA, files->get_collection_guard(CID2, &got));
  const coll_t absent(spg_t(pg_t(9, 1)));
  EXPECT_EQ(-ENOENT, files->get_collection_guard(absent, &got));
  EXPECT_EQ(-ENOENT, files->set_collection_guard(absent, p1, GuardState::DONE));
  // the guard does not count as content, nor is it a collection bit
  int bits = -1;
  ASSERT_EQ(0, files->get_collection_bits(CID, &bits));
  EXPECT_EQ(0, bits);
  EXPECT_TRUE(list(CID).empty());
}

TEST_F(MIMStoreObjectFiles, Tombstones)
{
  std::map<coll_t, SequencerPosition> all;
  // none yet (no .gone directory)
  ASSERT_EQ(0, files->list_tombstones(&all));
  EXPECT_TRUE(all.empty());
  SequencerPosition got;
  EXPECT_EQ(-ENOENT, files->get_tombstone(CID, &got));

  const SequencerPosition p1(100, 1, 0), p2(101, 0, 2), p3(102, 3, 1);
  ASSERT_EQ(0, files->set_tombstone(CID, p1));
  ASSERT_EQ(0, files->set_tombstone(CID_SHARD, p2));
  ASSERT_EQ(0, files->get_tombstone(CID, &got));
  EXPECT_EQ(p1, got);
  ASSERT_EQ(0, files->get_tombstone(CID_SHARD, &got));
  EXPECT_EQ(p2, got);
  EXPECT_EQ(-ENOENT, files->get_tombstone(CID2, &got));
  // set again: replaced
  ASSERT_EQ(0, files->set_tombstone(CID, p3));
  ASSERT_EQ(0, files->get_tombstone(CID, &got));
  EXPECT_EQ(p3, got);

  // an unparsable entry is ignored by the listing
  ASSERT_NO_FATAL_FAILURE(make_file(files->coll_dir(".gone") + "/garbage"));
  ASSERT_EQ(0, files->list_tombstones(&all));
  EXPECT_EQ((std::map<coll_t, SequencerPosition>{{CID, p3},
                                                  {CID_SHARD, p2}}),
            all);
  // tombstones are not collections
  ASSERT_EQ(0, files->create_collection(CID2, 0));
  EXPECT_EQ(std::set<coll_t>{CID2}, collections());

  ASSERT_EQ(0, files->remove_tombstone(CID));
  EXPECT_EQ(-ENOENT, files->get_tombstone(CID, &got));
  // removing an absent one is fine (ObjectFiles.cc maps ENOENT to 0)
  EXPECT_EQ(0, files->remove_tombstone(CID));
  all.clear();
  ASSERT_EQ(0, files->list_tombstones(&all));
  EXPECT_EQ((std::map<coll_t, SequencerPosition>{{CID_SHARD, p2}}), all);
}

// ---------------------------------------------------------------------------
// WrittenBackRecords

namespace {

using mimstore::WrittenBackRecords;

size_t count_records(KeyValueDB* db)
{
  size_t n = 0;
  auto it = db->get_iterator(WrittenBackRecords::PREFIX);
  for (it->seek_to_first(); it->valid(); it->next()) {
    ++n;
  }
  return n;
}

}  // namespace

TEST(MIMStoreWrittenBack, RecordsFollowTheSyncAndGoWithTheCheckpoint)
{
  mimtest::StoreDir d;
  std::unique_ptr<KeyValueDB> db(
    KeyValueDB::create(g_ceph_context, "rocksdb", d.root + "/wbdb"));
  ASSERT_TRUE(db);
  std::stringstream err;
  ASSERT_EQ(0, db->create_and_open(err)) << err.str();
  {
    WrittenBackRecords w(g_ceph_context, db.get());
    // Two sweeps: the generation ending before 100, then before 200.
    w.written_back(100, "1.0_head", "a");
    w.written_back(100, "1.0_head", "b");
    // Nothing is in the DB until a sync has covered it.
    EXPECT_EQ(0u, count_records(db.get()));
    auto first = w.take_unsynced();
    EXPECT_EQ(2u, first.size());
    w.written_back(200, "1.0_head", "a");  // after that sync began
    ASSERT_EQ(0, w.put(first));
    EXPECT_EQ(2u, count_records(db.get()));
    ASSERT_EQ(0, w.put(w.take_unsynced()));
    EXPECT_EQ(3u, count_records(db.get()));
    EXPECT_TRUE(w.take_unsynced().empty());
    // A checkpoint below a sweep's end deletes nothing of it.
    ASSERT_EQ(0, w.trim(99));
    EXPECT_EQ(3u, count_records(db.get()));
  }
  {
    // A mount whose replay starts at 50 reads every record.
    WrittenBackRecords w(g_ceph_context, db.get());
    ASSERT_EQ(0, w.load(50));
    EXPECT_EQ(2u, w.loaded_objects());
    EXPECT_TRUE(w.covers("1.0_head", "a", 150));   // the later sweep's
    EXPECT_FALSE(w.covers("1.0_head", "a", 200));
    EXPECT_TRUE(w.covers("1.0_head", "b", 99));
    EXPECT_FALSE(w.covers("1.0_head", "b", 100));  // after b's sweep
    EXPECT_FALSE(w.covers("1.0_head", "c", 1));    // never written back
    EXPECT_FALSE(w.covers("1.1_head", "a", 1));    // another collection
    w.end_replay();
    EXPECT_FALSE(w.covers("1.0_head", "a", 150));
    // The checkpoint at 100: the first sweep's records go, not the second's.
    ASSERT_EQ(0, w.trim(100));
    EXPECT_EQ(1u, count_records(db.get()));
  }
  {
    // Malformed keys, and records replay can no longer use (at or below
    // where it starts), are deleted by the next mount.
    KeyValueDB::Transaction t = db->get_transaction();
    t->set(WrittenBackRecords::PREFIX, "junk", bufferlist());
    t->set(WrittenBackRecords::PREFIX,
           WrittenBackRecords::key(150, "1.0_head", "z"), bufferlist());
    ASSERT_EQ(0, db->submit_transaction_sync(t));
    EXPECT_EQ(3u, count_records(db.get()));
    WrittenBackRecords w(g_ceph_context, db.get());
    ASSERT_EQ(0, w.load(150));
    EXPECT_EQ(1u, w.loaded_objects());  // a, up to 200
    EXPECT_TRUE(w.covers("1.0_head", "a", 199));
    EXPECT_FALSE(w.covers("1.0_head", "z", 149));
    EXPECT_EQ(1u, count_records(db.get()));
    ASSERT_EQ(0, w.trim(1000));
    EXPECT_EQ(0u, count_records(db.get()));
  }
}
