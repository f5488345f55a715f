// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's lifecycle: mkfs, mount (open, replay, start), umount. Fsck
 * and repair are in MIMFsck.cc, the replay in MIMReplay.cc, the journal
 * tools (mkjournal, flush_journal, dump_journal) in MIMJournalTools.cc.
 * What a mount opens, in order: the lock file, the I/O stack (with the
 * fault seam when configured), the object files, RocksDB and the omap, the
 * journal, then replay, the merge cache, the threads and the admin
 * commands.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "common/debug.h"
#include "common/errno.h"
#include "common/safe_io.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#include "Checksums.h"
#include "CrashRocksEnv.h"
#include "MIMJournal.h"
#include "ObjectFiles.h"
#include "ObjectName.h"
#include "TxnCodec.h"
#include "core/fault_io_env.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;

using namespace mimstore;

// ---------------------------------------------------------------------------
// mkfs / mount / umount

int MIMStore::_load_config()
{
  std::ostringstream err;
  int r = MIMConfig::load(cct, journal_path, &conf, err);
  if (r < 0) {
    derr << "invalid mimstore configuration:\n" << err.str() << dendl;
    std::cerr << "mimstore: invalid configuration:\n" << err.str();
  }
  return r;
}

int MIMStore::_open_io()
{
  io_base = mim::make_posix_io_env();
  // Why an I/O failed (e.g. O_DIRECT's EINVAL) belongs in the OSD's log,
  // not on its stderr, which a daemon has nowhere to read.
  io_base->set_error_log([this](const std::string& m) { derr << m << dendl; });
  io = io_base.get();
  if (!conf.debug_fault.empty()) {
    std::string err;
    auto f = std::make_unique<mim::FaultIoEnv>(io_base.get());
    int r = mim::parse_fault_spec(conf.debug_fault, &fault_spec, &err);
    if (r == 0) {
      f->set_spec(fault_spec);
    }
    // A crash point acts like power loss: unsynced writes are rolled back
    // by the seam, then the process dies without any cleanup.
    // RocksDB's files go too (its Env is set up in _open_db).
    CephContext* c = cct;
    f->set_crash_callback([this, c](const std::string& what) {
      // What the cut kept and undid goes in the log: a failing crash point
      // is read from it.
      lderr(c) << "mimstore: " << what << dendl;
      if (auto e = rocks_crash_env.load()) {
        std::string rocks;
        e->crash(&rocks);
        lderr(c) << "mimstore: " << rocks << dendl;
      }
      c->_log->flush();  // the log of the moments before the "power loss"
      ::_exit(77);
    });
    if (r < 0) {
      derr << "mimstore_debug_fault = " << conf.debug_fault << ": " << err
           << dendl;
      return r;
    }
    derr << "FAULT INJECTION ENABLED: " << conf.debug_fault << dendl;
    io_fault = std::move(f);
    io = io_fault.get();
  }
  return 0;
}

void MIMStore::_close_io()
{
  if (io_fault) {
    fault_io_count =
      static_cast<mim::FaultIoEnv*>(io_fault.get())->io_count();
  }
  io_fault.reset();
  io_base.reset();
  io = nullptr;
}

int MIMStore::_read_meta_u64(const string& key, uint64_t* v)
{
  string s;
  int r = read_meta(key, &s);
  if (r < 0) {
    return r;
  }
  // Digits only: strtoull alone takes "", " 7" and "-1" (as 2^64 - 1).
  if (s.empty() || s.size() > 20 ||
      s.find_first_not_of("0123456789") != string::npos) {
    return -EINVAL;
  }
  errno = 0;
  const uint64_t x = strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    return -EINVAL;
  }
  *v = x;
  return 0;
}

int MIMStore::_record_journal_empty(bool empty)
{
  // (write_meta: written, fsynced and renamed into place)
  int r = write_meta(JOURNAL_EMPTY_META, empty ? "yes" : "no");
  if (r < 0) {
    derr << "cannot record in " << path << " whether the journal is empty: "
         << cpp_strerror(r) << dendl;
  }
  return r;
}

int MIMStore::_fence_sn(sn_t sn)
{
  if (sn <= sn_fence) {
    return 0;
  }
  const sn_t fence = sn + SN_FENCE_STEP;
  // (write_meta: a temporary file written and fsynced, renamed, the
  // directory fsynced)
  int r = write_meta("mimstore_sn_fence", stringify(fence));
  if (r < 0) {
    derr << "cannot record the sn fence " << fence << ": "
         << cpp_strerror(r) << dendl;
    return r;
  }
  sn_fence = fence;
  return 0;
}

int MIMStore::_check_format()
{
  // A store made before mimstore_format was written is format 1.
  uint64_t format = 1;
  int r = _read_meta_u64("mimstore_format", &format);
  if (r == -EINVAL || (r == 0 && format == 0)) {
    derr << path << "/mimstore_format is not a format number; the data "
         << "directory is damaged or not mimstore's" << dendl;
    return -EINVAL;
  }
  if (format > FORMAT) {
    derr << path << " has mimstore_format " << format << ", newer than "
         << "this build understands (" << FORMAT << "); run the ceph-osd "
         << "that made it, or a newer one" << dendl;
    return -EINVAL;
  }
  // Format 1 stores may hold object files from before birth marks;
  // replay must not take those for creates cut short.
  births_complete = format >= 2;
  omap_legacy = format < 3;
  if (!births_complete) {
    dout(1) << "mimstore_format " << format << ": object files may lack "
            << "birth marks; replay keeps such files" << dendl;
  }
  return 0;
}

int MIMStore::_raise_format()
{
  // Before replay changes any data: from here on no build that keeps no
  // checksums may mount the store (its _check_format refuses format 4).
  uint64_t format = 1;
  int r = _read_meta_u64("mimstore_format", &format);
  if (r < 0 || format >= FORMAT) {
    return r == -ENOENT ? 0 : r;
  }
  r = write_meta("mimstore_format", stringify(FORMAT));
  if (r < 0) {
    derr << "cannot raise " << path << "/mimstore_format from " << format
         << " to " << FORMAT << ": " << cpp_strerror(r) << dendl;
    return r;
  }
  dout(1) << "mimstore_format " << format << " -> " << FORMAT << ": data "
          << "checksums are kept from now on; chunks written before have "
          << "none and read unverified" << dendl;
  return 0;
}

int MIMStore::_open_db(bool create)
{
  string dir = conf.db_dir.empty() ? path + "/db" : conf.db_dir;
  if (!create) {
    string recorded;
    if (read_meta("mimstore_db_dir", &recorded) == 0) {
      dir = recorded;  // fixed at mkfs
    }
  }
  if (create) {
    int r = ::mkdir(dir.c_str(), 0755);
    if (r < 0 && errno != EEXIST) {
      r = -errno;
      derr << "cannot create the omap database directory " << dir << ": "
           << cpp_strerror(r) << dendl;
      return r;
    }
  }
  CrashRocksEnv* env = nullptr;
  if (io_fault) {
    // Under fault injection RocksDB loses what it had not synced, too.
    auto mode = fault_spec.mode;
    env = new CrashRocksEnv(
      rocksdb::Env::Default(), fault_spec.seed,
      mode == mim::crash_mode_t::DROP ? CrashRocksEnv::Mode::DROP :
      mode == mim::crash_mode_t::KEEP ? CrashRocksEnv::Mode::KEEP :
      CrashRocksEnv::Mode::RANDOM);
    env->set_fail_rules(fault_spec.fails);
  }
  db = KeyValueDB::create(cct, "rocksdb", dir, {}, env);
  if (!db) {
    delete env;
    derr << "cannot create a rocksdb instance at " << dir << dendl;
    return -EIO;
  }
  rocks_crash_env = env;  // db owns it from here
  OmapStore::register_merge_operators(db);
  {
    mim::MutexLock l(health_lock);
    db_path = dir;
  }
  db->init(conf.rocksdb_options);
  db->set_cache_size(conf.db_cache_bytes);
  std::stringstream err;
  int r = create ? db->create_and_open(err) : db->open(err);
  if (r) {
    derr << "cannot open the omap database " << dir << ": " << err.str()
         << dendl;
    delete db;
    db = nullptr;
    return -EIO;
  }
  if (!create && omap_legacy) {
    r = _migrate_omap();  // closes db; it is opened again below
    if (r < 0) {
      return r;
    }
    return _open_db(false);
  }
  omap = std::make_unique<OmapStore>(cct, db);
  written_back = std::make_unique<WrittenBackRecords>(cct, db);
  r = omap->init(Checksums::ORDER);
  csums = std::make_unique<Checksums>(cct, omap.get(), files.get(),
                                      Checksums::ORDER, logger,
                                      conf.debug_verify_csums);
  {
    string v;
    csums->set_complete(read_meta(Checksums::COMPLETE_META, &v) == 0 &&
                        v == "yes");
  }
  if (r == 0 && !create) {
    r = _drop_legacy_omap();
  }
  if (r < 0) {
    derr << "cannot start the omap layer: " << cpp_strerror(r) << dendl;
    _close_db();
    return r;
  }
  if (create) {
    // mount finds the database where this says, whatever the option says
    // by then
    r = write_meta("mimstore_db_dir", dir);
    if (r < 0) {
      derr << "cannot record the omap database's directory in " << path
           << ": " << cpp_strerror(r) << dendl;
      _close_db();
      return r;
    }
  }
  return 0;
}

void MIMStore::_close_db()
{
  rocks_crash_env = nullptr;  // RocksDBStore deletes it with db
  written_back.reset();
  csums.reset();
  omap.reset();
  delete db;
  db = nullptr;
}

int MIMStore::_close_all(JournalEnd end)
{
  // In the order that is safe: the journal first (its writer threads stop),
  // then what the ops and replay used (collection handles, the merge
  // cache, RocksDB, the object files), the I/O stack under all of them, the
  // counters' registration, and the lock file last, so no second mount
  // starts while anything of this one is still open. statfs's alerts go
  // before all of it (again is a no-op after umount's).
  _stop_health();
  int r = 0;
  if (journal) {
    r = journal->close(end == JournalEnd::CLEAN);  // again is a no-op
    journal.reset();
  }
  colls.clear();
  htmll.reset();
  policy.reset();
  _close_db();
  files.reset();
  _close_io();
  if (logger_registered) {
    // (the logger itself stays, so the counters can be read after umount)
    cct->get_perfcounters_collection()->remove(logger);
    logger_registered = false;
  }
  if (lock_fd >= 0) {
    ::close(lock_fd);
    lock_fd = -1;
  }
  return r;
}

int MIMStore::_check_fsid()
{
  string s;
  int r = read_meta("fsid", &s);
  if (r < 0) {
    derr << "no fsid in " << path << ": not a mimstore data directory "
         << "(run ceph-osd --mkfs)" << dendl;
    return -EINVAL;
  }
  uuid_d on_disk;
  if (!on_disk.parse(s.c_str())) {
    derr << "unparsable fsid '" << s << "' in " << path << dendl;
    return -EINVAL;
  }
  if (!fsid.is_zero() && fsid != on_disk) {
    derr << path << " belongs to store " << on_disk << ", not " << fsid
         << dendl;
    return -EINVAL;
  }
  fsid = on_disk;
  return 0;
}

bool MIMStore::test_mount_in_use()
{
  // The journal device is opened O_EXCL (block device) or flock'ed (file)
  // while mounted; the data directory has a lock file too.
  string lock = path + "/mimstore.lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return false;
  }
  bool in_use = ::flock(fd, LOCK_EX | LOCK_NB) < 0;
  ::close(fd);
  return in_use;
}

int MIMStore::mkfs()
{
  int r = _load_config();
  if (r < 0) {
    return r;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) {
    derr << "osd data " << path << " is not a directory" << dendl;
    return -ENOTDIR;
  }
  string type;
  if (read_meta("type", &type) == 0 && !type.empty() && type != "mimstore") {
    // Another store's OSD directory (ceph-objectstore-tool --type mimstore
    // --op mkfs on it, or a tool calling mkfs directly: ceph-osd itself
    // picks the store the type file names): writing our type over its own
    // would put an empty mimstore in front of that store's data, as
    // BlueStore's mkfs refuses too.
    derr << "osd data " << path << " holds a '" << type << "' store, not "
         << "mimstore: mkfs leaves it alone (check osd_objectstore and osd "
         << "data; to reuse the directory, empty it first)" << dendl;
    return -EEXIST;
  }
  string done;
  if (read_meta("mkfs_done", &done) == 0) {
    r = _check_fsid();
    if (r == 0) {
      dout(1) << "mkfs: already made, fsid " << fsid << dendl;
    }
    return r;
  }
  string existing;
  if (read_meta("fsid", &existing) == 0) {
    r = _check_fsid();
    if (r < 0) {
      return r;
    }
  } else if (fsid.is_zero()) {
    fsid.generate_random();
  }
  dout(1) << "mkfs fsid " << fsid << " journal " << journal_path << dendl;
  r = write_meta("type", "mimstore");
  if (r == 0) {
    r = write_meta("fsid", stringify(fsid));
  }
  if (r < 0) {
    derr << "cannot write to " << path << ": " << cpp_strerror(r) << dendl;
    return r;
  }
  r = _open_io();
  if (r < 0) {
    return r;
  }
  files = std::make_unique<ObjectFiles>(cct, io, path, conf.fd_cache_size);
  r = files->mkfs();
  if (r < 0) {
    derr << "cannot create " << path << "/objects: " << cpp_strerror(r)
         << dendl;
    goto out;
  }
  r = _open_db(true);
  if (r < 0) {
    goto out;
  }
  _close_db();
  {
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    std::ostringstream err;
    r = journal->create(fsid, 1, err);
    if (r < 0) {
      derr << err.str() << dendl;
      std::cerr << "mimstore: " << err.str() << std::endl;
      goto out;
    }
    if (!conf.journal_throughput) {
      uint64_t bps = 0;
      r = journal->measure_throughput(&bps);
      if (r < 0) {
        derr << "measuring the journal's throughput failed: "
             << cpp_strerror(r) << dendl;
        goto out;
      }
      dout(1) << "journal append throughput " << bps << " bytes/s" << dendl;
      r = write_meta("journal_throughput", stringify(bps));
      if (r < 0) {
        derr << "cannot record the journal's throughput in " << path << ": "
             << cpp_strerror(r) << dendl;
        goto out;
      }
      // measuring wrote over the area: start from a fresh, clean journal
      r = journal->create(fsid, 1, err);
      if (r < 0) {
        derr << err.str() << dendl;
        goto out;
      }
    }
    r = journal->close(true);
    if (r < 0) {
      goto out;
    }
    r = _record_journal_empty(true);
    if (r < 0) {
      goto out;
    }
  }
  r = write_meta("mimstore_format", stringify(FORMAT));
  if (r == 0) {
    // Every chunk of this store gets a state from its first write on (a
    // store raised from format 3 has data with none).
    r = write_meta(Checksums::COMPLETE_META, "yes");
  }
  if (r == 0) {
    r = write_meta("mkfs_done", "yes");
  }
 out:
  _close_all(JournalEnd::AS_IS);  // (a journal made here is closed clean)
  return r;
}

int MIMStore::_load_collections()
{
  std::vector<coll_t> ls;
  int r = files->list_collections(&ls);
  if (r < 0) {
    derr << "cannot list collections: " << cpp_strerror(r) << dendl;
    return r;
  }
  for (auto& c : ls) {
    auto ref = ceph::make_ref<Collection>(this, c);
    std::set<ghobject_t> objects;
    r = files->list_objects(c, &objects, nullptr);
    if (r < 0) {
      derr << "cannot list " << c << ": " << cpp_strerror(r) << dendl;
      return r;
    }
    int bits = 0;
    files->get_collection_bits(c, &bits);
    {
      // (no other thread has the handle yet: the lock is for the check)
      mim::WriteLock l(ref->lock);
      ref->objects = std::move(objects);
      ref->bits = bits;
    }
    colls.add(ref);
  }
  dout(5) << "loaded " << colls.size() << " collections" << dendl;
  return 0;
}

int MIMStore::_lock_dir()
{
  // One mount at a time: a second process (another OSD pointed at the
  // same directory) is refused while this one runs.
  lock_fd = ::open((path + "/mimstore.lock").c_str(),
                   O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
    int r = -errno;
    derr << path << " is in use by another process (another OSD?): "
         << cpp_strerror(r) << dendl;
    if (lock_fd >= 0) {
      ::close(lock_fd);
      lock_fd = -1;
    }
    return -EBUSY;
  }
  return 0;
}

int MIMStore::_make_merge_cache()
{
  uint64_t bps = conf.journal_throughput;
  if (!bps && _read_meta_u64("journal_throughput", &bps) < 0) {
    derr << "no journal throughput recorded at mkfs; set "
         << "mimstore_journal_throughput" << dendl;
    return -EINVAL;
  }
  mim::HtmllConfig hc;
  hc.slots = conf.htmll_slots;
  hc.blocks = conf.htmll_blocks;
  hc.max_slots = conf.htmll_max_slots;
  hc.max_blocks = conf.htmll_max_blocks;
  hc.block_size = conf.block_size;
  // With the data in the journal a generation is bounded by the journal,
  // not by RAM: both generations together hold at most half of it (the
  // journal also carries each write's transaction and padding, and the
  // journal pressure trigger freezes at mimstore_journal_pressure_ratio).
  cache_cap = conf.merge_data_in_journal
    ? std::max<uint64_t>(journal->size() / 2, conf.block_size)
    : conf.cache_max_bytes;
  // The HTMLL's hard cap, past which it refuses writes (each refusal
  // writes the object back synchronously): with the data in the journal
  // the cached bytes never exceed the live journal, so the journal's size.
  // A mount that keeps the window replays everything since the checkpoint
  // into one generation, up to the whole journal (the frozen generation's
  // written-back part included): at half the journal, 2,834 objects were
  // written back during a 64 GiB replay (127 s), and the OSD's first
  // writes then waited for a sweep (298 s to up).
  hc.max_bytes = conf.merge_data_in_journal
    ? std::max<uint64_t>(journal->size(), conf.block_size)
    : cache_cap;
  generation_journal_bytes = uint64_t(conf.generation_journal_share *
                                      conf.backoff_high *
                                      double(journal->size()));
  string err;
  int r = mim::HtmllConfig::validate(hc, &err);
  if (r < 0) {
    derr << "invalid HTMLL configuration: " << err << dendl;
    return r;
  }
  htmll = std::make_unique<mim::Htmll>(hc);
  mim::FlushPolicyConfig pc;
  pc.journal_throughput = double(bps);
  pc.max_flush_interval = conf.max_flush_interval;
  pc.block_size = conf.block_size;
  pc.replicas = conf.flush_replicas;
  pc.nodes = conf.flush_nodes;
  pc.memory_cap = cache_cap;
  pc.index_budget = conf.cache_index_max_bytes;
  r = mim::FlushPolicy::create(pc, &policy, &err);
  if (r < 0) {
    derr << "invalid flush thresholds: " << err << dendl;
    return r;
  }
  dout(1) << "merge " << (conf.merge ? "on" : "off") << ": sp_thresh "
          << policy->sp_thresh_blocks() << " blocks, time_thresh "
          << policy->time_thresh() << " s, journal throughput " << bps
          << " B/s" << dendl;
  return 0;
}

int MIMStore::_start_after_replay()
{
  sn_t next_sn = sequencer.next_sn();
  // Kept, the replayed entries stay live and the checkpoint stays where
  // replay started (durability was reset to it before the replay).
  const sn_t first_live = keep_window ? journal->first_live_sn() : next_sn;
  if (!keep_window) {
    durability.reset_checkpoint(next_sn, journal->max_live_sns());
  }
  durable_clock.clear();  // sns of an earlier mount are not timed
  journal->set_pressure_callback(
    [this] { _request_freeze(mim::FlushTrigger::JOURNAL_PRESSURE); });
  journal->set_debug_point([this](const char* where) { _debug_point(where); });
  // Before the journal takes a transaction: from here until a clean stop
  // it may hold some that are not in the object files. (Not earlier: a
  // mount that fails before this point, e.g. on a journal it refuses,
  // leaves a journal that was left empty as it was.)
  int r = _record_journal_empty(false);
  if (r < 0) {
    return r;
  }
  r = keep_window ? journal->start_keeping(next_sn)
                  : journal->start(next_sn);
  if (r < 0) {
    derr << "cannot restart the journal: " << cpp_strerror(r) << dendl;
    return r;
  }
  applying_sn = next_sn - 1;
  // (the replayed writes are in the active generation, but for those
  // _freeze_replayed put in a frozen one)
  active_gen_first_sn = std::max(first_live, replay_froze_at);
  // No replay will start before first_live again, so no tombstone of a
  // merge before it is needed any more.
  r = colls.load_tombstones(files.get());
  if (r < 0) {
    // (they stay on disk, harmless, until a later mount reads them)
    dout(1) << "cannot list merge tombstones: " << cpp_strerror(r) << dendl;
  }
  colls.trim_tombstones(files.get(), first_live);
  finisher.start();
  _start_threads();
  mounted = true;
  return 0;
}

int MIMStore::mount()
{
  dout(1) << "mount " << path << " journal " << journal_path << dendl;
  int r = _load_config();
  if (r < 0) {
    return r;
  }
  string type;
  if (read_meta("type", &type) < 0 || type != "mimstore") {
    derr << path << " is not a mimstore data directory (type '" << type
         << "'); run ceph-osd --mkfs" << dendl;
    return -EINVAL;
  }
  r = _check_format();
  if (r < 0) {
    return r;
  }
  r = _check_fsid();
  if (r < 0) {
    return r;
  }
  r = _lock_dir();
  if (r < 0) {
    return r;
  }
  r = _open_io();
  if (r < 0) {
    goto fail;
  }
  {
    struct utsname u;
    if (uname(&u) == 0 && !mim::syncfs_reports_errors(u.release)) {
      derr << "warning: Linux " << u.release << " does not report write-back "
           << "errors through syncfs (Linux 5.8 and later do): a data file "
           << "whose write back fails there is taken for durable and the "
           << "journal trimmed past it. Run the OSD on Linux 5.8 or later"
           << dendl;
    }
  }
  _create_logger();
  files = std::make_unique<ObjectFiles>(cct, io, path, conf.fd_cache_size);
  r = files->open();
  if (r < 0) {
    goto fail;
  }
  r = _open_db(false);
  if (r < 0) {
    goto fail;
  }
  r = _raise_format();
  if (r < 0) {
    goto fail;
  }
  {
    journal = std::make_unique<MIMJournal>(cct, io, conf, logger);
    std::ostringstream err;
    bool clean = false;
    r = journal->open(fsid, &clean, err);
    if (r < 0) {
      derr << err.str() << dendl;
      std::cerr << "mimstore: " << err.str() << std::endl;
      goto fail;
    }
  }
  r = _load_collections();
  if (r < 0) {
    goto fail;
  }
  r = _make_merge_cache();
  if (r < 0) {
    goto fail;
  }
  r = _replay_journal();
  if (r < 0) {
    goto fail;
  }
  r = _start_after_replay();
  if (r < 0) {
    goto fail;
  }
  _register_admin();
  _start_health();
  if (conf.fsck_on_mount && !in_fsck) {
    r = fsck(conf.fsck_on_mount_deep);
    if (r != 0) {
      derr << "fsck on mount found " << r << " errors" << dendl;
      umount();
      return r < 0 ? r : -EIO;
    }
  }
  dout(1) << "mounted, next sn " << sequencer.next_sn() << dendl;
  return 0;

 fail:
  _close_all(JournalEnd::AS_IS);
  return r;
}

int MIMStore::umount()
{
  ceph_assert(mounted);
  dout(1) << "umount" << dendl;
  _stop_health();
  sequencer.wait_applied_all();
  // Merging on, the window stays in the journal for the next mount to
  // index again (docs/store.md "Replay"): the stop costs a sync, not the
  // write back of the window. After flush_journal (an OSD's clean
  // shutdown with osd_journal_flush_on_shutdown, ceph-osd --flush-journal,
  // the admin socket) it is written back and the journal left empty.
  const bool keep = conf.merge && !umount_writes_back;
  int r = keep ? 0 : _write_back_all();
  _unregister_admin();
  // (the sync thread syncs once more as it stops: every direct part)
  _stop_threads();
  finisher.wait_for_empty();
  finisher.stop();
  sn_t next_sn = sequencer.next_sn();
  bool clean = r == 0 && durability.checkpoint() == next_sn;
  if (keep && r == 0 && !clean) {
    dout(1) << "umount keeps the merge window: journal from sn "
            << durability.checkpoint() << " to " << next_sn - 1
            << " for the next mount" << dendl;
  } else if (!clean) {
    derr << "umount is not clean (checkpoint " << durability.checkpoint()
         << ", next sn " << next_sn << ", r " << r << "): the next mount "
         << "replays the journal" << dendl;
  }
  write_meta("mimstore_next_sn", stringify(next_sn));
  int jr = _close_all(clean ? JournalEnd::CLEAN : JournalEnd::AS_IS);
  if (clean && jr == 0) {
    jr = _record_journal_empty(true);
  }
  if (r == 0) {
    r = jr;
  }
  umount_writes_back = false;
  mounted = false;
  return r;
}

uint64_t MIMStore::debug_fault_io_count() const
{
  if (io_fault) {
    return static_cast<mim::FaultIoEnv*>(io_fault.get())->io_count();
  }
  return fault_io_count;
}

bool MIMStore::debug_fault_crash(const char* where)
{
  if (!io_fault) {
    return false;
  }
  static_cast<mim::FaultIoEnv*>(io_fault.get())->crash_here(where);
  return true;  // (only when the callback, the store's, did not exit)
}

int MIMStore::debug_fault_set_spec(const std::string& spec)
{
  if (!io_fault) {
    return -ENODEV;
  }
  mim::fault_spec_t parsed;
  std::string err;
  int r = mim::parse_fault_spec(spec, &parsed, &err);
  if (r < 0) {
    derr << "mimstore_debug_fault: " << err << dendl;
    return r;
  }
  static_cast<mim::FaultIoEnv*>(io_fault.get())->set_spec(parsed);
  // The omap database's rules (dbwrite, dbsync) go to its env, counted
  // from here: a test arms them after the mount's own appends and syncs.
  if (auto* env = rocks_crash_env.load()) {
    env->set_fail_rules(parsed.fails);
  }
  return 0;
}

uint64_t MIMStore::debug_fault_delayed_writes() const
{
  if (io_fault) {
    return static_cast<mim::FaultIoEnv*>(io_fault.get())->delayed_writes();
  }
  return 0;
}
