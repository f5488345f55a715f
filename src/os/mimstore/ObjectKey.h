// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: an object's key in RocksDB, bytes that sort as ghobject_t does.
 *
 * The omap database keys each object's record by this (OmapStore.h), so a
 * range of the key space is a range of objects in collection_list order:
 * what an index of every object (issue 66: collection_list, a PG's split
 * half as one range) needs from it. The encoding is BlueStore's
 * get_object_key with two differences: bytes above 0x7f are escaped as
 * unsigned, and the name's marker follows cmp (BlueStore's is reversed,
 * so an object whose name sorts below its locator key is out of order):
 *
 *   shard    1 byte, shard_id + 0x80
 *   pool     8 bytes big-endian, pool + 2^63 (a temp pool is negative)
 *   hash     4 bytes big-endian, the bit-reversed hash (get_bitwise_key_u32)
 *   nspace   escaped string
 *   name     effective key escaped, then "=" when the object's name is the
 *            same, else "<" (name below the key) or ">", and the name
 *            escaped
 *   snap     8 bytes big-endian
 *   gen      8 bytes big-endian
 *
 * An escaped string: bytes <= '#' as "#hh", bytes >= '~' as "~hh" (two
 * lowercase hex digits), the rest as they are, then "!", which sorts below
 * every byte an escaped string holds, so a string sorts before its
 * extensions. Test: MIMStoreObjectKey.SortsAsGhobject.
 */
#pragma once

#include <string>

#include "common/hobject.h"

namespace mimstore {

/// The key of `oid`; `oid` is not max (no object is stored at max).
std::string object_key(const ghobject_t& oid);

/// The low `bytes` bytes of v, big-endian (so they sort as v does).
void append_be(uint64_t v, int bytes, std::string* out);

}  // namespace mimstore
