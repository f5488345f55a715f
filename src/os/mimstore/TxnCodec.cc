// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: journal payload codec and op scan. See the header.
 */
#include "TxnCodec.h"

#include <cerrno>

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
    encode(t, bl);
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

OpScan scan_ops(std::vector<Transaction>& tls)
{
  OpScan s;
  for (auto& t : tls) {
    for (auto i = t.begin(); i.have_op();) {
      Transaction::Op* o = i.decode_op();
      if (o->op == Transaction::OP_WRITE) {
        s.write_bytes += o->len;
      }
      s.removes_collection |= o->op == Transaction::OP_RMCOLL;
    }
  }
  return s;
}

}  // namespace mimstore
