// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: Ceph-free types shared by the MIM core.
 *
 * Rule for everything under core/: no Ceph headers. The store adapts Ceph
 * types (bufferptr, coll_t, ghobject_t) to these at its boundary.
 */
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace mim {

/// Transaction sequence number. Assigned in journal order, starting at 1;
/// 0 is never a valid sn.
using sn_t = uint64_t;

/// An immutable byte range kept alive by `owner`. Copying a DataRef copies
/// a pointer and a reference count, never the bytes: the store wraps the
/// Ceph bufferptr a write arrived in, tests wrap a std::string.
struct DataRef {
  std::shared_ptr<const void> owner;
  const char* data = nullptr;
  uint64_t length = 0;

  DataRef() = default;
  DataRef(std::shared_ptr<const void> o, const char* d, uint64_t len)
    : owner(std::move(o)), data(d), length(len) {}

  /// Bytes [off, off+len) of this range, sharing the owner.
  /// REQUIRES: off + len <= length.
  DataRef slice(uint64_t off, uint64_t len) const {
    return DataRef(owner, data + off, len);
  }

  /// A DataRef that owns a private copy of [p, p+n).
  static DataRef copy_of(const void* p, uint64_t n) {
    auto s = std::make_shared<std::string>(static_cast<const char*>(p), n);
    const char* d = s->data();
    return DataRef(std::shared_ptr<const void>(std::move(s), d), d, n);
  }

  static DataRef copy_of(std::string_view s) {
    return copy_of(s.data(), s.size());
  }

  std::string_view view() const { return std::string_view(data, length); }
};

}  // namespace mim
