// -*- mode:C++; tab-width:8; c-basic-offset:2; indent-tabs-mode:t -*-
// vim: ts=8 sw=2 smarttab
/*
 * mimstore's admin socket commands (ceph daemon osd.N ...):
 *   dump_mimstore_htmll  the merge cache, thresholds, checkpoint, queues
 *   mimstore flush       freeze, write back and checkpoint everything
 */
#pragma once

#include "common/admin_socket.h"

namespace mimstore {

class MIMStore;

/// Admin socket commands of one store instance.
class AdminHook : public AdminSocketHook {
 public:
  explicit AdminHook(MIMStore* s) : store(s) {}
  int call(std::string_view command, const cmdmap_t& cmdmap,
           const ceph::bufferlist& inbl, ceph::Formatter* f,
           std::ostream& errss, ceph::bufferlist& out) override;

 private:
  MIMStore* store;
};

}  // namespace mimstore
