// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
#include "MIMAdmin.h"

#include <cstring>
#include <string>

#include "common/Formatter.h"

#include "MIMJournal.h"
#include "MIMStore.h"

using namespace mimstore;

// tcmalloc's C API, declared weak: binaries built without tcmalloc still
// link, and the dump leaves the allocator's table out.
extern "C" void MallocExtension_GetStats(char* buffer, int length)
  __attribute__((weak));

int AdminHook::call(std::string_view command, const cmdmap_t& cmdmap,
                    const ceph::bufferlist& inbl, ceph::Formatter* f,
                    std::ostream& errss, ceph::bufferlist& out)
{
  if (command == "dump_mimstore_htmll") {
    store->dump_htmll(f);
    return 0;
  }
  if (command == "mimstore flush") {
    int r = store->write_back_all();
    f->open_object_section("mimstore_flush");
    f->dump_int("result", r);
    f->close_section();
    return r;
  }
  errss << "unknown command " << command;
  return -ENOSYS;
}

void MIMStore::_register_admin()
{
  AdminSocket* admin = cct->get_admin_socket();
  admin_hook = std::make_unique<AdminHook>(this);
  admin->register_command("dump_mimstore_htmll", admin_hook.get(),
                          "dump the MIM merge cache (HTMLL) summary");
  admin->register_command("mimstore flush", admin_hook.get(),
                          "flush the MIM merge cache and checkpoint");
}

void MIMStore::_unregister_admin()
{
  if (admin_hook) {
    cct->get_admin_socket()->unregister_commands(admin_hook.get());
    admin_hook.reset();
  }
}

void MIMStore::dump_htmll(ceph::Formatter* f)
{
  auto s = htmll->stats();
  f->open_object_section("htmll");
  f->dump_bool("merge", conf.merge);
  f->dump_unsigned("slots", conf.htmll_slots);
  f->dump_unsigned("blocks_per_slot", conf.htmll_blocks);
  f->dump_unsigned("max_slots", htmll->config().slot_cap());
  f->dump_unsigned("max_blocks_per_slot", htmll->config().block_cap());
  f->dump_unsigned("table_slots", s.table_slots);
  f->dump_unsigned("positions", s.positions);
  f->dump_unsigned("table_grows", s.table_grows);
  f->dump_unsigned("position_grows", s.position_grows);
  f->dump_unsigned("block_size", conf.block_size);
  f->dump_unsigned("slots_used", s.slots_used);
  f->dump_unsigned("blocks_used", s.blocks_used);
  f->dump_unsigned("bytes", s.bytes);
  f->dump_unsigned("extents", s.extents);
  f->dump_unsigned("frozen_blocks", s.frozen_blocks);
  f->dump_unsigned("frozen_bytes", s.frozen_bytes);
  f->dump_unsigned("index_bytes", s.index_bytes);
  f->dump_unsigned("frozen_index_bytes", s.frozen_index_bytes);
  f->dump_unsigned("index_max_bytes", conf.cache_index_max_bytes);
  f->dump_unsigned("inserts", s.inserts);
  f->dump_unsigned("merged", s.merged);
  f->dump_unsigned("direct_no_slot", s.direct_no_slot);
  f->dump_unsigned("direct_no_block", s.direct_no_block);
  f->dump_unsigned("direct_beyond_block", s.direct_beyond_block);
  f->dump_unsigned("direct_memory_cap", s.direct_memory_cap);
  f->dump_unsigned("sp_thresh_blocks", policy->sp_thresh_blocks());
  f->dump_float("time_thresh_s", policy->time_thresh());
  f->dump_unsigned("checkpoint", durability.checkpoint());
  f->dump_unsigned("checkpoint_pending", durability.checkpoint_pending());
  f->dump_unsigned("applied_sn", sequencer.applied_sn());
  f->dump_unsigned("sns_held", durability.sns_held());
  f->dump_unsigned("sns_window", durability.sns_window());
  f->dump_unsigned("parts_waiting_for_sync", durability.parts_unsynced());
  f->dump_unsigned("apply_queue", sequencer.queue_length());
  f->dump_unsigned("commit_waiters", sequencer.waiters());
  f->dump_unsigned("journal_used", journal->used());
  f->dump_unsigned("journal_block_size", journal->block_size());
  f->dump_unsigned("journal_live_entries", journal->live_entries());
  f->dump_unsigned("journal_index_bytes", journal->index_bytes());
  // RocksDB's memory (block cache, memtables): it fills with the ops done
  // up to its configured bounds whatever the merge cache does, so the
  // harness subtracts it when it compares the stores' memory.
  if (db) {
    f->dump_int("db_block_cache_bytes", db->get_cache_usage());
    uint64_t mt = 0;
    if (db->get_property("rocksdb.cur-size-all-mem-tables", &mt)) {
      f->dump_unsigned("db_memtable_bytes", mt);
    }
  }
  // The allocator's own account, by size class (gperftools prints its
  // detailed table when given at least 10,000 bytes): which sizes hold
  // the free lists that RSS counts and "heap stats" only sums.
  if (MallocExtension_GetStats) {
    std::string buf(1 << 17, '\0');
    MallocExtension_GetStats(buf.data(), int(buf.size()));
    buf.resize(strnlen(buf.data(), buf.size()));
    f->dump_string("tcmalloc_stats", buf);
  }
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
