// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: the backend on the data filesystem (osd data, on the HDD).
 *
 *   <osd data>/objects/<coll_t::to_str()>/<object file>   one file per object
 *
 * Object data is the file's data; xattrs and omap live in RocksDB
 * (OmapStore), not here. A collection's split bits and the replay guards
 * of non-idempotent operations are xattrs on the directory or file.
 *
 * All I/O goes through the mim::IoEnv seam, so tests can inject faults.
 * Writes are buffered (page cache); durability comes from sync_all()
 * (syncfs), which the store's sync thread calls before it advances the
 * checkpoint.
 *
 * Locking: ObjectFiles itself only guards its fd cache (fd_lock). Callers
 * serialize operations on one object (the store's object stripe locks) and
 * on one collection directory (the store's apply thread is the only writer
 * of directories). Opening an existing object needs no lock (a merged write
 * opens without one): two threads that both miss the cache open the file
 * twice, the later fd replaces the earlier in the cache, and each ObjectFD
 * stays valid while it is referenced.
 */
#pragma once

#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/hobject.h"
#include "include/buffer.h"
#include "osd/osd_types.h"
#include "os/SequencerPosition.h"

#include "core/io_env.h"
#include "core/thread_annotations.h"

#include "include/common_fwd.h"

namespace mimstore {

/// An object file's two replay marks (read by MIMStore::_guard_cmp and
/// the mount-time prune of the written-back records): the position of the
/// op that created it, and its replay guard.
struct ReplayMarks {
  bool born = false;
  SequencerPosition born_at;
  bool guarded = false;
  SequencerPosition guard;
  bool in_progress = false;  ///< (of the guard)
};

/// An open object file. Shared: the fd cache and the users of one object
/// hold references; the fd is closed when the last reference goes.
class ObjectFD {
 public:
  ObjectFD(mim::IoEnv* io, int fd, std::string path)
    : io(io), fd(fd), path(std::move(path)) {}
  ~ObjectFD();
  ObjectFD(const ObjectFD&) = delete;
  ObjectFD& operator=(const ObjectFD&) = delete;

  mim::IoEnv* const io;
  const int fd;
  const std::string path;
};
using ObjectFDRef = std::shared_ptr<ObjectFD>;

/// open_object: only an object that exists, or create it when missing.
/// (Declared without its enumerators in MIMStore.h.)
enum class OpenMode : uint8_t { EXISTING, CREATE };
/// A replay guard being set: the op it guards is done, or it is set before
/// a multi-step op and closed after it (replay then resumes the op at that
/// position, see MIMStore::_guard_cmp).
enum class GuardState : uint8_t { DONE, IN_PROGRESS };

class ObjectFiles {
 public:
  ObjectFiles(CephContext* cct, mim::IoEnv* io, const std::string& data_dir,
              uint32_t fd_cache_size);
  ~ObjectFiles();

  int mkfs();    ///< create the objects/ directory
  int open();    ///< open the data filesystem (for syncfs) and check layout
  void close();

  /// Directory of a collection, and the path of an object file in it.
  std::string coll_dir(const std::string& cname) const;
  std::string object_path(const std::string& cname,
                          const std::string& fname) const;

  // ---- collections ----
  int list_collections(std::vector<coll_t>* out);
  int create_collection(const coll_t& c, int bits);
  int remove_collection(const coll_t& c);          ///< -ENOTEMPTY if not empty
  int set_collection_bits(const coll_t& c, int bits);
  int get_collection_bits(const coll_t& c, int* bits);
  /// Every object in the collection directory. Files that do not decode are
  /// reported in `bad` (fsck) and skipped; an incomplete long-name create is
  /// removed.
  int list_objects(const coll_t& c, std::set<ghobject_t>* out,
                   std::vector<std::string>* bad);

  // ---- objects ----
  /// Open (with CREATE, create if missing) the file of `oid`. -ENOENT if
  /// absent.
  /// A file this call creates records `born` (the creating op's position)
  /// in an xattr: replay uses it to skip older ops on the same name, which
  /// saw no object (see MIMStore::_guard_cmp).
  int open_object(const coll_t& c, const ghobject_t& oid, OpenMode mode,
                  ObjectFDRef* out, const SequencerPosition* born = nullptr);
  /// The creation position recorded by open_object; -ENODATA if none.
  int get_born(const ObjectFDRef& f, SequencerPosition* pos);
  /// Where byte `off` of an object file sits on the data device (see
  /// mim::IoEnv::physical_offset); uses a cached fd or a short-lived one,
  /// so that a pass over many objects does not evict the cache.
  int physical_offset(const std::string& cname, const std::string& fname,
                      uint64_t off, uint64_t* phys);
  /// Open an existing object file by its collection and file name (the
  /// flush thread knows objects only by these names).
  int open_by_name(const std::string& cname, const std::string& fname,
                   ObjectFDRef* out);
  int remove_object(const coll_t& c, const ghobject_t& oid);
  /// Move a file to another collection under the same object name (split,
  /// merge); an existing destination is replaced.
  int move_object(const coll_t& oc, const coll_t& nc, const ghobject_t& oid);
  /// Give the object's file a second name (link(2)): the first step of a
  /// rename. -EEXIST if the new name exists.
  int link_object(const coll_t& oc, const ghobject_t& ooid,
                  const coll_t& nc, const ghobject_t& noid);
  /// Remove one name of a file that has another (the last step of a
  /// rename): the inode stays, with the other name.
  int unlink_name(const coll_t& c, const ghobject_t& oid);

  int write(const ObjectFDRef& f, uint64_t off, const ceph::bufferlist& bl);
  int write_iov(const ObjectFDRef& f, uint64_t off,
                const std::vector<struct iovec>& iov);
  /// Read [off, off+len) into `bl`; short at end of file.
  int read(const ObjectFDRef& f, uint64_t off, uint64_t len,
           ceph::bufferlist* bl);
  int read_into(const ObjectFDRef& f, uint64_t off, uint64_t len, char* buf);
  /// read_into from memory only (IoEnv::pread_cached): -EAGAIN when a
  /// byte would have to come from the disk, -EOPNOTSUPP where that cannot
  /// be told.
  int read_cached_into(const ObjectFDRef& f, uint64_t off, uint64_t len,
                       char* buf);
  /// Start (or with `wait`, start and wait for) writeback of a range; see
  /// IoEnv::writeback. Makes nothing durable.
  int writeback(const ObjectFDRef& f, uint64_t off, uint64_t len, bool wait);
  int truncate(const ObjectFDRef& f, uint64_t size);
  int zero(const ObjectFDRef& f, uint64_t off, uint64_t len);
  int size(const ObjectFDRef& f, uint64_t* size);
  /// Data ranges of [off, off+len) (SEEK_DATA/SEEK_HOLE).
  int fiemap(const ObjectFDRef& f, uint64_t off, uint64_t len,
             std::map<uint64_t, uint64_t>* out);
  /// dst becomes a copy of src's data (reflink when the filesystem can).
  int clone(const ObjectFDRef& src, const ObjectFDRef& dst);
  int clone_range(const ObjectFDRef& src, uint64_t srcoff, uint64_t len,
                  const ObjectFDRef& dst, uint64_t dstoff);

  // ---- replay guards ----
  /// Replay guards (FileStore's idea): a non-idempotent operation at
  /// position P records P on its target once its effect is durable; replay
  /// skips operations at or before the recorded position.
  /// A guard may be "in progress": set before a multi-step operation
  /// (rename), closed after it.
  int get_guard(const ObjectFDRef& f, SequencerPosition* pos,
                bool* in_progress);  ///< -ENODATA if none
  /// Both marks of `f` (birth and guard); a mark not there is not an
  /// error. -errno if either cannot be read, -EIO if one does not decode:
  /// replay must not take an unreadable mark for a missing one.
  int get_marks(const ObjectFDRef& f, ReplayMarks* m);
  /// REQUIRES: the guarded effect's omap changes are durable (the caller
  /// syncs RocksDB first).
  int set_guard(const ObjectFDRef& f, const SequencerPosition& pos,
                GuardState state);
  /// A collection guard asserts that every op on the collection before it
  /// is durable: setting one syncs the whole data filesystem first.
  int get_collection_guard(const coll_t& c, SequencerPosition* pos,
                           bool* in_progress = nullptr);
  int set_collection_guard(const coll_t& c, const SequencerPosition& pos,
                           GuardState state);

  // ---- tombstones of merged-away collections ----
  /// A collection merged into another leaves a tombstone (objects/.gone/
  /// <cname>, the merge's position) before its directory goes: replay must
  /// not re-create it from older ops, whose effects moved with the objects.
  /// REQUIRES: every earlier op on the collection is durable.
  int set_tombstone(const coll_t& c, const SequencerPosition& pos);
  int get_tombstone(const coll_t& c, SequencerPosition* pos);  ///< -ENOENT
  /// Every tombstone, to drop those the checkpoint has passed.
  int list_tombstones(std::map<coll_t, SequencerPosition>* out);
  int remove_tombstone(const coll_t& c);

  /// Make everything written so far durable (syncfs of the data filesystem).
  int sync_all();
  /// fsync a directory: makes the names created, renamed or removed in it
  /// durable.
  int fsync_dir(const std::string& dir);
  /// Drop an fd cache entry (after remove/rename, or to bound memory).
  void forget(const std::string& path);


 private:
  /// -ENOENT on a miss, with *epoch the forget epoch to hand to
  /// insert_cached() after opening the file.
  int lookup_cached(const std::string& path, ObjectFDRef* out,
                    uint64_t* epoch);
  /// Cache f, unless a forget() ran since `epoch` was read: the file
  /// opened may then be one that was renamed or unlinked away from path
  /// after the open (a split's move, a remove), and caching it would map
  /// path to that inode, so a later create of path would find it and make
  /// no file.
  void insert_cached(const std::string& path, const ObjectFDRef& f,
                     uint64_t epoch);
  int open_path(const std::string& path, bool create,
                const std::string* long_name, ObjectFDRef* out,
                const SequencerPosition* born = nullptr);
  std::string tombstone_path(const std::string& cname) const;

  CephContext* const cct;
  mim::IoEnv* const io;
  const std::string data_dir;
  const std::string objects_dir;
  const uint32_t fd_cache_size;
  int root_fd = -1;  ///< the data filesystem, for syncfs

  /// Protects the fd cache below.
  mim::Mutex fd_lock;
  /// Most recent first.
  std::list<std::string> lru MIM_GUARDED_BY(fd_lock);
  struct Cached {
    ObjectFDRef fd;
    std::list<std::string>::iterator lru_pos;
  };
  std::unordered_map<std::string, Cached> cache MIM_GUARDED_BY(fd_lock);
  /// forget() calls so far (any path: a forget is rare, a skipped insert
  /// only costs an open).
  uint64_t forget_epoch MIM_GUARDED_BY(fd_lock) = 0;
};

}  // namespace mimstore
