// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:nil -*-
// vim: ts=8 sw=2 smarttab
/*
 * diskemu: the FUSE daemon. One flat directory: a file per emulated disk,
 * sized to the disk, and .control (see control.h).
 *
 * Low-level libfuse3 API with asynchronous replies: a request handler
 * stamps and hands the request to its disk's engine and returns at once;
 * the engine's dispatcher thread replies when the emulated command
 * completes. So any number of requests can be outstanding with a few FUSE
 * threads, and the kernel's limit is raised (max_background) so that a
 * loop device's queue of 32+ direct I/Os all reach the drive's queue.
 * Files are opened direct_io: no page cache between the loop device and
 * the drive, every request reaches the model.
 */
#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "control.h"
#include "engine.h"
#include "opts.h"

using namespace diskemu;

namespace {

constexpr fuse_ino_t ROOT_INO = 1;
constexpr fuse_ino_t FIRST_DISK_INO = 2;
const char CONTROL_NAME[] = ".control";

struct ControlFh {
  std::string in;       ///< a command line not finished yet
  std::string out;      ///< answers to this handle's commands
};

struct Daemon {
  std::vector<std::unique_ptr<DiskEngine>> disks;
  std::vector<DiskEngine*> ptrs;
  time_t started = 0;
  std::mutex ctl_mu;
  std::string last_out;     ///< answer to the latest command, any handle
};

Daemon g;

fuse_ino_t control_ino() { return FIRST_DISK_INO + g.disks.size(); }

DiskEngine* disk_of(fuse_ino_t ino) {
  if (ino >= FIRST_DISK_INO && ino < control_ino()) {
    return g.disks[ino - FIRST_DISK_INO].get();
  }
  return nullptr;
}

bool fill_attr(fuse_ino_t ino, struct stat* st) {
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_atime = st->st_mtime = st->st_ctime = g.started;
  st->st_blksize = 4096;
  if (ino == ROOT_INO) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else if (DiskEngine* d = disk_of(ino)) {
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(d->size());
    st->st_blocks = static_cast<blkcnt_t>(d->allocated() / 512);
  } else if (ino == control_ino()) {
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
  } else {
    return false;
  }
  return true;
}

void ll_init(void*, struct fuse_conn_info* conn) {
  conn->max_write = 1u << 20;
  conn->max_read = 1u << 20;    // must match the max_read mount option
  // Enough background requests for a loop device's queue plus flushes;
  // the kernel default of 12 would cap the emulated queue depth.
  conn->max_background = 256;
  conn->congestion_threshold = 192;
  if (conn->capable & FUSE_CAP_ASYNC_DIO) {
    conn->want |= FUSE_CAP_ASYNC_DIO;
  }
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_entry_param e;
  memset(&e, 0, sizeof e);
  if (parent == ROOT_INO) {
    if (strcmp(name, CONTROL_NAME) == 0) {
      e.ino = control_ino();
    }
    for (size_t i = 0; i < g.disks.size(); i++) {
      if (g.disks[i]->name() == name) {
        e.ino = FIRST_DISK_INO + i;
      }
    }
  }
  if (!e.ino) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fill_attr(e.ino, &e.attr);
  e.attr_timeout = e.entry_timeout = 1.0;
  fuse_reply_entry(req, &e);
}

void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info*) {
  struct stat st;
  if (!fill_attr(ino, &st)) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_reply_attr(req, &st, 1.0);
}

void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                struct fuse_file_info*) {
  // A disk keeps its size; truncating .control (shell '>') is harmless.
  if ((to_set & FUSE_SET_ATTR_SIZE) && disk_of(ino) &&
      static_cast<uint64_t>(attr->st_size) != disk_of(ino)->size()) {
    fuse_reply_err(req, EPERM);
    return;
  }
  struct stat st;
  if (!fill_attr(ino, &st)) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_reply_attr(req, &st, 1.0);
}

void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                struct fuse_file_info*) {
  if (ino != ROOT_INO) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  std::vector<std::pair<std::string, fuse_ino_t>> names = {
      {".", ROOT_INO}, {"..", ROOT_INO}, {CONTROL_NAME, control_ino()}};
  for (size_t i = 0; i < g.disks.size(); i++) {
    names.emplace_back(g.disks[i]->name(), FIRST_DISK_INO + i);
  }
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(off); i < names.size(); i++) {
    struct stat st;
    fill_attr(names[i].second, &st);
    size_t n = fuse_add_direntry(req, buf.data() + used, size - used,
                                 names[i].first.c_str(), &st, static_cast<off_t>(i + 1));
    if (n > size - used) {
      break;
    }
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  if (ino == ROOT_INO) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  fi->direct_io = 1;     // every request reaches the drive, no page cache
  fi->keep_cache = 0;
  if (ino == control_ino()) {
    fi->fh = reinterpret_cast<uint64_t>(new ControlFh);
  } else if (!disk_of(ino)) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_reply_open(req, fi);
}

void reply_data(void* ctx, int err, const char* data, size_t len) {
  fuse_req_t req = static_cast<fuse_req_t>(ctx);
  if (err) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_buf(req, data, len);
  }
}

void reply_written(void* ctx, int err, const char*, size_t len) {
  fuse_req_t req = static_cast<fuse_req_t>(ctx);
  if (err) {
    fuse_reply_err(req, err);
  } else {
    fuse_reply_write(req, len);
  }
}

void reply_status(void* ctx, int err, const char*, size_t) {
  fuse_reply_err(static_cast<fuse_req_t>(ctx), err);
}

ControlFh* control_fh(struct fuse_file_info* fi) {
  return reinterpret_cast<ControlFh*>(fi->fh);
}

/// Run every complete line (and with `all`, a last one without newline);
/// false if a command failed.
bool control_run(ControlFh* fh, bool all) {
  bool ok_all = true;
  for (;;) {
    size_t nl = fh->in.find('\n');
    if (nl == std::string::npos && !(all && !fh->in.empty())) {
      break;
    }
    std::string line = fh->in.substr(0, nl);
    fh->in.erase(0, nl == std::string::npos ? nl : nl + 1);
    bool ok = true;
    std::string out = run_control(g.ptrs, line, &ok);
    if (out.empty()) {
      continue;
    }
    out += "\n";
    if (!ok) {
      ok_all = false;
      fprintf(stderr, "diskemu: control: %s: %s", line.c_str(), out.c_str());
    }
    fh->out += out;
    std::lock_guard<std::mutex> l(g.ctl_mu);
    g.last_out = out;
  }
  return ok_all;
}

void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
             struct fuse_file_info* fi) {
  if (DiskEngine* d = disk_of(ino)) {
    d->read(static_cast<uint64_t>(off), size, reply_data, req);
    return;
  }
  // .control: this handle's answers, or the latest answer of any handle
  // (echo CMD > .control; cat .control).
  std::string out = control_fh(fi)->out;
  if (out.empty()) {
    std::lock_guard<std::mutex> l(g.ctl_mu);
    out = g.last_out;
  }
  size_t o = std::min(out.size(), static_cast<size_t>(off));
  fuse_reply_buf(req, out.data() + o, std::min(size, out.size() - o));
}

void ll_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size,
              off_t off, struct fuse_file_info* fi) {
  if (DiskEngine* d = disk_of(ino)) {
    d->write(static_cast<uint64_t>(off), buf, size, reply_written, req);
    return;
  }
  ControlFh* fh = control_fh(fi);
  fh->in.append(buf, size);
  if (control_run(fh, false)) {
    fuse_reply_write(req, size);
  } else {
    fuse_reply_err(req, EINVAL);   // the shell's echo reports it
  }
}

void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  if (DiskEngine* d = disk_of(ino)) {
    d->flush(reply_status, req);
    return;
  }
  if (ino == control_ino() && !control_run(control_fh(fi), true)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  fuse_reply_err(req, 0);
}

void ll_fsync(fuse_req_t req, fuse_ino_t ino, int, struct fuse_file_info*) {
  if (DiskEngine* d = disk_of(ino)) {
    d->flush(reply_status, req);
    return;
  }
  fuse_reply_err(req, 0);
}

void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  if (ino == control_ino()) {
    delete control_fh(fi);
  }
  fuse_reply_err(req, 0);
}

void ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
                  off_t len, struct fuse_file_info*) {
  DiskEngine* d = disk_of(ino);
  if (!d) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  int r = 0;
  if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
    // A loop device's discard and write-zeroes: zeros on the platter,
    // not charged (an HDD would ignore the discard or write zeros).
    r = d->discard(static_cast<uint64_t>(off), static_cast<uint64_t>(len));
  } else if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE) {
    r = -EOPNOTSUPP;
  }
  fuse_reply_err(req, -r);
}

void ll_statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs s;
  memset(&s, 0, sizeof s);
  uint64_t total = 0, used = 0;
  for (auto& d : g.disks) {
    total += d->size();
    used += d->allocated();
  }
  s.f_bsize = s.f_frsize = 4096;
  s.f_blocks = total / 4096;
  s.f_bfree = s.f_bavail = used < total ? (total - used) / 4096 : 0;
  s.f_files = g.disks.size() + 2;
  s.f_namemax = 255;
  fuse_reply_statfs(req, &s);
}

void usage(FILE* f) {
  fprintf(f,
    "usage: diskemu --mount DIR --disk NAME:size=SIZE[:KEY=VALUE...] [--disk ...]\n"
    "               [--write-cache on|off] [--fast] [--trace FILE] [options]\n"
    "Serves one file per disk in DIR, sized to the disk; attach a loop device:\n"
    "  losetup --direct-io=on -f --show DIR/NAME\n"
    "Disk keys: size (required), model (hdd7200|hdd10k|nvme, default hdd7200),\n"
    "  backing (default /var/tmp/diskemu/NAME.img), trace (CSV file), fast=on|off,\n"
    "  qd, sched, aging_ms, wc, cache_bytes, destage_window, seq_window_us,\n"
    "  capacity, and datasheet figures: %s\n"
    "Options (defaults for every disk):\n"
    "  --mount DIR           mount point (must exist)\n"
    "  --fast                start in fast mode (no delays; for a prefill)\n"
    "  --trace FILE          record requests as CSV (t_us,op,offset,len); with\n"
    "                        several disks FILE.NAME\n"
    "  --threads N           FUSE worker threads (16)\n"
    "  -o OPT                extra FUSE mount option\n"
    "  -d, --debug           FUSE debug output\n"
    "%s"
    "Control: echo 'cut NAME SEED [torn]' > DIR/.control (also restore NAME,\n"
    "  fast NAME on|off, stats NAME|all; cat DIR/.control for the answer).\n",
    spec_keys_help(), drive_options_help());
}

bool parse_disk(const std::string& arg, const DriveOptions& defaults, bool fast,
                const std::string& trace, EngineConfig* c, std::string* err) {
  std::vector<std::string> f;
  size_t p = 0;
  for (;;) {
    size_t q = arg.find(':', p);
    f.push_back(arg.substr(p, q == std::string::npos ? q : q - p));
    if (q == std::string::npos) {
      break;
    }
    p = q + 1;
  }
  c->name = f[0];
  if (c->name.empty() || c->name[0] == '.' || c->name.find('/') != std::string::npos) {
    *err = "bad disk name '" + c->name + "'";
    return false;
  }
  c->drive = defaults;
  c->fast = fast;
  c->trace = trace;
  std::string model = "hdd7200";
  std::vector<std::pair<std::string, std::string>> rest;
  for (size_t i = 1; i < f.size(); i++) {
    size_t eq = f[i].find('=');
    if (eq == std::string::npos) {
      *err = "disk " + c->name + ": want KEY=VALUE, got '" + f[i] + "'";
      return false;
    }
    std::string k = f[i].substr(0, eq), v = f[i].substr(eq + 1);
    if (k == "model") {
      model = v;
    } else {
      rest.emplace_back(k, v);
    }
  }
  const DiskSpec* spec = find_preset(model);
  if (!spec) {
    *err = "disk " + c->name + ": unknown model '" + model + "'";
    return false;
  }
  c->spec = *spec;
  c->backing = "/var/tmp/diskemu/" + c->name + ".img";
  for (auto& kv : rest) {
    const std::string &k = kv.first, &v = kv.second;
    err->clear();
    if (k == "size") {
      if (!parse_size(v, &c->size) || c->size < 1024 * 1024) {
        *err = "disk " + c->name + ": bad size '" + v + "' (at least 1M)";
        return false;
      }
    } else if (k == "backing") {
      c->backing = v;
    } else if (k == "trace") {
      c->trace = v;
    } else if (k == "fast") {
      c->fast = v == "on";
    } else if (parse_drive_key(k, v, &c->drive, err)) {
      if (!err->empty()) {
        return false;
      }
    } else if (!set_spec_value(&c->spec, k, v, err)) {
      return false;
    }
  }
  if (!c->size) {
    *err = "disk " + c->name + ": size= is required";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mountpoint, trace, err;
  std::vector<std::string> disk_args, fuse_opts;
  DriveOptions defaults;
  bool fast = false, debug = false;
  unsigned threads = 16;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "diskemu: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--mount") {
      mountpoint = value();
    } else if (a == "--disk") {
      disk_args.push_back(value());
    } else if (a == "--fast") {
      fast = true;
    } else if (a == "--trace") {
      trace = value();
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(atoi(value().c_str()));
    } else if (a == "-o") {
      fuse_opts.push_back(value());
    } else if (a == "-d" || a == "--debug") {
      debug = true;
    } else {
      std::string v = value();
      err.clear();
      if (!parse_drive_option(a, v, &defaults, &err)) {
        fprintf(stderr, "diskemu: unknown option %s\n", a.c_str());
        usage(stderr);
        return 2;
      }
      if (!err.empty()) {
        fprintf(stderr, "diskemu: %s\n", err.c_str());
        return 2;
      }
    }
  }
  if (mountpoint.empty() || disk_args.empty()) {
    usage(stderr);
    return 2;
  }
  g.started = time(nullptr);
  for (auto& d : disk_args) {
    EngineConfig c;
    std::string t = trace;
    if (!t.empty() && disk_args.size() > 1) {
      t += "." + d.substr(0, d.find(':'));
    }
    if (!parse_disk(d, defaults, fast, t, &c, &err)) {
      fprintf(stderr, "diskemu: %s\n", err.c_str());
      return 2;
    }
    for (auto& other : g.disks) {
      if (other->name() == c.name) {
        fprintf(stderr, "diskemu: disk %s given twice\n", c.name.c_str());
        return 2;
      }
    }
    if (c.backing.rfind("/var/tmp/diskemu/", 0) == 0) {
      mkdir("/var/tmp/diskemu", 0700);
    }
    auto e = std::make_unique<DiskEngine>(c);
    if (!e->start(&err)) {
      fprintf(stderr, "diskemu: disk %s: %s\n", c.name.c_str(), err.c_str());
      return 1;
    }
    fprintf(stderr, "diskemu: %s: %s, %llu bytes, backing %s, %s%s%s\n", c.name.c_str(),
            c.spec.name.c_str(), (unsigned long long)c.size, c.backing.c_str(),
            c.drive.write_cache ? "write cache on" : "write cache off",
            c.fast ? ", fast" : "", c.trace.empty() ? "" : (", trace " + c.trace).c_str());
    g.ptrs.push_back(e.get());
    g.disks.push_back(std::move(e));
  }

  struct fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.init = ll_init;
  ops.lookup = ll_lookup;
  ops.getattr = ll_getattr;
  ops.setattr = ll_setattr;
  ops.readdir = ll_readdir;
  ops.open = ll_open;
  ops.read = ll_read;
  ops.write = ll_write;
  ops.flush = ll_flush;
  ops.fsync = ll_fsync;
  ops.release = ll_release;
  ops.fallocate = ll_fallocate;
  ops.statfs = ll_statfs;

  struct fuse_args args = FUSE_ARGS_INIT(0, nullptr);
  fuse_opt_add_arg(&args, argv[0]);
  fuse_opt_add_arg(&args, "-o");
  fuse_opt_add_arg(&args, "fsname=diskemu,subtype=diskemu,max_read=1048576");
  for (auto& o : fuse_opts) {
    fuse_opt_add_arg(&args, "-o");
    fuse_opt_add_arg(&args, o.c_str());
  }
  if (debug) {
    fuse_opt_add_arg(&args, "-d");
  }
  int rc = 1;
  struct fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, nullptr);
  if (se) {
    if (fuse_set_signal_handlers(se) == 0) {
      if (fuse_session_mount(se, mountpoint.c_str()) == 0) {
        fprintf(stderr, "diskemu: mounted on %s (pid %d)\n", mountpoint.c_str(), getpid());
        struct fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, threads);
        fuse_loop_cfg_set_idle_threads(cfg, threads);
        rc = fuse_session_loop_mt(se, cfg) ? 1 : 0;
        fuse_loop_cfg_destroy(cfg);
        // No engine may reply into a session that is going away.
        for (auto& d : g.disks) {
          d->stop();
        }
        fuse_session_unmount(se);
      }
      fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
  }
  fuse_opt_free_args(&args);
  for (auto& d : g.disks) {
    d->stop();
  }
  fprintf(stderr, "diskemu: unmounted %s\n", mountpoint.c_str());
  return rc;
}
