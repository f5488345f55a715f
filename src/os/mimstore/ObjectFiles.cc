// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "ObjectFiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/debug.h"
#include "common/errno.h"
#include "ObjectName.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << data_dir << ").files "

namespace mimstore {

namespace {

/// The whole value of xattr `name` of `path`, however long.
int get_xattr_string(const std::string& path, const std::string& name,
                     std::string* out)
{
  for (;;) {
    ssize_t n = ::getxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (n < 0) {
      return -errno;
    }
    out->resize(n);
    ssize_t m = ::getxattr(path.c_str(), name.c_str(), out->data(), n);
    if (m >= 0) {
      out->resize(m);
      return 0;
    }
    if (errno != ERANGE) {
      return -errno;
    }
    // it grew between the two calls: ask again
  }
}

constexpr const char* BITS_XATTR = "user.mim.bits";
constexpr const char* GUARD_XATTR = "user.mim.guard";
constexpr const char* BORN_XATTR = "user.mim.born";
/// Tombstones of merged-away collections; list_collections skips dot names.
constexpr const char* GONE_DIR = ".gone";
constexpr size_t COPY_CHUNK = 1 << 20;

std::string basename(const std::string& path)
{
  return path.substr(path.rfind('/') + 1);
}

int decode_guard(const std::string& v, SequencerPosition* pos,
                 bool* in_progress);

}  // namespace

ObjectFD::~ObjectFD()
{
  io->close(fd);
}

ObjectFiles::ObjectFiles(CephContext* cct, mim::IoEnv* io,
                         const std::string& data_dir, uint32_t fd_cache_size)
  : cct(cct), io(io), data_dir(data_dir),
    objects_dir(data_dir + "/objects"), fd_cache_size(fd_cache_size)
{
}

ObjectFiles::~ObjectFiles()
{
  close();
}

int ObjectFiles::mkfs()
{
  int r = io->mkdir(objects_dir, 0755);
  if (r < 0 && r != -EEXIST) {
    derr << __func__ << " cannot create " << objects_dir << ": "
         << cpp_strerror(r) << dendl;
    return r;
  }
  return fsync_dir(data_dir);
}

int ObjectFiles::open()
{
  int r = io->open(objects_dir, O_RDONLY | O_DIRECTORY, 0, &root_fd);
  if (r < 0) {
    derr << __func__ << " cannot open " << objects_dir << ": "
         << cpp_strerror(r) << " (was this store made by mimstore mkfs?)"
         << dendl;
    root_fd = -1;
    return r;
  }
  return 0;
}

void ObjectFiles::close()
{
  {
    mim::MutexLock l(fd_lock);
    cache.clear();
    lru.clear();
  }
  if (root_fd >= 0) {
    io->close(root_fd);
    root_fd = -1;
  }
}

std::string ObjectFiles::coll_dir(const std::string& cname) const
{
  return objects_dir + "/" + cname;
}

std::string ObjectFiles::object_path(const std::string& cname,
                                     const std::string& fname) const
{
  return objects_dir + "/" + cname + "/" + fname;
}

int ObjectFiles::fsync_dir(const std::string& dir)
{
  int fd;
  int r = io->open(dir, O_RDONLY | O_DIRECTORY, 0, &fd);
  if (r < 0) {
    return r;
  }
  r = io->fsync(fd);
  io->close(fd);
  return r;
}

// ---- collections ----

int ObjectFiles::list_collections(std::vector<coll_t>* out)
{
  DIR* d = ::opendir(objects_dir.c_str());
  if (!d) {
    return -errno;
  }
  while (struct dirent* de = ::readdir(d)) {
    if (de->d_name[0] == '.') {
      continue;
    }
    coll_t c;
    if (!c.parse(de->d_name)) {
      derr << __func__ << " ignoring unknown directory " << de->d_name
           << dendl;
      continue;
    }
    out->push_back(c);
  }
  ::closedir(d);
  return 0;
}

int ObjectFiles::create_collection(const coll_t& c, int bits)
{
  std::string dir = coll_dir(c.to_str());
  int r = io->mkdir(dir, 0755);
  if (r < 0) {
    return r;  // -EEXIST is for the caller to judge (replay)
  }
  r = set_collection_bits(c, bits);
  if (r < 0) {
    return r;
  }
  return 0;
}

int ObjectFiles::remove_collection(const coll_t& c)
{
  std::string dir = coll_dir(c.to_str());
  return io->rmdir(dir);
}

int ObjectFiles::set_collection_bits(const coll_t& c, int bits)
{
  int fd;
  int r = io->open(coll_dir(c.to_str()), O_RDONLY | O_DIRECTORY, 0, &fd);
  if (r < 0) {
    return r;
  }
  std::string v = std::to_string(bits);
  r = io->fsetxattr(fd, BITS_XATTR, v.data(), v.size(), 0);
  io->close(fd);
  return r;
}

int ObjectFiles::get_collection_bits(const coll_t& c, int* bits)
{
  std::string dir = coll_dir(c.to_str());
  char buf[32];
  ssize_t n = ::getxattr(dir.c_str(), BITS_XATTR, buf, sizeof(buf) - 1);
  if (n < 0) {
    return -errno;
  }
  buf[n] = 0;
  *bits = atoi(buf);
  return 0;
}

int ObjectFiles::list_objects(const coll_t& c, std::set<ghobject_t>* out,
                              std::vector<std::string>* bad)
{
  std::string dir = coll_dir(c.to_str());
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    return -errno;
  }
  std::vector<std::string> incomplete;
  while (struct dirent* de = ::readdir(d)) {
    std::string fname = de->d_name;
    if (fname[0] == '.') {
      continue;
    }
    std::string full = fname;
    if (is_long_file_name(fname)) {
      std::string path = dir + "/" + fname;
      int r = get_xattr_string(path, long_name_xattr(fname), &full);
      if (r == -ENODATA) {
        // created, crashed before the name was set: nothing was written
        // into it, and the create will be replayed from the journal.
        incomplete.push_back(path);
        continue;
      }
      if (r < 0) {
        // Any other failure says nothing about the file: refuse rather
        // than guess (removing it could remove a live object).
        derr << __func__ << " cannot read the name of " << path << ": "
             << cpp_strerror(r) << dendl;
        ::closedir(d);
        return r;
      }
    }
    ghobject_t oid;
    // Only the canonical name of an object counts; anything else (a stray
    // file, a hand-made name) would otherwise alias a real object.
    if (!decode_object_name(full, &oid) || object_file_name(oid) != fname) {
      if (bad) {
        bad->push_back(dir + "/" + fname);
      }
      derr << __func__ << " " << dir << "/" << fname
           << " is not a mimstore object file; ignored" << dendl;
      continue;
    }
    out->insert(oid);
  }
  ::closedir(d);
  for (auto& p : incomplete) {
    dout(1) << __func__ << " removing incomplete create " << p << dendl;
    io->unlink(p);
  }
  return 0;
}

// ---- fd cache ----

int ObjectFiles::lookup_cached(const std::string& path, ObjectFDRef* out,
                               uint64_t* epoch)
{
  mim::MutexLock l(fd_lock);
  auto p = cache.find(path);
  if (p == cache.end()) {
    *epoch = forget_epoch;
    return -ENOENT;
  }
  lru.splice(lru.begin(), lru, p->second.lru_pos);
  *out = p->second.fd;
  return 0;
}

void ObjectFiles::insert_cached(const std::string& path, const ObjectFDRef& f,
                                uint64_t epoch)
{
  mim::MutexLock l(fd_lock);
  if (forget_epoch != epoch) {
    return;
  }
  auto p = cache.find(path);
  if (p != cache.end()) {
    lru.splice(lru.begin(), lru, p->second.lru_pos);
    p->second.fd = f;
    return;
  }
  lru.push_front(path);
  cache.emplace(path, Cached{f, lru.begin()});
  while (cache.size() > fd_cache_size) {
    cache.erase(lru.back());
    lru.pop_back();
  }
}

void ObjectFiles::forget(const std::string& path)
{
  mim::MutexLock l(fd_lock);
  ++forget_epoch;
  auto p = cache.find(path);
  if (p != cache.end()) {
    lru.erase(p->second.lru_pos);
    cache.erase(p);
  }
}

// ---- objects ----

int ObjectFiles::open_path(const std::string& path, bool create,
                           const std::string* long_name, ObjectFDRef* out,
                           const SequencerPosition* born)
{
  uint64_t epoch = 0;
  if (lookup_cached(path, out, &epoch) == 0) {
    return 0;
  }
  int fd = -1;
  int flags = O_RDWR | O_CLOEXEC;
  int r = io->open(path, flags, 0644, &fd);
  if (r == -ENOENT && create) {
    r = io->open(path, flags | O_CREAT, 0644, &fd);
    if (r < 0) {
      return r;  // nothing was created, nothing to undo
    }
    if (long_name) {
      r = io->fsetxattr(fd, long_name_xattr(basename(path)), long_name->data(),
                        long_name->size(), 0);
    }
    if (r == 0 && born) {
      ceph::bufferlist bl;
      encode(*born, bl);
      r = io->fsetxattr(fd, BORN_XATTR, bl.c_str(), bl.length(), 0);
    }
    if (r < 0) {
      io->close(fd);
      io->unlink(path);
      return r;
    }
  }
  if (r < 0) {
    return r;
  }
  if (long_name && !create) {
    // 160-bit names do not collide in practice; check anyway, because a
    // collision would silently mix two objects.
    std::string stored;
    if (io->fgetxattr(fd, long_name_xattr(basename(path)), &stored) == 0 &&
        stored != *long_name) {
      derr << __func__ << " long name collision at " << path << dendl;
      io->close(fd);
      return -EEXIST;
    }
  }
  *out = std::make_shared<ObjectFD>(io, fd, path);
  insert_cached(path, *out, epoch);
  return 0;
}

int ObjectFiles::open_object(const coll_t& c, const ghobject_t& oid,
                             OpenMode mode, ObjectFDRef* out,
                             const SequencerPosition* born)
{
  const bool create = mode == OpenMode::CREATE;
  std::string fname = object_file_name(oid);
  std::string path = object_path(c.to_str(), fname);
  if (is_long_file_name(fname)) {
    std::string full = encode_object_name(oid);
    return open_path(path, create, &full, out, born);
  }
  return open_path(path, create, nullptr, out, born);
}

int ObjectFiles::get_born(const ObjectFDRef& f, SequencerPosition* pos)
{
  std::string v;
  int r = io->fgetxattr(f->fd, BORN_XATTR, &v);
  if (r < 0) {
    return r;
  }
  return decode_guard(v, pos, nullptr);
}

int ObjectFiles::physical_offset(const std::string& cname,
                                 const std::string& fname, uint64_t off,
                                 uint64_t* phys)
{
  const std::string path = object_path(cname, fname);
  ObjectFDRef f;
  uint64_t epoch;
  if (lookup_cached(path, &f, &epoch) == 0) {
    return io->physical_offset(f->fd, off, phys);
  }
  int fd;
  int r = io->open(path, O_RDONLY | O_CLOEXEC, 0, &fd);
  if (r < 0) {
    return r;
  }
  r = io->physical_offset(fd, off, phys);
  io->close(fd);
  return r;
}

int ObjectFiles::open_by_name(const std::string& cname,
                              const std::string& fname, ObjectFDRef* out)
{
  return open_path(object_path(cname, fname), false, nullptr, out);
}

int ObjectFiles::remove_object(const coll_t& c, const ghobject_t& oid)
{
  std::string path = object_path(c.to_str(), object_file_name(oid));
  int r = io->unlink(path);
  // After the unlink: an open that raced it cannot cache the unlinked
  // inode (insert_cached), and none after it finds one.
  forget(path);
  return r;
}

int ObjectFiles::move_object(const coll_t& oc, const coll_t& nc,
                             const ghobject_t& oid)
{
  // Same object name, so a long name's xattr stays valid.
  std::string fname = object_file_name(oid);
  std::string from = object_path(oc.to_str(), fname);
  std::string to = object_path(nc.to_str(), fname);
  int r = io->rename(from, to);
  // After the rename, as in remove_object(): an open of `from` that raced
  // the rename must not leave `from` mapped to the inode now at `to`.
  forget(from);
  forget(to);
  return r;
}

int ObjectFiles::link_object(const coll_t& oc, const ghobject_t& ooid,
                             const coll_t& nc, const ghobject_t& noid)
{
  std::string from = object_path(oc.to_str(), object_file_name(ooid));
  std::string nfname = object_file_name(noid);
  std::string to = object_path(nc.to_str(), nfname);
  if (is_long_file_name(nfname)) {
    // the new name's xattr first, so the new name decodes once it exists
    ObjectFDRef f;
    int r = open_path(from, false, nullptr, &f);
    if (r < 0) {
      return r;
    }
    std::string full = encode_object_name(noid);
    r = io->fsetxattr(f->fd, long_name_xattr(nfname), full.data(),
                      full.size(), 0);
    if (r < 0) {
      return r;
    }
  }
  forget(to);
  return io->link(from, to);
}

int ObjectFiles::unlink_name(const coll_t& c, const ghobject_t& oid)
{
  std::string fname = object_file_name(oid);
  std::string path = object_path(c.to_str(), fname);
  if (is_long_file_name(fname)) {
    // drop this name's xattr from the inode, which lives on under the
    // other name; absent is fine (replay)
    ObjectFDRef f;
    if (open_path(path, false, nullptr, &f) == 0) {
      io->fremovexattr(f->fd, long_name_xattr(fname));
    }
  }
  int r = io->unlink(path);
  forget(path);  // after, as in remove_object()
  return r;
}

int ObjectFiles::write(const ObjectFDRef& f, uint64_t off,
                       const ceph::bufferlist& bl)
{
  std::vector<struct iovec> iov;
  iov.reserve(bl.get_num_buffers());
  for (auto& p : bl.buffers()) {
    if (p.length()) {
      iov.push_back({const_cast<char*>(p.c_str()), p.length()});
    }
  }
  return write_iov(f, off, iov);
}

int ObjectFiles::write_iov(const ObjectFDRef& f, uint64_t off,
                           const std::vector<struct iovec>& iov)
{
  // IOV_MAX bounds one call; the seam loops over short writes.
  size_t i = 0;
  while (i < iov.size()) {
    size_t n = std::min<size_t>(iov.size() - i, 1024);
    uint64_t len = 0;
    for (size_t j = i; j < i + n; ++j) {
      len += iov[j].iov_len;
    }
    ssize_t r = io->pwritev(f->fd, &iov[i], n, off);
    if (r < 0) {
      return r;
    }
    ceph_assert(uint64_t(r) == len);
    off += len;
    i += n;
  }
  return 0;
}

int ObjectFiles::writeback(const ObjectFDRef& f, uint64_t off, uint64_t len,
                           bool wait)
{
  return io->writeback(f->fd, off, len, wait);
}

int ObjectFiles::read_into(const ObjectFDRef& f, uint64_t off, uint64_t len,
                           char* buf)
{
  ssize_t r = io->pread(f->fd, buf, len, off);
  return r < 0 ? r : int(r);
}

int ObjectFiles::read_cached_into(const ObjectFDRef& f, uint64_t off,
                                  uint64_t len, char* buf)
{
  ssize_t r = io->pread_cached(f->fd, buf, len, off);
  return r < 0 ? r : int(r);
}

int ObjectFiles::read(const ObjectFDRef& f, uint64_t off, uint64_t len,
                      ceph::bufferlist* bl)
{
  if (len == 0) {
    return 0;
  }
  ceph::bufferptr bp = ceph::buffer::create(len);
  ssize_t r = io->pread(f->fd, bp.c_str(), len, off);
  if (r < 0) {
    return r;
  }
  bp.set_length(r);
  bl->append(std::move(bp));
  return r;
}

int ObjectFiles::truncate(const ObjectFDRef& f, uint64_t size)
{
  return io->ftruncate(f->fd, size);
}

int ObjectFiles::size(const ObjectFDRef& f, uint64_t* size)
{
  struct stat st;
  if (::fstat(f->fd, &st) < 0) {
    return -errno;
  }
  *size = st.st_size;
  return 0;
}

int ObjectFiles::zero(const ObjectFDRef& f, uint64_t off, uint64_t len)
{
  if (len == 0) {
    return 0;
  }
  uint64_t sz;
  int r = size(f, &sz);
  if (r < 0) {
    return r;
  }
  // Punch what lies inside the file; zeroing past EOF only extends it.
  if (off < sz) {
    uint64_t plen = std::min(len, sz - off);
    r = io->fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      off, plen);
    if (r == -EOPNOTSUPP) {
      std::string zeros(std::min<uint64_t>(plen, COPY_CHUNK), '\0');
      for (uint64_t done = 0; done < plen; ) {
        uint64_t n = std::min<uint64_t>(plen - done, zeros.size());
        struct iovec v = {zeros.data(), n};
        ssize_t w = io->pwritev(f->fd, &v, 1, off + done);
        if (w < 0) {
          return w;
        }
        done += n;
      }
      r = 0;
    }
    if (r < 0) {
      return r;
    }
  }
  if (off + len > sz) {
    r = io->ftruncate(f->fd, off + len);
  }
  return r;
}

int ObjectFiles::fiemap(const ObjectFDRef& f, uint64_t off, uint64_t len,
                        std::map<uint64_t, uint64_t>* out)
{
  uint64_t sz;
  int r = size(f, &sz);
  if (r < 0) {
    return r;
  }
  uint64_t end = std::min(sz, off + len);
  uint64_t pos = off;
  while (pos < end) {
    off_t data = ::lseek(f->fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) {
        break;
      }
      // no SEEK_DATA: report everything as data
      (*out)[pos] = end - pos;
      break;
    }
    if (uint64_t(data) >= end) {
      break;
    }
    off_t hole = ::lseek(f->fd, data, SEEK_HOLE);
    uint64_t hend = hole < 0 ? end : std::min<uint64_t>(hole, end);
    (*out)[data] = hend - data;
    pos = hend;
  }
  return 0;
}

int ObjectFiles::clone(const ObjectFDRef& src, const ObjectFDRef& dst)
{
  int r = io->ftruncate(dst->fd, 0);
  if (r < 0) {
    return r;
  }
  r = io->clone_file(src->fd, dst->fd);
  if (r == 0) {
    return 0;
  }
  if (r != -EOPNOTSUPP && r != -EXDEV && r != -EINVAL) {
    return r;
  }
  uint64_t sz;
  r = size(src, &sz);
  if (r < 0) {
    return r;
  }
  r = clone_range(src, 0, sz, dst, 0);
  if (r < 0) {
    return r;
  }
  return io->ftruncate(dst->fd, sz);
}

int ObjectFiles::clone_range(const ObjectFDRef& src, uint64_t srcoff,
                             uint64_t len, const ObjectFDRef& dst,
                             uint64_t dstoff)
{
  // Copy by reading; the source's holes read as zeros, which is what the
  // destination range must hold. (FICLONERANGE needs block alignment of
  // both ranges and an unchanged tail; plain copies keep this simple.)
  uint64_t sz;
  int r = size(src, &sz);
  if (r < 0) {
    return r;
  }
  std::string buf(std::min<uint64_t>(std::max<uint64_t>(len, 1), COPY_CHUNK),
                  '\0');
  for (uint64_t done = 0; done < len; ) {
    uint64_t n = std::min<uint64_t>(len - done, buf.size());
    uint64_t got = 0;
    if (srcoff + done < sz) {
      ssize_t rr = io->pread(src->fd, buf.data(), n, srcoff + done);
      if (rr < 0) {
        return rr;
      }
      got = rr;
    }
    if (got < n) {
      memset(buf.data() + got, 0, n - got);
    }
    struct iovec v = {buf.data(), n};
    ssize_t w = io->pwritev(dst->fd, &v, 1, dstoff + done);
    if (w < 0) {
      return w;
    }
    done += n;
  }
  return 0;
}

// ---- replay guards ----

namespace {

/// Guard value: SequencerPosition, then a bool "in progress".
int decode_guard(const std::string& v, SequencerPosition* pos,
                 bool* in_progress)
{
  ceph::bufferlist bl;
  bl.append(v);
  try {
    auto p = bl.cbegin();
    decode(*pos, p);
    bool ip = false;
    if (!p.end()) {
      decode(ip, p);
    }
    if (in_progress) {
      *in_progress = ip;
    }
  } catch (ceph::buffer::error&) {
    return -EIO;
  }
  return 0;
}

}  // namespace

int ObjectFiles::get_guard(const ObjectFDRef& f, SequencerPosition* pos,
                           bool* in_progress)
{
  std::string v;
  int r = io->fgetxattr(f->fd, GUARD_XATTR, &v);
  if (r < 0) {
    return r;
  }
  return decode_guard(v, pos, in_progress);
}

int ObjectFiles::get_marks(const ObjectFDRef& f, ReplayMarks* m)
{
  *m = ReplayMarks();
  int r = get_born(f, &m->born_at);
  if (r < 0 && r != -ENODATA) {
    return r;
  }
  m->born = r == 0;
  r = get_guard(f, &m->guard, &m->in_progress);
  if (r < 0 && r != -ENODATA) {
    return r;
  }
  m->guarded = r == 0;
  return 0;
}

int ObjectFiles::set_guard(const ObjectFDRef& f, const SequencerPosition& pos,
                           GuardState state)
{
  // The effect being guarded must be durable before the guard is: else a
  // crash could leave the guard without the effect, and replay would skip
  // an operation that never happened.
  int r = io->fsync(f->fd);
  if (r < 0) {
    return r;
  }
  ceph::bufferlist bl;
  encode(pos, bl);
  encode(state == GuardState::IN_PROGRESS, bl);  // one byte, as a bool
  r = io->fsetxattr(f->fd, GUARD_XATTR, bl.c_str(), bl.length(), 0);
  if (r < 0) {
    return r;
  }
  // And the guard durable before any later operation's effect is.
  return io->fsync(f->fd);
}

int ObjectFiles::get_collection_guard(const coll_t& c, SequencerPosition* pos,
                                      bool* in_progress)
{
  std::string dir = coll_dir(c.to_str());
  char buf[128];
  ssize_t n = ::getxattr(dir.c_str(), GUARD_XATTR, buf, sizeof(buf));
  if (n < 0) {
    return -errno;
  }
  return decode_guard(std::string(buf, n), pos, in_progress);
}

int ObjectFiles::set_collection_guard(const coll_t& c,
                                      const SequencerPosition& pos,
                                      GuardState state)
{
  int fd;
  int r = io->open(coll_dir(c.to_str()), O_RDONLY | O_DIRECTORY, 0, &fd);
  if (r < 0) {
    return r;
  }
  // Everything before the guard, then the guard: replay skips every op on
  // the collection up to it, so all of them must be durable first.
  r = io->syncfs(fd);
  if (r == 0) {
    ceph::bufferlist bl;
    encode(pos, bl);
    encode(state == GuardState::IN_PROGRESS, bl);
    r = io->fsetxattr(fd, GUARD_XATTR, bl.c_str(), bl.length(), 0);
  }
  if (r == 0) {
    r = io->fsync(fd);
  }
  io->close(fd);
  return r;
}

// ---- tombstones ----

std::string ObjectFiles::tombstone_path(const std::string& cname) const
{
  return objects_dir + "/" + GONE_DIR + "/" + cname;
}

int ObjectFiles::set_tombstone(const coll_t& c, const SequencerPosition& pos)
{
  std::string dir = objects_dir + "/" + GONE_DIR;
  int r = io->mkdir(dir, 0755);
  if (r < 0 && r != -EEXIST) {
    return r;
  }
  int fd;
  r = io->open(tombstone_path(c.to_str()), O_WRONLY | O_CREAT | O_TRUNC,
               0644, &fd);
  if (r < 0) {
    return r;
  }
  ceph::bufferlist bl;
  encode(pos, bl);
  struct iovec v = {bl.c_str(), bl.length()};
  ssize_t w = io->pwritev(fd, &v, 1, 0);
  r = w < 0 ? int(w) : (size_t(w) == bl.length() ? 0 : -EIO);
  if (r == 0) {
    r = io->fsync(fd);
  }
  io->close(fd);
  if (r == 0) {
    r = fsync_dir(dir);  // the name, before the collection goes
  }
  if (r == 0) {
    r = fsync_dir(objects_dir);
  }
  return r;
}

int ObjectFiles::get_tombstone(const coll_t& c, SequencerPosition* pos)
{
  int fd;
  int r = io->open(tombstone_path(c.to_str()), O_RDONLY, 0, &fd);
  if (r < 0) {
    return r;
  }
  char buf[128];
  ssize_t n = io->pread(fd, buf, sizeof(buf), 0);
  io->close(fd);
  if (n < 0) {
    return n;
  }
  return decode_guard(std::string(buf, n), pos, nullptr);
}

int ObjectFiles::list_tombstones(std::map<coll_t, SequencerPosition>* out)
{
  std::vector<std::string> names;
  int r = io->list_dir(objects_dir + "/" + GONE_DIR, &names);
  if (r == -ENOENT) {
    return 0;
  }
  if (r < 0) {
    return r;
  }
  for (auto& n : names) {
    coll_t c;
    SequencerPosition pos;
    if (!c.parse(n) || get_tombstone(c, &pos) < 0) {
      derr << __func__ << " ignoring " << GONE_DIR << "/" << n << dendl;
      continue;
    }
    (*out)[c] = pos;
  }
  return 0;
}

int ObjectFiles::remove_tombstone(const coll_t& c)
{
  int r = io->unlink(tombstone_path(c.to_str()));
  return r == -ENOENT ? 0 : r;
}

int ObjectFiles::sync_all()
{
  ceph_assert(root_fd >= 0);
  return io->syncfs(root_fd);
}

}  // namespace mimstore
