// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: journal payload codec and op scan. See the header.
 */
#include "TxnCodec.h"

#include <cerrno>
#include <functional>

#include "CephRelease.h"
#include "include/ceph_features.h"

using ceph::bufferlist;
using ceph::decode;
using ceph::encode;
using ceph::os::Transaction;

namespace mimstore {

bufferlist encode_payload(const std::vector<Transaction>& tls)
{
  bufferlist bl;
  encode(uint32_t(tls.size()), bl);
  for (auto& t : tls) {
#if CEPH_RELEASE >= 20
    // Always v10: Tentacle's aligned transactions (a replica's, a
    // recovery push's) cannot be written as v9; decode reads both.
    t.encode(bl, bl, CEPH_FEATURES_ALL);
#else
    encode(t, bl);
#endif
  }
  return bl;
}

int decode_payload(const bufferlist& bl, std::vector<Transaction>* tls,
                   std::string* err)
{
  try {
    auto p = bl.cbegin();
    uint32_t count;
    decode(count, p);
    tls->resize(count);
    for (auto& t : *tls) {
      decode(t, p);
    }
  } catch (ceph::buffer::error& e) {
    *err = e.what();
    return -EIO;
  }
  return 0;
}

namespace {

enum class Names { NONE, OID, OID_AND_DEST, COLLECTION };

/// Which objects an op changes, for the read-after-apply wait.
Names names_of(uint32_t op)
{
  switch (op) {
  case Transaction::OP_NOP:
    return Names::NONE;
  case Transaction::OP_TOUCH:
  case Transaction::OP_CREATE:
  case Transaction::OP_WRITE:
  case Transaction::OP_ZERO:
  case Transaction::OP_TRUNCATE:
  case Transaction::OP_REMOVE:
  case Transaction::OP_SETATTR:
  case Transaction::OP_SETATTRS:
  case Transaction::OP_RMATTR:
  case Transaction::OP_RMATTRS:
  case Transaction::OP_OMAP_CLEAR:
  case Transaction::OP_OMAP_SETKEYS:
  case Transaction::OP_OMAP_RMKEYS:
  case Transaction::OP_OMAP_RMKEYRANGE:
  case Transaction::OP_OMAP_SETHEADER:
  case Transaction::OP_SETALLOCHINT:
  case Transaction::OP_COLL_ADD:
  case Transaction::OP_COLL_REMOVE:
    return Names::OID;
  case Transaction::OP_CLONE:
  case Transaction::OP_CLONERANGE:
  case Transaction::OP_CLONERANGE2:
  case Transaction::OP_COLL_MOVE_RENAME:
  case Transaction::OP_TRY_RENAME:
    return Names::OID_AND_DEST;
  default:
    return Names::COLLECTION;  // and any op added to Ceph later
  }
}

}  // namespace

OpScan scan_ops(std::vector<Transaction>& tls)
{
  OpScan s;
  std::hash<ghobject_t> hash;
  for (auto& t : tls) {
    for (auto i = t.begin(); i.have_op();) {
      Transaction::Op* o = i.decode_op();
      if (o->op == Transaction::OP_WRITE) {
        s.write_bytes += o->len;
      }
      s.removes_collection |= o->op == Transaction::OP_RMCOLL;
      switch (names_of(o->op)) {
      case Names::NONE:
        break;
      case Names::OID_AND_DEST:
        s.object_hashes.push_back(hash(i.get_oid(o->dest_oid)));
        [[fallthrough]];
      case Names::OID:
        s.object_hashes.push_back(hash(i.get_oid(o->oid)));
        break;
      case Names::COLLECTION:
        s.collection_wide = true;
        break;
      }
    }
  }
  return s;
}

}  // namespace mimstore
