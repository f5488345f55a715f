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

/// "No journal copy known" for DataRef::jpos.
constexpr uint64_t NO_JPOS = UINT64_MAX;

/// A write whose bytes are kept only in the journal: where they start on
/// the journal device, how many, and their crc32c (core/crc32c.h), checked
/// whenever they are read back.
struct JournalSource {
  uint64_t jpos = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
};

/// An immutable byte range kept alive by `owner`. Copying a DataRef copies
/// a pointer and a reference count, never the bytes: the store wraps the
/// Ceph bufferptr a write arrived in, tests wrap a std::string.
///
/// `jpos`, when known, is where the same bytes sit on the journal device
/// (the offset of data[0]): the journal holds every cached write until its
/// object is written back, so the bytes can be read from there (issue 15,
/// docs/plan-merge-at-scale.md). slice() and drop_front() keep it in step.
///
/// A journal-only range (in_journal()) has no bytes in memory: data is
/// null and owner is the JournalSource of the whole write it is part of
/// (a slice keeps pointing at the whole write, so its crc can be checked).
struct DataRef {
  std::shared_ptr<const void> owner;
  const char* data = nullptr;
  uint64_t length = 0;
  uint64_t jpos = NO_JPOS;

  DataRef() = default;
  DataRef(std::shared_ptr<const void> o, const char* d, uint64_t len,
          uint64_t jp = NO_JPOS)
    : owner(std::move(o)), data(d), length(len), jpos(jp) {}

  bool has_jpos() const { return jpos != NO_JPOS; }
  /// The bytes are in memory at `data` (else only in the journal).
  bool resident() const { return data != nullptr; }

  /// A range of the whole write `src`, its bytes only in the journal.
  static DataRef in_journal(std::shared_ptr<const JournalSource> src) {
    const uint64_t len = src->length, jp = src->jpos;
    return DataRef(std::move(src), nullptr, len, jp);
  }
  /// The whole write a journal-only range belongs to; null if resident (or
  /// empty).
  const JournalSource* source() const {
    return resident() ? nullptr
                      : static_cast<const JournalSource*>(owner.get());
  }

  /// Bytes [off, off+len) of this range, sharing the owner.
  /// REQUIRES: off + len <= length.
  DataRef slice(uint64_t off, uint64_t len) const {
    return DataRef(owner, data ? data + off : nullptr, len,
                   has_jpos() ? jpos + off : NO_JPOS);
  }

  /// Drop the first n bytes in place. REQUIRES: n <= length.
  void drop_front(uint64_t n) {
    if (data) {
      data += n;
    }
    length -= n;
    if (has_jpos()) {
      jpos += n;
    }
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
