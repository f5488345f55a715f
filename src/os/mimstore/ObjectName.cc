// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "ObjectName.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/ceph_crypto.h"
#include "core/name_escape.h"

namespace mimstore {

namespace {

void append_hex(std::string* out, uint64_t v, int width)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%0*" PRIX64, width, v);
  out->append(buf);
}

bool parse_hex(const std::string& s, size_t width, uint64_t* v)
{
  if (s.size() != width) {
    return false;
  }
  uint64_t r = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    r = r << 4 | d;
  }
  *v = r;
  return true;
}

bool parse_dec(const std::string& s, int64_t lo, int64_t hi, int64_t* v)
{
  if (s.empty() || s.size() > 20) {
    return false;
  }
  char* end = nullptr;
  errno = 0;
  long long r = strtoll(s.c_str(), &end, 10);
  if (errno || *end || r < lo || r > hi) {
    return false;
  }
  // canonical form only, so the name of an object is unique
  if (std::to_string(r) != s) {
    return false;
  }
  *v = r;
  return true;
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

}  // namespace

std::string encode_object_name(const ghobject_t& oid)
{
  ceph_assert(!oid.max && !oid.hobj.is_max());
  std::string out;
  out.reserve(64 + oid.hobj.oid.name.size());
  append_hex(&out, oid.hobj.get_hash(), 8);
  out.push_back('_');
  out.append(std::to_string(oid.hobj.pool));
  out.push_back('_');
  append_hex(&out, uint64_t(oid.hobj.snap), 16);
  out.push_back('_');
  append_hex(&out, oid.generation, 16);
  out.push_back('_');
  out.append(std::to_string(int(int8_t(oid.shard_id))));
  out.push_back('_');
  mim::escape_component(oid.hobj.nspace, &out);
  out.push_back('_');
  mim::escape_component(oid.hobj.get_key(), &out);
  out.push_back('_');
  mim::escape_component(oid.hobj.oid.name, &out);
  return out;
}

bool decode_object_name(const std::string& name, ghobject_t* oid)
{
  auto f = split_fields(name);
  if (f.size() != 8) {
    return false;
  }
  uint64_t hash, snap, gen;
  int64_t pool, shard;
  std::string nspace, key, oname;
  if (!parse_hex(f[0], 8, &hash) ||
      !parse_dec(f[1], INT64_MIN, INT64_MAX, &pool) ||
      !parse_hex(f[2], 16, &snap) ||
      !parse_hex(f[3], 16, &gen) ||
      !parse_dec(f[4], INT8_MIN, INT8_MAX, &shard) ||
      !mim::unescape_component(f[5], &nspace) ||
      !mim::unescape_component(f[6], &key) ||
      !mim::unescape_component(f[7], &oname)) {
    return false;
  }
  if (!key.empty() && key == oname) {
    return false;  // hobject_t never stores a key equal to the name
  }
  hobject_t h(object_t(oname), key, snapid_t(snap), uint32_t(hash), pool,
              nspace);
  *oid = ghobject_t(h, gen, shard_id_t(int8_t(shard)));
  return true;
}

std::string object_file_name(const ghobject_t& oid)
{
  std::string full = encode_object_name(oid);
  if (full.size() <= LONG_NAME_THRESHOLD) {
    return full;
  }
  ceph::crypto::SHA1 sha;
  sha.Update(reinterpret_cast<const unsigned char*>(full.data()), full.size());
  unsigned char digest[ceph::crypto::SHA1::digest_size];
  sha.Final(digest);
  std::string out = "L_";
  append_hex(&out, oid.hobj.get_hash(), 8);
  out.push_back('_');
  for (unsigned char c : digest) {
    append_hex(&out, c, 2);
  }
  return out;
}

bool is_long_file_name(const std::string& fname)
{
  return fname.size() > 2 && fname[0] == 'L' && fname[1] == '_';
}

std::string long_name_xattr(const std::string& fname)
{
  // "L_<hash:8>_<sha1:40>": the sha1 identifies the name
  return "user.mim.name." + fname.substr(fname.rfind('_') + 1);
}

}  // namespace mimstore
