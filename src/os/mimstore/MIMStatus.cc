// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: what the store tells the OSD about itself. statfs (space, the
 * omap database's share) with the store's health alerts
 * (core/health_alerts.h: the OSD reports them with its statistics, the
 * monitor shows each key as a health warning), the devices under the data
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
  buf->allocated = buf->total - uint64_t(st.f_bfree) * st.f_frsize;
  buf->data_stored = buf->allocated;
  // The omap database's files (omap, xattrs, the store's records): the
  // OMAP column of `ceph osd df`. On the data filesystem they are part of
  // what it has allocated, so they are taken out of the data.
  struct statvfs db_st;
  const bool db_apart = _db_fs_apart(&db_st);
  {
    mim::MutexLock l(health_lock);
    if (health && db) {
      std::map<string, uint64_t> extra;
      buf->omap_allocated = db->get_estimated_size(extra);
      if (!db_apart) {
        buf->data_stored -= std::min(buf->data_stored, buf->omap_allocated);
      }
    }
  }
  if (alerts) {
    _health_alerts(st, db_apart ? &db_st : nullptr, alerts);
  }
  return 0;
}

bool MIMStore::_db_fs_apart(struct statvfs* db_st)
{
  struct stat a, b;
  return !db_path.empty() && ::stat(path.c_str(), &a) == 0 &&
    ::stat(db_path.c_str(), &b) == 0 && a.st_dev != b.st_dev &&
    ::statvfs(db_path.c_str(), db_st) == 0;
}

void MIMStore::_health_alerts(const struct statvfs& data_fs,
                              const struct statvfs* db_fs,
                              osd_alert_list_t* alerts)
{
  mim::HealthSample s;
  s.now = std::chrono::duration<double>(
    ceph::mono_clock::now().time_since_epoch()).count();
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
  // umount resets health under health_lock before the journal goes, so
  // the journal and the counters are there while it is held.
  s.journal_full_waits = logger->get(l_mimstore_journal_full_waits);
  s.journal_used = journal->used();
  s.journal_size = journal->size();
  s.checkpoint_sn = last_checkpoint.load();
  s.lag_sns = logger->get(l_mimstore_checkpoint_lag_sns);
  s.fsck_errors = last_fsck_errors;
  s.fsck_when = last_fsck_when;
  for (auto& a : health->update(s)) {
    (*alerts)[a.key] = a.message;
  }
}

void MIMStore::_start_health()
{
  mim::HealthLimits hl;
  hl.journal_full_window = conf.warn_journal_full_window;
  hl.checkpoint_age = conf.warn_checkpoint_age;
  hl.inodes_free_ratio = conf.warn_inodes_free_ratio;
  hl.db_free_ratio = conf.warn_db_free_ratio;
  // "<errors> <when> <deep|shallow>", written by fsck()
  string rec;
  int64_t errors = -1;
  string when;
  if (read_meta(LAST_FSCK_META, &rec) == 0) {
    std::istringstream is(rec);
    if (!(is >> errors >> when)) {
      derr << LAST_FSCK_META << " is not \"<errors> <time> <kind>\": '"
           << rec << "'; no fsck record" << dendl;
      errors = -1;
      when.clear();
    }
  }
  mim::MutexLock l(health_lock);
  health = std::make_unique<mim::HealthMonitor>(hl);
  last_fsck_errors = errors;
  last_fsck_when = when;
}

void MIMStore::_stop_health()
{
  mim::MutexLock l(health_lock);
  health.reset();
}

void MIMStore::_record_fsck(int errors, bool deep)
{
  // one word: the record is read back by whitespace
  string when = stringify(ceph_clock_now());
  std::replace(when.begin(), when.end(), ' ', 'T');
  const string rec = stringify(errors) + " " + when +
    (deep ? " deep" : " shallow");
  int r = write_meta(LAST_FSCK_META, rec);
  if (r < 0) {
    derr << "cannot record the fsck's result in " << path << "/"
         << LAST_FSCK_META << ": " << cpp_strerror(r) << dendl;
  }
  mim::MutexLock l(health_lock);
  last_fsck_errors = errors;
  last_fsck_when = when;
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
  devices_of(db_path, ls);
  return 0;
}

void MIMStore::collect_metadata(std::map<string, string>* pm)
{
  (*pm)["mimstore_merge"] = conf.merge ? "true" : "false";
  (*pm)["mimstore_journal"] = journal_path;
  (*pm)["osd_objectstore"] = "mimstore";
  // Which device is which (the OSD's "devices" lists them together).
  for (auto [key, p] : {std::pair{"mimstore_data_devices", &path},
                        std::pair{"mimstore_journal_devices", &journal_path},
                        std::pair{"mimstore_db_devices", &db_path}}) {
    std::set<string> ls;
    devices_of(*p, &ls);
    (*pm)[key] = join(ls);
  }
  (*pm)["mimstore_journal_rotational"] =
    path_is_rotational(journal_path, false) ? "1" : "0";
}
