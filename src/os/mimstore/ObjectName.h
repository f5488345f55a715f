// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: file names for objects.
 *
 * Every object is one file in its collection's directory. The file name
 * encodes every ghobject_t field, so a directory listing rebuilds the
 * collection index without any other metadata:
 *
 *   <hash:8 hex>_<pool:dec>_<snap:16 hex>_<gen:16 hex>_<shard:dec>_<nspace>_<key>_<name>
 *
 * nspace, key and name are escaped with mim::escape_component (arbitrary
 * bytes, never '_' or '/'). A name longer than LONG_NAME_THRESHOLD is
 * stored as
 *
 *   L_<hash:8 hex>_<sha1 of the full name:40 hex>
 *
 * and the full name is kept in the file's xattr long_name_xattr(fname),
 * written right after the file is created. The xattr is per name (it carries
 * the name's hash), so while a rename links one inode under two names both
 * decode. A long file without its xattr is the residue of a create that
 * crashed before anything was written into it.
 */
#pragma once

#include <string>

#include "common/hobject.h"

namespace mimstore {

constexpr size_t LONG_NAME_THRESHOLD = 200;

/// The full (possibly long) encoded name of `oid`.
std::string encode_object_name(const ghobject_t& oid);

/// Decode a full encoded name. Returns false if `name` is not one.
bool decode_object_name(const std::string& name, ghobject_t* oid);

/// The file name `oid` is stored under: the full name, or its long form.
std::string object_file_name(const ghobject_t& oid);

/// True for names produced by the long form (their xattr holds the name).
bool is_long_file_name(const std::string& fname);

/// The xattr that holds the full name of long file name `fname`.
std::string long_name_xattr(const std::string& fname);

}  // namespace mimstore
