// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: reversible escaping of arbitrary bytes into file-name-safe text.
 *
 * Bytes [A-Za-z0-9.-] stand for themselves; every other byte, including
 * '_' (the field separator of object file names), '%' and '/', becomes
 * "%XX" with two upper-case hex digits. The result never contains '_' or
 * '/', so fields joined by '_' split back unambiguously.
 */
#pragma once

#include <string>
#include <string_view>

namespace mim {

/// Append the escaped form of `in` to `out`.
void escape_component(std::string_view in, std::string* out);

/// Decode an escaped component. Returns false on malformed input (a '%'
/// not followed by two hex digits, or a byte that escape never emits).
bool unescape_component(std::string_view in, std::string* out);

}  // namespace mim
