// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "MIMConfig.h"

#include <cctype>
#include <cmath>

#include "common/ceph_context.h"
#include "common/config.h"
#include "core/journal_format.h"

namespace mimstore {

namespace {

bool is_pow2(uint64_t v)
{
  return v && !(v & (v - 1));
}

// One validator per rule, each writing "option: value: what is allowed".
struct Checker {
  std::ostream& err;
  int bad = 0;

  void fail(const char* opt, const std::string& val, const char* rule) {
    err << opt << " = " << val << ": " << rule << "\n";
    ++bad;
  }
  void positive(const char* opt, double v) {
    if (!std::isfinite(v) || v <= 0) {
      fail(opt, std::to_string(v), "must be a positive number of seconds");
    }
  }
  void range(const char* opt, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v < lo || v > hi) {
      fail(opt, std::to_string(v),
           ("must be between " + std::to_string(lo) + " and " +
            std::to_string(hi)).c_str());
    }
  }
};

}  // namespace

uint64_t min_journal_bytes(const MIMConfig& c)
{
  // Two header blocks, and enough room that max_inflight batches plus one
  // being formed never have to wait on each other for space.
  uint64_t batches = std::max<uint64_t>(8, 2 * (c.journal_max_inflight + 1));
  return std::max<uint64_t>(16ull << 20, batches * c.journal_max_batch_bytes);
}

namespace {

/// Options whose fields are narrower than the option: validated wide, so
/// that a value too large for its field is refused instead of wrapping.
struct WideOptions {
  uint64_t slots = 0, blocks = 0, max_slots = 0, max_blocks = 0;
  uint64_t replicas = 0, nodes = 0;
  uint64_t batch_entries = 0, inflight = 0, fd_cache = 0;
};

void read_options(const ConfigProxy& conf, MIMConfig* c, WideOptions* w)
{
  c->merge = conf.get_val<bool>("mimstore_merge");
  w->slots = conf.get_val<uint64_t>("mimstore_htmll_slots");
  w->blocks = conf.get_val<uint64_t>("mimstore_htmll_blocks");
  w->max_slots = conf.get_val<uint64_t>("mimstore_htmll_max_slots");
  w->max_blocks = conf.get_val<uint64_t>("mimstore_htmll_max_blocks");
  c->block_size = conf.get_val<Option::size_t>("mimstore_block_size");
  c->cache_max_bytes = conf.get_val<Option::size_t>("mimstore_cache_max_bytes");
  c->cache_index_max_bytes =
    conf.get_val<Option::size_t>("mimstore_cache_index_max_bytes");
  c->max_flush_interval = conf.get_val<double>("mimstore_max_flush_interval");
  c->journal_throughput =
    conf.get_val<Option::size_t>("mimstore_journal_throughput");
  w->replicas = conf.get_val<uint64_t>("mimstore_flush_replicas");
  w->nodes = conf.get_val<uint64_t>("mimstore_flush_nodes");
  c->flush_gap_fill = conf.get_val<Option::size_t>("mimstore_flush_gap_fill");
  c->flush_gap_read_disk = conf.get_val<bool>("mimstore_flush_gap_read_disk");
  c->flush_physical_order = conf.get_val<bool>("mimstore_flush_physical_order");

  c->journal_size_mb = conf.get_val<Option::size_t>("osd_journal_size");
  c->journal_dio = conf.get_val<bool>("mimstore_journal_dio");
  c->journal_aio = conf.get_val<bool>("mimstore_journal_aio");
  c->journal_block_size =
    conf.get_val<Option::size_t>("mimstore_journal_block_size");
  c->journal_max_batch_bytes =
    conf.get_val<Option::size_t>("mimstore_journal_max_batch_bytes");
  w->batch_entries =
    conf.get_val<uint64_t>("mimstore_journal_max_batch_entries");
  w->inflight = conf.get_val<uint64_t>("mimstore_journal_max_inflight");
  c->journal_pressure_ratio =
    conf.get_val<double>("mimstore_journal_pressure_ratio");
  c->backoff_low =
    conf.get_val<double>("mimstore_backoff_low");
  c->backoff_high =
    conf.get_val<double>("mimstore_backoff_high");
  c->backoff_max_delay =
    conf.get_val<double>("mimstore_backoff_max_delay");
  c->backoff_pace = conf.get_val<bool>("mimstore_backoff_pace");
  c->generation_journal_share =
    conf.get_val<double>("mimstore_generation_journal_share");
  c->journal_ignore_corruption =
    conf.get_val<bool>("mimstore_journal_ignore_corruption");
  c->journal_lost = conf.get_val<bool>("mimstore_journal_lost");

  c->wbthrottle_ios = conf.get_val<uint64_t>("mimstore_wbthrottle_ios");
  c->wbthrottle_bytes = conf.get_val<Option::size_t>("mimstore_wbthrottle_bytes");
  c->flush_writeback_window =
    conf.get_val<Option::size_t>("mimstore_flush_writeback_window");
  c->queue_max_ops = conf.get_val<uint64_t>("mimstore_queue_max_ops");
  c->queue_max_bytes = conf.get_val<Option::size_t>("mimstore_queue_max_bytes");
  c->sync_interval = conf.get_val<double>("mimstore_sync_interval");
  c->min_sync_interval = conf.get_val<double>("mimstore_min_sync_interval");
  c->db_dir = conf.get_val<std::string>("mimstore_db_dir");
  c->warn_journal_full_window =
    conf.get_val<double>("mimstore_warn_journal_full_window");
  c->warn_csum_error_window =
    conf.get_val<double>("mimstore_warn_csum_error_window");
  c->warn_writeback_stall_age =
    conf.get_val<double>("mimstore_warn_writeback_stall_age");
  c->warn_inodes_free_ratio =
    conf.get_val<double>("mimstore_warn_inodes_free_ratio");
  c->warn_db_free_ratio = conf.get_val<double>("mimstore_warn_db_free_ratio");
  c->rocksdb_options = conf.get_val<std::string>("mimstore_rocksdb_options");
  c->db_cache_bytes = conf.get_val<Option::size_t>("mimstore_db_cache_bytes");
  w->fd_cache = conf.get_val<uint64_t>("mimstore_fd_cache_size");
  c->fsck_on_mount = conf.get_val<bool>("mimstore_fsck_on_mount");
  c->fsck_on_mount_deep = conf.get_val<bool>("mimstore_fsck_on_mount_deep");
  c->debug_fault = conf.get_val<std::string>("mimstore_debug_fault");
  c->merge_data_in_journal = conf.get_val<bool>("mimstore_merge_data_in_journal");
  c->debug_verify_journal_data =
    conf.get_val<bool>("mimstore_debug_verify_journal_data");
  c->csum_verify = conf.get_val<bool>("mimstore_csum_verify");
  c->debug_verify_csums = conf.get_val<bool>("mimstore_debug_verify_csums");
}

/// Whether RocksDB option string `opts` ("k=v" items split by ',', ';' or
/// newlines, as RocksDBStore parses them) turns the WAL off.
bool disables_wal(const std::string& opts)
{
  size_t i = 0;
  while (i <= opts.size()) {
    size_t j = opts.find_first_of(",;\n", i);
    if (j == std::string::npos) {
      j = opts.size();
    }
    std::string item = opts.substr(i, j - i);
    size_t eq = item.find('=');
    auto trim = [](std::string s) {
      const char* ws = " \t\r";
      s.erase(0, s.find_first_not_of(ws));
      s.erase(s.find_last_not_of(ws) + 1);
      return s;
    };
    if (eq != std::string::npos && trim(item.substr(0, eq)) == "disableWAL") {
      // Off as RocksDBStore's string2bool reads it: "false" in any case,
      // or a number that is 0. Anything else is on, or refused there.
      std::string v = trim(item.substr(eq + 1));
      std::string lower = v;
      for (auto& ch : lower) {
        ch = std::tolower(static_cast<unsigned char>(ch));
      }
      const bool zero = !v.empty() && v.find_first_not_of('0') == std::string::npos;
      if (lower != "false" && !zero) {
        return true;
      }
    }
    i = j + 1;
  }
  return false;
}

/// The number of bad options, each described on a line of `err`.
int validate(const MIMConfig& c, const WideOptions& w, std::ostream& err)
{
  Checker ck{err};
  if (disables_wal(c.rocksdb_options)) {
    ck.fail("mimstore_rocksdb_options", c.rocksdb_options,
            "disableWAL makes RocksDB's synced writes (omap, xattrs, the "
            "store's replay records) not durable: remove it");
  }
  ck.range("mimstore_htmll_slots", w.slots, 1, 1u << 24);
  ck.range("mimstore_htmll_blocks", w.blocks, 1, 1u << 16);
  // 0 keeps the geometry fixed; otherwise at least the initial size.
  if (w.max_slots) {
    ck.range("mimstore_htmll_max_slots", w.max_slots, w.slots, 1u << 24);
  }
  if (w.max_blocks) {
    ck.range("mimstore_htmll_max_blocks", w.max_blocks, w.blocks, 1u << 16);
  }
  if (!is_pow2(c.block_size) || c.block_size < 4096 ||
      c.block_size > (1ull << 30)) {
    ck.fail("mimstore_block_size", std::to_string(c.block_size),
            "must be a power of two between 4096 and 1 GiB");
  }
  if (c.cache_max_bytes < c.block_size) {
    ck.fail("mimstore_cache_max_bytes", std::to_string(c.cache_max_bytes),
            "must be at least mimstore_block_size");
  }
  // 256 KiB: the default budget scaled to a 1 GiB journal as a 16 TB OSD
  // with a 160 GB partition has it is about 430 KiB (docs/benchmarking.md).
  if (c.cache_index_max_bytes != 0 && c.cache_index_max_bytes < (256u << 10)) {
    ck.fail("mimstore_cache_index_max_bytes",
            std::to_string(c.cache_index_max_bytes),
            "must be 0 (no budget) or at least 256 KiB");
  }
  ck.positive("mimstore_max_flush_interval", c.max_flush_interval);
  ck.range("mimstore_flush_replicas", w.replicas, 0, 1024);
  ck.range("mimstore_flush_nodes", w.nodes, 0, 1u << 20);
  ck.range("mimstore_flush_gap_fill", c.flush_gap_fill, 0, 64ull << 20);
  if (!is_pow2(c.journal_max_batch_bytes) ||
      c.journal_max_batch_bytes < 65536 ||
      c.journal_max_batch_bytes > (256ull << 20)) {
    ck.fail("mimstore_journal_max_batch_bytes",
            std::to_string(c.journal_max_batch_bytes),
            "must be a power of two between 64 KiB and 256 MiB");
  }
  if (c.journal_block_size &&
      (!is_pow2(c.journal_block_size) ||
       c.journal_block_size < mim::JOURNAL_MIN_BLOCK_SIZE ||
       c.journal_block_size > mim::JOURNAL_MAX_BLOCK_SIZE)) {
    ck.fail("mimstore_journal_block_size",
            std::to_string(c.journal_block_size),
            "must be 0 (the device's physical block size) or a power of two "
            "between 512 and 64 KiB");
  }
  ck.range("mimstore_journal_max_batch_entries", w.batch_entries, 1, 65536);
  ck.range("mimstore_journal_max_inflight", w.inflight, 1, 64);
  if (!(c.journal_pressure_ratio > 0.05 && c.journal_pressure_ratio < 0.95)) {
    ck.fail("mimstore_journal_pressure_ratio",
            std::to_string(c.journal_pressure_ratio),
            "must be between 0.05 and 0.95");
  }
  if (!(c.backoff_low > 0 && c.backoff_low < 1)) {
    ck.fail("mimstore_backoff_low",
            std::to_string(c.backoff_low),
            "must be between 0 and 1");
  }
  if (!(c.backoff_high > c.backoff_low &&
        c.backoff_high <= 1)) {
    ck.fail("mimstore_backoff_high",
            std::to_string(c.backoff_high),
            "must be above mimstore_backoff_low and at most 1");
  }
  if (!(c.generation_journal_share > 0 && c.generation_journal_share <= 1)) {
    ck.fail("mimstore_generation_journal_share",
            std::to_string(c.generation_journal_share),
            "must be above 0 and at most 1");
  }
  if (!(c.backoff_max_delay >= 0 &&
        c.backoff_max_delay <= 10)) {
    ck.fail("mimstore_backoff_max_delay",
            std::to_string(c.backoff_max_delay),
            "must be between 0 (off) and 10 seconds");
  }
  ck.range("mimstore_queue_max_ops", c.queue_max_ops, 1, 1u << 24);
  ck.range("mimstore_wbthrottle_ios", c.wbthrottle_ios, 1, 1u << 24);
  ck.range("mimstore_wbthrottle_bytes", c.wbthrottle_bytes, 1 << 20,
           64ull << 30);
  if (c.flush_writeback_window) {
    ck.range("mimstore_flush_writeback_window", c.flush_writeback_window,
             1 << 20, 64ull << 30);
  }
  if (c.queue_max_bytes < c.journal_max_batch_bytes) {
    ck.fail("mimstore_queue_max_bytes", std::to_string(c.queue_max_bytes),
            "must be at least mimstore_journal_max_batch_bytes");
  }
  ck.positive("mimstore_sync_interval", c.sync_interval);
  ck.positive("mimstore_min_sync_interval", c.min_sync_interval);
  if (std::isfinite(c.sync_interval) && std::isfinite(c.min_sync_interval) &&
      c.min_sync_interval > c.sync_interval) {
    ck.fail("mimstore_min_sync_interval", std::to_string(c.min_sync_interval),
            "must not exceed mimstore_sync_interval");
  }
  ck.range("mimstore_fd_cache_size", w.fd_cache, 16, 1u << 20);
  ck.positive("mimstore_warn_journal_full_window", c.warn_journal_full_window);
  ck.positive("mimstore_warn_csum_error_window", c.warn_csum_error_window);
  ck.positive("mimstore_warn_writeback_stall_age", c.warn_writeback_stall_age);
  for (auto [opt, v] : {std::pair{"mimstore_warn_inodes_free_ratio",
                                  c.warn_inodes_free_ratio},
                        std::pair{"mimstore_warn_db_free_ratio",
                                  c.warn_db_free_ratio}}) {
    if (!(v >= 0 && v < 1)) {
      ck.fail(opt, std::to_string(v), "must be at least 0 (off) and below 1");
    }
  }
  if (c.journal_path.empty()) {
    ck.fail("osd_journal", "\"\"",
            "mimstore needs a journal: set osd_journal to a block device "
            "(an NVMe partition) or a file");
  }
  return ck.bad;
}

}  // namespace

int MIMConfig::load(CephContext* cct, const std::string& journal_path,
                    MIMConfig* out, std::ostream& err)
{
  auto& conf = cct->_conf;
  MIMConfig c;
  WideOptions w;
  read_options(conf, &c, &w);
  c.journal_path = journal_path;
  if (validate(c, w, err)) {
    return -EINVAL;
  }

  c.htmll_slots = w.slots;
  c.htmll_blocks = w.blocks;
  c.htmll_max_slots = w.max_slots;
  c.htmll_max_blocks = w.max_blocks;
  c.journal_max_batch_entries = w.batch_entries;
  c.journal_max_inflight = w.inflight;
  c.fd_cache_size = w.fd_cache;
  // The store cannot see the OSD map: replicas default to the pool default
  // size, nodes to the replica count (then max(replicas, nodes) = replicas).
  c.flush_replicas = w.replicas ? w.replicas :
    std::max<uint64_t>(1, conf.get_val<uint64_t>("osd_pool_default_size"));
  c.flush_nodes = w.nodes ? w.nodes : c.flush_replicas;
  *out = c;
  return 0;
}

}  // namespace mimstore
