// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: collection registry and tombstones. See the header.
 */
#include "Collections.h"

#include "common/debug.h"
#include "common/errno.h"

#include "ObjectFiles.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore.collections "

namespace mimstore {

CollectionRef Collections::get(const coll_t& c) const
{
  mim::ReadLock l(lock);
  auto p = map.find(c);
  return p == map.end() ? CollectionRef() : p->second;
}

CollectionRef Collections::get_or_create(MIMStore* store, const coll_t& c)
{
  mim::WriteLock l(lock);
  auto p = map.find(c);
  if (p != map.end()) {
    return p->second;
  }
  auto ref = ceph::make_ref<Collection>(store, c);
  {
    mim::WriteLock cl(ref->lock);  // (not shared yet: for the check)
    ref->exists = false;
  }
  map[c] = ref;
  return ref;
}

void Collections::add(const CollectionRef& c)
{
  mim::WriteLock l(lock);
  map[c->cid] = c;
}

void Collections::drop(const coll_t& c)
{
  mim::WriteLock l(lock);
  map.erase(c);
}

void Collections::clear()
{
  {
    mim::WriteLock l(lock);
    map.clear();
  }
  // (the files stay: the next mount reads them again)
  mim::MutexLock l(tombstone_lock);
  tombstones.clear();
}

size_t Collections::size() const
{
  mim::ReadLock l(lock);
  return map.size();
}

bool Collections::holds_anywhere(const ghobject_t& oid) const
{
  mim::ReadLock l(lock);
  for (auto& [cid, c] : map) {
    if (c->has(oid)) {
      return true;
    }
  }
  return false;
}

int Collections::record_tombstone(ObjectFiles* files, const coll_t& c,
                                  const SequencerPosition& pos)
{
  mim::MutexLock l(tombstone_lock);
  int r = files->set_tombstone(c, pos);
  if (r == 0) {
    tombstones[c] = pos.seq;
  }
  return r;
}

int Collections::load_tombstones(ObjectFiles* files)
{
  std::map<coll_t, SequencerPosition> ts;
  int r = files->list_tombstones(&ts);
  mim::MutexLock l(tombstone_lock);
  for (auto& [c, pos] : ts) {
    tombstones[c] = pos.seq;
  }
  return r;
}

void Collections::trim_tombstones(ObjectFiles* files, mim::sn_t checkpoint)
{
  mim::MutexLock l(tombstone_lock);
  for (auto p = tombstones.begin(); p != tombstones.end();) {
    if (p->second >= checkpoint) {
      ++p;
      continue;
    }
    int r = files->remove_tombstone(p->first);
    if (r < 0) {
      dout(1) << "cannot remove the tombstone of " << p->first << ": "
              << cpp_strerror(r) << dendl;
      ++p;
      continue;
    }
    p = tombstones.erase(p);
  }
}

}  // namespace mimstore
