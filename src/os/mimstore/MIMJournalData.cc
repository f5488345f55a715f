// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the bytes of merged writes, in memory or in the journal.
 * Every merged write's bytes are also in the journal (where they were made
 * durable) until its object is written back and synced. This file finds
 * them there (DataRef::jpos), makes the form the cache keeps (a reference
 * to the transaction's buffer, or with mimstore_merge_data_in_journal only
 * the journal position and a crc), and gets the bytes back for reads and
 * write back. docs/store.md, "Merge data in the journal".
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License version 2.1, as published by the Free Software
 * Foundation.  See file COPYING.
 */
#include "MIMStore.h"

#include <cstring>

#include "common/debug.h"
#include "common/errno.h"
#include "core/crc32c.h"

#include "MIMJournal.h"
#include "MIMPerf.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using ceph::bufferlist;
using ceph::bufferptr;
using namespace mimstore;

uint64_t MIMStore::_journal_pos(const ApplyContext& ac,
                                const bufferlist& bl) const
{
  const TransContext* t = ac.txc;
  if (!t || t->payload_off == mim::NO_JPOS || t->payload_index.empty()) {
    return mim::NO_JPOS;
  }
  std::vector<mim::PayloadIndex::Span> spans;
  spans.reserve(bl.get_num_buffers());
  for (const auto& b : bl.buffers()) {
    spans.emplace_back(b.c_str(), b.length());
  }
  uint64_t in_payload;
  if (!t->payload_index.find(spans, &in_payload)) {
    return mim::NO_JPOS;
  }
  return t->payload_off + in_payload;
}

void MIMStore::_verify_journal_copy(const mim::DataRef& d, const char* where)
{
  if (!d.has_jpos() || !d.resident()) {
    return;  // nothing to compare, or checked by its crc when fetched
  }
  std::string j(d.length, '\0');
  int r = journal->read_extent(d.jpos, d.length, j.data());
  if (r < 0 || memcmp(j.data(), d.data, d.length) != 0) {
    derr << "journal copy check (" << where << "): " << d.length
         << " bytes at journal offset " << d.jpos << ": "
         << (r < 0 ? cpp_strerror(r) : std::string("bytes differ")) << dendl;
    ceph_abort_msg("mimstore: a cached extent's journal copy is wrong");
  }
  logger->inc(l_mimstore_journal_data_verified);
}

bool MIMStore::_cached_form(const ApplyContext& ac,
                            bufferlist& bl, mim::DataRef* out)
{
  // Before any rebuild(): found by the addresses of the payload's buffers.
  const uint64_t jpos = _journal_pos(ac, bl);
  const uint64_t len = bl.length();
  if (conf.merge_data_in_journal) {
    if (jpos == mim::NO_JPOS) {
      return false;
    }
    auto src = std::make_shared<mim::JournalSource>();
    src->jpos = jpos;
    src->length = len;
    for (const auto& b : bl.buffers()) {
      src->crc = mim::crc32c(src->crc, b.c_str(), b.length());
    }
    *out = mim::DataRef::in_journal(std::move(src));
    if (conf.debug_verify_journal_data) {
      std::string j(len, '\0');
      int r = _fetch(*out, j.data());
      if (r < 0 || j != bl.to_str()) {
        derr << "journal copy check (merge): " << len << " bytes at journal "
             << "offset " << jpos << ": "
             << (r < 0 ? cpp_strerror(r) : std::string("bytes differ"))
             << dendl;
        ceph_abort_msg("mimstore: a merged write's journal copy is wrong");
      }
      logger->inc(l_mimstore_journal_data_verified);
    }
    return true;
  }
  if (!bl.is_contiguous()) {
    bl.rebuild();  // one contiguous buffer
  }
  const bufferptr& bp = bl.front();
  if (bp.raw_length() <= len + len / 4) {
    // zero-copy: the cache keeps a reference to the transaction's buffer
    auto holder = std::make_shared<bufferptr>(bp);
    const char* data = holder->c_str();
    *out = mim::DataRef(std::shared_ptr<const void>(holder, data), data, len,
                        jpos);
  } else {
    // The write is a slice of a larger buffer (a whole message): keeping
    // a reference would pin all of it for as long as the bytes stay
    // cached, and the memory cap would count a fraction of what is used.
    *out = mim::DataRef::copy_of(bp.c_str(), len);
    out->jpos = jpos;
  }
  if (conf.debug_verify_journal_data) {
    _verify_journal_copy(*out, "merge");
  }
  return true;
}

int MIMStore::_fetch(const mim::DataRef& d, char* dst)
{
  if (d.resident()) {
    memcpy(dst, d.data, d.length);
    return 0;
  }
  // Journal-only: read the whole write, so that its crc can be checked,
  // and take the slice.
  const mim::JournalSource* src = d.source();
  ceph_assert(src && d.jpos >= src->jpos &&
              d.jpos + d.length <= src->jpos + src->length);
  std::string buf(src->length, '\0');
  int r = journal->read_extent(src->jpos, src->length, buf.data());
  if (r < 0) {
    // -ERANGE: the tail passed a write still cached, a bug in the holds.
    derr << "read of cached bytes from the journal (" << src->length
         << " at " << src->jpos << ") failed: " << cpp_strerror(r) << dendl;
    return r == -ERANGE ? -EIO : r;
  }
  const uint32_t crc = mim::crc32c(0, buf.data(), buf.size());
  if (crc != src->crc) {
    derr << "cached bytes read back from the journal (" << src->length
         << " at " << src->jpos << ") have crc " << std::hex << crc
         << ", written with " << src->crc << std::dec << dendl;
    return -EIO;
  }
  memcpy(dst, buf.data() + (d.jpos - src->jpos), d.length);
  logger->inc(l_mimstore_journal_data_reads);
  logger->inc(l_mimstore_journal_data_read_bytes, src->length);
  return 0;
}
