// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "mimstore_test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/Cond.h"
#include "common/ceph_context.h"
#include "common/perf_counters.h"
#include "global/global_context.h"
#include "log/Log.h"
#include "include/stringify.h"
#include "os/mimstore/MIMStore.h"
#include "os/mimstore/Checksums.h"
#include "os/mimstore/ObjectFiles.h"
#include "os/mimstore/OmapStore.h"
#include "kv/KeyValueDB.h"
#include "core/io_env.h"

namespace mimtest {

StoreDir::StoreDir()
{
  const char* base = getenv("MIMSTORE_TEST_DIR");
  std::string tmpl = std::string(base ? base : "/var/tmp") +
                     "/mimstore-test.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  ceph_assert(mkdtemp(buf.data()));
  root = buf.data();
  data = root + "/data";
  journal = root + "/journal";
  ceph_assert(::mkdir(data.c_str(), 0755) == 0);
}

StoreDir::~StoreDir()
{
  if (!getenv("MIMSTORE_TEST_KEEP")) {
    std::string cmd = "rm -rf '" + root + "'";
    int r = system(cmd.c_str());
    (void)r;
  }
}

Conf::Conf(std::initializer_list<std::pair<std::string, std::string>> kv)
{
  for (auto& [k, v] : kv) {
    set(k, v);
  }
}

void Conf::set(const std::string& k, const std::string& v)
{
  auto& conf = g_ceph_context->_conf;
  if (!old.count(k)) {
    std::string cur;
    ceph_assert(conf.get_val(k, &cur) == 0);
    old[k] = cur;
  }
  conf.set_val_or_die(k, v);
  conf.apply_changes(nullptr);
}

const char* window_name(Window w)
{
  switch (w) {
  case Window::Off: return "off";
  case Window::Journal: return "on";
  case Window::Ram: return "on_ram";
  }
  return "?";
}

void set_window(Conf& c, Window w)
{
  c.set("mimstore_merge", w == Window::Off ? "false" : "true");
  if (w == Window::Ram) {
    c.set("mimstore_merge_data_in_journal", "false");
  }
}

Conf::~Conf()
{
  auto& conf = g_ceph_context->_conf;
  for (auto& [k, v] : old) {
    conf.set_val_or_die(k, v);
  }
  conf.apply_changes(nullptr);
}

std::unique_ptr<ObjectStore> make_store(const StoreDir& d,
                                        const std::string& type)
{
  return ObjectStore::create(g_ceph_context, type, d.data, d.journal);
}

int write_back_and_umount(ObjectStore* s)
{
  int r = static_cast<MIMStore*>(s)->write_back_all();
  int u = s->umount();
  return r < 0 ? r : u;
}

int apply(ObjectStore* s, ObjectStore::CollectionHandle& ch,
          ObjectStore::Transaction&& t)
{
  C_SaferCond c;
  t.register_on_commit(&c);
  int r = s->queue_transaction(ch, std::move(t));
  if (r < 0) {
    return r;
  }
  return c.wait();
}

int InFlight::queue(ObjectStore* s, ObjectStore::CollectionHandle& ch,
                    ObjectStore::Transaction&& t)
{
  auto c = std::make_unique<C_SaferCond>();
  t.register_on_commit(c.get());
  done.push_back(std::move(c));
  return s->queue_transaction(ch, std::move(t));
}

int InFlight::wait_all()
{
  int first = 0;
  for (auto& c : done) {
    int r = c->wait();
    if (r && !first) {
      first = r;
    }
  }
  done.clear();
  return first;
}

void start_with_collection(ObjectStore* s, const coll_t& cid,
                           ObjectStore::CollectionHandle* ch)
{
  ASSERT_EQ(0, s->mkfs());
  ASSERT_EQ(0, s->mount());
  *ch = s->create_new_collection(cid);
  ObjectStore::Transaction t;
  t.create_collection(cid, 0);
  ASSERT_EQ(0, apply(s, *ch, std::move(t)));
}

pid_t fork_child()
{
  g_ceph_context->_log->flush();
  g_ceph_context->notify_pre_fork();
  pid_t pid = fork();
  g_ceph_context->notify_post_fork();
  return pid;
}

void die_at(ObjectStore* s, const std::string& point, int n)
{
  auto count = std::make_shared<int>(0);
  static_cast<MIMStore*>(s)->set_debug_hook(
    [point, n, count](const char* where) {
      if (point == where && ++*count == n) {
        _exit(0);
      }
    });
}

int in_mounted_child(
  const StoreDir& d,
  const std::function<void(std::unique_ptr<ObjectStore>&)>& body)
{
  pid_t pid = fork_child();
  if (pid == 0) {
    auto s = make_store(d);
    if (s->mount() != 0) {
      _exit(2);
    }
    body(s);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

StoreState dump_state(ObjectStore* s)
{
  StoreState out;
  std::vector<coll_t> colls;
  s->list_collections(colls);
  for (auto& cid : colls) {
    auto ch = s->open_collection(cid);
    auto& objs = out[cid];
    ghobject_t next;
    ghobject_t pos;
    while (true) {
      std::vector<ghobject_t> ls;
      int r = s->collection_list(ch, pos, ghobject_t::get_max(), 64, &ls,
                                 &next);
      ceph_assert(r == 0);
      for (auto& o : ls) {
        ObjectState st;
        ceph::bufferlist bl;
        r = s->read(ch, o, 0, 0, bl);
        ceph_assert(r >= 0);
        st.data = bl.to_str();
        std::map<std::string, ceph::bufferptr, std::less<>> attrs;
        r = s->getattrs(ch, o, attrs);
        ceph_assert(r >= 0);
        for (auto& [k, v] : attrs) {
          st.attrs[k] = std::string(v.c_str(), v.length());
        }
        ceph::bufferlist hdr;
        std::map<std::string, ceph::bufferlist> kv;
        r = s->omap_get(ch, o, &hdr, &kv);
        ceph_assert(r >= 0);
        st.omap_header = hdr.to_str();
        for (auto& [k, v] : kv) {
          st.omap[k] = v.to_str();
        }
        objs[o] = std::move(st);
      }
      if (next.is_max()) {
        break;
      }
      pos = next;
    }
  }
  return out;
}

std::string diff_state(const StoreState& a, const StoreState& b)
{
  std::ostringstream ss;
  for (auto& [cid, objs] : a) {
    auto p = b.find(cid);
    if (p == b.end()) {
      ss << "collection " << cid << " only in the first";
      return ss.str();
    }
    for (auto& [o, st] : objs) {
      auto q = p->second.find(o);
      if (q == p->second.end()) {
        ss << cid << "/" << o << " only in the first";
        return ss.str();
      }
      const ObjectState& t = q->second;
      if (st.data != t.data) {
        size_t i = 0;
        while (i < st.data.size() && i < t.data.size() &&
               st.data[i] == t.data[i]) {
          ++i;
        }
        ss << cid << "/" << o << " data differs: sizes " << st.data.size()
           << " vs " << t.data.size() << ", first difference at " << i;
        return ss.str();
      }
      if (st.attrs != t.attrs) {
        ss << cid << "/" << o << " xattrs differ (" << st.attrs.size()
           << " vs " << t.attrs.size() << ")";
        return ss.str();
      }
      if (st.omap_header != t.omap_header) {
        ss << cid << "/" << o << " omap header differs";
        return ss.str();
      }
      if (st.omap != t.omap) {
        ss << cid << "/" << o << " omap differs (" << st.omap.size() << " vs "
           << t.omap.size() << " keys)";
        return ss.str();
      }
    }
    if (objs.size() != p->second.size()) {
      for (auto& [o, st] : p->second) {
        if (!objs.count(o)) {
          ss << cid << "/" << o << " only in the second";
          return ss.str();
        }
      }
    }
  }
  for (auto& [cid, objs] : b) {
    if (!a.count(cid)) {
      ss << "collection " << cid << " only in the second";
      return ss.str();
    }
  }
  return "";
}

RandomTxns::RandomTxns(uint64_t seed, int ncolls, int objs_per_coll,
                       bool wide_)
  : rng(seed), wide(wide_), bits(wide_ ? 3 : 1)
{
  // The hash's low `bits` bits name the base collection, the next one the
  // split side.
  if (wide) {
    ncolls = 8;
  }
  ceph_assert(ncolls == 1 << bits);
  for (int c = 0; c < ncolls; ++c) {
    colls.push_back(coll_t(spg_t(pg_t(c, 1))));
    objs.emplace_back();
    for (int i = 0; i < objs_per_coll; ++i) {
      // names that exercise the encoding: separators, escapes, a long one
      std::string name = "obj_" + std::to_string(i);
      if (i == 1) {
        name = "odd/name with spaces_and_%25";
      } else if (i == 2) {
        name = std::string(300, 'L') + std::to_string(c);
      }
      // the low bit is the base collection's; bit 1 decides the side of
      // a split
      hobject_t h(object_t(name), "", CEPH_NOSNAP,
                  (uint32_t(rng()) & ~uint32_t(ncolls - 1)) | c, 1,
                  i == 3 ? "ns" : "");
      objs.back().push_back(ghobject_t(h));
    }
  }
  split.assign(ncolls, false);
  deleting.assign(ncolls, false);
}

std::vector<ObjectStore::Transaction> RandomTxns::setup()
{
  std::vector<ObjectStore::Transaction> out;
  for (auto& c : colls) {
    ObjectStore::Transaction t;
    t.create_collection(c, bits);  // (1, wide 3)
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

coll_t pg_coll(uint32_t ps)
{
  return coll_t(spg_t(pg_t(ps, 1)));
}

}  // namespace

coll_t RandomTxns::home(const ghobject_t& o) const
{
  const uint32_t n = colls.size();
  uint32_t c = o.hobj.get_hash() & (n - 1);
  if (split[c] && o.match(bits + 1, c + n)) {
    return pg_coll(c + n);
  }

  return colls[c];
}

void RandomTxns::collection_event(ObjectStore::Transaction& t, int c,
                                  std::vector<coll_t>* created)
{
  const int n = colls.size();
  if (rng() % 2) {
    // split c into c+n (bits 1 -> 2), or merge it back
    coll_t child = pg_coll(c + n);
    if (!split[c]) {
      t.create_collection(child, bits + 1);
      t.split_collection(colls[c], bits + 1, c + n, child);
      if (created) {
        created->push_back(child);
      }
    } else {
      t.merge_collection(child, colls[c], bits);
    }
    split[c] = !split[c];
    last_coll = colls[c];
    return;
  }
  // PG deletion: objects (data, omap, xattrs) then the collection (ps 4n+c:
  // clear of the base collections and their split children)
  const uint32_t dps = 4 * n + c;
  coll_t del = pg_coll(dps);
  ghobject_t a(hobject_t(object_t("del_a"), "", CEPH_NOSNAP, dps, 1, ""));
  ghobject_t b(hobject_t(object_t("del_b"), "", CEPH_NOSNAP, dps, 1, ""));
  last_coll = del;
  if (!deleting[c]) {
    t.create_collection(del, 0);
    ceph::bufferlist d1, d2;
    d1.append(random_data(4096));
    d2.append(random_data(8192));
    t.write(del, a, 0, d1.length(), d1);
    t.write(del, b, 4096, d2.length(), d2);
    std::map<std::string, ceph::bufferlist> kv;
    kv["k"].append(random_data(40));
    t.omap_setkeys(del, b, kv);
    if (created) {
      created->push_back(del);
    }
  } else {
    t.remove(del, a);
    t.remove(del, b);
    t.remove_collection(del);
  }
  deleting[c] = !deleting[c];
}

namespace {

/// Zero-padded, so key order is numeric order (rmkeyrange needs
/// first <= last).
std::string omap_key(int i)
{
  char buf[16];
  snprintf(buf, sizeof(buf), "key%02d", i);
  return buf;
}

}  // namespace

ghobject_t RandomTxns::pick_obj(int c)
{
  auto& v = objs[c];
  // skewed: a few hot objects take most writes, like RBD under zipf
  size_t i = (rng() % 4 == 0) ? rng() % v.size() : rng() % 3;
  return v[i];
}

std::string RandomTxns::random_data(size_t len)
{
  std::string s(len, '\0');
  uint64_t x = rng();
  for (size_t i = 0; i < len; ++i) {
    if (i % 8 == 0) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    s[i] = char(x >> (8 * (i % 8)));
  }
  return s;
}

size_t RandomTxns::value_len(size_t small)
{
  if (wide && rng() % 8 == 0) {
    return 1 + rng() % (64 << 10);
  }
  return small;
}

ObjectStore::Transaction RandomTxns::next(std::vector<coll_t>* created)
{
  ObjectStore::Transaction t;
  int c = rng() % colls.size();
  last_changed = false;
  if (rng() % 16 == 0) {
    collection_event(t, c, created);
    if (wide) {
      last_changed = true;
      return t;  // alone: its collection's handle, nothing in flight
    }
  }
  int nops = 1 + rng() % 3;
  bool have_home = false;
  for (int k = 0; k < nops; ++k) {
    ghobject_t o = pick_obj(c);
    const coll_t cid = home(o);
    if (wide) {
      // one collection per transaction: the first object's
      if (!have_home) {
        last_coll = cid;
        have_home = true;
      } else if (!(cid == last_coll)) {
        continue;
      }
    }
    int kind = rng() % 100;
    if (kind < 55) {
      uint64_t off, len;
      int shape = rng() % 10;
      if (shape < 6) {
        off = (rng() % 1024) * 4096;
        len = 4096 * (1 + rng() % 2);
      } else if (shape < 8) {
        off = rng() % (4 << 20);
        len = 1 + rng() % 20000;
      } else if (shape < 9) {
        off = (rng() % 4) << 20;
        len = 1 << 20;
      } else {
        off = (4 << 20) + rng() % (1 << 20);  // beyond the block window
        len = 1 + rng() % 8192;
      }
      ceph::bufferlist bl;
      bl.append(random_data(len));
      t.write(cid, o, off, len, bl);
    } else if (kind < 60) {
      t.zero(cid, o, (rng() % 1024) * 4096, 1 + rng() % 65536);
    } else if (kind < 64) {
      t.truncate(cid, o, rng() % (5 << 20));
    } else if (kind < 67) {
      t.remove(cid, o);
    } else if (kind < 70) {
      t.touch(cid, o);
    } else if (kind < 76) {
      t.touch(cid, o);
      std::map<std::string, ceph::bufferlist, std::less<>> attrs;
      for (int a = 0; a < 2; ++a) {
        attrs["attr" + std::to_string(rng() % 4)].append(
          random_data(value_len(1 + rng() % 300)));
      }
      t.setattrs(cid, o, attrs);
    } else if (kind < 78) {
      if (wide && rng() % 3 == 0) {
        t.touch(cid, o);
        t.rmattrs(cid, o);
      } else {
        t.rmattr(cid, o, "attr" + std::to_string(rng() % 4));
      }
    } else if (kind < 81) {
      ghobject_t d = pick_obj(c);
      t.touch(cid, o);
      if (!(d == o) && home(d) == cid) {
        t.clone(cid, o, d);
        if (rng() % 4 == 0) {
          t.remove(cid, o);  // a snapshot trimmed right after
        }
      }
    } else if (kind < 83) {
      ghobject_t d = pick_obj(c);
      if (d == o || !(home(d) == cid)) {
        continue;
      }
      t.touch(cid, o);
      t.clone_range(cid, o, d, rng() % (1 << 20), rng() % 100000,
                    rng() % (1 << 20));
    } else if (kind < 90) {
      t.touch(cid, o);
      std::map<std::string, ceph::bufferlist> kv;
      for (int a = 0; a < 3; ++a) {
        kv[omap_key(rng() % 20)].append(
          random_data(value_len(rng() % 200)));
      }
      t.omap_setkeys(cid, o, kv);
    } else if (kind < 92) {
      t.touch(cid, o);
      std::set<std::string> keys{omap_key(rng() % 20)};
      t.omap_rmkeys(cid, o, keys);
    } else if (kind < 93) {
      t.touch(cid, o);
      int a = rng() % 20, b = rng() % 20;
      t.omap_rmkeyrange(cid, o, omap_key(std::min(a, b)),
                        omap_key(std::max(a, b)));
    } else if (kind < 95) {
      t.touch(cid, o);
      ceph::bufferlist h;
      h.append(random_data(rng() % 100));
      t.omap_setheader(cid, o, h);
    } else if (kind < 96) {
      t.touch(cid, o);
      t.omap_clear(cid, o);
    } else {
      // rename to a temporary name and back, as recovery does (within one
      // collection, onto a free name: Reef's OSD does nothing else, and
      // the other stores refuse it)
      ghobject_t tmp = o;
      tmp.hobj.oid.name += ".moved";
      t.touch(cid, o);
      t.collection_move_rename(cid, o, cid, tmp);
      if (rng() % 4) {
        t.collection_move_rename(cid, tmp, cid, o);
      } else {
        t.try_rename(cid, tmp, o);
      }
    }
  }
  return t;
}

int64_t perf_counter(ObjectStore* s, int idx)
{
  const PerfCounters* pc = s->get_perf_counters();
  if (!pc) {
    return -1;
  }
  return int64_t(pc->get(idx));
}

std::unique_ptr<KeyValueDB> open_store_db(const StoreDir& d,
                                          std::string* err)
{
  std::string dbdir = d.data + "/db";
  {
    std::ifstream in(d.data + "/mimstore_db_dir");
    std::string recorded;
    if (in && std::getline(in, recorded) && !recorded.empty()) {
      dbdir = recorded;
    }
  }
  std::unique_ptr<KeyValueDB> db(
    KeyValueDB::create(g_ceph_context, "rocksdb", dbdir));
  if (!db) {
    *err = "cannot make a RocksDB for " + dbdir;
    return nullptr;
  }
  mimstore::OmapStore::register_merge_operators(db.get());
  std::stringstream es;
  if (db->open(es) != 0) {
    *err = "cannot open " + dbdir + ": " + es.str();
    return nullptr;
  }
  return db;
}

int verify_checksums(const StoreDir& d, bool strict, std::string* report)
{
  std::string err;
  auto db = open_store_db(d, &err);
  if (!db) {
    *report += err;
    return -EIO;
  }
  mimstore::OmapStore omap(g_ceph_context, db.get());
  int r = omap.init(mimstore::Checksums::ORDER);
  if (r < 0) {
    return r;
  }
  auto io = mim::make_posix_io_env();
  mimstore::ObjectFiles files(g_ceph_context, io.get(), d.data, 16);
  r = files.open();
  if (r < 0) {
    return r;
  }
  mimstore::Checksums csums(g_ceph_context, &omap, &files,
                            mimstore::Checksums::ORDER, nullptr, false);
  std::vector<coll_t> colls;
  r = files.list_collections(&colls);
  int wrong = 0;
  for (size_t i = 0; r >= 0 && i < colls.size(); ++i) {
    std::set<ghobject_t> objs;
    r = files.list_objects(colls[i], &objs, nullptr);
    for (auto it = objs.begin(); r >= 0 && it != objs.end(); ++it) {
      mimstore::ObjectFDRef f;
      uint64_t size = 0;
      r = files.open_object(colls[i], *it, mimstore::OpenMode::EXISTING, &f);
      if (r == 0) {
        r = files.size(f, &size);
      }
      if (r < 0) {
        break;
      }
      int w = csums.debug_verify(*it, f, 0, size, strict);
      if (w < 0) {
        r = w;
        break;
      }
      // Past the end no chunk may claim data (a stale state would give a
      // false -EIO once the object grows again).
      const uint64_t cs = csums.chunk_size();
      const uint64_t end_chunk = (size + cs - 1) / cs;
      std::map<uint32_t, mim::CsumGroup> past;
      r = omap.csum_get(*it, mim::csum_group_of(end_chunk), UINT32_MAX,
                        &past);
      if (r < 0) {
        break;
      }
      for (auto& [g, grp] : past) {
        for (unsigned k = 0; k < mim::CSUM_GROUP_CHUNKS; ++k) {
          uint64_t c = uint64_t(g) * mim::CSUM_GROUP_CHUNKS + k;
          if (c >= end_chunk && grp.state(k) != mim::ChunkState::UNKNOWN &&
              grp.state(k) != mim::ChunkState::ZERO) {
            *report += stringify(*it) + " chunk " + stringify(c) +
              " past the end is " + mim::chunk_state_name(grp.state(k)) +
              "; ";
            ++w;
          }
        }
      }
      if (w > 0) {
        *report += stringify(colls[i]) + " " + stringify(*it) + ": " +
          stringify(w) + " wrong chunks (the log names them); ";
        wrong += w;
      }
    }
  }
  files.close();
  return r < 0 ? r : wrong;
}

}  // namespace mimtest
