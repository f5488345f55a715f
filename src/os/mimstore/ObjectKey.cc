// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "ObjectKey.h"

#include "include/ceph_assert.h"

namespace mimstore {

void append_be(uint64_t v, int bytes, std::string* out)
{
  for (int i = bytes - 1; i >= 0; --i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

namespace {

void put_escaped(const std::string& in, std::string* out)
{
  static const char hex[] = "0123456789abcdef";
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= '#' || c >= '~') {
      out->push_back(c <= '#' ? '#' : '~');
      out->push_back(hex[c >> 4]);
      out->push_back(hex[c & 0x0f]);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('!');
}

}  // namespace

std::string object_key(const ghobject_t& oid)
{
  ceph_assert(!oid.is_max() && !oid.hobj.is_max());
  const hobject_t& h = oid.hobj;
  std::string k;
  k.reserve(32 + h.nspace.size() + h.get_key().size() + h.oid.name.size());
  k.push_back(static_cast<char>(static_cast<int8_t>(oid.shard_id.id) + 0x80));
  append_be(static_cast<uint64_t>(h.pool) + 0x8000000000000000ull, 8, &k);
  append_be(h.get_bitwise_key_u32(), 4, &k);
  put_escaped(h.nspace, &k);
  const std::string& key = h.get_key();
  if (key.empty()) {
    put_escaped(h.oid.name, &k);
    k.push_back('=');
  } else {
    put_escaped(key, &k);
    // Then the name, as cmp compares it after the effective key: "<" for
    // a name below the key. (BlueStore writes ">" there.)
    int c = h.oid.name.compare(key);
    if (c == 0) {
      k.push_back('=');
    } else {
      k.push_back(c < 0 ? '<' : '>');
      put_escaped(h.oid.name, &k);
    }
  }
  append_be(h.snap.val, 8, &k);
  append_be(oid.generation, 8, &k);
  return k;
}

}  // namespace mimstore
