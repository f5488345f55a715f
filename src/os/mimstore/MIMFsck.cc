// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * fsck and repair (ceph-objectstore-tool --op fsck / repair, and their
 * deep forms). Both mount the store if it is not mounted (so the journal
 * is replayed first), cross-check the three places an object lives: its
 * file in a collection directory (the in-memory index is rebuilt from the
 * directories), its omap and xattrs in RocksDB, and the superblock; and
 * record the result for MIMSTORE_FSCK_ERRORS (MIMStatus.cc).
 *
 * What repair mends, and what it leaves:
 *   - a stray file in a collection (a name that is no object's): moved to
 *     <osd data>/QUARANTINE_DIR/<collection>/, never deleted (it may be an
 *     operator's, or evidence);
 *   - omap and xattrs of an object without a file: unreachable, removed
 *     (BlueStore's repair removes stray omap too), but only by a repair
 *     that quarantined nothing: a stray file may be that object's under a
 *     name that is not its own (a hand copy), and its omap is kept until
 *     the operator has looked (the next repair removes it);
 *   - what OmapStore's own check repairs (keys of no record, the nid
 *     counter);
 *   - left: an object in two collections (which name is right is the
 *     cluster's to say) and an unreadable object (scrub finds it, recovery
 *     rewrites it from a peer).
 */
#include "MIMStore.h"

#include <algorithm>
#include <sstream>

#include "common/debug.h"
#include "common/errno.h"

#include "Checksums.h"
#include "ObjectFiles.h"
#include "ObjectName.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;

using namespace mimstore;

int MIMStore::fsck(bool deep)
{
  return _fsck(deep, false);
}

int MIMStore::repair(bool deep)
{
  return _fsck(deep, true);
}

int MIMStore::_fsck(bool deep, bool repair)
{
  const char* what = repair ? "repair" : "fsck";
  bool was_mounted = mounted;
  if (!was_mounted) {
    // not fsck on mount as well: it would run this twice, and refuse the
    // mount a repair needs
    in_fsck = true;
    int r = mount();
    in_fsck = false;
    if (r < 0) {
      return r;
    }
  }
  FsckCount n;
  std::set<ghobject_t> with_files;
  std::vector<std::pair<CollectionRef, std::vector<ghobject_t>>> to_read;
  colls.for_each([&](const coll_t& cid, const CollectionRef& c) {
    mim::ReadLock cl(c->lock);
    if (c->exists) {
      _fsck_collection(cid, *c, repair, &with_files, &n);
      if (deep) {
        to_read.push_back({c, {c->objects.begin(), c->objects.end()}});
      }
    }
  });
  // deep: every object's bytes against their checksums, under the stripe
  // lock as a read (the flush thread may be writing the object back: a
  // mount starts it before fsck-on-mount and the tool's fsck), and so
  // outside every collection lock (the stripe comes first).
  auto read_object = [&](const coll_t& cid, const std::string& cname,
                         const ghobject_t& o, uint64_t* bad_chunks) {
    const string fname = object_file_name(o);
    std::lock_guard l(obj_locks.of(cname, fname));
    ObjectFDRef f;
    int r = files->open_object(cid, o, OpenMode::EXISTING, &f);
    uint64_t size = 0;
    if (r == 0) {
      r = files->size(f, &size);
    }
    if (r < 0) {
      return r;
    }
    // The whole object's cached extents at once: the stripe lock keeps them.
    const uint64_t cs = csums->chunk_size();
    std::vector<mim::CachedExtent> ext;
    htmll->lookup(cname, fname, 0, (size + cs - 1) / cs * cs, &ext);
    std::vector<uint64_t> bad;
    r = csums->check_range(o, f, 0, size,
                           [&](uint64_t chunk) {
                             return mim::extents_cover(ext, chunk * cs, cs);
                           }, &bad);
    *bad_chunks += bad.size();
    return r;
  };
  for (auto& [c, objs] : to_read) {
    for (auto& o : objs) {
      uint64_t bad_chunks = 0;
      int rr = read_object(c->cid, c->name, o, &bad_chunks);
      if (bad_chunks) {
        // Each logged by Checksums; left to the cluster (deep scrub and
        // repair from another copy), as an unreadable object is.
        derr << what << ": " << c->cid << "/" << o << ": " << bad_chunks
             << " chunks fail their data checksum or cannot be read"
             << dendl;
        n.errors += bad_chunks;
      } else if (rr < 0 && rr != -ENOENT) {
        derr << what << ": cannot read " << c->cid << "/" << o << ": "
             << cpp_strerror(rr) << dendl;
        ++n.errors;
      }
    }
  }
  _fsck_omap(with_files, repair, &n);
  if (repair && n.repaired > 0) {
    // The omap DB's changes synced (its writes here are not), everything
    // the mount replayed written back and the journal clean, so that no
    // later replay re-applies an op onto what repair changed (an omap
    // write of an object whose orphan omap was just removed).
    int r = omap->sync();
    if (r == 0) {
      r = _write_back_all();
    }
    if (r < 0) {
      derr << what << ": making the repair durable: " << cpp_strerror(r)
           << dendl;
      ++n.errors;
    }
  }
  dout(1) << what << (deep ? " (deep)" : "") << ": " << with_files.size()
          << " objects, " << n.errors << " errors"
          << (repair ? ", " + std::to_string(n.repaired) + " repaired" : "")
          << dendl;
  _record_fsck(n.errors, deep);
  if (!was_mounted) {
    umount();
  }
  return n.errors;
}

void MIMStore::_fsck_collection(const coll_t& cid, const Collection& c,
                                bool repair,
                                std::set<ghobject_t>* with_files,
                                FsckCount* n)
{
  const char* what = repair ? "repair" : "fsck";
  std::set<ghobject_t> on_disk;
  std::vector<string> bad;
  int r = files->list_objects(cid, &on_disk, &bad);
  if (r < 0) {
    derr << what << ": cannot list " << cid << ": " << cpp_strerror(r)
         << dendl;
    ++n->errors;
    return;
  }
  for (auto& b : bad) {
    if (!repair) {
      derr << what << ": stray file " << b << dendl;
      ++n->errors;
      continue;
    }
    string to;
    int rr = _quarantine(b, cid.to_str(), &to);
    if (rr == 0) {
      derr << what << ": stray file " << b << " moved to " << to << dendl;
      ++n->repaired;
      ++n->quarantined;
    } else {
      derr << what << ": stray file " << b << " cannot be moved: "
           << cpp_strerror(rr) << dendl;
      ++n->errors;
    }
  }
  if (on_disk != c.objects) {
    derr << what << ": " << cid << " index (" << c.objects.size()
         << ") and directory (" << on_disk.size() << ") disagree" << dendl;
    ++n->errors;
  }
  for (auto& o : on_disk) {
    if (!with_files->insert(o).second) {
      derr << what << ": " << o << " is in more than one collection"
           << dendl;
      ++n->errors;
    }
  }
}

void MIMStore::_fsck_omap(const std::set<ghobject_t>& with_files, bool repair,
                          FsckCount* n)
{
  const char* what = repair ? "repair" : "fsck";
  // Every omap header must belong to an object with a file.
  std::vector<ghobject_t> with_omap;
  int r = omap->list_objects(&with_omap);
  if (r < 0) {
    derr << what << ": cannot list omap objects: " << cpp_strerror(r)
         << dendl;
    ++n->errors;
  }
  for (auto& o : with_omap) {
    if (with_files.count(o)) {
      continue;
    }
    if (!repair || n->quarantined > 0) {
      derr << what << ": omap/xattrs of " << o << " without an object file"
           << (repair ? " (kept while a stray file is in quarantine: "
                        "repair again once it is looked at)" : "")
           << dendl;
      ++n->errors;
      continue;
    }
    int rr = omap->clear(o, nullptr);
    if (rr == 0 || rr == -ENOENT) {
      derr << what << ": omap/xattrs of " << o
           << " without an object file removed" << dendl;
      ++n->repaired;
    } else {
      derr << what << ": omap/xattrs of " << o
           << " without an object file cannot be removed: "
           << cpp_strerror(rr) << dendl;
      ++n->errors;
    }
  }
  // With repair OmapStore mends what it can and counts only the rest.
  std::ostringstream ss;
  r = omap->check(ss, repair);
  if (r < 0) {
    derr << what << ": cannot check the omap database: " << cpp_strerror(r)
         << dendl;
    ++n->errors;
  } else if (!ss.str().empty()) {
    derr << what << ": omap database: " << ss.str() << dendl;
    if (r > 0) {
      n->errors += r;
    } else if (repair) {
      ++n->repaired;
    }
  }
}

int MIMStore::_quarantine(const string& file, const string& cname, string* to)
{
  // Not lost+found: the data directory may be a filesystem's root, where
  // that name belongs to the filesystem's checker.
  string qdir = path + "/" + QUARANTINE_DIR;
  string cdir = qdir + "/" + cname;
  for (const string& d : {qdir, cdir}) {
    int r = io->mkdir(d, 0755);
    if (r < 0 && r != -EEXIST) {
      return r;
    }
  }
  // link, then unlink: unlike rename, link never replaces a file there
  string base = cdir + "/" + file.substr(file.rfind('/') + 1);
  string dest = base;
  int r;
  for (int i = 1; (r = io->link(file, dest)) == -EEXIST; ++i) {
    dest = base + "." + std::to_string(i);
  }
  if (r == 0) {
    r = io->unlink(file);
  }
  if (r < 0) {
    return r;
  }
  files->forget(file);
  // the new name, the collection's loss of it, and the directories made
  // above, each durable before repair counts it mended
  for (const string& d : {cdir, files->coll_dir(cname), qdir, path}) {
    r = files->fsync_dir(d);
    if (r < 0) {
      return r;
    }
  }
  *to = dest;
  return 0;
}
