#!/usr/bin/env bash
# Every crash-consistency fix of issue 11 (and later ones) taken out
# again, one at a time, with the tests that must then fail
# (qa/crash/without-fix.sh does each).
# Run after moving code: an edit that no longer finds its text fails here,
# so the list follows the code. About 10 minutes; needs the Ceph build.
#
#   qa/crash/without-fix-all.sh [NAME...]     (default: all)
#
# Exit status: 0 when every named fix is caught by its tests.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

# name | file | gtest filter | python edit of `s` (the file's text)
CASES=(
  "nobarrier|MIMCollOps.cc|*MergeCrash*:*MergeKeepsCachedWritesToDest*|s = s.replace('_collection_barrier(cid, dest)', '0')"
  "noinprogress|MIMCollOps.cc|*SplitCrash*|s = s.replace('  _set_collection_replay_guard(ac, cid, GuardState::IN_PROGRESS);\n  _set_collection_replay_guard(ac, dest, GuardState::IN_PROGRESS);\n  _debug_point(point);', '  _debug_point(point);')"
  "notombstone|ReplayGuards.cc|*MergeSourceNotRecreated*|s = s.replace('files->get_tombstone(cid, &g) == 0 && g >= ac.spos', 'false')"
  "noredo|MIMCollOps.cc|*RenameRedoesOmap*|s = s.replace('    if (dst == GuardVerdict::RESUME) {', '    if (false) {')"
  "nocloneenoent|MIMOps.cc|*CloneSourceRemovedLater*|s = s.replace('  if (r == -ENOENT && ac.replaying) {\n    // A clone source', '  if (false) {\n    // A clone source')"
  "nopressurebytes|MIMMergeControl.cc|*SmallTxnsDoNotStallJournal*|s = s.replace('journal->used_since(active_gen_first_sn) < journal->size() / 4', 'st.bytes + st.frozen_bytes < journal->size() / 4')"
  # 2026-11-29: the sn fence (mkjournal after a lost journal, a mount past
  # damage) and the replay guard of set_bits
  "nosnfence|MIMJournalTools.cc|*MkjournalAfterCrashStartsAboveAppliedSns*|s = s.replace('    start = std::max(start, sn_fence + 1);', '')"
  "nosnfencesalvage|MIMReplay.cc|*RefusesCorruptAcknowledgedEntry*|s = s.replace('std::max({replay_end, acked + 1, sn_fence + 1})', 'std::max({replay_end, acked + 1})')"
  "nosetbitsguard|MIMCollOps.cc|*SetBitsAfterMergeNotReplayedOverSplit*|s = s.replace('these would win.\n  if (!_should_apply(ac, cid, nullptr)) {\n    return 0;\n  }', 'these would win.')"
  # the merge tombstone trimmed at the checkpoint, not at the first live
  # sn (the start of the checkpoint's batch, where replay starts)
  "notombstonetrim|MIMFlush.cc|*MergeTombstoneKeptWhileItsBatchIsLive*|s = s.replace('colls.trim_tombstones(files.get(), journal->first_live_sn());', 'colls.trim_tombstones(files.get(), cp);')"
  # not a crash fix: an explicit flush request replaced, while a sweep
  # ran, by a writer's wait for cache room (write_back_all never returned)
  "noexplicitsticky|MIMMergeControl.cc|*ExplicitFlushIsNotLostToAWriterWaitingForRoom*|s = s.replace(' &&\n        refreeze != mim::FlushTrigger::EXPLICIT) {', ') {')"
  # not a crash fix: flush_commit's waiters sent to the finisher, not
  # after on_commit on the collection's commit queue (a PG's IntervalFlush
  # could run before the last transaction's commit callback)
  "nocommitqueueflush|MIMStore.cc|*FlushCommitFollowsOnCommit*|s = s.replace('  sequencer.take_commit_waiters(txc->sn, &done);', '  std::list<Context*> w;\n  sequencer.take_commit_waiters(txc->sn, &w);\n  finisher.queue(w);')"
  # not a crash fix: mkjournal replaced any journal it could not open
  # (another store's, a damaged header), acknowledged writes and all
  "nomkjournalheader|MIMJournalTools.cc|*MkjournalLeaves*|s = s.replace('      if (has_header) {', '      if (false) {')"
  # not a crash fix: a missing journal path made a file through a dangling
  # link, or in /dev (devtmpfs: the journal in memory)
  "nodanglingjournal|JournalDevice.cc|*ThroughADanglingLink*|s = s.replace('    flags |= O_EXCL;\n  }\n  r = io_', '  }\n  r = io_')"
  "nodevjournalfile|JournalDevice.cc|*JournalFileUnderDev*|s = s.replace('  if (ec || p.compare(0, dev.size(), dev) != 0 ||', '  if (true ||')"
  # a written-back record of a later incarnation skipped a remove of an
  # earlier one that replay made again (PG deleted, re-made, deleted;
  # directly or by a split); then the same after a mount killed in replay
  # (the record forgotten in memory only, read again)
  "nowrittenbackforget|WrittenBack.cc|*MIMStoreWrittenBackReplay*|s = s.replace('for (auto p = loaded.begin(); p != loaded.end();)', 'for (auto p = loaded.end(); p != loaded.end();)').replace('  if (!loaded.erase(name)) {', '  if (true) {')"
  "nodurableforget|WrittenBack.cc|*ForgottenRecordStaysForgotten*|s = s.replace('for (auto p = loaded.begin(); p != loaded.end();)', 'for (auto p = loaded.end(); p != loaded.end();)').replace('  return db->submit_transaction_sync(t);\n}\n\nstd::vector', '  return 0;\n}\n\nstd::vector')"
  # not a crash fix: mkfs wrote its type over another store's directory
  "nomkfstype|MIMMount.cc|*MkfsLeavesAnotherStores*|s = s.replace('&type) == 0 && !type.empty() && type != ', '&type) == 0 && false && type != ')"
)

want=("$@")
failed=()
for c in "${CASES[@]}"; do
  IFS='|' read -r name file filter edit <<<"$c"
  if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
    continue
  fi
  if ! FILE=$file "$HERE/without-fix.sh" "$name" "$filter" "$edit"; then
    failed+=("$name")
  fi
done
if ((${#failed[@]})); then
  echo "NOT caught (or the edit no longer applies): ${failed[*]}" >&2
  exit 1
fi
echo "every fix is caught by its tests"
