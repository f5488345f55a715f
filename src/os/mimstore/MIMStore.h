// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore: a FileStore-architecture ObjectStore with MIM.
 *
 * Write path (one transaction, sn = its sequence number):
 *
 *   queue_transactions   encode, assign sn, append to the journal (NVMe)
 *   journal thread       group commit, O_DIRECT + O_DSYNC, async; in sn order:
 *   apply thread         apply in global sn order: a write goes into the
 *                        HTMLL merge cache or straight to its object file;
 *                        every other op applies to files and RocksDB
 *   finisher             on_applied, then on_commit (journal-durable and
 *                        applied: a committed write is readable)
 *   flush thread         phase 2: writes a frozen HTMLL generation back,
 *                        collection by collection, each object once, its
 *                        extents sorted and coalesced
 *   sync thread          syncfs + RocksDB sync; then every sn whose parts
 *                        are all durable is recorded in the checkpoint
 *                        tracker; the checkpoint is persisted in the journal
 *                        header and the journal space behind it reclaimed
 *                        (core/durability.h; the store gives it hooks)
 *
 * Mount replays the journal from the checkpoint through the same apply
 * code. Non-idempotent operations carry replay guards (see ObjectFiles.h);
 * omap/xattr operations are guarded by the SequencerPosition stamped on
 * their object's record (OmapStore.h).
 *
 * One apply thread applies every transaction in sn order: live application
 * and replay see exactly the same sequence, which keeps replay reasoning
 * simple. Applying is cheap (page cache, RocksDB memtable, memory), so one
 * thread keeps up with an HDD-bound store.
 *
 * Locks, and how they nest (outer first). This is the one list
 * (docs/store.md points here). What each lock protects is declared at its
 * members (MIM_GUARDED_BY) and checked by clang, core/'s in the Ceph-free
 * tier and the store's in the Ceph tier (qa/lock-annotations.sh --store);
 * not checked: the object stripes (docs/store.md "Which locks a compiler
 * checks"). The order below is not checked by a
 * tool (debug mutexes are off, so lockdep does not run).
 *   Sequencer::submit_lock   sn assignment and journal submission order;
 *                  the queue throttle. Outer to the journal's locks.
 *   obj_locks      one object's file data against the flush thread and
 *                  readers (stripes by object; two of them in address
 *                  order for clone, clone_range and collection_move_rename:
 *                  ObjectLocks.h). Taken before Collections::lock,
 *                  Collection::lock, Durability's locks, the HTMLL's lock
 *                  and the journal writer's lock: an op locks its object
 *                  first, then looks it up (_write -> _open); _fetch reads
 *                  cached bytes back from the journal under it. A write
 *                  that merges takes none (it only adds to the active
 *                  generation), so the apply thread never waits for the
 *                  flush's file writes.
 *   Collections::lock  the handle map; outer to Collection::lock
 *   Collection::lock   the collection's object index and bits
 *   freeze_lock    the freeze and flush hand-off; outer to the HTMLL's,
 *                  the journal's and Durability's locks
 *   health_lock    the health alerts' state (statfs, MIMStatus.cc);
 *                  taken with no other store lock held, outer only to
 *                  the journal's, Durability's and RocksDB's own locks
 *   Sequencer::apply_lock, Collections::tombstone_lock,
 *   WrittenBackRecords::lock, debug_hook_lock   leaves (apply queue and
 *                  applied_sn; tombstones of merged-away collections;
 *                  written-back records; the tests' hook)
 *   (the HTMLL, Durability (parts_lock, sync_lock; its hooks run with
 *   neither held), the pacer, durable_clock (SnLatency), the journal
 *   (header_lock before the writer's lock) and the fd cache lock
 *   internally and call out to nothing while holding their locks)
 */
#pragma once

#include <sys/statvfs.h>

#include <array>
#include <climits>
#include <atomic>
#include <mutex>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/Finisher.h"
#include "common/admin_socket.h"
#include "common/perf_counters.h"
#include "CephRelease.h"
#include "include/uuid.h"
#include "os/ObjectStore.h"
#include "os/SequencerPosition.h"

#include "Collections.h"
#include "OmapStore.h"
#include "WrittenBack.h"
#include "MIMConfig.h"
#include "MIMPerf.h"
#include "ObjectLocks.h"
#include "Sequencer.h"
#include "core/health_alerts.h"
#include "core/durability.h"
#include "core/flush_policy.h"
#include "core/journal_pacer.h"
#include "core/sn_latency.h"
#include "core/writeback_plan.h"
#include "core/writeback_window.h"
#include "core/fault_io_env.h"
#include "core/htmll.h"
#include "core/io_env.h"
#include "core/thread_annotations.h"

class KeyValueDB;

namespace mimstore {
class CrashRocksEnv;
class MIMJournal;
class ObjectFiles;
class ObjectFD;
struct ReplayMarks;               // ObjectFiles.h
using ObjectFDRef = std::shared_ptr<ObjectFD>;
class AdminHook;
class Checksums;
enum class OpenMode : uint8_t;    // ObjectFiles.h: EXISTING, CREATE
enum class GuardState : uint8_t;  // ObjectFiles.h: DONE, IN_PROGRESS

/// What replay does with an op, from the replay guards of its targets.
enum class GuardVerdict {
  APPLY,   ///< not applied before (or live, not replaying): apply it
  RESUME,  ///< under way when the store stopped (an in-progress guard at
           ///< this very position): finish the parts not yet durable
  SKIP,    ///< applied and durable before (a guard at or past it): skip
};

/// Where the op being applied comes from, passed to every op verb (and the
/// guards) instead of store members that say it: made by the apply thread
/// for a live transaction, or by the mount for a replayed journal entry;
/// _do_transaction moves spos from op to op. On the caller's stack, one
/// thread at a time, so no lock.
struct ApplyContext {
  SequencerPosition spos;  ///< the op's (sn, transaction, op): guards, omap
  /// Replaying the journal at mount: guards are consulted (the op may have
  /// been applied, or be under way, before the stop) and a clone's ENOENT
  /// is tolerated. Live: every op applies.
  bool replaying = false;
  /// Writes go into the merge cache (mimstore_merge live; on replay only
  /// when the mount keeps the merge window), else straight to their files.
  bool merge = false;
  /// The journal entry being applied, for _journal_pos: its payload's
  /// place on the journal device (null: not known, as on a replay that
  /// does not keep the window).
  const TransContext* txc = nullptr;
};

/// The store, in the namespace of its units (core/ is namespace mim: it
/// builds without Ceph). The perf counter indices stay global, as Ceph's
/// own stores' do (MIMPerf.h).
class MIMStore : public ObjectStore {
 public:
  using Collection = mimstore::Collection;
  using CollectionRef = mimstore::CollectionRef;

  /// The data directory's layout, in its mimstore_format file. 2: every
  /// object file carries a birth mark (replay removes one without as an
  /// incomplete create). 3: omap and xattrs in mimstore's own layer
  /// (OmapStore.h) instead of FileStore's DBObjectMap; a mount of format 1
  /// or 2 converts the database first (OmapMigrate.cc). Stores of format 1
  /// keep working as they did; a newer format is refused at mount. 4: data
  /// checksums (Checksums.h) kept for every change; a format-3 store is
  /// raised to 4 at mount, before replay, so no build that keeps none
  /// changes its data again.
  static constexpr uint64_t FORMAT = 4;

  MIMStore(CephContext* cct, const std::string& path,
           const std::string& journal_path);
  ~MIMStore() override;

  // ---- lifecycle (MIMMount.cc); statfs, devices, metadata (MIMStatus.cc) ----
  std::string get_type() override { return "mimstore"; }
  bool test_mount_in_use() override;
  int mkfs() override;
  int mkjournal() override;
  bool wants_journal() override { return true; }
  bool allows_journal() override { return true; }
  bool needs_journal() override { return true; }
  int mount() override;
  /// Merging on, umount leaves the merge window in the journal for the
  /// next mount to index again (a stop costs a sync, not a write back);
  /// flush_journal() and write_back_all() before it write it back.
  int umount() override;
#if CEPH_RELEASE >= 19
  /// ceph-objectstore-tool's read-only ops (Squid on). Not read-only yet:
  /// the mount replays the journal, which writes, as the tool's mount did
  /// before Squid.
  int mount_readonly() override { return mount(); }
  int umount_readonly() override { return umount(); }
#endif
  /// Write every cached byte back to its file and make everything applied
  /// durable (the admin socket's `mimstore flush`): an umount right after
  /// leaves the journal clean.
  int write_back_all() { return _write_back_all(); }
  /// fsck: the number of problems found (0 clean); repair: those left
  /// after repairing the ones it can (MIMFsck.cc says which).
  int fsck(bool deep) override;
  int repair(bool deep) override;
  int flush_journal() override;
  int dump_journal(std::ostream& out) override;
  void set_fsid(uuid_d u) override { fsid = u; }
  uuid_d get_fsid() override { return fsid; }
  bool is_rotational() override;
  bool is_journal_rotational() override;
  int statfs(struct store_statfs_t* buf,
             osd_alert_list_t* alerts = nullptr) override;
  int pool_statfs(uint64_t pool_id, struct store_statfs_t* buf,
                  bool* per_pool_omap) override;
  int validate_hobject_key(const hobject_t& obj) const override { return 0; }
  unsigned get_max_attr_name_length() override { return 256; }
  uint64_t estimate_objects_overhead(uint64_t num_objects) override {
    return num_objects * 512;  // an inode and a directory entry each
  }
  void collect_metadata(std::map<std::string, std::string>* pm) override;
  /// The whole disks under the data filesystem, the journal and the DB.
  int get_devices(std::set<std::string>* ls) override;
  objectstore_perf_stat_t get_cur_stats() override;
  void refresh_perf_counters() override {}
  const PerfCounters* get_perf_counters() const override { return logger; }

  // ---- collections ----
  CollectionHandle open_collection(const coll_t& c) override;
  CollectionHandle create_new_collection(const coll_t& c) override;
  void set_collection_commit_queue(const coll_t& cid,
                                   ContextQueue* commit_queue) override;
  int list_collections(std::vector<coll_t>& ls) override;
  bool collection_exists(const coll_t& c) override;
  int collection_empty(CollectionHandle& c, bool* empty) override;
  int collection_bits(CollectionHandle& c) override;
  int collection_list(CollectionHandle& c, const ghobject_t& start,
                      const ghobject_t& end, int max,
                      std::vector<ghobject_t>* ls, ghobject_t* next) override;
  int set_collection_opts(CollectionHandle& c,
                          const pool_opts_t& opts) override { return 0; }

  // ---- objects (reads: MIMRead.cc) ----
  bool exists(CollectionHandle& c, const ghobject_t& oid) override;
  int stat(CollectionHandle& c, const ghobject_t& oid, struct stat* st,
           bool allow_eio = false) override;
  int read(CollectionHandle& c, const ghobject_t& oid, uint64_t offset,
           size_t len, ceph::bufferlist& bl, uint32_t op_flags = 0) override;
  using ObjectStore::fiemap;
  int fiemap(CollectionHandle& c, const ghobject_t& oid, uint64_t offset,
             size_t len, ceph::bufferlist& bl) override;
  int fiemap(CollectionHandle& c, const ghobject_t& oid, uint64_t offset,
             size_t len, std::map<uint64_t, uint64_t>& destmap) override;
  int getattr(CollectionHandle& c, const ghobject_t& oid, const char* name,
              ceph::bufferptr& value) override;
  int getattrs(CollectionHandle& c, const ghobject_t& oid,
               std::map<std::string, ceph::bufferptr, std::less<>>& aset)
    override;

  // ---- omap (reads: MIMRead.cc) ----
  int omap_get(CollectionHandle& c, const ghobject_t& oid,
               ceph::bufferlist* header,
               std::map<std::string, ceph::bufferlist>* out) override;
  int omap_get_header(CollectionHandle& c, const ghobject_t& oid,
                      ceph::bufferlist* header, bool allow_eio = false)
    override;
  int omap_get_keys(CollectionHandle& c, const ghobject_t& oid,
                    std::set<std::string>* keys) override;
  int omap_get_values(CollectionHandle& c, const ghobject_t& oid,
                      const std::set<std::string>& keys,
                      std::map<std::string, ceph::bufferlist>* out) override;
  int omap_check_keys(CollectionHandle& c, const ghobject_t& oid,
                      const std::set<std::string>& keys,
                      std::set<std::string>* out) override;
#if CEPH_RELEASE < 20
  ObjectMap::ObjectMapIterator get_omap_iterator(CollectionHandle& c,
                                                 const ghobject_t& oid)
    override;
#else
  int omap_iterate(CollectionHandle& c, const ghobject_t& oid,
                   omap_iter_seek_t start_from,
                   std::function<omap_iter_ret_t(std::string_view,
                                                 std::string_view)> visitor)
    override;
#endif

  // ---- writes ----
  int queue_transactions(CollectionHandle& ch, std::vector<Transaction>& tls,
                         TrackedOpRef op = TrackedOpRef(),
                         ThreadPool::TPHandle* handle = nullptr) override;

  /// Admin socket: the HTMLL summary.
  void dump_htmll(ceph::Formatter* f);
  /// Tests: I/Os counted by the fault seam, live or at the last umount.
  uint64_t debug_fault_io_count() const;
  /// Tests: writes a delay rule of the fault seam has held (0: no seam).
  uint64_t debug_fault_delayed_writes() const;
  /// Tests: power loss now at `where`, as the fault seam's crash_at cuts
  /// (unsynced writes and RocksDB's rolled back by the spec's mode, then
  /// the process exits 77); returns false only without the seam. For a
  /// debug hook that cuts at a named point.
  bool debug_fault_crash(const char* where);
  /// Tests: replace the fault seam's spec on a mounted store (a rule that
  /// must not fire during the mount), the omap database's dbwrite and
  /// dbsync rules included (their counts start again); -EINVAL if it does
  /// not parse, -ENODEV without the seam.
  int debug_fault_set_spec(const std::string& spec);
  /// Tests: called at named points inside multi-step ops (split, merge,
  /// rename; "guard:omap_synced" between a replay guard's RocksDB sync and
  /// its xattr) on the apply thread, so a crash test can die exactly there,
  /// after each object of a sweep on the flush thread ("flush:object"),
  /// on the sync thread before the journal's tail moves
  /// ("sync:checkpoint"), and in write_back_all() on its caller's thread
  /// before and after it queues its request ("write_back_all:want",
  /// "write_back_all:queued"), and on the journal's writer thread between
  /// a wrap's two writes ("journal:wrap_submitted",
  /// "journal:wrap_batch_submitted"). May be set at any time: a point already
  /// in the old hook finishes there, later points call the new one.
  void set_debug_hook(std::function<void(const char*)> f) {
    auto h = f ? std::make_shared<const std::function<void(const char*)>>(
                   std::move(f))
               : nullptr;
    mim::MutexLock l(debug_hook_lock);
    debug_hook.swap(h);  // the old one dies after the unlock, in h
    debug_hook_set = bool(debug_hook);
  }
  /// Tests: umount has begun stopping the threads.
  bool debug_stopping() {
    mim::MutexLock l(freeze_lock);
    return flush_stop;
  }

 private:
  using sn_t = mim::sn_t;

  using TransContext = mimstore::TransContext;
  using ApplyItem = mimstore::ApplyItem;

  // ---- mount and replay (MIMMount.cc) ----
  int _load_config();
  int _open_io();
  /// Drops what _open_io made (recording the fault seam's I/O count).
  void _close_io();
  int _open_db(bool create);
  /// After _open_db: a store of an older format becomes FORMAT, durably.
  int _raise_format();
  void _close_db();
  /// How _close_all leaves the journal: marked clean (nothing beyond the
  /// checkpoint) or as it is, for the next mount to replay.
  enum class JournalEnd { CLEAN, AS_IS };
  /// The one teardown of what mount, mkfs and the offline tools open, each
  /// part only if it is there; returns the journal close's result.
  int _close_all(JournalEnd end);
  int _load_collections();
  int _replay_journal();
  /// The sn new transactions start at after a replay that ended before
  /// replay_end: above the fence when the replay went on past damage.
  sn_t _first_sn_after_replay(sn_t replay_end);
  /// Before replay, what the last life applied: the sn fence and the
  /// written-back records. 0, or the error (logged).
  int _load_applied_marks();
  /// sn_fence from the meta file, before replay and mkjournal: 0, or
  /// -ENOENT with sn_fence 0 (a store last mounted without the fence), or
  /// an error, logged with what to fix (-EINVAL: not a number).
  int _read_sn_fence();
  /// Replay: the writes cached so far become the frozen generation, swept
  /// first once the threads start (the generation a stop interrupted).
  /// REQUIRES: replay (mount thread, no other thread started).
  void _freeze_replayed(sn_t end);
  /// `order` is the frozen generation the flush thread sweeps next
  /// (_maybe_freeze, _freeze_replayed).
  void _set_frozen_locked(mim::FlushOrder&& order) MIM_REQUIRES(freeze_lock);
  /// A meta file holding a decimal u64: 0, or read_meta's error, or
  /// -EINVAL when it is not one (*v untouched then).
  int _read_meta_u64(const std::string& key, uint64_t* v);
  /// Before `sn` is applied (live or replayed): if it is above sn_fence,
  /// raise the fence in the meta file, durably, first. Returns the meta
  /// write's error.
  int _fence_sn(sn_t sn);
  // ---- status (MIMStatus.cc) ----
  /// The DB is on another filesystem than the data: true, with its statvfs.
  bool _db_fs_apart(struct statvfs* db_st);
  /// db_path, read under health_lock.
  std::string _db_path();
  /// RocksDB's size estimate (0 while not mounted), at most
  /// OMAP_BYTES_AGE seconds old.
  uint64_t _omap_bytes();
  /// The health alerts at this statfs (empty while not mounted).
  void _health_alerts(const struct statvfs& data_fs,
                      const struct statvfs* db_fs, osd_alert_list_t* alerts);
  /// Mount: the alerts' state, and the last fsck's record from its meta
  /// file. umount: gone, before the journal and the DB close.
  void _start_health();
  void _stop_health();
  /// fsck: record its result (LAST_FSCK_META, and for the alerts).
  void _record_fsck(int errors, bool deep);

  // ---- fsck and repair (MIMFsck.cc) ----
  struct FsckCount {
    int errors = 0;    ///< found, and with repair not mended
    int repaired = 0;
    int quarantined = 0;  ///< stray files moved (orphan omap then kept)
  };
  /// _fsck is mounting the store: mount runs no fsck of its own. Set and
  /// read by the lifecycle calls only (mount, fsck), never concurrent.
  bool in_fsck = false;
  int _fsck(bool deep, bool repair);
  /// One collection's directory against its index.
  void _fsck_collection(const coll_t& cid, const Collection& c, bool repair,
                        std::set<ghobject_t>* with_files,
                        FsckCount* n) MIM_REQUIRES_SHARED(c.lock);
  /// The omap DB: every object's omap has a file; OmapStore's own check.
  void _fsck_omap(const std::set<ghobject_t>& with_files, bool repair,
                  FsckCount* n);
  /// Repair: move a stray file (its path) out of collection `cname` into
  /// <osd data>/QUARANTINE_DIR/<cname>/, under its own name or with a .N
  /// suffix (never over another file); durable when it returns 0.
  int _quarantine(const std::string& file, const std::string& cname,
                  std::string* to);
  static constexpr const char* QUARANTINE_DIR = "mimstore-quarantine";
  /// Record JOURNAL_EMPTY_META (durably).
  int _record_journal_empty(bool empty);
  /// mkjournal finds no journal (`why`): 0 if the last one was left empty
  /// or mimstore_journal_lost accepts its loss, else -EBUSY with the way
  /// out in the log.
  int _missing_journal_was_empty(const std::string& why);
  /// Refuses a mimstore_format newer than FORMAT (or not a number); sets
  /// births_complete and omap_legacy.
  int _check_format();
  /// Format 1 and 2: DBObjectMap's keys into OmapStore (stamps kept),
  /// then mimstore_format 3, then the old keys go. Before replay, which
  /// then runs on the new layer by the same rule. (OmapMigrate.cc)
  int _migrate_omap();
  /// DBObjectMap's keys left by a conversion stopped after mimstore_format
  /// 3 was written.
  int _drop_legacy_omap();
  int _check_fsid();
  /// The start of mkjournal and dump_journal: refuse a mounted store (they
  /// would replace its live journal), read the options and the fsid, open
  /// the I/O stack. On failure nothing is left open.
  int _open_offline(const char* tool);
  /// mount's steps: the data directory's lock file (-EBUSY when another
  /// process holds it); the HTMLL and flush policy from the options and the
  /// journal throughput; after replay, the journal, counters and threads.
  int _lock_dir();
  int _make_merge_cache();
  int _start_after_replay();

  // ---- admin socket commands (MIMAdmin.cc) ----
  void _register_admin();
  void _unregister_admin();

  // ---- queue and apply, threads, perf counters (MIMStore.cc) ----
  void _start_threads();
  void _stop_threads();
  void _create_logger();
  /// Refuse (before journaling) a transaction that removes a collection
  /// that would not be empty by then. Called only for those.
  int _validate(std::vector<Transaction>& tls);
  void _journaled(TransContext* txc);
  void _apply_thread();
  void _finish(TransContext* txc);
  void _wait_applied(Collection* c);

  // ---- merge control: freezing, backpressure (MIMMergeControl.cc) ----
  /// Freeze the active generation if a trigger rule says so (or `forced`).
  /// REQUIRES: apply thread, between two transactions (so every sn's
  /// merged writes are in one generation, and their holds are taken).
  void _maybe_freeze(mim::FlushTrigger forced) MIM_EXCLUDES(freeze_lock);
  void _request_freeze(mim::FlushTrigger why) MIM_EXCLUDES(freeze_lock);
  /// Freeze on the time threshold when no write came to check it.
  /// REQUIRES: the sync thread, no locks held.
  void _time_tick() MIM_EXCLUDES(freeze_lock);
  /// Write every cached byte back and checkpoint up to the newest applied
  /// transaction (umount, the admin command).
  int _write_back_all() MIM_EXCLUDES(freeze_lock);
  /// Wait while the cache is over its cap or the index over its budget and
  /// a flush frees room. REQUIRES: apply thread, between two transactions,
  /// no locks held.
  void _wait_for_cache_room(uint64_t bytes) MIM_EXCLUDES(freeze_lock);
  /// The writeback throttle: wait for the next sync once the file writes
  /// since the last one pass mimstore_wbthrottle_*. REQUIRES: the apply
  /// thread between two transactions (merging off), or the flush thread
  /// between two objects; no locks held.
  void _throttle_writeback();
  /// Delay a new transaction while the journal or the cache fills.
  /// REQUIRES: a submitting thread, no store locks held.
  void _backoff(uint64_t payload_bytes);
  static double _mono_secs();  ///< the pacer's clock

  // ---- the flush, the sync thread's hooks (MIMFlush.cc) ----
  void _flush_thread() MIM_EXCLUDES(freeze_lock);
  /// One object of the frozen generation, where the flush writes it.
  struct FlushItem {
    const std::string* cname;  // into the order, which outlives the item
    const std::string* fname;
    uint64_t phys;             // disk address of its first byte, or UNPLACED
  };
  static constexpr uint64_t UNPLACED = UINT64_MAX;
  /// The frozen generation's objects in disk order. REQUIRES: flush
  /// thread, no locks held (the addresses are read from the filesystem).
  std::vector<FlushItem> _writeback_order(const mim::FlushOrder& order)
    MIM_EXCLUDES(freeze_lock);
  /// The threads are stopping for an umount that keeps the merge window:
  /// a sweep under way ends at the next object.
  bool _stop_leaves_window() MIM_EXCLUDES(freeze_lock);
  /// Write the frozen generation `order` back (the flush thread took it
  /// from flush_order).
  void _flush_frozen(const mim::FlushOrder& order) MIM_EXCLUDES(freeze_lock);
  /// Whose bytes a write back writes: a frozen generation's (the flush:
  /// counted in flush_ios/bytes and handed to the disk after the object
  /// lock is released) or an object's taken by an op (_take_cached).
  enum class WritebackOf { FROZEN, TAKEN };
  /// Write an object's cached extents to its file. REQUIRES: the object's
  /// stripe lock; *buf the caller's, reused across objects.
  int _write_back_object(const std::string& cname, const std::string& fname,
                         mim::ObjectState& st, WritebackOf of,
                         std::string* buf);
  /// Its file writes (run by its checksum change). REQUIRES: as above.
  int _write_runs(const mimstore::ObjectFDRef& f, const mim::ObjectState& st,
                  WritebackOf of, std::string* buf);
  /// A write back of taken bytes failed (`what`: the flush, or an op's
  /// take): says what to mend and stops the store, before their sns are
  /// released, so the journal keeps them for the next mount.
  [[noreturn]] void _write_back_failed(const char* what,
                                       const std::string& cname,
                                       const std::string& fname, int r);
  /// Join a run's pieces across its gaps into *buf. REQUIRES: the object's
  /// stripe lock. Returns 1 with the whole run in *buf, 0 when a gap's
  /// bytes are not in memory, or -errno.
  int _fill_run(const mimstore::ObjectFDRef& f, const mim::WriteRun& run,
                std::string* buf);
  using PieceIter = std::vector<mim::WritePiece>::const_iterator;
  /// REQUIRES: the object's stripe lock; [begin, end) adjacent pieces.
  int _write_pieces(const mimstore::ObjectFDRef& f, PieceIter begin,
                    PieceIter end, std::string* buf, WritebackOf of);
  /// REQUIRES: the object's stripe lock; len = the iov's total length.
  int _write_run(const mimstore::ObjectFDRef& f, uint64_t off, uint64_t len,
                 const std::vector<struct iovec>& iov, WritebackOf of);
  /// The writeback window (core/writeback_window.h): hand the runs the
  /// sweep wrote to the disk, then wait while too much is in flight.
  /// REQUIRES: flush thread, no object lock held (both wait on the disk).
  void _start_writebacks();
  /// What the sync thread calls: the data sync, the checkpoint's
  /// persistence, counters, _time_tick.
  mim::DurabilityHooks _durability_hooks();

  // ---- transaction ops: data, xattrs, clones (MIMOps.cc) ----
  void _do_transaction(ApplyContext& ac,
                       Transaction& t, sn_t sn, uint32_t trans_num);
  /// One dispatcher per op family (data: MIMOps.cc, omap: MIMOmapOps.cc,
  /// collections: MIMCollOps.cc): decodes the op's arguments, applies it
  /// and returns its result, or NOT_MINE for an op of another family.
  static constexpr int NOT_MINE = INT_MIN;
  int _do_data_op(const ApplyContext& ac,
                  Transaction::iterator& i, Transaction::Op* op);
  int _do_omap_op(const ApplyContext& ac,
                  Transaction::iterator& i, Transaction::Op* op);
  int _do_coll_op(const ApplyContext& ac,
                  Transaction::iterator& i, Transaction::Op* op);
  /// An op's error that _do_transaction lets pass (ENOENT mostly, and on
  /// replay also for clones); any other aborts, naming the likely cause.
  bool _op_error_tolerated(const ApplyContext& ac, uint32_t op, int r);
  [[noreturn]] void _abort_on_op_error(Transaction& t, uint32_t op,
                                       uint32_t op_num, int r);
  int _touch(const ApplyContext& ac, const coll_t& cid, const ghobject_t& oid);
  /// Where the bytes of `bl` (a write of the transaction being applied)
  /// sit on the journal device; mim::NO_JPOS if not found (or ac.txc is null).
  uint64_t _journal_pos(const ApplyContext& ac,
                        const ceph::bufferlist& bl) const;
  /// mimstore_debug_verify_journal_data: abort unless the journal holds
  /// `d`'s bytes at d.jpos (no-op unless d is resident with a position).
  void _verify_journal_copy(const mim::DataRef& d, const char* where);
  /// The form the cache keeps of a write's bytes `bl`: a reference to them
  /// (which may rebuild bl), or with mimstore_merge_data_in_journal their
  /// journal position and crc only. False: kept only in the journal, but
  /// not found there (the write must go direct).
  bool _cached_form(const ApplyContext& ac,
                    ceph::bufferlist& bl, mim::DataRef* out);
  /// Copy d's bytes to dst: from memory, or read back from the journal
  /// with the whole write's crc checked (-EIO on a mismatch).
  int _fetch(const mim::DataRef& d, char* dst);
  /// REQUIRES: oid's stripe lock.
  int _write_direct(const ApplyContext& ac, const ghobject_t& oid,
                    const ObjectFDRef& f, uint64_t off,
                    const ceph::bufferlist& bl);
  int _write(const ApplyContext& ac,
             const coll_t& cid, const ghobject_t& oid, uint64_t off,
             uint64_t len, ceph::bufferlist& bl, uint32_t fadvise_flags);
  int _zero(const ApplyContext& ac,
            const coll_t& cid, const ghobject_t& oid, uint64_t off,
            uint64_t len);
  int _truncate(const ApplyContext& ac,
                const coll_t& cid, const ghobject_t& oid, uint64_t size);
  int _remove(const ApplyContext& ac, const coll_t& cid, const ghobject_t& oid);
  int _setattrs(const ApplyContext& ac,
                const coll_t& cid, const ghobject_t& oid,
                std::map<std::string, ceph::bufferptr>& aset);
  int _rmattr(const ApplyContext& ac,
              const coll_t& cid, const ghobject_t& oid, const char* name);
  int _rmattrs(const ApplyContext& ac,
               const coll_t& cid, const ghobject_t& oid);
  int _clone(const ApplyContext& ac,
             const coll_t& cid, const ghobject_t& oldoid,
             const ghobject_t& newoid);
  int _clone_range(const ApplyContext& ac,
                   const coll_t& cid, const ghobject_t& oldoid,
                   const ghobject_t& newoid, uint64_t srcoff, uint64_t len,
                   uint64_t dstoff);
  // omap (MIMOmapOps.cc)
  int _omap_clear(const ApplyContext& ac,
                  const coll_t& cid, const ghobject_t& oid);
  int _omap_setkeys(const ApplyContext& ac,
                    const coll_t& cid, const ghobject_t& oid,
                    ceph::bufferlist& aset_bl);
  int _omap_rmkeys(const ApplyContext& ac,
                   const coll_t& cid, const ghobject_t& oid,
                   ceph::bufferlist& keys_bl);
  int _omap_rmkeyrange(const ApplyContext& ac,
                       const coll_t& cid, const ghobject_t& oid,
                       const std::string& first, const std::string& last);
  int _omap_setheader(const ApplyContext& ac,
                      const coll_t& cid, const ghobject_t& oid,
                      ceph::bufferlist& bl);
  // collections (MIMCollOps.cc)
  int _create_collection(const ApplyContext& ac, const coll_t& cid, int bits);
  int _destroy_collection(const ApplyContext& ac, const coll_t& cid);
  int _collection_move_rename(const ApplyContext& ac,
                              const coll_t& oldcid, const ghobject_t& oldoid,
                              const coll_t& newcid, const ghobject_t& newoid);
  int _split_collection(const ApplyContext& ac,
                        const coll_t& cid, uint32_t bits, uint32_t rem,
                        const coll_t& dest);
  int _merge_collection(const ApplyContext& ac,
                        const coll_t& cid, uint32_t bits, const coll_t& dest);
  int _set_bits(const ApplyContext& ac, const coll_t& cid, int bits);
  /// A collection's split bits, in memory and on disk (split, merge,
  /// set_bits).
  int _write_bits(Collection* c, int bits);

  // op helpers (guards and the barrier: ReplayGuards.cc; the rest
  // MIMOps.cc and MIMCollOps.cc)
  /// Replay guards, compared with ac.spos (ReplayGuards.cc). Live (not
  /// replaying): always APPLY. *born_later: SKIP because the object's file
  /// was created after this op (a later incarnation). Replaying, a file
  /// with neither guard nor birth mark is removed first (an incomplete
  /// create, _drop_incomplete_create).
  GuardVerdict _guard_cmp(const ApplyContext& ac,
                          const coll_t& cid, const ghobject_t* oid,
                          bool* born_later = nullptr);
  /// True if the op must be applied: _guard_cmp() == APPLY.
  bool _should_apply(const ApplyContext& ac,
                     const coll_t& cid, const ghobject_t* oid);
  /// Replay: an object file with these marks is a create the crash cut
  /// short (neither mark; stores of format 2 on). The one rule for replay
  /// (_guard_cmp) and the mount-time prune of the written-back records.
  bool _cut_short(const mimstore::ReplayMarks& m) const;
  /// Replay: say that an object file's marks cannot be read (the caller
  /// stops: a guess could redo ops done or forget a record).
  void _marks_unreadable(const std::string& cname, const std::string& fname,
                         int r) const;
  /// Replay: remove an object file whose create lost its birth mark to the
  /// crash (from _guard_cmp, at the first replayed op naming it).
  void _drop_incomplete_create(const coll_t& cid, const ghobject_t& oid);
  /// Replay: the file at cid/oid is not (or no longer) the one a written-
  /// back record of the name describes: forget the record, durably
  /// (WrittenBack.h). A no-op when no record is loaded (live ops).
  void _forget_written_back(const coll_t& cid, const ghobject_t& oid);
  /// Replay: redo a remove's omap clear the files no longer show.
  int _replay_omap_clear(const ApplyContext& ac, const ghobject_t& oid);
  void _set_replay_guard(const ApplyContext& ac,
                         const ObjectFDRef& f, const ghobject_t& oid,
                         GuardState state);
  /// REQUIRES: every earlier op on cid is durable but for the merge
  /// cache's writes (see _collection_barrier): the guard syncs the rest.
  void _set_collection_replay_guard(const ApplyContext& ac, const coll_t& cid,
                                    GuardState state);
  /// Write the cached extents of both collections to their files, before
  /// a collection guard (split, merge). A failed write back stops the store.
  void _collection_barrier(const coll_t& a, const coll_t& b);
  /// Split and merge, before moving objects from cid to dest: the barrier,
  /// then in-progress guards on both; `point` names the moment after.
  void _begin_move(const ApplyContext& ac,
                   const coll_t& cid, const coll_t& dest, const char* point);
  /// Move the objects `which` selects from sc to dc (split, merge).
  int _move_objects(Collection* sc, Collection* dc,
                    const std::function<bool(const ghobject_t&)>& which);
  /// Tests: a named point of a multi-step op (see set_debug_hook).
  void _debug_point(const char* where);
  /// What _take_cached does with the cached bytes it takes.
  enum class Taken { WRITE_BACK, DISCARD };
  /// Take the object's cached extents (both generations) out of the cache
  /// and write them to its file, so a non-write op sees them, or drop them
  /// (the op replaces them: remove). A failed write back stops the store
  /// (_write_back_failed). REQUIRES: the object's stripe lock.
  void _take_cached(const coll_t& cid, const std::string& fname, Taken what);
  void _take_cached_collection(const coll_t& cid);
  /// 0 if collection `cid` holds `oid`, else -ENOENT.
  int _require_object(const coll_t& cid, const ghobject_t& oid);
  int _open(const ApplyContext& ac,
            const coll_t& cid, const ghobject_t& oid, OpenMode mode,
            ObjectFDRef* out);
  /// What a read of one object's bytes holds while it reads: the object's
  /// stripe lock (so the flush thread cannot write back and drop cached
  /// extents meanwhile), its file, and its size with the cache counted.
  struct ReadHandle {
    std::unique_lock<std::mutex> lock;
    std::string fname;
    ObjectFDRef f;
    uint64_t size = 0;
  };
  /// The preamble of stat, read and fiemap: _check_object, then lock the
  /// object's stripe, open and size it.
  int _open_for_read(CollectionHandle& ch, const ghobject_t& oid,
                     ReadHandle* h);
  /// The preamble of every read: wait until the collection's queued
  /// transactions are applied, then 0, or -ENOENT if the object is absent.
  int _check_object(CollectionHandle& ch, const ghobject_t& oid);
  int _object_size(const coll_t& cid, const ghobject_t& oid,
                   const ObjectFDRef& f, uint64_t* size);

  // ---- state ----
  const std::string journal_path;
  uuid_d fsid;
  mimstore::MIMConfig conf;
  bool mounted = false;
  int lock_fd = -1;  ///< flock on <osd data>/mimstore.lock while mounted
  /// This mount's replay kept the merge window (mount thread, then
  /// constant).
  bool keep_window = false;
  /// Replay: ops a written-back record skipped (mount thread).
  uint64_t skipped_written_back = 0;
  /// Replay froze the writes below this sn (0: it did not). Mount thread,
  /// before the threads start.
  sn_t replay_froze_at = 0;
  /// umount writes the merge window back (flush_journal) instead of
  /// leaving it in the journal. Set by flush_journal (any thread: the
  /// OSD's shutdown, its admin socket); read by umount and, while umount
  /// stops the threads, by the flush thread (_stop_leaves_window); cleared
  /// at the end of umount.
  std::atomic<bool> umount_writes_back{false};
  /// mimstore_format >= 2: every object file got a birth mark at its
  /// create, so one without is a create the power cut left incomplete.
  bool births_complete = false;
  /// The store's omap is still DBObjectMap's (format 1 or 2), until
  /// _migrate_omap.
  bool omap_legacy = false;

  std::unique_ptr<mim::IoEnv> io_base;   ///< the real I/O
  std::unique_ptr<mim::IoEnv> io_fault;  ///< fault seam, when configured
  mim::fault_spec_t fault_spec;          ///< io_fault's, parsed once
  mim::IoEnv* io = nullptr;              ///< what everything uses
  uint64_t fault_io_count = 0;           ///< io_fault's count at _close_io
  std::unique_ptr<mimstore::ObjectFiles> files;
  std::unique_ptr<mimstore::MIMJournal> journal;
  KeyValueDB* db = nullptr;  ///< the omap database; ours (_close_db)
  /// RocksDB's files under the crash model, when io_fault is configured;
  /// owned by db (RocksDBStore deletes its Env), cleared before db goes.
  std::atomic<mimstore::CrashRocksEnv*> rocks_crash_env{nullptr};
  std::unique_ptr<mimstore::OmapStore> omap;
  /// Data checksums over omap (made and gone with it).
  std::unique_ptr<mimstore::Checksums> csums;
  /// What sweeps wrote back before a stop, for replay to skip (over db;
  /// made with it at mount, gone before it).
  std::unique_ptr<mimstore::WrittenBackRecords> written_back;

  std::unique_ptr<mim::Htmll> htmll;
  std::unique_ptr<mim::FlushPolicy> policy;
  /// Paces new transactions while a generation is written back (its own
  /// leaf lock; fed by the flush and sync threads, asked by _backoff).
  mim::JournalPacer pacer;
  /// Sampled queue-to-checkpoint times (durable_lat; its own leaf lock:
  /// submitters record, the sync thread's checkpoint hands them back).
  mim::SnLatency durable_clock;
  /// Made at the first mount, kept after umount (tests read it then).
  PerfCounters* logger = nullptr;
  bool logger_registered = false;  ///< in cct's collection (while mounted)
  Finisher finisher;
  /// A mimstore::AdminHook (MIMAdmin.cc), held by its base so that the
  /// store's own files need not include MIMAdmin.h.
  std::unique_ptr<AdminSocketHook> admin_hook;

  /// Open collection handles and merge tombstones (Collections.h).
  mimstore::Collections colls{cct};

  /// sn order, the queue throttle, the apply queue and apply progress
  /// (Sequencer.h).
  mimstore::Sequencer sequencer;

  /// Object stripes: serialize one object's file data between the apply
  /// thread, the flush thread and readers (ObjectLocks.h).
  mimstore::ObjectLocks obj_locks;

  /// Parts per sn, the checkpoint, the sync thread and the writeback
  /// throttle (core/durability.h; locks of its own, leaves).
  mim::Durability durability;

  /// The freeze and flush hand-off (MIMMergeControl.cc freezes, the flush
  /// thread of MIMFlush.cc sweeps): protects the fields below. freeze_cond
  /// wakes the flush thread (a generation frozen, or stop) and whoever
  /// waits for a sweep to end (_write_back_all).
  mim::Mutex freeze_lock;
  std::condition_variable freeze_cond;
  std::condition_variable room_cond;  ///< the flush freed cache room
  /// The flush thread ends.
  bool flush_stop MIM_GUARDED_BY(freeze_lock) = false;
  /// A generation is frozen and flush_order is it, until the flush thread
  /// has written it back.
  bool flush_pending MIM_GUARDED_BY(freeze_lock) = false;
  /// The frozen generation, handed to the flush thread (which takes it).
  mim::FlushOrder flush_order MIM_GUARDED_BY(freeze_lock);
  /// A freeze marker is in the apply queue.
  bool freeze_queued MIM_GUARDED_BY(freeze_lock) = false;
  /// A forced freeze that arrived while a flush was running; re-queued
  /// when it ends.
  mim::FlushTrigger refreeze MIM_GUARDED_BY(freeze_lock) =
    mim::FlushTrigger::NONE;
  /// EXPLICIT freeze markers handled.
  uint64_t explicit_handled MIM_GUARDED_BY(freeze_lock) = 0;
  ceph::mono_clock::time_point last_freeze MIM_GUARDED_BY(freeze_lock);

  std::thread apply_thread;
  std::thread flush_thread;
  std::thread sync_thread;

  /// Counters of client writes and data write I/Os for the merge ratio.
  std::atomic<uint64_t> client_writes{0};
  std::atomic<uint64_t> data_write_ios{0};
  /// The runs a sweep wrote and handed to the disk, at most
  /// mimstore_flush_writeback_window bytes in flight (its cap, set at
  /// mount). Flush thread only.
  mim::WritebackWindow<ObjectFDRef> wb_window;
  /// The sweep's run buffer, kept across objects and sweeps (at most an
  /// object's size). Flush thread only.
  std::string flush_buf;
  /// First sn of the active generation (applied after the last freeze):
  /// the journal from there on is what freezing it would free. Written by
  /// the apply thread, read by submitting threads (the pacer's share).
  std::atomic<sn_t> active_gen_first_sn{1};
  sn_t applying_sn = 0;  ///< apply thread only: the transaction being applied
  /// No sn above it was ever applied, before or after a crash: the meta
  /// file's mimstore_sn_fence, raised by SN_FENCE_STEP (one fsync'd file
  /// write per 16 Mi transactions) before an sn above it is applied. An sn
  /// is stamped where it applies (replay guards, omap headers, written-back
  /// records), and an op whose sn is not above a stamp is skipped as done;
  /// so a journal made without the old one's end (mkjournal after a lost
  /// journal device, a mount past damage) starts above the fence, not at
  /// the last clean stop's next sn. Mount thread (replay, mkjournal), then
  /// apply thread only.
  sn_t sn_fence = 0;
  static constexpr sn_t SN_FENCE_STEP = sn_t(1) << 24;
  /// <osd data>/mimstore_journal_empty: "yes" once a stop (or mkfs,
  /// mkjournal) left the journal empty, "no" from the start of a mount on.
  /// mkjournal, finding no journal, replaces only an empty one.
  static constexpr const char* JOURNAL_EMPTY_META = "mimstore_journal_empty";
  /// Bound on the cached bytes of both generations (the HTMLL's max_bytes):
  /// mimstore_cache_max_bytes, or with mimstore_merge_data_in_journal half
  /// the journal. Set at mount.
  uint64_t cache_cap = 0;
  /// With mimstore_merge_data_in_journal, the journal bytes at which the
  /// active generation is frozen: mimstore_generation_journal_share of the
  /// journal below mimstore_backoff_high. Set at mount.
  uint64_t generation_journal_bytes = 0;
  /// The health alerts statfs reports (core/health_alerts.h). statfs
  /// holds it while it reads the journal, the counters and the DB's size,
  /// which umount keeps open until _stop_health has taken it.
  mim::Mutex health_lock;
  std::unique_ptr<mim::HealthMonitor> health MIM_GUARDED_BY(health_lock);
  /// The omap database's directory, resolved at mount (_open_db); read by
  /// statfs, get_devices and collect_metadata from the OSD's threads.
  std::string db_path MIM_GUARDED_BY(health_lock);
  /// RocksDB's size estimate and when it was taken (statfs).
  uint64_t omap_bytes MIM_GUARDED_BY(health_lock) = 0;
  ceph::mono_time omap_bytes_at MIM_GUARDED_BY(health_lock);
  static constexpr int OMAP_BYTES_AGE = 10;  ///< seconds
  /// The last fsck's errors (-1: none recorded), whether it was deep, and
  /// when it ran ("<time> <kind>").
  int64_t last_fsck_errors MIM_GUARDED_BY(health_lock) = -1;
  bool last_fsck_deep MIM_GUARDED_BY(health_lock) = false;
  std::string last_fsck_when MIM_GUARDED_BY(health_lock);
  /// <osd data>/mimstore_last_fsck: "<errors> <time> <deep|shallow>".
  static constexpr const char* LAST_FSCK_META = "mimstore_last_fsck";
  /// Tests only. A point copies the pointer under the lock and calls the
  /// hook without it (a hook may block, or set another hook).
  mim::Mutex debug_hook_lock;
  std::shared_ptr<const std::function<void(const char*)>> debug_hook
    MIM_GUARDED_BY(debug_hook_lock);
  std::atomic<bool> debug_hook_set{false};  ///< no lock when there is none

  friend class mimstore::AdminHook;
  friend struct mimstore::Collection;  // flush waits on apply progress
};

}  // namespace mimstore

// Ceph's store factory (patch 0003) and the tests name it unqualified.
using mimstore::MIMStore;
