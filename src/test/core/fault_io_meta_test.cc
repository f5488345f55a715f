// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: tests for FaultIoEnv's metadata crash model (meta=xfs): each
 * metadata op is undone at a crash unless a log force (any fsync,
 * fdatasync, syncfs, O_DSYNC write) followed it, the survivors are always
 * a prefix of the op sequence, and undo restores names, inodes, data and
 * xattrs.
 *
 * This is free software; you can redistribute it and/or modify it under the
 * terms of the GNU Lesser General Public License version 2.1, as published
 * by the Free Software Foundation. See file COPYING.
 */
#include "core/fault_io_env.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mim;

namespace {

/// PosixIoEnv, except that clones are done by copying (ext4 and tmpfs have
/// no reflink) and links into the trash can be made to fail.
class CopyCloneEnv : public IoEnv {
 public:
  explicit CopyCloneEnv(IoEnv* b) : b_(b) {}
  bool fail_trash_links = false;

  int open(const std::string& p, int fl, mode_t m, int* fd) override {
    return b_->open(p, fl, m, fd);
  }
  int close(int fd) override { return b_->close(fd); }
  ssize_t pread(int fd, void* buf, size_t len, uint64_t off) override {
    return b_->pread(fd, buf, len, off);
  }
  ssize_t pwritev(int fd, const struct iovec* iov, int n,
                  uint64_t off) override {
    return b_->pwritev(fd, iov, n, off);
  }
  int fsync(int fd) override { return b_->fsync(fd); }
  int fdatasync(int fd) override { return b_->fdatasync(fd); }
  int syncfs(int fd) override { return b_->syncfs(fd); }
  int writeback(int fd, uint64_t off, uint64_t len, bool wait) override {
    return b_->writeback(fd, off, len, wait);
  }
  int ftruncate(int fd, uint64_t size) override {
    return b_->ftruncate(fd, size);
  }
  int fallocate(int fd, int mode, uint64_t off, uint64_t len) override {
    return b_->fallocate(fd, mode, off, len);
  }
  int fstat(int fd, struct stat* st) override { return b_->fstat(fd, st); }
  int stat(const std::string& p, struct stat* st) override {
    return b_->stat(p, st);
  }
  int get_size(int fd, uint64_t* size) override {
    return b_->get_size(fd, size);
  }
  int physical_offset(int fd, uint64_t off, uint64_t* phys) override {
    return b_->physical_offset(fd, off, phys);
  }
  int get_logical_block_size(int fd, uint32_t* bs) override {
    return b_->get_logical_block_size(fd, bs);
  }
  int get_physical_block_size(int fd, uint32_t* bs) override {
    return b_->get_physical_block_size(fd, bs);
  }
  int rename(const std::string& a, const std::string& b) override {
    return b_->rename(a, b);
  }
  int unlink(const std::string& p) override { return b_->unlink(p); }
  int link(const std::string& a, const std::string& b) override {
    if (fail_trash_links &&
        b.find(FaultIoEnv::TRASH_DIR) != std::string::npos) {
      return -EPERM;
    }
    return b_->link(a, b);
  }
  int mkdir(const std::string& p, mode_t m) override {
    return b_->mkdir(p, m);
  }
  int rmdir(const std::string& p) override { return b_->rmdir(p); }
  int list_dir(const std::string& p,
               std::vector<std::string>* names) override {
    return b_->list_dir(p, names);
  }
  int clone_file(int src, int dst) override {
    struct stat st;
    int r = b_->fstat(src, &st);
    if (r < 0) {
      return r;
    }
    r = copy(src, 0, st.st_size, dst, 0);
    return r < 0 ? r : b_->ftruncate(dst, st.st_size);
  }
  int clone_range(int src, uint64_t soff, uint64_t len, int dst,
                  uint64_t doff) override {
    return copy(src, soff, len, dst, doff);
  }
  int fsetxattr(int fd, const std::string& n, const void* v, size_t len,
                int fl) override {
    return b_->fsetxattr(fd, n, v, len, fl);
  }
  int fgetxattr(int fd, const std::string& n, std::string* v) override {
    return b_->fgetxattr(fd, n, v);
  }
  int fremovexattr(int fd, const std::string& n) override {
    return b_->fremovexattr(fd, n);
  }
  int aio_setup(int n) override { return b_->aio_setup(n); }
  int aio_submit_write(int fd, const struct iovec* iov, int n, uint64_t off,
                       void* cookie) override {
    return b_->aio_submit_write(fd, iov, n, off, cookie);
  }
  int aio_reap(int mn, int mx, std::vector<std::pair<void*, ssize_t>>* done,
               int timeout_ms) override {
    return b_->aio_reap(mn, mx, done, timeout_ms);
  }
  int aio_inflight() override { return b_->aio_inflight(); }

 private:
  int copy(int src, uint64_t soff, uint64_t len, int dst, uint64_t doff) {
    std::string buf(len, '\0');
    ssize_t n = b_->pread(src, buf.data(), len, soff);
    if (n < 0) {
      return static_cast<int>(n);
    }
    n = b_->pwrite(dst, buf.data(), n, doff);
    return n < 0 ? static_cast<int>(n) : 0;
  }
  IoEnv* b_;
};

/// One name in a directory tree, as a crash test compares it.
struct entry_t {
  bool dir = false;
  std::string data;
  std::map<std::string, std::string> xattrs;  ///< user.* only
  std::string group;  ///< files: the smallest name of the same inode
};
using tree_t = std::map<std::string, entry_t>;

std::string to_string(const tree_t& t)
{
  std::string out;
  for (const auto& [p, e] : t) {
    out += p + (e.dir ? " dir" : " file '" + e.data + "'");
    for (const auto& [k, v] : e.xattrs) {
      out += " " + k + "=" + v;
    }
    if (!e.dir) {
      out += " @" + e.group;
    }
    out += "\n";
  }
  return out;
}

std::string read_file(const std::string& p)
{
  std::string out;
  int fd = ::open(p.c_str(), O_RDONLY);
  if (fd < 0) {
    return "<missing>";
  }
  char buf[4096];
  ssize_t r;
  while ((r = ::read(fd, buf, sizeof(buf))) > 0) {
    out.append(buf, r);
  }
  ::close(fd);
  return out;
}

std::map<std::string, std::string> user_xattrs(const std::string& p)
{
  std::map<std::string, std::string> out;
  char names[4096];
  ssize_t n = ::llistxattr(p.c_str(), names, sizeof(names));
  for (ssize_t b = 0; n > 0 && b < n;) {
    std::string name(names + b);
    b += name.size() + 1;
    if (name.rfind("user.", 0) != 0) {
      continue;
    }
    char val[4096];
    ssize_t v = ::lgetxattr(p.c_str(), name.c_str(), val, sizeof(val));
    out[name] = v < 0 ? "<err>" : std::string(val, v);
  }
  return out;
}

/// The tree under `root` as the next process would see it (TRASH_DIR left
/// out: it is checked on its own).
tree_t snapshot(const std::string& root)
{
  namespace fs = std::filesystem;
  tree_t t;
  std::map<ino_t, std::set<std::string>> by_ino;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string full = it->path().string();
    std::string rel = full.substr(root.size() + 1);
    if (it->path().filename() == FaultIoEnv::TRASH_DIR) {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st;
    if (::lstat(full.c_str(), &st) < 0) {
      continue;
    }
    entry_t e;
    e.dir = S_ISDIR(st.st_mode);
    if (!e.dir) {
      e.data = read_file(full);
      by_ino[st.st_ino].insert(rel);
    }
    e.xattrs = user_xattrs(full);
    t[rel] = e;
  }
  for (const auto& [ino, names] : by_ino) {
    for (const auto& n : names) {
      t[n].group = *names.begin();
    }
  }
  return t;
}

bool has_trash(const std::string& root)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == FaultIoEnv::TRASH_DIR) {
      return true;
    }
  }
  return false;
}

bool xattrs_supported(const std::string& dir)
{
  std::string p = dir + "/.xattr-probe";
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT, 0644);
  bool ok = fd >= 0 && ::fsetxattr(fd, "user.probe", "1", 1, 0) == 0;
  if (fd >= 0) {
    ::close(fd);
  }
  ::unlink(p.c_str());
  return ok;
}

class IoFaultMetaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/mim-meta-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    root = tmpl;
    posix = make_posix_io_env();
    base = std::make_unique<CopyCloneEnv>(posix.get());
    have_xattrs = xattrs_supported(root);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }

  std::unique_ptr<FaultIoEnv> new_env(const std::string& spec) {
    auto e = std::make_unique<FaultIoEnv>(base.get());
    std::string err;
    EXPECT_EQ(0, e->set_spec(spec, &err)) << err;
    return e;
  }
  /// A fresh directory under root, made outside any FaultIoEnv.
  std::string subdir(const std::string& name) {
    std::string d = root + "/" + name;
    EXPECT_EQ(0, ::mkdir(d.c_str(), 0755));
    return d;
  }

  std::string root;
  std::unique_ptr<IoEnv> posix;
  std::unique_ptr<CopyCloneEnv> base;
  bool have_xattrs = false;
};

// Helpers that go through an env and expect success.

int create(FaultIoEnv& e, const std::string& p, const std::string& data = "",
           bool keep_open = false)
{
  int fd = -1;
  EXPECT_EQ(0, e.open(p, O_RDWR | O_CREAT, 0644, &fd)) << p;
  if (!data.empty()) {
    EXPECT_EQ(ssize_t(data.size()), e.pwrite(fd, data.data(), data.size(), 0));
  }
  if (!keep_open) {
    e.close(fd);
    return -1;
  }
  return fd;
}

void set_x(FaultIoEnv& e, const std::string& p, const std::string& name,
           const std::string& val, bool dir = false)
{
  int fd = -1;
  ASSERT_EQ(0, e.open(p, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY, 0, &fd));
  EXPECT_EQ(0, e.fsetxattr(fd, name, val.data(), val.size(), 0)) << p;
  e.close(fd);
}

void remove_x(FaultIoEnv& e, const std::string& p, const std::string& name,
              bool dir = false)
{
  int fd = -1;
  ASSERT_EQ(0, e.open(p, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY, 0, &fd));
  EXPECT_EQ(0, e.fremovexattr(fd, name)) << p;
  e.close(fd);
}

std::string get_x(const std::string& p, const std::string& name)
{
  char val[4096];
  ssize_t v = ::lgetxattr(p.c_str(), name.c_str(), val, sizeof(val));
  return v < 0 ? "<absent>" : std::string(val, v);
}

}  // anonymous namespace

// ---- spec ------------------------------------------------------------------

TEST(IoFaultMetaSpec, ParsesAndRejects)
{
  fault_spec_t s;
  std::string err;
  ASSERT_EQ(0, parse_fault_spec("crash_at=5", &s, &err)) << err;
  EXPECT_EQ(meta_model_t::OFF, s.meta);  // the default
  ASSERT_EQ(0, parse_fault_spec("crash_at=5,meta=xfs,seed=2", &s, &err))
    << err;
  EXPECT_EQ(meta_model_t::XFS, s.meta);
  EXPECT_EQ(5u, s.crash_at);
  EXPECT_EQ(2u, s.seed);
  ASSERT_EQ(0, parse_fault_spec("meta=xfs,meta=off", &s, &err)) << err;
  EXPECT_EQ(meta_model_t::OFF, s.meta);
  for (const char* bad : {"meta=ext4", "meta=", "meta", "meta=XFS",
                          "meta=xfs,meta=on"}) {
    EXPECT_EQ(-EINVAL, parse_fault_spec(bad, &s, &err)) << bad;
    EXPECT_NE(std::string::npos, err.find("meta=xfs|off")) << bad;
  }
  FaultIoEnv env(nullptr);
  EXPECT_EQ(-EINVAL, env.set_spec("meta=btrfs", &err));
  EXPECT_EQ(0, env.set_spec("meta=xfs", &err)) << err;
}

// ---- each op kind: undone without a log force, kept after one --------------

namespace {

struct meta_case_t {
  const char* name;
  meta_kind_t kind;
  bool needs_xattrs;
  /// Through env, before the op; made durable by a syncfs afterwards.
  std::function<void(FaultIoEnv&, const std::string& d)> setup;
  /// The one metadata op under test.
  std::function<void(FaultIoEnv&, const std::string& d)> op;
};

std::vector<meta_case_t> meta_cases()
{
  using E = FaultIoEnv;
  using S = const std::string;
  return {
    {"create", meta_kind_t::CREATE, false, [](E&, S&) {},
     [](E& e, S& d) { create(e, d + "/f"); }},
    {"mkdir", meta_kind_t::MKDIR, false, [](E&, S&) {},
     [](E& e, S& d) { EXPECT_EQ(0, e.mkdir(d + "/sub", 0755)); }},
    {"rmdir", meta_kind_t::RMDIR, true,
     [](E& e, S& d) {
       ASSERT_EQ(0, e.mkdir(d + "/sub", 0755));
       ::chmod((d + "/sub").c_str(), 0710);
       set_x(e, d + "/sub", "user.bits", "7", true);
     },
     [](E& e, S& d) { EXPECT_EQ(0, e.rmdir(d + "/sub")); }},
    {"unlink", meta_kind_t::UNLINK, false,
     [](E& e, S& d) { create(e, d + "/f", "file data"); },
     [](E& e, S& d) { EXPECT_EQ(0, e.unlink(d + "/f")); }},
    {"rename", meta_kind_t::RENAME, false,
     [](E& e, S& d) { create(e, d + "/a", "A"); },
     [](E& e, S& d) { EXPECT_EQ(0, e.rename(d + "/a", d + "/b")); }},
    {"rename_over_file", meta_kind_t::RENAME, false,
     [](E& e, S& d) {
       create(e, d + "/a", "A");
       create(e, d + "/b", "B");
     },
     [](E& e, S& d) { EXPECT_EQ(0, e.rename(d + "/a", d + "/b")); }},
    {"rename_over_dir", meta_kind_t::RENAME, true,
     [](E& e, S& d) {
       ASSERT_EQ(0, e.mkdir(d + "/x", 0755));
       ASSERT_EQ(0, e.mkdir(d + "/y", 0755));
       set_x(e, d + "/y", "user.tag", "old y", true);
     },
     [](E& e, S& d) { EXPECT_EQ(0, e.rename(d + "/x", d + "/y")); }},
    {"rename_dir_with_files", meta_kind_t::RENAME, false,
     [](E& e, S& d) {
       ASSERT_EQ(0, e.mkdir(d + "/x", 0755));
       create(e, d + "/x/f", "in x");
     },
     [](E& e, S& d) { EXPECT_EQ(0, e.rename(d + "/x", d + "/z")); }},
    {"link", meta_kind_t::LINK, false,
     [](E& e, S& d) { create(e, d + "/a", "A"); },
     [](E& e, S& d) { EXPECT_EQ(0, e.link(d + "/a", d + "/b")); }},
    {"setxattr_new", meta_kind_t::SETXATTR, true,
     [](E& e, S& d) { create(e, d + "/f", "F"); },
     [](E& e, S& d) { set_x(e, d + "/f", "user.k", "v"); }},
    {"setxattr_replace", meta_kind_t::SETXATTR, true,
     [](E& e, S& d) {
       create(e, d + "/f", "F");
       set_x(e, d + "/f", "user.k", "old");
     },
     [](E& e, S& d) { set_x(e, d + "/f", "user.k", "new"); }},
    {"setxattr_dir", meta_kind_t::SETXATTR, true,
     [](E& e, S& d) { ASSERT_EQ(0, e.mkdir(d + "/sub", 0755)); },
     [](E& e, S& d) { set_x(e, d + "/sub", "user.k", "v", true); }},
    {"removexattr", meta_kind_t::REMOVEXATTR, true,
     [](E& e, S& d) {
       create(e, d + "/f", "F");
       set_x(e, d + "/f", "user.k", "old");
     },
     [](E& e, S& d) { remove_x(e, d + "/f", "user.k"); }},
    {"clone_file", meta_kind_t::CLONE, false,
     [](E& e, S& d) {
       create(e, d + "/src", "source contents, longer");
       create(e, d + "/dst", "old dst");
     },
     [](E& e, S& d) {
       int s = -1, t = -1;
       ASSERT_EQ(0, e.open(d + "/src", O_RDONLY, 0, &s));
       ASSERT_EQ(0, e.open(d + "/dst", O_RDWR, 0, &t));
       EXPECT_EQ(0, e.clone_file(s, t));
       e.close(s);
       e.close(t);
     }},
    {"clone_range", meta_kind_t::CLONE, false,
     [](E& e, S& d) {
       create(e, d + "/src", "0123456789");
       create(e, d + "/dst", "abcdef");
     },
     [](E& e, S& d) {
       int s = -1, t = -1;
       ASSERT_EQ(0, e.open(d + "/src", O_RDONLY, 0, &s));
       ASSERT_EQ(0, e.open(d + "/dst", O_RDWR, 0, &t));
       EXPECT_EQ(0, e.clone_range(s, 2, 6, t, 3));  // extends dst
       e.close(s);
       e.close(t);
     }},
  };
}

/// What follows the op before the crash.
enum class after_t { NOTHING, FSYNC_OTHER, FDATASYNC_OTHER, SYNCFS,
                     DSYNC_WRITE, FSYNC_DIR };

const char* after_name(after_t a)
{
  switch (a) {
  case after_t::NOTHING: return "nothing";
  case after_t::FSYNC_OTHER: return "fsync of another file";
  case after_t::FDATASYNC_OTHER: return "fdatasync of another file";
  case after_t::SYNCFS: return "syncfs";
  case after_t::DSYNC_WRITE: return "O_DSYNC write to another file";
  case after_t::FSYNC_DIR: return "fsync of the parent directory";
  }
  return "?";
}

}  // anonymous namespace

TEST_F(IoFaultMetaTest, EachOpUndoneUnlessLogForced)
{
  int n = 0;
  for (const auto& c : meta_cases()) {
    if (c.needs_xattrs && !have_xattrs) {
      continue;
    }
    for (after_t after : {after_t::NOTHING, after_t::FSYNC_OTHER,
                          after_t::FDATASYNC_OTHER, after_t::SYNCFS,
                          after_t::DSYNC_WRITE, after_t::FSYNC_DIR}) {
      SCOPED_TRACE(std::string(c.name) + ", then " + after_name(after));
      std::string d = subdir("case" + std::to_string(n++));
      auto env = new_env("meta=xfs,mode=drop");
      // An unrelated file, first: the env's trash goes under d.
      int other = create(*env, d + "/other", "o", true);
      c.setup(*env, d);
      ASSERT_EQ(0, env->syncfs(other));
      ASSERT_EQ(0u, env->unsynced_meta_ops());
      tree_t before = snapshot(d);

      c.op(*env, d);
      ASSERT_EQ(1u, env->unsynced_meta_ops());
      tree_t done = snapshot(d);
      ASSERT_NE(to_string(before), to_string(done));

      int dfd = -1;
      switch (after) {
      case after_t::NOTHING:
        break;
      case after_t::FSYNC_OTHER:
        ASSERT_EQ(0, env->fsync(other));
        break;
      case after_t::FDATASYNC_OTHER:
        ASSERT_EQ(0, env->fdatasync(other));
        break;
      case after_t::SYNCFS:
        ASSERT_EQ(0, env->syncfs(other));
        break;
      case after_t::DSYNC_WRITE:
        ASSERT_EQ(0, env->open(d + "/other", O_RDWR | O_DSYNC, 0, &dfd));
        ASSERT_EQ(1, env->pwrite(dfd, "o", 1, 0));  // same byte
        env->close(dfd);
        break;
      case after_t::FSYNC_DIR:
        ASSERT_EQ(0, env->open(d, O_RDONLY | O_DIRECTORY, 0, &dfd));
        ASSERT_EQ(0, env->fsync(dfd));
        env->close(dfd);
        break;
      }
      env->crash();
      env->close(other);
      auto rep = env->last_meta_report();
      if (after == after_t::NOTHING) {
        EXPECT_EQ(to_string(before), to_string(snapshot(d)));
        ASSERT_EQ(1u, rep.size());
        EXPECT_EQ(c.kind, rep[0].kind) << meta_kind_name(rep[0].kind);
        EXPECT_FALSE(rep[0].kept);
        EXPECT_TRUE(rep[0].undoable);
        EXPECT_EQ(0, rep[0].err);
      } else {
        EXPECT_EQ(to_string(done), to_string(snapshot(d)));
        EXPECT_TRUE(rep.empty());
      }
      EXPECT_FALSE(has_trash(d));
      if (std::string(c.name) == "rmdir" && after == after_t::NOTHING) {
        struct stat st;
        ASSERT_EQ(0, ::stat((d + "/sub").c_str(), &st));
        EXPECT_EQ(0710u, st.st_mode & 07777);
      }
    }
  }
  EXPECT_GE(n, 6 * 9);
}

TEST_F(IoFaultMetaTest, MetaOffKeepsEverythingAndCountsNothing)
{
  // The default: metadata ops are durable at once and not counted, so the
  // callers' crash_at calibration does not move.
  auto run = [&](const std::string& spec, const std::string& d) {
    auto env = new_env(spec);
    int f = create(*env, d + "/f", "x", true);
    EXPECT_EQ(0, env->mkdir(d + "/sub", 0755));
    EXPECT_EQ(0, env->rename(d + "/f", d + "/sub/g"));
    EXPECT_EQ(0, env->link(d + "/sub/g", d + "/h"));
    EXPECT_EQ(0, env->unlink(d + "/h"));
    if (have_xattrs) {
      EXPECT_EQ(0, env->fsetxattr(f, "user.k", "v", 1, 0));
      EXPECT_EQ(0, env->fremovexattr(f, "user.k"));
    }
    EXPECT_EQ(0, env->fsync(f));
    uint64_t ios = env->io_count();
    env->close(f);
    env->set_crash_mode(crash_mode_t::DROP);
    env->crash();
    EXPECT_TRUE(env->last_meta_report().empty());
    return ios;
  };
  std::string a = subdir("off"), b = subdir("xfs");
  EXPECT_EQ(2u, run("", a));  // the pwrite and the fsync
  EXPECT_EQ("x", read_file(a + "/sub/g"));
  // meta=xfs counts the create, mkdir, rename, link, unlink (and the two
  // xattr ops) as well.
  EXPECT_EQ(have_xattrs ? 9u : 7u, run("meta=xfs", b));
  EXPECT_EQ("x", read_file(b + "/sub/g"));
}

// ---- the prefix property ---------------------------------------------------

namespace {

/// An independent model of a small namespace: names -> inodes.
struct ns_model_t {
  struct inode_t {
    bool dir = false;
    std::map<std::string, std::string> xattrs;
  };
  std::map<int, inode_t> inodes;
  std::map<std::string, int> names;
  int next = 1;

  bool exists(const std::string& p) const { return names.count(p) > 0; }
  bool is_dir(const std::string& p) const {
    return exists(p) && inodes.at(names.at(p)).dir;
  }
  bool parent_ok(const std::string& p) const {
    size_t s = p.rfind('/');
    return s == std::string::npos || is_dir(p.substr(0, s));
  }
  bool empty_dir(const std::string& p) const {
    for (const auto& [n, i] : names) {
      if (n.size() > p.size() && n.compare(0, p.size() + 1, p + "/") == 0) {
        return false;
      }
    }
    return true;
  }
  tree_t tree() const {
    tree_t t;
    std::map<int, std::string> first;
    for (const auto& [n, i] : names) {  // sorted: the first is the smallest
      first.emplace(i, n);
    }
    for (const auto& [n, i] : names) {
      entry_t e;
      e.dir = inodes.at(i).dir;
      e.xattrs = inodes.at(i).xattrs;
      if (!e.dir) {
        e.group = first[i];
      }
      t[n] = e;
    }
    return t;
  }
};

}  // anonymous namespace

TEST_F(IoFaultMetaTest, SurvivorsAreAPrefixOfTheOpSequence)
{
  const std::vector<std::string> files = {"a", "b", "c", "D/x", "D/y",
                                          "E/x"};
  const std::vector<std::string> dirs = {"D", "E"};
  std::set<size_t> keeps_seen;
  std::map<std::string, int> kinds_seen;  // the workload covers them all
  for (uint64_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::string r = subdir("p" + std::to_string(seed));
    std::string ns = r + "/ns";
    auto env = new_env("meta=xfs,mode=random,seed=" + std::to_string(seed));
    int other = create(*env, r + "/other", "", true);
    ASSERT_EQ(0, env->mkdir(ns, 0755));
    ASSERT_EQ(0, env->fsync(other));

    ns_model_t m;
    std::vector<std::string> states = {to_string(m.tree())};
    std::vector<std::string> what;  // per op, for messages
    size_t forced = 0;              // ops made durable by a log force
    std::mt19937_64 rng(seed * 7919 + 3);
    auto pick = [&](const std::vector<std::string>& v) {
      return v[rng() % v.size()];
    };
    for (int step = 0; step < 30; ++step) {
      bool done = false;
      while (!done) {
        int kind = rng() % (have_xattrs ? 10 : 8);
        std::string p = pick(rng() % 3 ? files : dirs);
        std::string q = pick(m.is_dir(p) ? dirs : files);
        std::string x = "user.k" + std::to_string(rng() % 2);
        std::string v = "v" + std::to_string(step);
        std::string desc;
        switch (kind) {
        case 0: case 1:  // create
          if (m.exists(p) || !m.parent_ok(p) ||
              std::find(dirs.begin(), dirs.end(), p) != dirs.end()) {
            continue;
          }
          create(*env, ns + "/" + p);
          m.names[p] = m.next;
          m.inodes[m.next++] = {};
          desc = "create " + p;
          break;
        case 2:  // mkdir
          p = pick(dirs);
          if (m.exists(p)) {
            continue;
          }
          ASSERT_EQ(0, env->mkdir(ns + "/" + p, 0755));
          m.names[p] = m.next;
          m.inodes[m.next++].dir = true;
          desc = "mkdir " + p;
          break;
        case 3:  // rmdir
          p = pick(dirs);
          if (!m.is_dir(p) || !m.empty_dir(p)) {
            continue;
          }
          ASSERT_EQ(0, env->rmdir(ns + "/" + p));
          m.names.erase(p);
          desc = "rmdir " + p;
          break;
        case 4:  // unlink
          if (!m.exists(p) || m.is_dir(p)) {
            continue;
          }
          ASSERT_EQ(0, env->unlink(ns + "/" + p));
          m.names.erase(p);
          desc = "unlink " + p;
          break;
        case 5: {  // rename
          if (!m.exists(p) || p == q || !m.parent_ok(q)) {
            continue;
          }
          if (m.is_dir(p)) {
            if (m.exists(q) && !(m.is_dir(q) && m.empty_dir(q))) {
              continue;
            }
          } else if (m.is_dir(q) ||
                     (m.exists(q) && m.names[q] == m.names[p])) {
            continue;  // over a directory, or a no-op
          }
          ASSERT_EQ(0, env->rename(ns + "/" + p, ns + "/" + q));
          int i = m.names[p];
          m.names.erase(p);
          if (m.is_dir(q) || !m.inodes[i].dir) {
            m.names.erase(q);
          }
          // Children move with a directory.
          std::map<std::string, int> moved;
          for (auto it = m.names.begin(); it != m.names.end();) {
            if (it->first.compare(0, p.size() + 1, p + "/") == 0) {
              moved[q + it->first.substr(p.size())] = it->second;
              it = m.names.erase(it);
            } else {
              ++it;
            }
          }
          m.names.insert(moved.begin(), moved.end());
          m.names[q] = i;
          desc = "rename " + p + " " + q;
          break;
        }
        case 6: case 7:  // link
          if (!m.exists(p) || m.is_dir(p) || m.exists(q) || !m.parent_ok(q)) {
            continue;
          }
          ASSERT_EQ(0, env->link(ns + "/" + p, ns + "/" + q));
          m.names[q] = m.names[p];
          desc = "link " + p + " " + q;
          break;
        case 8:  // setxattr
          if (!m.exists(p)) {
            continue;
          }
          set_x(*env, ns + "/" + p, x, v, m.is_dir(p));
          m.inodes[m.names[p]].xattrs[x] = v;
          desc = "setxattr " + p + " " + x + "=" + v;
          break;
        case 9:  // removexattr
          if (!m.exists(p) || !m.inodes[m.names[p]].xattrs.count(x)) {
            continue;
          }
          remove_x(*env, ns + "/" + p, x, m.is_dir(p));
          m.inodes[m.names[p]].xattrs.erase(x);
          desc = "removexattr " + p + " " + x;
          break;
        }
        done = true;
        ++kinds_seen[desc.substr(0, desc.find(' '))];
        what.push_back(desc);
        states.push_back(to_string(m.tree()));
        ASSERT_EQ(states.back(), to_string(snapshot(ns))) << desc;
      }
      if (rng() % 10 == 0) {
        ASSERT_EQ(0, env->fsync(other));  // a log force
        forced = what.size();
      }
    }
    ASSERT_EQ(what.size() - forced, env->unsynced_meta_ops());
    env->crash();
    env->close(other);

    auto rep = env->last_meta_report();  // newest first
    ASSERT_EQ(what.size() - forced, rep.size());
    size_t kept = 0;
    bool undone_seen = false;
    for (size_t k = rep.size(); k-- > 0;) {  // in issue order
      const auto& o = rep[k];
      EXPECT_EQ(0, o.err) << what[forced + rep.size() - 1 - k];
      if (o.kept) {
        ASSERT_FALSE(undone_seen) << "kept after an undone op: "
                                  << what[forced + rep.size() - 1 - k];
        ++kept;
      } else {
        undone_seen = true;
      }
    }
    keeps_seen.insert(kept);
    std::string got = to_string(snapshot(ns));
    ASSERT_EQ(states[forced + kept], got)
      << "after " << forced << " forced and " << kept << " kept ops";
    EXPECT_FALSE(has_trash(r));
  }
  // The cut point varies with the seed.
  EXPECT_GE(keeps_seen.size(), 5u);
  EXPECT_EQ(have_xattrs ? 8u : 6u, kinds_seen.size());
  for (const auto& [k, n] : kinds_seen) {
    EXPECT_GE(n, 10) << k;
  }
}

// ---- scenarios -------------------------------------------------------------

TEST_F(IoFaultMetaTest, UnlinkedFileComesBackWithItsData)
{
  auto env = new_env("meta=xfs,mode=drop");
  std::string d = subdir("u");
  int f = create(*env, d + "/f", "durable data", true);
  ASSERT_EQ(0, env->fsync(f));
  ASSERT_EQ(4, env->pwrite(f, "LOST", 4, 0));  // not synced
  env->close(f);
  ASSERT_EQ(0, env->unlink(d + "/f"));
  EXPECT_EQ("<missing>", read_file(d + "/f"));
  // The inode waits in the trash; list_dir does not show it.
  EXPECT_TRUE(has_trash(d));
  std::vector<std::string> names;
  ASSERT_EQ(0, env->list_dir(d, &names));
  EXPECT_TRUE(names.empty());
  env->crash();
  EXPECT_EQ("durable data", read_file(d + "/f"));
  EXPECT_FALSE(has_trash(d));
  ASSERT_EQ(1u, env->last_crash_report().size());
  ASSERT_EQ(1u, env->last_meta_report().size());
  EXPECT_EQ(meta_kind_t::UNLINK, env->last_meta_report()[0].kind);
}

TEST_F(IoFaultMetaTest, DurableUnlinkFreesTheTrash)
{
  std::string d = subdir("t");
  {
    auto env = new_env("meta=xfs,mode=drop");
    int o = create(*env, d + "/other", "", true);
    create(*env, d + "/f", "x");
    create(*env, d + "/g", "y");
    ASSERT_EQ(0, env->fsync(o));
    ASSERT_EQ(0, env->unlink(d + "/f"));
    EXPECT_TRUE(has_trash(d));
    ASSERT_EQ(0, env->fsync(o));  // the unlink is durable
    EXPECT_FALSE(has_trash(d));
    ASSERT_EQ(0, env->unlink(d + "/g"));
    env->close(o);
    // Destroyed without a crash: the unlink stays, the trash goes.
  }
  EXPECT_EQ("<missing>", read_file(d + "/f"));
  EXPECT_EQ("<missing>", read_file(d + "/g"));
  EXPECT_FALSE(has_trash(d));
}

TEST_F(IoFaultMetaTest, RenameOverExistingFileRestoresBoth)
{
  std::string d = subdir("r");
  auto env = new_env("meta=xfs,mode=drop");
  create(*env, d + "/a", "AAA");
  create(*env, d + "/b", "BBBB");
  int o = create(*env, d + "/o", "", true);
  ASSERT_EQ(0, env->syncfs(o));
  struct stat sa, sb;
  ASSERT_EQ(0, ::stat((d + "/a").c_str(), &sa));
  ASSERT_EQ(0, ::stat((d + "/b").c_str(), &sb));
  ASSERT_EQ(0, env->rename(d + "/a", d + "/b"));
  EXPECT_EQ("<missing>", read_file(d + "/a"));
  EXPECT_EQ("AAA", read_file(d + "/b"));
  env->crash();
  env->close(o);
  EXPECT_EQ("AAA", read_file(d + "/a"));
  EXPECT_EQ("BBBB", read_file(d + "/b"));
  struct stat ra, rb;
  ASSERT_EQ(0, ::stat((d + "/a").c_str(), &ra));
  ASSERT_EQ(0, ::stat((d + "/b").c_str(), &rb));
  EXPECT_EQ(sa.st_ino, ra.st_ino);  // the same inodes, not copies
  EXPECT_EQ(sb.st_ino, rb.st_ino);
  EXPECT_FALSE(has_trash(d));
}

TEST_F(IoFaultMetaTest, MkdirAndCreateInsideBothGo)
{
  std::string d = subdir("m");
  auto env = new_env("meta=xfs,mode=drop");
  int o = create(*env, d + "/o", "", true);
  ASSERT_EQ(0, env->fsync(o));
  ASSERT_EQ(0, env->mkdir(d + "/sub", 0755));
  int f = create(*env, d + "/sub/x", "content", true);
  env->close(f);
  env->crash();
  env->close(o);
  EXPECT_EQ(1u, snapshot(d).size());  // only "o"
  EXPECT_EQ("<missing>", read_file(d + "/sub/x"));
  struct stat st;
  EXPECT_EQ(-1, ::stat((d + "/sub").c_str(), &st));
  auto rep = env->last_meta_report();
  ASSERT_EQ(2u, rep.size());
  EXPECT_EQ(meta_kind_t::CREATE, rep[0].kind);  // newest first
  EXPECT_EQ(meta_kind_t::MKDIR, rep[1].kind);
}

TEST_F(IoFaultMetaTest, ModeKeepKeepsAllMetadataOps)
{
  std::string d = subdir("k");
  auto env = new_env("meta=xfs,mode=keep");
  ASSERT_EQ(0, env->mkdir(d + "/sub", 0755));
  create(*env, d + "/sub/x", "content");
  env->crash();
  EXPECT_EQ("content", read_file(d + "/sub/x"));
  auto rep = env->last_meta_report();
  ASSERT_EQ(2u, rep.size());
  EXPECT_TRUE(rep[0].kept && rep[1].kept);
  EXPECT_FALSE(has_trash(d));
}

TEST_F(IoFaultMetaTest, XattrSetTwiceRestoresTheOldValue)
{
  if (!have_xattrs) {
    GTEST_SKIP() << "no user xattrs on " << root;
  }
  std::string d = subdir("x");
  auto env = new_env("meta=xfs,mode=drop");
  int f = create(*env, d + "/f", "F", true);
  ASSERT_EQ(0, env->fsetxattr(f, "user.k", "old", 3, 0));
  ASSERT_EQ(0, env->fsync(f));
  ASSERT_EQ(0, env->fsetxattr(f, "user.k", "middle", 6, 0));
  ASSERT_EQ(0, env->fsetxattr(f, "user.k", "new", 3, 0));
  ASSERT_EQ(0, env->fsetxattr(f, "user.fresh", "1", 1, 0));
  env->close(f);  // undo works through the env's own fd
  ASSERT_EQ(0, env->rename(d + "/f", d + "/g"));
  env->crash();
  EXPECT_EQ("old", get_x(d + "/f", "user.k"));
  EXPECT_EQ("<absent>", get_x(d + "/f", "user.fresh"));
  EXPECT_EQ("<missing>", read_file(d + "/g"));
  EXPECT_EQ(4u, env->last_meta_report().size());
}

TEST_F(IoFaultMetaTest, XattrOnRemovedDirectoryFollowsItsReplacement)
{
  if (!have_xattrs) {
    GTEST_SKIP() << "no user xattrs on " << root;
  }
  // mkdir durable; setxattr and rmdir not: the directory comes back
  // without the xattr, though rmdir's undo makes a new inode.
  std::string d = subdir("xd");
  auto env = new_env("meta=xfs,mode=drop");
  int o = create(*env, d + "/o", "", true);
  ASSERT_EQ(0, env->mkdir(d + "/sub", 0755));
  set_x(*env, d + "/sub", "user.a", "kept", true);
  ASSERT_EQ(0, env->fsync(o));
  set_x(*env, d + "/sub", "user.b", "undone", true);
  ASSERT_EQ(0, env->rmdir(d + "/sub"));
  env->crash();
  env->close(o);
  EXPECT_EQ("kept", get_x(d + "/sub", "user.a"));
  EXPECT_EQ("<absent>", get_x(d + "/sub", "user.b"));
}

TEST_F(IoFaultMetaTest, DataRollbackFollowsARenamedFile)
{
  std::string d = subdir("dr");
  auto env = new_env("meta=xfs,mode=drop");
  int f = create(*env, d + "/f", "old", true);
  ASSERT_EQ(0, env->fsync(f));
  ASSERT_EQ(3, env->pwrite(f, "new", 3, 0));
  env->close(f);
  ASSERT_EQ(0, env->rename(d + "/f", d + "/g"));
  env->crash();
  EXPECT_EQ("old", read_file(d + "/f"));
  EXPECT_EQ("<missing>", read_file(d + "/g"));
}

TEST_F(IoFaultMetaTest, CreatedFileVanishesWithItsData)
{
  std::string d = subdir("c");
  auto env = new_env("meta=xfs,mode=drop");
  int o = create(*env, d + "/o", "", true);
  ASSERT_EQ(0, env->fsync(o));
  int f = create(*env, d + "/f", "data", true);
  // O_DSYNC of this very file would force the log; a plain write does not.
  env->crash();
  env->close(f);
  env->close(o);
  EXPECT_EQ("<missing>", read_file(d + "/f"));
  ASSERT_EQ(1u, env->last_crash_report().size());
  EXPECT_EQ(FaultIoEnv::rollback_t::DROPPED,
            env->last_crash_report()[0].outcome);
}

TEST_F(IoFaultMetaTest, CloneUndoneInIssueOrderWithWrites)
{
  // write W1, clone, write W2, all unsynced: undone W2, clone, W1.
  std::string d = subdir("cl");
  auto env = new_env("meta=xfs,mode=drop");
  create(*env, d + "/src", "SSSSSSSS");
  int t = create(*env, d + "/dst", "dddddddddddd", true);
  int s = -1;
  ASSERT_EQ(0, env->open(d + "/src", O_RDONLY, 0, &s));
  ASSERT_EQ(0, env->syncfs(t));
  ASSERT_EQ(0, env->fsync(t));
  ASSERT_EQ(2, env->pwrite(t, "11", 2, 0));      // W1
  ASSERT_EQ(0, env->clone_range(s, 0, 4, t, 1));  // dst "1SSSSddd..."
  ASSERT_EQ(2, env->pwrite(t, "22", 2, 4));      // W2
  ASSERT_EQ("1SSS22dddddd", read_file(d + "/dst"));
  env->crash();
  env->close(s);
  env->close(t);
  EXPECT_EQ("dddddddddddd", read_file(d + "/dst"));
}

TEST_F(IoFaultMetaTest, OpThatCannotBeUndonePinsThePrefix)
{
  std::string d = subdir("pin");
  auto env = new_env("meta=xfs,mode=drop");
  int o = create(*env, d + "/o", "", true);
  create(*env, d + "/victim", "v");
  ASSERT_EQ(0, env->fsync(o));
  ASSERT_EQ(0, env->mkdir(d + "/early", 0755));   // before the pin: kept
  base->fail_trash_links = true;
  ASSERT_EQ(0, env->unlink(d + "/victim"));       // no trash link: pinned
  base->fail_trash_links = false;
  ASSERT_EQ(0, env->mkdir(d + "/late", 0755));    // after: undone
  env->crash();
  env->close(o);
  struct stat st;
  EXPECT_EQ(0, ::stat((d + "/early").c_str(), &st));
  EXPECT_EQ("<missing>", read_file(d + "/victim"));
  EXPECT_NE(0, ::stat((d + "/late").c_str(), &st));
  auto rep = env->last_meta_report();
  ASSERT_EQ(3u, rep.size());
  EXPECT_FALSE(rep[0].kept);
  EXPECT_TRUE(rep[1].kept);
  EXPECT_FALSE(rep[1].undoable);
  EXPECT_TRUE(rep[2].kept);
}

TEST_F(IoFaultMetaTest, CrashSummaryNamesTheStruckIoAndEachOutcome)
{
  // The summary is what a failing crash point's log shows: the I/O the
  // cut struck, and what it kept and undid.
  std::string d = subdir("sum");
  std::string given;
  auto env = new_env("meta=xfs,mode=drop,crash_at=4");
  env->set_crash_callback([&](const std::string& s) { given = s; });
  int o = -1;
  ASSERT_EQ(0, env->open(d + "/o", O_RDWR | O_CREAT, 0644, &o));  // 1
  ASSERT_EQ(0, env->fsync(o));                                     // 2
  ASSERT_EQ(0, env->rename(d + "/o", d + "/p"));                   // 3
  EXPECT_EQ(-EIO, env->fsync(o));                                  // 4
  env->close(o);
  EXPECT_EQ(given, env->crash_summary());
  EXPECT_NE(std::string::npos, given.find("power cut at I/O 4 (sync "))
    << given;
  EXPECT_NE(std::string::npos,
            given.find("rename " + d + "/o " + d + "/p undone"))
    << given;
  EXPECT_EQ(std::string::npos, given.find(" kept")) << given;
}

TEST_F(IoFaultMetaTest, CrashAtCanLandBetweenMetadataOps)
{
  std::string d = subdir("ca");
  for (uint64_t n = 1; n <= 6; ++n) {
    SCOPED_TRACE("crash_at=" + std::to_string(n));
    std::string r = d + "/" + std::to_string(n);
    ASSERT_EQ(0, ::mkdir(r.c_str(), 0755));
    bool called = false;
    auto env = new_env("meta=xfs,mode=drop,crash_at=" + std::to_string(n));
    env->set_crash_callback([&](const std::string&) { called = true; });
    int rc[6];
    int o = -1;
    rc[0] = env->open(r + "/o", O_RDWR | O_CREAT, 0644, &o);  // 1
    rc[1] = env->mkdir(r + "/a", 0755);                         // 2
    rc[2] = env->fsync(o);                                      // 3
    rc[3] = env->mkdir(r + "/b", 0755);                         // 4
    rc[4] = env->rename(r + "/b", r + "/c");                    // 5
    rc[5] = env->rmdir(r + "/a");                               // 6
    EXPECT_TRUE(called);
    EXPECT_EQ(n, env->io_count());
    for (uint64_t k = 0; k < 6; ++k) {
      EXPECT_EQ(k + 1 < n ? 0 : -EIO, rc[k]) << "op " << k + 1;
    }
    env->close(o);
    // Durable: what the fsync (op 3) covered, if it ran.
    tree_t want;
    if (n > 3) {
      want["o"].group = "o";
      want["a"].dir = true;
    }
    EXPECT_EQ(to_string(want), to_string(snapshot(r)));
  }
}

TEST_F(IoFaultMetaTest, ReapedODsyncAioForcesTheLogUpToItsSubmit)
{
  std::string d = subdir("aio");
  auto env = new_env("meta=xfs,mode=drop");
  ASSERT_EQ(0, env->aio_setup(4));
  int j = create(*env, d + "/journal", "", true);
  int js = -1;
  ASSERT_EQ(0, env->open(d + "/journal", O_RDWR | O_DSYNC, 0, &js));
  ASSERT_EQ(0, env->fsync(j));
  ASSERT_EQ(0, env->mkdir(d + "/before", 0755));
  std::string buf(4096, 'j');
  struct iovec iov = {buf.data(), buf.size()};
  ASSERT_EQ(0, env->aio_submit_write(js, &iov, 1, 0, &buf));
  // Issued after the write was submitted: the kernel's log force may have
  // come before it, so the model does not count on it.
  ASSERT_EQ(0, env->mkdir(d + "/after", 0755));
  EXPECT_EQ(2u, env->unsynced_meta_ops());
  std::vector<std::pair<void*, ssize_t>> done;
  ASSERT_EQ(1, env->aio_reap(1, 4, &done, 5000));
  ASSERT_EQ(4096, done[0].second);
  EXPECT_EQ(1u, env->unsynced_meta_ops());
  env->crash();
  env->close(js);
  env->close(j);
  struct stat st;
  EXPECT_EQ(0, ::stat((d + "/before").c_str(), &st));
  EXPECT_NE(0, ::stat((d + "/after").c_str(), &st));
  EXPECT_EQ(buf, read_file(d + "/journal"));
}

TEST_F(IoFaultMetaTest, CrashAtInForkedChildUndoesMetadataBeforeExit)
{
  // The store's crash loop shape: the child dies in _exit at the Nth I/O;
  // the rollback, metadata included, is on disk by then.
  std::string d = subdir("fork");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto b = make_posix_io_env();
    FaultIoEnv e(b.get());
    std::string err;
    if (e.set_spec("crash_at=6,meta=xfs,mode=drop", &err) < 0) {
      _exit(2);
    }
    e.set_crash_callback([](const std::string&) { _exit(0); });
    int fd;
    if (e.open(d + "/kept", O_RDWR | O_CREAT, 0644, &fd) < 0) {  // 1
      _exit(3);
    }
    e.pwrite(fd, "durable", 7, 0);         // 2
    e.fsync(fd);                           // 3
    e.rename(d + "/kept", d + "/moved");   // 4
    e.mkdir(d + "/newdir", 0755);          // 5
    e.unlink(d + "/moved");                // 6: crash -> _exit(0)
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(pid, waitpid(pid, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(0, WEXITSTATUS(status));
  tree_t want;
  want["kept"].data = "durable";
  want["kept"].group = "kept";
  EXPECT_EQ(to_string(want), to_string(snapshot(d)));
  EXPECT_FALSE(has_trash(d));
}

TEST_F(IoFaultMetaTest, PrivateFdsAreReleased)
{
  auto open_fds = [] {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      (void)e;
      ++n;
    }
    return n;
  };
  size_t before = open_fds();
  for (int crash = 0; crash < 2; ++crash) {
    std::string d = subdir("fds" + std::to_string(crash));
    auto env = new_env("meta=xfs,mode=random,seed=1");
    int o = create(*env, d + "/o", "", true);
    for (int i = 0; i < 8; ++i) {
      std::string p = d + "/f" + std::to_string(i);
      create(*env, p, "data");
      if (have_xattrs) {
        set_x(*env, p, "user.k", "v");  // through a read-only fd
      }
      if (i % 3 == 0) {
        ASSERT_EQ(0, env->fsync(o));
      }
      if (i % 2 == 0) {
        ASSERT_EQ(0, env->unlink(p));
      }
    }
    if (crash) {
      env->crash();
    }
    env->close(o);
    env.reset();
    EXPECT_EQ(before, open_fds()) << (crash ? "crashed" : "not crashed");
    EXPECT_FALSE(has_trash(d));
  }
}
