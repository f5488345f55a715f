// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: omap ops. omap goes to OmapStore with the op's
 * SequencerPosition, which makes each op idempotent on replay.
 */
#include "MIMStore.h"

#include "common/debug.h"
#include "common/errno.h"
#include "kv/KeyValueDB.h"

#include "ObjectFiles.h"
#include "ObjectName.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using ceph::bufferptr;
using namespace mimstore;

/// The omap ops of _do_transaction.
int MIMStore::_do_omap_op(const ApplyContext& ac,
                          Transaction::iterator& i, Transaction::Op* op)
{
  int r = 0;
  switch (op->op) {
  case Transaction::OP_OMAP_CLEAR:
    r = _omap_clear(ac, i.get_cid(op->cid), i.get_oid(op->oid));
    break;

  case Transaction::OP_OMAP_SETKEYS:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      bufferlist aset_bl;
      i.decode_attrset_bl(&aset_bl);
      r = _omap_setkeys(ac, cid, oid, aset_bl);
    }
    break;

  case Transaction::OP_OMAP_RMKEYS:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      bufferlist keys_bl;
      i.decode_keyset_bl(&keys_bl);
      r = _omap_rmkeys(ac, cid, oid, keys_bl);
    }
    break;

  case Transaction::OP_OMAP_RMKEYRANGE:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      string first = i.decode_string();
      string last = i.decode_string();
      r = _omap_rmkeyrange(ac, cid, oid, first, last);
    }
    break;

  case Transaction::OP_OMAP_SETHEADER:
    {
      coll_t cid = i.get_cid(op->cid);
      ghobject_t oid = i.get_oid(op->oid);
      bufferlist bl;
      i.decode_bl(bl);
      r = _omap_setheader(ac, cid, oid, bl);
    }
    break;

  default:
    return NOT_MINE;
  }
  return r;
}

#define MIM_OMAP_PRELUDE()                                          \
  if (!_should_apply(ac, cid, &oid)) {                            \
    return 0;                                                       \
  }                                                                 \
  if (_require_object(cid, oid) < 0) {                              \
    return -ENOENT;                                                 \
  }

int MIMStore::_omap_clear(const ApplyContext& ac,
                          const coll_t& cid, const ghobject_t& oid)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  int r = omap->clear_keys_header(oid, &ac.spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_setkeys(const ApplyContext& ac,
                            const coll_t& cid, const ghobject_t& oid,
                            bufferlist& aset_bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  std::map<string, bufferlist> aset;
  auto p = aset_bl.cbegin();
  decode(aset, p);
  return omap->set_keys(oid, aset, &ac.spos);
}

int MIMStore::_omap_rmkeys(const ApplyContext& ac,
                           const coll_t& cid, const ghobject_t& oid,
                           bufferlist& keys_bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  std::set<string> keys;
  auto p = keys_bl.cbegin();
  decode(keys, p);
  int r = omap->rm_keys(oid, keys, &ac.spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_rmkeyrange(const ApplyContext& ac,
                               const coll_t& cid, const ghobject_t& oid,
                               const string& first, const string& last)
{
  dout(15) << __func__ << " " << cid << " " << oid << " [" << first << ", "
           << last << ")" << dendl;
  MIM_OMAP_PRELUDE();
  // Deletes what is in the range when applied, as the read-then-delete it
  // replaced did (replay the same: later ops are replayed after it).
  int r = omap->rm_key_range(oid, first, last, &ac.spos);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::_omap_setheader(const ApplyContext& ac,
                              const coll_t& cid, const ghobject_t& oid,
                              bufferlist& bl)
{
  dout(15) << __func__ << " " << cid << " " << oid << dendl;
  MIM_OMAP_PRELUDE();
  return omap->set_header(oid, bl, &ac.spos);
}

#undef MIM_OMAP_PRELUDE
