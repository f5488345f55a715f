// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: lifecycle (mkfs, mount, replay, umount), the queue and apply
 * path, and the read side. Transaction ops are in MIMOps.cc, the merge
 * cache flush and the sync/checkpoint thread in MIMFlush.cc.
 */
#include "MIMStore.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <sstream>

#include "common/Thread.h"
#include "common/admin_socket.h"
#include "common/debug.h"
#include "common/errno.h"
#include "common/safe_io.h"
#include "include/stringify.h"
#include "kv/KeyValueDB.h"

#include "CrashRocksEnv.h"
#include "MIMJournal.h"
#include "ObjectFiles.h"
#include "ObjectName.h"
#include "core/fault_io_env.h"

#define dout_context cct
#define dout_subsys ceph_subsys_mimstore
#undef dout_prefix
#define dout_prefix *_dout << "mimstore(" << path << ") "

using std::string;
using ceph::bufferlist;
using ceph::bufferptr;

namespace mimstore {

/// Admin socket commands of one store instance.
class AdminHook : public AdminSocketHook {
 public:
  explicit AdminHook(MIMStore* s) : store(s) {}
  int call(std::string_view command, const cmdmap_t& cmdmap,
           const bufferlist& inbl, ceph::Formatter* f, std::ostream& errss,
           bufferlist& out) override {
    if (command == "dump_mimstore_htmll") {
      store->dump_htmll(f);
      return 0;
    }
    if (command == "mimstore flush") {
      int r = store->_flush_everything();
      f->open_object_section("mimstore_flush");
      f->dump_int("result", r);
      f->close_section();
      return r;
    }
    errss << "unknown command " << command;
    return -ENOSYS;
  }

 private:
  MIMStore* store;
};

}  // namespace mimstore

using namespace mimstore;

// ---------------------------------------------------------------------------
// Collection

MIMStore::Collection::Collection(MIMStore* s, const coll_t& c)
  : CollectionImpl(s->cct, c), store(s), name(c.to_str())
{
}

void MIMStore::Collection::flush()
{
  store->_wait_applied(this);
}

bool MIMStore::Collection::flush_commit(Context* c)
{
  uint64_t want = last_queued_sn;
  std::lock_guard l(store->apply_lock);
  if (store->applied_sn >= want) {
    return true;
  }
  store->commit_waiters.emplace(want, c);
  return false;
}

// ---------------------------------------------------------------------------
// construction

MIMStore::MIMStore(CephContext* cct, const string& path,
                   const string& journal_path)
  : ObjectStore(cct, path),
    journal_path(journal_path),
    finisher(cct, "mimstore-finisher", "mimfin")
{
}

MIMStore::~MIMStore()
{
  if (mounted) {
    derr << "destroyed while mounted: unmounting" << dendl;
    umount();
  }
  if (logger) {
    delete logger;
  }
}

void MIMStore::_create_logger()
{
  if (logger) {
    cct->get_perfcounters_collection()->add(logger);
    return;
  }
  logger = mimstore::build_perf_counters(cct);
  cct->get_perfcounters_collection()->add(logger);
}

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
    f->set_crash_callback([this, c] {
      if (auto e = rocks_crash_env.load()) {
        e->crash();
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
  char* end;
  *v = strtoull(s.c_str(), &end, 10);
  return *end ? -EINVAL : 0;
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
  }
  db = KeyValueDB::create(cct, "rocksdb", dir, {}, env);
  if (!db) {
    delete env;
    derr << "cannot create a rocksdb instance at " << dir << dendl;
    return -EIO;
  }
  rocks_crash_env = env;  // db owns it from here
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
  omap = std::make_unique<DBObjectMap>(cct, db);
  r = omap->init(create);
  if (r < 0) {
    derr << "DBObjectMap init failed: " << cpp_strerror(r) << dendl;
    _close_db();
    return r;
  }
  if (create) {
    write_meta("mimstore_db_dir", dir);
  }
  return 0;
}

void MIMStore::_close_db()
{
  rocks_crash_env = nullptr;  // RocksDBStore deletes it with db
  // DBObjectMap owns the KeyValueDB (ObjectMap's scoped_ptr).
  if (omap) {
    omap.reset();
  } else {
    delete db;
  }
  db = nullptr;
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
      write_meta("journal_throughput", stringify(bps));
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
  }
  r = write_meta("mimstore_format", "1");
  if (r == 0) {
    r = write_meta("mkfs_done", "yes");
  }
 out:
  journal.reset();
  files.reset();
  _close_io();
  return r;
}

int MIMStore::mkjournal()
{
  if (mounted) {
    derr << "mkjournal: the store is mounted; umount it first" << dendl;
    return -EBUSY;
  }
  int r = _load_config();
  if (r < 0) {
    return r;
  }
  r = _check_fsid();
  if (r < 0) {
    return r;
  }
  r = _open_io();
  if (r < 0) {
    _close_io();
    return r;
  }
  {
    // A new journal loses whatever the old one holds beyond the
    // checkpoint: only allowed when the old journal is clean, or unreadable
    // (lost device).
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    std::ostringstream err;
    bool clean = false;
    r = journal->open(fsid, &clean, err);
    if (r == 0 && !clean) {
      derr << "journal " << journal_path << " holds transactions that were "
           << "not replayed; mount the store once (or run ceph-osd "
           << "--flush-journal) before making a new journal" << dendl;
      journal->close(false);
      r = -EBUSY;
      goto out;
    }
    if (r == 0) {
      journal->close(true);
    }
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    uint64_t start = 1;
    _read_meta_u64("mimstore_next_sn", &start);
    r = journal->create(fsid, start, err);
    if (r == 0) {
      r = journal->close(true);
    } else {
      derr << err.str() << dendl;
    }
  }
 out:
  journal.reset();
  _close_io();
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
    r = files->list_objects(c, &ref->objects, nullptr);
    if (r < 0) {
      derr << "cannot list " << c << ": " << cpp_strerror(r) << dendl;
      return r;
    }
    int bits = 0;
    files->get_collection_bits(c, &bits);
    ref->bits = bits;
    coll_map[c] = ref;
  }
  dout(5) << "loaded " << coll_map.size() << " collections" << dendl;
  return 0;
}

int MIMStore::_replay_journal()
{
  // Replay applies through the normal op code with guards consulted and
  // merging off: every replayed write goes straight to its file, and one
  // sync at the end makes all of it durable before the journal restarts.
  replaying = true;
  bool merge = conf.merge;
  conf.merge = false;
  uint64_t n = 0;
  std::ostringstream err;
  sn_t next = 0;
  int r = journal->replay(
    [&](sn_t sn, bufferlist& bl) -> int {
      std::vector<Transaction> tls;
      try {
        auto p = bl.cbegin();
        uint32_t count;
        decode(count, p);
        tls.resize(count);
        for (auto& t : tls) {
          decode(t, p);
        }
      } catch (ceph::buffer::error& e) {
        derr << "journal entry sn " << sn << " does not decode: " << e.what()
             << dendl;
        return -EIO;
      }
      dout(10) << "replay sn " << sn << " (" << tls.size() << " txns)"
               << dendl;
      uint32_t trans_num = 0;
      for (auto& t : tls) {
        _do_transaction(t, sn, trans_num++);
      }
      ++n;
      return 0;
    },
    &next, err);
  conf.merge = merge;
  replaying = false;
  if (r < 0) {
    derr << "journal replay failed: " << err.str() << dendl;
    std::cerr << "mimstore: journal replay failed: " << err.str()
              << std::endl;
    return r;
  }
  if (logger) {
    logger->inc(l_mimstore_replayed, n);
  }
  dout(1) << "replayed " << n << " transactions, next sn " << next << dendl;
  r = files->sync_all();
  if (r == 0) {
    r = omap->sync();
  }
  if (r < 0) {
    derr << "sync after replay failed: " << cpp_strerror(r) << dendl;
    return r;
  }
  next_sn = next;
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
  r = _check_fsid();
  if (r < 0) {
    return r;
  }
  // One mount at a time: a second process (another OSD pointed at the
  // same directory) is refused while this one runs.
  lock_fd = ::open((path + "/mimstore.lock").c_str(),
                   O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
    r = -errno;
    derr << path << " is in use by another process (another OSD?): "
         << cpp_strerror(r) << dendl;
    if (lock_fd >= 0) {
      ::close(lock_fd);
      lock_fd = -1;
    }
    return -EBUSY;
  }
  r = _open_io();
  if (r < 0) {
    _close_io();
    ::close(lock_fd);
    lock_fd = -1;
    return r;
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
  {
    uint64_t bps = conf.journal_throughput;
    if (!bps && _read_meta_u64("journal_throughput", &bps) < 0) {
      derr << "no journal throughput recorded at mkfs; set "
           << "mimstore_journal_throughput" << dendl;
      r = -EINVAL;
      goto fail;
    }
    mim::HtmllConfig hc;
    hc.slots = conf.htmll_slots;
    hc.blocks = conf.htmll_blocks;
    hc.block_size = conf.block_size;
    hc.max_bytes = conf.cache_max_bytes;
    string err;
    r = mim::HtmllConfig::validate(hc, &err);
    if (r < 0) {
      derr << "invalid HTMLL configuration: " << err << dendl;
      goto fail;
    }
    htmll = std::make_unique<mim::Htmll>(hc);
    mim::FlushPolicyConfig pc;
    pc.journal_throughput = double(bps);
    pc.max_flush_interval = conf.max_flush_interval;
    pc.block_size = conf.block_size;
    pc.replicas = conf.flush_replicas;
    pc.nodes = conf.flush_nodes;
    pc.memory_cap = conf.cache_max_bytes;
    r = mim::FlushPolicy::create(pc, &policy, &err);
    if (r < 0) {
      derr << "invalid flush thresholds: " << err << dendl;
      goto fail;
    }
    dout(1) << "merge " << (conf.merge ? "on" : "off") << ": sp_thresh "
            << policy->sp_thresh_blocks() << " blocks, time_thresh "
            << policy->time_thresh() << " s, journal throughput " << bps
            << " B/s" << dendl;
  }
  r = _replay_journal();
  if (r < 0) {
    goto fail;
  }
  tracker.reset(next_sn);
  r = journal->start(next_sn);
  if (r < 0) {
    derr << "cannot restart the journal: " << cpp_strerror(r) << dendl;
    goto fail;
  }
  journal->set_pressure_callback(
    [this] { _request_freeze(mim::FlushTrigger::JOURNAL_PRESSURE); });
  applied_sn = next_sn - 1;
  applying_sn = next_sn - 1;
  active_gen_first_sn = next_sn;
  {
    // The journal restarts after everything replayed: no replay will start
    // before next_sn again, so no tombstone is needed any more.
    std::map<coll_t, SequencerPosition> ts;
    files->list_tombstones(&ts);
    std::lock_guard l(tombstone_lock);
    for (auto& [c, pos] : ts) {
      tombstones[c] = pos.seq;
    }
  }
  _trim_tombstones(next_sn);
  finisher.start();
  _start_threads();
  mounted = true;
  {
    AdminSocket* admin = cct->get_admin_socket();
    admin_hook = std::make_unique<AdminHook>(this);
    admin->register_command("dump_mimstore_htmll", admin_hook.get(),
                            "dump the MIM merge cache (HTMLL) summary");
    admin->register_command("mimstore flush", admin_hook.get(),
                            "flush the MIM merge cache and checkpoint");
  }
  if (conf.fsck_on_mount) {
    r = fsck(conf.fsck_on_mount_deep);
    if (r != 0) {
      derr << "fsck on mount found " << r << " errors" << dendl;
      umount();
      return r < 0 ? r : -EIO;
    }
  }
  dout(1) << "mounted, next sn " << next_sn << dendl;
  return 0;

 fail:
  if (logger) {
    cct->get_perfcounters_collection()->remove(logger);
  }
  if (lock_fd >= 0) {
    ::close(lock_fd);
    lock_fd = -1;
  }
  if (journal) {
    journal->close(false);
    journal.reset();
  }
  coll_map.clear();
  htmll.reset();
  policy.reset();
  if (db) {
    _close_db();
  }
  files.reset();
  _close_io();
  return r;
}

int MIMStore::umount()
{
  ceph_assert(mounted);
  dout(1) << "umount" << dendl;
  _wait_applied_all();
  int r = _flush_everything();
  if (admin_hook) {
    cct->get_admin_socket()->unregister_commands(admin_hook.get());
    admin_hook.reset();
  }
  _stop_threads();
  finisher.wait_for_empty();
  finisher.stop();
  bool clean = r == 0 && tracker.checkpoint() == next_sn;
  if (!clean) {
    derr << "umount is not clean (checkpoint " << tracker.checkpoint()
         << ", next sn " << next_sn << ", r " << r << "): the next mount "
         << "replays the journal" << dendl;
  }
  write_meta("mimstore_next_sn", stringify(next_sn));
  int jr = journal->close(clean);
  if (r == 0) {
    r = jr;
  }
  journal.reset();
  {
    std::unique_lock l(coll_lock);
    coll_map.clear();
  }
  htmll.reset();
  policy.reset();
  _close_db();
  files.reset();
  _close_io();
  if (logger) {
    // kept (not deleted) so the counters can still be read after umount
    cct->get_perfcounters_collection()->remove(logger);
  }
  ::close(lock_fd);
  lock_fd = -1;
  mounted = false;
  return r;
}

int MIMStore::flush_journal()
{
  // Mount replays and checkpoints everything; a clean umount leaves the
  // journal empty.
  int r = mount();
  if (r < 0) {
    return r;
  }
  return umount();
}

int MIMStore::dump_journal(std::ostream& out)
{
  if (mounted) {
    out << "the store is mounted; umount it first" << std::endl;
    return -EBUSY;
  }
  int r = _load_config();
  if (r < 0) {
    return r;
  }
  r = _check_fsid();
  if (r < 0) {
    return r;
  }
  r = _open_io();
  if (r == 0) {
    journal = std::make_unique<MIMJournal>(cct, io, conf, nullptr);
    std::ostringstream err;
    bool clean;
    r = journal->open(fsid, &clean, err);
    if (r == 0) {
      r = journal->dump(out);
      journal->close(false);
    } else {
      out << err.str() << std::endl;
    }
    journal.reset();
  }
  _close_io();
  return r;
}

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
  return 0;
}

int MIMStore::pool_statfs(uint64_t pool_id, struct store_statfs_t* buf,
                          bool* per_pool_omap)
{
  return -ENOTSUP;
}

void MIMStore::collect_metadata(std::map<string, string>* pm)
{
  (*pm)["mimstore_merge"] = conf.merge ? "true" : "false";
  (*pm)["mimstore_journal"] = journal_path;
  (*pm)["osd_objectstore"] = "mimstore";
}

objectstore_perf_stat_t MIMStore::get_cur_stats()
{
  objectstore_perf_stat_t s;
  if (logger) {
    // (count, total ns) -> average ns
    auto avg = [this](int idx) {
      auto [n, total] = logger->get_tavg_ns(idx);
      return n ? total / n : 0;
    };
    s.os_commit_latency_ns = avg(l_mimstore_commit_lat);
    s.os_apply_latency_ns = avg(l_mimstore_apply_lat);
  }
  return s;
}

// ---------------------------------------------------------------------------
// collections

MIMStore::CollectionRef MIMStore::_get_collection(const coll_t& c)
{
  std::shared_lock l(coll_lock);
  auto p = coll_map.find(c);
  if (p == coll_map.end()) {
    return CollectionRef();
  }
  return p->second;
}

ObjectStore::CollectionHandle MIMStore::open_collection(const coll_t& c)
{
  return _get_collection(c);
}

ObjectStore::CollectionHandle MIMStore::create_new_collection(const coll_t& c)
{
  // The handle exists at once (transactions are queued on it); the
  // directory is made when the create op is applied.
  std::unique_lock l(coll_lock);
  auto p = coll_map.find(c);
  if (p != coll_map.end()) {
    return p->second;
  }
  auto ref = ceph::make_ref<Collection>(this, c);
  ref->exists = false;
  coll_map[c] = ref;
  return ref;
}

void MIMStore::set_collection_commit_queue(const coll_t& cid,
                                           ContextQueue* commit_queue)
{
  if (auto c = _get_collection(cid)) {
    c->commit_queue = commit_queue;
  }
}

int MIMStore::list_collections(std::vector<coll_t>& ls)
{
  std::shared_lock l(coll_lock);
  for (auto& [cid, c] : coll_map) {
    std::shared_lock cl(c->lock);
    if (c->exists) {
      ls.push_back(cid);
    }
  }
  return 0;
}

bool MIMStore::collection_exists(const coll_t& c)
{
  auto ref = _get_collection(c);
  if (!ref) {
    return false;
  }
  _wait_applied(ref.get());
  std::shared_lock l(ref->lock);
  return ref->exists;
}

int MIMStore::collection_empty(CollectionHandle& ch, bool* empty)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  std::shared_lock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  *empty = c->objects.empty();
  return 0;
}

int MIMStore::collection_bits(CollectionHandle& ch)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  std::shared_lock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  return c->bits;
}

int MIMStore::collection_list(CollectionHandle& ch, const ghobject_t& start,
                              const ghobject_t& end, int max,
                              std::vector<ghobject_t>* ls, ghobject_t* next)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  std::shared_lock l(c->lock);
  if (!c->exists) {
    return -ENOENT;
  }
  auto p = c->objects.lower_bound(start);
  while (p != c->objects.end() && ls->size() < unsigned(max) && *p < end) {
    ls->push_back(*p);
    ++p;
  }
  if (next) {
    *next = p == c->objects.end() ? ghobject_t::get_max() : *p;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// queue and apply

int MIMStore::_validate(std::vector<Transaction>& tls)
{
  _wait_applied_all();
  std::map<coll_t, std::set<ghobject_t>> objs;
  auto get = [&](const coll_t& cid) -> std::set<ghobject_t>& {
    auto p = objs.find(cid);
    if (p == objs.end()) {
      p = objs.emplace(cid, std::set<ghobject_t>()).first;
      if (auto c = _get_collection(cid)) {
        std::shared_lock l(c->lock);
        p->second = c->objects;
      }
    }
    return p->second;
  };
  for (auto& t : tls) {
    for (auto i = t.begin(); i.have_op();) {
      Transaction::Op* op = i.decode_op();
      switch (op->op) {
      case Transaction::OP_TOUCH:
      case Transaction::OP_CREATE:
      case Transaction::OP_WRITE:
      case Transaction::OP_ZERO:
        get(i.get_cid(op->cid)).insert(i.get_oid(op->oid));
        break;
      case Transaction::OP_CLONE:
      case Transaction::OP_CLONERANGE:
      case Transaction::OP_CLONERANGE2:
        get(i.get_cid(op->cid)).insert(i.get_oid(op->dest_oid));
        break;
      case Transaction::OP_REMOVE:
        get(i.get_cid(op->cid)).erase(i.get_oid(op->oid));
        break;
      case Transaction::OP_COLL_MOVE_RENAME:
        if (get(i.get_cid(op->cid)).erase(i.get_oid(op->oid))) {
          get(i.get_cid(op->dest_cid)).insert(i.get_oid(op->dest_oid));
        }
        break;
      case Transaction::OP_TRY_RENAME:
        if (get(i.get_cid(op->cid)).erase(i.get_oid(op->oid))) {
          get(i.get_cid(op->cid)).insert(i.get_oid(op->dest_oid));
        }
        break;
      case Transaction::OP_MKCOLL:
        get(i.get_cid(op->cid)).clear();
        break;
      case Transaction::OP_SPLIT_COLLECTION2:
      case Transaction::OP_MERGE_COLLECTION:
        return 0;  // not simulated: apply decides
      case Transaction::OP_RMCOLL:
        if (!get(i.get_cid(op->cid)).empty()) {
          derr << "refusing a transaction that removes non-empty collection "
               << i.get_cid(op->cid) << dendl;
          return -ENOTEMPTY;
        }
        break;
      default:
        break;
      }
    }
  }
  return 0;
}

int MIMStore::queue_transactions(CollectionHandle& ch,
                                 std::vector<Transaction>& tls,
                                 TrackedOpRef op,
                                 ThreadPool::TPHandle* handle)
{
  // One pass over the ops: the bytes written (cache room), and whether a
  // collection is removed (only those transactions pay for _validate).
  uint64_t write_bytes = 0;
  bool rmcoll = false;
  for (auto& t : tls) {
    for (auto i = t.begin(); i.have_op();) {
      Transaction::Op* o = i.decode_op();
      if (o->op == Transaction::OP_WRITE) {
        write_bytes += o->len;
      }
      rmcoll |= o->op == Transaction::OP_RMCOLL;
    }
  }
  // A transaction that must fail is refused before it reaches the journal:
  // journaled, it would fail at apply and again at every replay.
  if (rmcoll) {
    int r = _validate(tls);
    if (r < 0) {
      if (cct->_conf.get_val<bool>("objectstore_debug_throw_on_failed_txc")) {
        throw r;
      }
      ceph_abort_msg("mimstore: transaction removes a non-empty collection");
    }
  }
  auto txc = new TransContext;
  txc->write_bytes = write_bytes;
  txc->ch = static_cast<Collection*>(ch.get());
  Transaction::collect_contexts(tls, &txc->on_applied, &txc->on_commit,
                                &txc->on_applied_sync);
  bufferlist bl;
  encode(uint32_t(tls.size()), bl);
  for (auto& t : tls) {
    encode(t, bl);
  }
  txc->tls = std::move(tls);
  txc->bytes = bl.length();
  txc->op = op;
  txc->queued_at = ceph::mono_clock::now();

  _backoff();
  std::unique_lock l(submit_lock);
  // Throttle: bound what is queued but not applied, so a slow data disk
  // pushes back on the OSD instead of growing memory without limit.
  if (queued_ops >= conf.queue_max_ops ||
      (queued_ops && queued_bytes + txc->bytes > conf.queue_max_bytes)) {
    logger->inc(l_mimstore_throttle_waits);
    submit_cond.wait(l, [&] {
      return queued_ops < conf.queue_max_ops &&
             (!queued_ops || queued_bytes + txc->bytes <= conf.queue_max_bytes);
    });
  }
  ++queued_ops;
  queued_bytes += txc->bytes;
  logger->set(l_mimstore_queue_ops, queued_ops);
  logger->set(l_mimstore_queue_bytes, queued_bytes);
  txc->sn = next_sn++;
  txc->ch->last_queued_sn = txc->sn;
  dout(20) << __func__ << " sn " << txc->sn << " " << txc->bytes << " bytes"
           << dendl;
  journal->submit(txc->sn, std::move(bl), [this, txc] { _journaled(txc); });
  return 0;
}

void MIMStore::_journaled(TransContext* txc)
{
  logger->tinc(l_mimstore_commit_lat,
               ceph::mono_clock::now() - txc->queued_at);
  std::lock_guard l(apply_lock);
  apply_queue.push_back(ApplyItem{txc, mim::FlushTrigger::NONE});
  apply_cond.notify_one();
}

void MIMStore::_apply_thread()
{
  std::unique_lock l(apply_lock);
  while (true) {
    apply_cond.wait(l, [this] { return apply_stop || !apply_queue.empty(); });
    if (apply_queue.empty()) {
      break;  // stop requested and drained
    }
    ApplyItem item = apply_queue.front();
    apply_queue.pop_front();
    l.unlock();
    if (!item.txc) {
      _maybe_freeze(item.freeze);
      l.lock();
      continue;
    }
    TransContext* txc = item.txc;
    if (!conf.merge) {
      _throttle_writeback();  // with merging, the flush thread throttles
    }
    _wait_for_cache_room(txc->write_bytes);
    // The sn is durable once its direct part (this hold) has been synced
    // and every write merged for it (a hold each, taken in _write) has been
    // flushed and synced.
    _hold(txc->sn);
    applying_sn = txc->sn;
    uint32_t trans_num = 0;
    for (auto& t : txc->tls) {
      _do_transaction(t, txc->sn, trans_num++);
    }
    _release_after_sync(txc->sn);
    _maybe_freeze(mim::FlushTrigger::NONE);
    l.lock();
    applied_sn = txc->sn;
    applied_cond.notify_all();
    l.unlock();
    _finish(txc);
    l.lock();
  }
}

void MIMStore::_finish(TransContext* txc)
{
  logger->tinc(l_mimstore_apply_lat, ceph::mono_clock::now() - txc->queued_at);
  if (txc->on_applied_sync) {
    txc->on_applied_sync->complete(0);
  }
  if (txc->on_applied) {
    finisher.queue(txc->on_applied);
  }
  if (txc->on_commit) {
    ContextQueue* q = txc->ch->commit_queue;
    if (q) {
      std::list<Context*> ls{txc->on_commit};
      q->queue(ls);
    } else {
      finisher.queue(txc->on_commit);
    }
  }
  {
    std::lock_guard l(apply_lock);
    while (!commit_waiters.empty() &&
           commit_waiters.begin()->first <= txc->sn) {
      finisher.queue(commit_waiters.begin()->second);
      commit_waiters.erase(commit_waiters.begin());
    }
  }
  {
    std::lock_guard l(submit_lock);
    --queued_ops;
    queued_bytes -= txc->bytes;
    logger->set(l_mimstore_queue_ops, queued_ops);
    logger->set(l_mimstore_queue_bytes, queued_bytes);
    submit_cond.notify_all();
  }
  delete txc;
}

void MIMStore::_wait_applied(Collection* c)
{
  uint64_t want = c->last_queued_sn;
  if (applied_sn >= want) {
    return;
  }
  std::unique_lock l(apply_lock);
  applied_cond.wait(l, [&] { return applied_sn >= want; });
}

void MIMStore::_wait_applied_all()
{
  uint64_t want;
  {
    std::lock_guard l(submit_lock);
    want = next_sn - 1;
  }
  std::unique_lock l(apply_lock);
  applied_cond.wait(l, [&] { return applied_sn >= want; });
}

void MIMStore::_start_threads()
{
  {
    std::lock_guard l(apply_lock);
    apply_stop = false;
  }
  {
    std::lock_guard l(bg_lock);
    bg_stop = false;
    last_freeze = ceph::mono_clock::now();
  }
  // named for top -H and gdb; 15 characters at most
  apply_thread = make_named_thread("mim_apply", [this] { _apply_thread(); });
  flush_thread = make_named_thread("mim_flush", [this] { _flush_thread(); });
  sync_thread = make_named_thread("mim_sync", [this] { _sync_thread(); });
}

void MIMStore::_stop_threads()
{
  {
    std::lock_guard l(apply_lock);
    apply_stop = true;
    apply_cond.notify_all();
  }
  apply_thread.join();
  {
    std::lock_guard l(bg_lock);
    bg_stop = true;
    bg_cond.notify_all();
  }
  flush_thread.join();
  sync_thread.join();
}

// ---------------------------------------------------------------------------
// reads

std::mutex& MIMStore::_obj_lock(const string& cname, const string& fname)
{
  size_t h = std::hash<string>()(fname) ^ (std::hash<string>()(cname) << 1);
  return obj_locks[h % OBJ_LOCKS];
}

int MIMStore::_object_size(const coll_t& cid, const ghobject_t& oid,
                           const ObjectFDRef& f, uint64_t* size)
{
  int r = files->size(f, size);
  if (r < 0) {
    return r;
  }
  uint64_t end;
  if (htmll->cached_end(cid.to_str(), object_file_name(oid), &end)) {
    *size = std::max(*size, end);
  }
  return 0;
}

bool MIMStore::exists(CollectionHandle& ch, const ghobject_t& oid)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  std::shared_lock l(c->lock);
  return c->exists && c->objects.count(oid);
}

int MIMStore::stat(CollectionHandle& ch, const ghobject_t& oid,
                   struct stat* st, bool allow_eio)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(c->name, fname));
  ObjectFDRef f;
  int r = files->open_object(c->cid, oid, false, &f);
  if (r < 0) {
    return r;
  }
  uint64_t size;
  r = _object_size(c->cid, oid, f, &size);
  if (r < 0) {
    return r;
  }
  memset(st, 0, sizeof(*st));
  st->st_size = size;
  st->st_blksize = 4096;
  st->st_blocks = (size + 4095) / 4096;
  st->st_nlink = 1;
  return 0;
}

int MIMStore::read(CollectionHandle& ch, const ghobject_t& oid,
                   uint64_t offset, size_t len, bufferlist& bl,
                   uint32_t op_flags)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(c->name, fname));
  ObjectFDRef f;
  int r = files->open_object(c->cid, oid, false, &f);
  if (r < 0) {
    return r;
  }
  uint64_t size;
  r = _object_size(c->cid, oid, f, &size);
  if (r < 0) {
    return r;
  }
  if (offset >= size) {
    return 0;
  }
  if (len == 0 || offset + len > size) {
    len = size - offset;
  }
  // The file's bytes, zeros where it has none, then the cached extents on
  // top (the cache always holds the newest bytes). A range the cache covers
  // whole is not read from the file: on an HDD that read is a seek, for a
  // read of data still in the merge window. (The object lock keeps the
  // flush thread from writing back and dropping these extents meanwhile.)
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(c->name, fname, offset, len, &ext);
  bufferptr bp = ceph::buffer::create(len);
  if (mim::extents_cover(ext, offset, len)) {
    logger->inc(l_mimstore_reads_from_cache);
  } else {
    r = files->read_into(f, offset, len, bp.c_str());
    if (r < 0) {
      // -EIO goes back to the OSD, which repairs the object from a replica
      derr << __func__ << " " << c->cid << " " << oid << " read failed: "
           << cpp_strerror(r) << dendl;
      return r;
    }
    if (uint64_t(r) < len) {
      memset(bp.c_str() + r, 0, len - r);
    }
  }
  for (auto& e : ext) {
    memcpy(bp.c_str() + (e.offset - offset), e.data.data, e.data.length);
  }
  bl.clear();  // like the other stores, read replaces what bl held
  bl.append(std::move(bp));
  return len;
}

int MIMStore::fiemap(CollectionHandle& ch, const ghobject_t& oid,
                     uint64_t offset, size_t len,
                     std::map<uint64_t, uint64_t>& destmap)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  string fname = object_file_name(oid);
  std::lock_guard ol(_obj_lock(c->name, fname));
  ObjectFDRef f;
  int r = files->open_object(c->cid, oid, false, &f);
  if (r < 0) {
    return r;
  }
  uint64_t size;
  r = _object_size(c->cid, oid, f, &size);
  if (r < 0) {
    return r;
  }
  if (offset >= size) {
    return 0;
  }
  len = std::min<uint64_t>(len, size - offset);
  std::map<uint64_t, uint64_t> m;
  r = files->fiemap(f, offset, len, &m);
  if (r < 0) {
    return r;
  }
  std::vector<mim::CachedExtent> ext;
  htmll->lookup(c->name, fname, offset, len, &ext);
  // union of the file's data ranges and the cached extents, merged
  for (auto& e : ext) {
    m[e.offset] = std::max(m[e.offset], e.data.length);
  }
  uint64_t cur_off = 0, cur_len = 0;
  bool have = false;
  for (auto& [o, l] : m) {
    if (have && o <= cur_off + cur_len) {
      cur_len = std::max(cur_len, o + l - cur_off);
      continue;
    }
    if (have) {
      destmap[cur_off] = cur_len;
    }
    cur_off = o;
    cur_len = l;
    have = true;
  }
  if (have) {
    destmap[cur_off] = cur_len;
  }
  return 0;
}

int MIMStore::fiemap(CollectionHandle& ch, const ghobject_t& oid,
                     uint64_t offset, size_t len, bufferlist& bl)
{
  std::map<uint64_t, uint64_t> m;
  int r = fiemap(ch, oid, offset, len, m);
  if (r >= 0) {
    encode(m, bl);
  }
  return r;
}

int MIMStore::getattr(CollectionHandle& ch, const ghobject_t& oid,
                      const char* name, bufferptr& value)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  std::map<string, bufferlist> got;
  int r = omap->get_xattrs(oid, {string(name)}, &got);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  auto p = got.find(name);
  if (p == got.end()) {
    return -ENODATA;
  }
  value = bufferptr(p->second.c_str(), p->second.length());
  return 0;
}

int MIMStore::getattrs(CollectionHandle& ch, const ghobject_t& oid,
                       std::map<string, bufferptr, std::less<>>& aset)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return -ENOENT;
    }
  }
  std::set<string> names;
  int r = omap->get_all_xattrs(oid, &names);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  if (names.empty()) {
    return 0;
  }
  std::map<string, bufferlist> got;
  r = omap->get_xattrs(oid, names, &got);
  if (r < 0 && r != -ENOENT) {
    return r;
  }
  for (auto& [k, v] : got) {
    aset.emplace(k, bufferptr(v.c_str(), v.length()));
  }
  return 0;
}

// ---------------------------------------------------------------------------
// omap reads

#define MIM_CHECK_OBJECT(ch, oid)                                   \
  auto c = static_cast<Collection*>(ch.get());                      \
  _wait_applied(c);                                                 \
  {                                                                 \
    std::shared_lock l(c->lock);                                    \
    if (!c->exists || !c->objects.count(oid)) {                     \
      return -ENOENT;                                               \
    }                                                               \
  }

int MIMStore::omap_get(CollectionHandle& ch, const ghobject_t& oid,
                       bufferlist* header, std::map<string, bufferlist>* out)
{
  MIM_CHECK_OBJECT(ch, oid);
  int r = omap->get(oid, header, out);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_header(CollectionHandle& ch, const ghobject_t& oid,
                              bufferlist* header, bool allow_eio)
{
  MIM_CHECK_OBJECT(ch, oid);
  int r = omap->get_header(oid, header);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_keys(CollectionHandle& ch, const ghobject_t& oid,
                            std::set<string>* keys)
{
  MIM_CHECK_OBJECT(ch, oid);
  int r = omap->get_keys(oid, keys);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_get_values(CollectionHandle& ch, const ghobject_t& oid,
                              const std::set<string>& keys,
                              std::map<string, bufferlist>* out)
{
  MIM_CHECK_OBJECT(ch, oid);
  int r = omap->get_values(oid, keys, out);
  return r == -ENOENT ? 0 : r;
}

int MIMStore::omap_check_keys(CollectionHandle& ch, const ghobject_t& oid,
                              const std::set<string>& keys,
                              std::set<string>* out)
{
  MIM_CHECK_OBJECT(ch, oid);
  int r = omap->check_keys(oid, keys, out);
  return r == -ENOENT ? 0 : r;
}

ObjectMap::ObjectMapIterator MIMStore::get_omap_iterator(
  CollectionHandle& ch, const ghobject_t& oid)
{
  auto c = static_cast<Collection*>(ch.get());
  _wait_applied(c);
  {
    std::shared_lock l(c->lock);
    if (!c->exists || !c->objects.count(oid)) {
      return ObjectMap::ObjectMapIterator();
    }
  }
  return omap->get_iterator(oid);
}

#undef MIM_CHECK_OBJECT

// ---------------------------------------------------------------------------
// fsck

int MIMStore::fsck(bool deep)
{
  // Cross-check the three places an object lives: its file (the in-memory
  // index is rebuilt from the directories), its omap/xattrs in RocksDB,
  // and the superblock. Returns the number of problems found.
  bool was_mounted = mounted;
  if (!was_mounted) {
    int r = mount();
    if (r < 0) {
      return r;
    }
  }
  int errors = 0;
  std::set<ghobject_t> with_files;
  {
    std::shared_lock l(coll_lock);
    for (auto& [cid, c] : coll_map) {
      std::shared_lock cl(c->lock);
      if (!c->exists) {
        continue;
      }
      std::set<ghobject_t> on_disk;
      std::vector<string> bad;
      int r = files->list_objects(cid, &on_disk, &bad);
      if (r < 0) {
        derr << "fsck: cannot list " << cid << ": " << cpp_strerror(r)
             << dendl;
        ++errors;
        continue;
      }
      for (auto& b : bad) {
        derr << "fsck: stray file " << b << dendl;
        ++errors;
      }
      if (on_disk != c->objects) {
        derr << "fsck: " << cid << " index (" << c->objects.size()
             << ") and directory (" << on_disk.size() << ") disagree"
             << dendl;
        ++errors;
      }
      for (auto& o : on_disk) {
        if (!with_files.insert(o).second) {
          derr << "fsck: " << o << " is in more than one collection" << dendl;
          ++errors;
        }
        if (deep) {
          ObjectFDRef f;
          int rr = files->open_object(cid, o, false, &f);
          uint64_t size = 0;
          if (rr == 0) {
            rr = files->size(f, &size);
          }
          for (uint64_t off = 0; rr == 0 && off < size; off += 1 << 20) {
            bufferlist bl;
            rr = files->read(f, off, 1 << 20, &bl);
            rr = rr < 0 ? rr : 0;
          }
          if (rr < 0) {
            derr << "fsck: cannot read " << cid << "/" << o << ": "
                 << cpp_strerror(rr) << dendl;
            ++errors;
          }
        }
      }
    }
  }
  // Every omap header must belong to an object with a file.
  std::vector<ghobject_t> with_omap;
  int r = omap->list_objects(&with_omap);
  if (r < 0) {
    derr << "fsck: cannot list omap objects: " << cpp_strerror(r) << dendl;
    ++errors;
  }
  for (auto& o : with_omap) {
    if (!with_files.count(o)) {
      derr << "fsck: omap/xattrs of " << o << " without an object file"
           << dendl;
      ++errors;
    }
  }
  std::ostringstream ss;
  r = omap->check(ss);
  if (r > 0) {
    derr << "fsck: DBObjectMap check: " << ss.str() << dendl;
    errors += r;
  }
  dout(1) << "fsck" << (deep ? " (deep)" : "") << ": " << with_files.size()
          << " objects, " << errors << " errors" << dendl;
  if (!was_mounted) {
    umount();
  }
  return errors;
}

uint64_t MIMStore::debug_fault_io_count() const
{
  if (io_fault) {
    return static_cast<mim::FaultIoEnv*>(io_fault.get())->io_count();
  }
  return fault_io_count;
}

void MIMStore::dump_htmll(ceph::Formatter* f)
{
  auto s = htmll->stats();
  f->open_object_section("htmll");
  f->dump_bool("merge", conf.merge);
  f->dump_unsigned("slots", conf.htmll_slots);
  f->dump_unsigned("blocks_per_slot", conf.htmll_blocks);
  f->dump_unsigned("block_size", conf.block_size);
  f->dump_unsigned("slots_used", s.slots_used);
  f->dump_unsigned("blocks_used", s.blocks_used);
  f->dump_unsigned("bytes", s.bytes);
  f->dump_unsigned("extents", s.extents);
  f->dump_unsigned("frozen_blocks", s.frozen_blocks);
  f->dump_unsigned("frozen_bytes", s.frozen_bytes);
  f->dump_unsigned("inserts", s.inserts);
  f->dump_unsigned("merged", s.merged);
  f->dump_unsigned("direct_no_slot", s.direct_no_slot);
  f->dump_unsigned("direct_no_block", s.direct_no_block);
  f->dump_unsigned("direct_beyond_block", s.direct_beyond_block);
  f->dump_unsigned("direct_memory_cap", s.direct_memory_cap);
  f->dump_unsigned("sp_thresh_blocks", policy->sp_thresh_blocks());
  f->dump_float("time_thresh_s", policy->time_thresh());
  f->dump_unsigned("checkpoint", tracker.checkpoint());
  f->dump_unsigned("checkpoint_pending", tracker.pending());
  f->dump_unsigned("applied_sn", applied_sn);
  {
    std::lock_guard l(durable_lock);
    f->dump_unsigned("sns_held", holds.size());
    f->dump_unsigned("parts_waiting_for_sync", unsynced.size());
  }
  {
    std::lock_guard l(apply_lock);
    f->dump_unsigned("apply_queue", apply_queue.size());
    f->dump_unsigned("commit_waiters", commit_waiters.size());
  }
  f->dump_unsigned("journal_used", journal->used());
  f->dump_unsigned("journal_live_entries", journal->live_entries());
  f->open_array_section("top_collections");
  for (auto& [cid, n] : htmll->top_collections()) {
    f->open_object_section("collection");
    f->dump_string("cid", cid);
    f->dump_unsigned("writes", n);
    f->close_section();
  }
  f->close_section();
  f->close_section();
}
