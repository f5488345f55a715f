// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the payload of a journal TXN entry, and the one pass over a
 * queued transaction's ops that the queue needs before journaling it.
 *
 * Payload (docs/journal-format.md, "The TXN payload"): a u32 count, then
 * that many ObjectStore::Transaction in Ceph's own encoding (encode(t, bl),
 * versioned by Ceph), one queue_transactions call per entry. The journal
 * frames and checksums the bytes; this file alone knows what they mean.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/buffer.h"
#include "os/Transaction.h"

namespace mimstore {

/// Encode one queue_transactions call as a journal payload.
ceph::bufferlist encode_payload(const std::vector<ceph::os::Transaction>& tls);

/// Decode a payload; 0, or -EIO with the decoder's message in *err.
int decode_payload(const ceph::bufferlist& bl,
                   std::vector<ceph::os::Transaction>* tls, std::string* err);

/// What queue_transactions learns from one pass over the ops.
struct OpScan {
  uint64_t write_bytes = 0;  ///< sum of OP_WRITE lengths (cache room)
  bool removes_collection = false;  ///< an OP_RMCOLL: worth _validate
  /// std::hash<ghobject_t> of every object an op names (source and
  /// destination), repeats included: reads of these wait for this apply.
  std::vector<size_t> object_hashes;
  /// An op on the collection as a whole (create, remove, split, merge,
  /// hints, bits, or one this scan does not know): every read waits.
  bool collection_wide = false;
};
OpScan scan_ops(std::vector<ceph::os::Transaction>& tls);

}  // namespace mimstore
