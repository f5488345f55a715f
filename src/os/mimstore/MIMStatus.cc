// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: what the store tells the OSD about itself. statfs (space, the
 * omap database's share) with the store's health alerts
 * (core/health_alerts.h: the OSD reports them with its statistics, the
 * mgr shows each key as a health warning), the devices under the data
 * filesystem, the journal and the DB (`ceph device ls`, device health),
 * the OSD metadata, and the record of the last fsck.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "common/blkdev.h"
#include "common/debug.h"
#include "common/errno.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#include "Checksums.h"
#include "MIMJournal.h"
#include "MIMPerf.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;

using namespace mimstore;

namespace {

/// Rotational flag of the block device holding `path` (a file, directory
/// or device node), from sysfs; true when unknown, as HDD is the safe
/// assumption for a data disk.
bool path_is_rotational(const string& path, bool dflt)
{
  struct stat st;
  if (::stat(path.c_str(), &st) < 0) {
    return dflt;
  }
  dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  string base = "/sys/dev/block/" + std::to_string(major(dev)) + ":" +
    std::to_string(minor(dev));
  for (const char* rel : {"/queue/rotational", "/../queue/rotational"}) {
    char buf[8] = {0};
    int fd = ::open((base + rel).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
    if (n > 0) {
      return buf[0] == '1';
    }
  }
  return dflt;
}

}  // namespace

bool MIMStore::is_rotational()
{
  return path_is_rotational(path, true);
}

bool MIMStore::is_journal_rotational()
{
  return path_is_rotational(journal_path, false);
}

int MIMStore::statfs(struct store_statfs_t* buf, osd_alert_list_t* alerts)
{
  if (alerts) {
    alerts->clear();
  }
  buf->reset();
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) < 0) {
    return -errno;
  }
  buf->total = uint64_t(st.f_blocks) * st.f_frsize;
  buf->available = uint64_t(st.f_bavail) * st.f_frsize;
  buf->internally_reserved = 0;
  const uint64_t fs_used = buf->total - uint64_t(st.f_bfree) * st.f_frsize;
  buf->allocated = fs_used;
  // The omap database's files (omap, xattrs, the store's records) are the
  // OMAP column of `ceph osd df`, as BlueStore reports its RocksDB: taken
  // out of the data when they share its filesystem; on a filesystem of
  // their own, that one counts in the total (as BlueStore counts a
  // dedicated DB device) and what it holds beyond them (WAL, the
  // filesystem's own) is metadata.
  struct statvfs db_st;
  const bool db_apart = _db_fs_apart(&db_st);
  const uint64_t omap = _omap_bytes();  // 0 while not mounted
  buf->omap_allocated = omap;
  if (db_apart) {
    const uint64_t db_total = uint64_t(db_st.f_blocks) * db_st.f_frsize;
    const uint64_t db_used = db_total - uint64_t(db_st.f_bfree) * db_st.f_frsize;
    buf->total += db_total;
    buf->internal_metadata = db_used - std::min(db_used, omap);
  } else {
    buf->allocated = fs_used - std::min(fs_used, omap);
  }
  buf->data_stored = buf->allocated;
  if (alerts) {
    _health_alerts(st, db_apart ? &db_st : nullptr, alerts);
  }
  return 0;
}

uint64_t MIMStore::_omap_bytes()
{
  // RocksDB's estimate lists and stats its files: refreshed at most every
  // OMAP_BYTES_AGE seconds, the OSD asks on every tick.
  const auto now = ceph::mono_clock::now();
  mim::MutexLock l(health_lock);
  if (!health || !db) {
    return 0;  // not mounted
  }
  if (omap_bytes_at == ceph::mono_time() ||
      now - omap_bytes_at >= std::chrono::seconds(OMAP_BYTES_AGE)) {
    std::map<string, uint64_t> extra;
    omap_bytes = db->get_estimated_size(extra);
    omap_bytes_at = now;
  }
  return omap_bytes;
}

bool MIMStore::_db_fs_apart(struct statvfs* db_st)
{
  string dir;
  {
    mim::MutexLock l(health_lock);
    if (!health) {
      return false;  // not mounted: the DB is no part of the store's space
    }
    dir = db_path;
  }
  struct stat a, b;
  return !dir.empty() && ::stat(path.c_str(), &a) == 0 &&
    ::stat(dir.c_str(), &b) == 0 && a.st_dev != b.st_dev &&
    ::statvfs(dir.c_str(), db_st) == 0;
}

string MIMStore::_db_path()
{
  mim::MutexLock l(health_lock);
  return db_path;
}

void MIMStore::_health_alerts(const struct statvfs& data_fs,
                              const struct statvfs* db_fs,
                              osd_alert_list_t* alerts)
{
  mim::HealthSample s;
  s.data_inodes = data_fs.f_files;
  s.data_inodes_free = data_fs.f_ffree;
  if (db_fs) {
    s.db_bytes = uint64_t(db_fs->f_blocks) * db_fs->f_frsize;
    s.db_bytes_free = uint64_t(db_fs->f_bavail) * db_fs->f_frsize;
  }
  mim::MutexLock l(health_lock);
  if (!health) {
    return;  // not mounted: nothing to say about the journal or the cache
  }
  // under the lock: the OSD calls statfs from more than one thread, and
  // the monitor takes its samples in time order
  s.now = std::chrono::duration<double>(
    ceph::mono_clock::now().time_since_epoch()).count();
  // umount resets health under health_lock before the journal goes, so
  // the journal and the counters are there while it is held.
  s.journal_full_waits = logger->get(l_mimstore_journal_full_waits);
  s.journal_waiting = journal->space_wait_seconds();
  s.journal_size = journal->size();
  // Every sn given out and not yet durable, applied or not (an apply
  // blocked on a hung filesystem holds the checkpoint's catching up too);
  // live, not the counter the last sync set: a stall has no sync.
  const sn_t given_end = sequencer.next_sn_relaxed();
  const sn_t cp = durability.checkpoint();
  s.lag_sns = given_end > cp ? given_end - cp : 0;
  s.lag_bytes = journal->used();
  // Moves with the checkpoint, with every transaction applied and every
  // write-back I/O done (a large generation's write back can hold the
  // checkpoint for minutes on a slow disk, but its I/Os complete).
  s.progress = cp + sequencer.applied_sn() +
    logger->get(l_mimstore_writeback_ios);
  s.fsck_errors = last_fsck_errors;
  s.fsck_when = last_fsck_when;
  s.csum_errors = logger->get(l_mimstore_csum_errors);
  s.csum_last = csums->last_error();
  for (auto& a : health->update(s)) {
    (*alerts)[a.key] = a.message;
  }
}

void MIMStore::_start_health()
{
  mim::HealthLimits hl;
  hl.journal_full_window = conf.warn_journal_full_window;
  // Merging holds the checkpoint for up to the time threshold by design:
  // the age counts beyond it.
  hl.stall_age = conf.warn_writeback_stall_age +
    (conf.merge ? policy->time_thresh() : 0);
  hl.inodes_free_ratio = conf.warn_inodes_free_ratio;
  hl.db_free_ratio = conf.warn_db_free_ratio;
  hl.csum_error_window = conf.warn_csum_error_window;
  // "<errors> <when> <deep|shallow>", written by _record_fsck()
  string rec;
  int64_t errors = -1;
  string when, kind;
  if (read_meta(LAST_FSCK_META, &rec) == 0) {
    std::istringstream is(rec);
    if (!(is >> errors >> when >> kind) || (kind != "deep" && kind != "shallow")) {
      derr << LAST_FSCK_META << " is not \"<errors> <time> <deep|shallow>\": '"
           << rec << "'; no fsck record" << dendl;
      errors = -1;
      when.clear();
      kind.clear();
    }
  }
  mim::MutexLock l(health_lock);
  health = std::make_unique<mim::HealthMonitor>(
    hl, logger->get(l_mimstore_csum_errors));
  last_fsck_errors = errors;
  last_fsck_deep = kind == "deep";
  last_fsck_when = errors < 0 ? string() : when + " " + kind;
  omap_bytes_at = ceph::mono_time();
}

void MIMStore::_stop_health()
{
  mim::MutexLock l(health_lock);
  health.reset();
}

void MIMStore::_record_fsck(int errors, bool deep)
{
  {
    mim::MutexLock l(health_lock);
    // A shallow fsck does not read what a deep one checks: clean, it does
    // not clear errors a deep one found.
    if (errors == 0 && !deep && last_fsck_errors > 0 && last_fsck_deep) {
      dout(1) << "fsck: clean, but shallow: the errors of the deep fsck of "
              << last_fsck_when << " stand until a clean deep fsck" << dendl;
      return;
    }
  }
  // one word: the record is read back by whitespace
  string when = stringify(ceph_clock_now());
  std::replace(when.begin(), when.end(), ' ', 'T');
  const string kind = deep ? "deep" : "shallow";
  int r = write_meta(LAST_FSCK_META, stringify(errors) + " " + when + " " + kind);
  if (r < 0) {
    derr << "cannot record the fsck's result in " << path << "/"
         << LAST_FSCK_META << ": " << cpp_strerror(r) << dendl;
  }
  // the record's fsyncs outside the lock: statfs (the OSD's tick) takes it
  mim::MutexLock l(health_lock);
  last_fsck_errors = errors;
  last_fsck_deep = deep;
  last_fsck_when = when + " " + kind;
}

int MIMStore::pool_statfs(uint64_t pool_id, struct store_statfs_t* buf,
                          bool* per_pool_omap)
{
  // Per-pool usage would need a per-pool byte count kept in step with
  // every write and crash-consistent with the object files (BlueStore
  // keeps one in its KV transaction); the files' sizes are only in the
  // filesystem. Without it the OSD reports the store's totals (statfs)
  // and the monitor derives pool usage from the PG stats, as it did for
  // FileStore.
  return -ENOTSUP;
}

namespace {

/// The whole disks under `p` (a file or directory: its filesystem's
/// device; a block device: itself), as get_raw_devices() names them
/// ("sdb", "nvme0n1": a partition's disk, a dm device's members). None
/// for a filesystem without a block device (tmpfs).
void devices_of(const string& p, std::set<string>* ls)
{
  struct stat st;
  if (p.empty() || ::stat(p.c_str(), &st) < 0) {
    return;
  }
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  if (major(dev) == 0) {
    return;
  }
  const string sys = "/sys/dev/block/" + std::to_string(major(dev)) + ":" +
    std::to_string(minor(dev));
  char link[PATH_MAX];
  ssize_t n = ::readlink(sys.c_str(), link, sizeof(link) - 1);
  if (n <= 0) {
    return;
  }
  link[n] = '\0';
  const char* base = std::strrchr(link, '/');
  get_raw_devices(base ? base + 1 : link, ls);
}

string join(const std::set<string>& s)
{
  string out;
  for (auto& x : s) {
    out += out.empty() ? x : "," + x;
  }
  return out;
}

}  // namespace

int MIMStore::get_devices(std::set<string>* ls)
{
  devices_of(path, ls);
  devices_of(journal_path, ls);
  devices_of(_db_path(), ls);
  return 0;
}

void MIMStore::collect_metadata(std::map<string, string>* pm)
{
  (*pm)["mimstore_merge"] = conf.merge ? "true" : "false";
  (*pm)["mimstore_journal"] = journal_path;
  (*pm)["osd_objectstore"] = "mimstore";
  // Which device is which (the OSD's "devices" lists them together).
  const string db_dir = _db_path();
  const std::pair<const char*, const string*> which[] = {
    {"mimstore_data_devices", &path},
    {"mimstore_journal_devices", &journal_path},
    {"mimstore_db_devices", &db_dir}};
  for (const auto& [key, p] : which) {
    std::set<string> ls;
    devices_of(*p, &ls);
    (*pm)[key] = join(ls);
  }
  (*pm)["mimstore_journal_rotational"] =
    path_is_rotational(journal_path, false) ? "1" : "0";
}
