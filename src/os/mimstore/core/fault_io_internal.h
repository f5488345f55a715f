// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: what the fault_io_*.cc files share, private to them. Ceph-free.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#pragma once

#include <cstdint>
#include <string>

namespace mim::fault_io_detail {

inline constexpr uint64_t SECTOR = 512;
inline constexpr uint64_t NO_SIZE = UINT64_MAX;  ///< block device: size is fixed

/// The directory part of a path: "a/b/c" -> "a/b", "c" -> ".", "/c" -> "/".
inline std::string dirname_of(const std::string& path)
{
  size_t e = path.find_last_not_of('/');
  if (e == std::string::npos) {
    return "/";
  }
  size_t slash = path.rfind('/', e);
  if (slash == std::string::npos) {
    return ".";
  }
  size_t end = path.find_last_not_of('/', slash);
  return end == std::string::npos ? "/" : path.substr(0, end + 1);
}

}  // namespace mim::fault_io_detail
