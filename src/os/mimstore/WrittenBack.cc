// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: written-back records (WrittenBack.h).
 */
#include "WrittenBack.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "common/debug.h"
#include "kv/KeyValueDB.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore.written_back "

namespace mimstore {

std::string WrittenBackRecords::sn_key(sn_t sn)
{
  char b[17];
  snprintf(b, sizeof(b), "%016" PRIx64, uint64_t(sn));
  return b;
}

std::string WrittenBackRecords::key(sn_t end_sn, const std::string& cname,
                                    const std::string& fname)
{
  return sn_key(end_sn) + "." + cname + "/" + fname;
}

WrittenBackRecords::sn_t WrittenBackRecords::end_of(const std::string& key)
{
  return strtoull(key.c_str(), nullptr, 16);
}

void WrittenBackRecords::written_back(sn_t end_sn, const std::string& cname,
                                      const std::string& fname)
{
  mim::MutexLock l(lock);
  unsynced.push_back(key(end_sn, cname, fname));
}

std::vector<std::string> WrittenBackRecords::take_unsynced()
{
  std::vector<std::string> out;
  mim::MutexLock l(lock);
  out.swap(unsynced);
  return out;
}

int WrittenBackRecords::put(const std::vector<std::string>& keys)
{
  if (keys.empty()) {
    return 0;
  }
  KeyValueDB::Transaction t = db->get_transaction();
  ceph::bufferlist empty;
  for (const auto& k : keys) {
    t->set(PREFIX, k, empty);
    // One F per sweep, and sweeps come in sn order.
    const sn_t f = end_of(k);
    if (gens.empty() || gens.back() < f) {
      gens.push_back(f);
    }
  }
  return db->submit_transaction(t);
}

int WrittenBackRecords::trim(sn_t checkpoint)
{
  if (gens.empty() || gens.front() > checkpoint) {
    return 0;
  }
  KeyValueDB::Transaction t = db->get_transaction();
  while (!gens.empty() && gens.front() <= checkpoint) {
    t->rm_range_keys(PREFIX, sn_key(gens.front()), sn_key(gens.front() + 1));
    gens.pop_front();
  }
  return db->submit_transaction(t);
}

int WrittenBackRecords::load(sn_t first_live)
{
  loaded.clear();
  gens.clear();
  uint64_t stale = 0, bad = 0;
  KeyValueDB::Transaction t = db->get_transaction();
  auto it = db->get_iterator(PREFIX);
  for (it->seek_to_first(); it->valid(); it->next()) {
    const std::string k = it->key();
    if (k.size() < 18 || k[16] != '.') {
      ++bad;  // not written by this version: useless, and harmless gone
      t->rmkey(PREFIX, k);
      continue;
    }
    const sn_t f = end_of(k);
    if (f <= first_live) {
      ++stale;  // replay starts at first_live: it covers nothing replayed
      t->rmkey(PREFIX, k);
      continue;
    }
    sn_t& have = loaded[k.substr(17)];
    have = std::max(have, f);
    if (gens.empty() || gens.back() < f) {
      gens.push_back(f);
    }
  }
  if (stale || bad) {
    int r = db->submit_transaction(t);
    if (r < 0) {
      return r;
    }
  }
  dout(5) << "loaded written-back records of " << loaded.size()
          << " objects in " << gens.size() << " sweeps; deleted " << stale
          << " older than the checkpoint and " << bad << " malformed"
          << dendl;
  return 0;
}

bool WrittenBackRecords::covers(const std::string& cname,
                                const std::string& fname, sn_t sn) const
{
  if (loaded.empty()) {
    return false;
  }
  auto p = loaded.find(cname + "/" + fname);
  return p != loaded.end() && sn < p->second;
}

int WrittenBackRecords::prune(
  const std::function<int(const std::string& cname,
                          const std::string& fname)>& is_there)
{
  // Decided for every record before any leaves `loaded`: an error keeps
  // them all (replay does not start then).
  std::vector<std::string> gone_names;
  for (const auto& p : loaded) {
    // "<collection>/<file>": neither a collection's name nor an object's
    // file name holds a '/'.
    const std::string& name = p.first;
    const size_t slash = name.find('/');
    if (slash == std::string::npos) {
      continue;
    }
    const int there = is_there(name.substr(0, slash), name.substr(slash + 1));
    if (there < 0) {
      return there;
    }
    if (!there) {
      gone_names.push_back(name);
    }
  }
  KeyValueDB::Transaction t = db->get_transaction();
  const int gone = gone_names.size();
  for (const auto& name : gone_names) {
    for (const auto& k : keys_of(name)) {
      t->rmkey(PREFIX, k);
    }
    loaded.erase(name);
  }
  if (gone) {
    int r = db->submit_transaction_sync(t);
    if (r < 0) {
      return r;
    }
  }
  dout(5) << "deleted the written-back records of " << gone << " objects "
          << "whose file is gone or was made again" << dendl;
  return gone;
}

int WrittenBackRecords::forget(const std::string& cname,
                               const std::string& fname)
{
  if (loaded.empty()) {
    return 0;
  }
  const std::string name = cname + "/" + fname;
  if (!loaded.erase(name)) {
    return 0;
  }
  // Durably: a mount killed later in this replay would read it again.
  KeyValueDB::Transaction t = db->get_transaction();
  for (const auto& k : keys_of(name)) {
    t->rmkey(PREFIX, k);
  }
  dout(5) << "forgot the written-back record of " << name << dendl;
  return db->submit_transaction_sync(t);
}

std::vector<std::string> WrittenBackRecords::keys_of(
  const std::string& name) const
{
  std::vector<std::string> out;
  out.reserve(gens.size());
  for (sn_t f : gens) {
    out.push_back(sn_key(f) + "." + name);
  }
  return out;
}

void WrittenBackRecords::end_replay()
{
  std::unordered_map<std::string, sn_t>().swap(loaded);
}

}  // namespace mimstore
