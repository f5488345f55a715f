#!/usr/bin/env bash
# Every crash-consistency fix of issue 11 (and later ones) taken out
# again, one at a time, with the tests that must then fail
# (qa/crash/without-fix.sh does each).
#
#   qa/crash/without-fix-all.sh [NAME...]     the named cases (default: all)
#   qa/crash/without-fix-all.sh --rotate N    N cases, a different set for
#                                             each commit (the test command's
#                                             normal mode)
#   qa/crash/without-fix-all.sh --check-edits every case's edit still applies
#                                             (each replace matches exactly
#                                             once); no build, seconds
#   qa/crash/without-fix-all.sh --list        the case names
#
# The whole set takes about 20 minutes (`qa/run-tests.sh --long` runs it);
# it needs the Ceph build, which is brought up to date once first. Cases
# whose tests exist only in a Reef build (REEF_ONLY) are left out of the
# set and of the rotation on another release, and said so; the test
# command's Reef step runs them.
# Exit status: 0 when every selected fix is caught by its tests.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
source "$REPO/cmake/common.sh"

# name | file | gtest filter | python edit of `s` (the file's text)
CASES=(
  "nobarrier|MIMCollOps.cc|*MergeCrash*:*MergeKeepsCachedWritesToDest*|s = s.replace('  _collection_barrier(cid, dest);\n', '')"
  "noinprogress|MIMCollOps.cc|*SplitCrash*|s = s.replace('  _set_collection_replay_guard(ac, cid, GuardState::IN_PROGRESS);\n  _set_collection_replay_guard(ac, dest, GuardState::IN_PROGRESS);\n  _debug_point(point);', '  _debug_point(point);')"
  "notombstone|ReplayGuards.cc|*MergeSourceNotRecreated*|s = s.replace('files->get_tombstone(cid, &g) == 0 && g >= ac.spos', 'false')"
  "noredo|MIMCollOps.cc|*RenameRedoesOmap*|s = s.replace('    if (dst == GuardVerdict::RESUME) {', '    if (false) {')"
  "nocloneenoent|MIMOps.cc|*CloneSourceRemovedLater*|s = s.replace('  if (r == -ENOENT && ac.replaying) {\n    // A clone source', '  if (false) {\n    // A clone source')"
  "nopressurebytes|MIMMergeControl.cc|*SmallTxnsDoNotStallJournal*|s = s.replace('    in.generation_journal_bytes = journal->used_since(active_gen_first_sn);', '    in.generation_journal_bytes = st.bytes + st.frozen_bytes;')"
  # 2026-11-29: the sn fence (mkjournal after a lost journal, a mount past
  # damage) and the replay guard of set_bits
  "nosnfence|MIMJournalTools.cc|*MkjournalAfterCrashStartsAboveAppliedSns*|s = s.replace('    start = std::max(start, sn_fence + 1);', '')"
  "nosnfencesalvage|MIMReplay.cc|*RefusesCorruptAcknowledgedEntry*|s = s.replace('std::max({replay_end, acked + 1, sn_fence + 1})', 'std::max({replay_end, acked + 1})')"
  "nosetbitsguard|MIMCollOps.cc|*SetBitsAfterMergeNotReplayedOverSplit*|s = s.replace('these would win.\n  if (!_should_apply(ac, cid, nullptr)) {\n    return 0;\n  }', 'these would win.')"
  # the merge tombstone trimmed at the checkpoint, not at the first live
  # sn (the start of the checkpoint's batch, where replay starts)
  "notombstonetrim|MIMFlush.cc|*MergeTombstoneKeptWhileItsBatchIsLive*|s = s.replace('colls.trim_tombstones(files.get(), journal->first_live_sn());', 'colls.trim_tombstones(files.get(), cp);')"
  # not a crash fix: an explicit flush request replaced, while a sweep
  # ran, by a writer's wait for cache room (write_back_all never returned;
  # MIMStoreMergeStop.ExplicitFlushIsNotLostToAWriterWaitingForRoom in
  # the Ceph tier); the rule is core/merge_rules' now, its table row catches it
  "noexplicitsticky|core/merge_rules.cc|MergeRules.DecideFreeze|s = s.replace(' &&\n        in.refreeze != FlushTrigger::EXPLICIT) {', ') {')"
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
  "nowrittenbackforget|WrittenBack.cc|*MIMStoreWrittenBackReplay*|s = s.replace('    if (!there) {\n      gone_names.push_back(name);', '    if (false) {\n      gone_names.push_back(name);').replace('  if (!loaded.erase(name)) {', '  if (true) {')"
  "nodurableforget|WrittenBack.cc|*ForgottenRecordStaysForgotten*|s = s.replace('    if (!there) {\n      gone_names.push_back(name);', '    if (false) {\n      gone_names.push_back(name);').replace('  return db->submit_transaction_sync(t);\n}\n\nstd::vector', '  return 0;\n}\n\nstd::vector')"
  # not a crash fix: mkfs wrote its type over another store's directory
  "nomkfstype|MIMMount.cc|*MkfsLeavesAnotherStores*|s = s.replace('&type) == 0 && !type.empty() && type != ', '&type) == 0 && false && type != ')"
  # 2026-12-04, issue 61: a WRAP whose batch did not land is the end of the
  # journal (a keeping mount erased it); the search beyond the end skips
  # the live range; the checkpoint window follows the journal's size
  "nowrapend|core/journal_scanner.cc|JournalScan.WrapWhoseBatchDidNotLandIsTheEnd:JournalScan.WrapAtTheCheckpointWhoseBatchDidNotLand|s = s.replace('  if (wrap_off) {\n    // The WRAP block', '  if (false) {\n    // The WRAP block')"
  "nolivesearch|core/journal_scanner.cc|JournalScan.LookalikeEntryInsideALivePayloadIsIgnored|s = s.replace('q == h.start_off ? n\n                     : (h.start_off + g.area_len() - q) % g.area_len() / bs;', 'n;')"
  # an op's take of cached bytes whose write back failed released them
  # (the clone or write went on without them); an open racing a split's
  # move or a remove cached the inode moved away; disableWAL accepted
  "notakeabort|MIMOps.cc|*TakeFault.CloneAfterATolerantWriteBackError*:*TakeFault.DirectWriteAfterATolerantWriteBackError*|s = s.replace('      _write_back_failed(\"a write back before an op on the object\", cname,\n                         fname, r);', '      durability.release_after_sync(st.sns);\n      return;')"
  "nofdepoch|ObjectFiles.cc|*OpenRacingAMoveOrRemoveCachesNoStaleFd*|s = s.replace('  if (forget_epoch != epoch) {\n    return;\n  }\n', '')"
  "nowalcheck|MIMConfig.cc|MIMStoreBadConfig.EachBadOptionIsRefused|s = s.replace('  if (disables_wal(c.rocksdb_options)) {', '  if (false) {')"
  # mkjournal replaced a missing journal that held the merge window;
  # flush_journal() on a mounted store mounted it again
  "nojournalempty|MIMJournalTools.cc|*MkjournalRefusesAMissingJournalThatWasNotEmpty*|s = s.replace('  if (conf.journal_lost) {\n    derr << \"mkjournal: the last', '  if (true) {\n    derr << \"mkjournal: the last')"
  "nomountedflush|MIMJournalTools.cc|*FlushJournalOnAMountedStoreLeavesItEmpty*|s = s.replace('  if (mounted) {\n    // A running OSD', '  if (false) {\n    // A running OSD')"
  "nojournalwindow|core/durability.cc|Durability.SyncRecordsAnSnBeyondTheDefaultWindow|s = s.replace('tracker.reset(first, CheckpointTracker::window_for_journal(max_live_sns));', 'tracker.reset(first);')"
  # 2026-12-07, mimstore's own omap layer (format 3): a guard's stamp never
  # moves back (patch 0011's rule, now in OmapStore::sync), a new block of
  # nids is durable before its first nid is used (its own batch), and a
  # conversion from DBObjectMap starts from nothing (an earlier one that
  # stopped left records)
  "noomapmonotone|OmapStore.cc|*ReplayedGuardKeepsNewerOmapPosition*:MIMStoreOmap.StampSkipsReplayedOpsAndNeverGoesBack|s = s.replace('  if (r == 0 && spos > rec.stamp) {', '  if (r == 0) {')"
  "nonidbump|OmapStore.cc|MIMStoreOmap.NidCounterIsDurableBeforeItsNids|s = s.replace('      int r = db->submit_transaction(bump);', '      t->set(STATE_PREFIX, NID_MAX_KEY, bl);\n      int r = 0;')"
  "nomigrateclean|OmapMigrate.cc|MIMStoreFormat.ConvertsDBObjectMapOmap|s = s.replace('  r = fresh.remove_all();\n  if (r == 0) {\n    r = fresh.init();\n  }', '  r = fresh.init();')"
  # 2026-12-07, issue 66, data checksums (format 4): a partial overwrite
  # checks the chunk's old bytes (else it blesses rot), a write back
  # records the states of what it wrote, a remove drops the states
  "nocsumverify|Checksums.cc|*MIMStoreCsum.PartialOverwriteOfRottenChunkMarksItBad/*|s = s.replace('    if (!matches(o->second.first, o->second.second, img.data(), cs)) {', '    if (false) {')"
  "nocsumwriteback|MIMFlush.cc|*MIMStoreCsum.StatesMatchTheFileAfterEveryOp/on*|s = s.replace('  return csums->change(oid, f, changed, old_size, Checksums::Kind::DATA,\n                       true, [&] { return _write_runs(f, st, of, buf); });', '  return _write_runs(f, st, of, buf);')"
  "nocsumclear|OmapStore.cc|*MIMStoreCsum.RemoveDropsTheStates/*|s = s.replace('    drop_nid(t, rec.nid, true, true, true);\n    t->rmkey(RECORD_PREFIX, object_key(oid));', '    drop_nid(t, rec.nid, true, true, false);\n    t->rmkey(RECORD_PREFIX, object_key(oid));')"
  # a replayed clone takes its states from its file (its omap clone may be
  # skipped on the target's stamp, a replayed earlier write's states kept)
  "nocsumclonereplay|MIMOps.cc|*MIMStoreCsum.ReplayedCloneOverStampedOmapTakesTheFilesStates/off|s = s.replace('    r = csums->rebuild(newoid, nf);\n    if (r < 0) {\n      return r;\n    }\n  }\n  _set_replay_guard(ac, nf, newoid, GuardState::DONE);', '  }\n  _set_replay_guard(ac, nf, newoid, GuardState::DONE);')"
  # reads check the chunks they return (issue 66 step 4): rot gives -EIO
  "nocsumreadverify|MIMRead.cc|*MIMStoreCsum.ReadOfRottenChunkFailsWithEIO/off|s = s.replace('    r = !check ? 0 : csums->verify_read(', '    r = true ? 0 : csums->verify_read(')"
  # clone_range checks its source: a copy of rot is BAD, not a new crc
  "nocsumclonesource|MIMOps.cc|*MIMStoreCsum.CloneRangeOfRotMarksTheCopyBad/off|s = s.replace('    r = ac.replaying || !conf.csum_verify\n      ? 0 : csums->check_source', '    r = true\n      ? 0 : csums->check_source')"
)
# The conversion of a format 1/2 store out of DBObjectMap: built and tested
# only where Ceph still has DBObjectMap (Reef).
REEF_ONLY=(nomigrateclean)

mode=named
want=()
rotate=0
while [ $# -gt 0 ]; do
  case $1 in
    --rotate) mode=rotate; rotate=$2; shift ;;
    --check-edits) mode=check ;;
    --list) mode=list ;;
    -*) echo "unknown argument $1" >&2; exit 2 ;;
    *) want+=("$1") ;;
  esac
  shift
done

names=()
for c in "${CASES[@]}"; do
  names+=("${c%%|*}")
done
if [ "$mode" = list ]; then
  printf '%s\n' "${names[@]}"
  exit 0
fi
for n in "${want[@]}"; do
  [[ " ${names[*]} " == *" $n "* ]] || { echo "no case named $n" >&2; exit 2; }
done
# On another release the Reef-only cases cannot run: asked for by name, an
# error; otherwise left out, and said so (the edits are still checked).
if [ "$MIMSTORE_CEPH_RELEASE" != reef ] && [ "$mode" != check ]; then
  for n in "${want[@]}"; do
    [[ " ${REEF_ONLY[*]} " != *" $n "* ]] ||
      { echo "case $n needs a Reef build (MIMSTORE_CEPH_RELEASE=reef)" >&2; exit 2; }
  done
  kept=()
  for n in "${names[@]}"; do
    [[ " ${REEF_ONLY[*]} " == *" $n "* ]] || kept+=("$n")
  done
  echo "left out on $MIMSTORE_CEPH_RELEASE (Reef only; the test command's Reef step runs them): ${REEF_ONLY[*]}"
  names=("${kept[@]}")
  ((${#want[@]})) || [ "$mode" = rotate ] || want=("${names[@]}")
fi
if [ "$mode" = rotate ]; then
  # Consecutive cases from an offset the commit picks: over commits every
  # case comes round.
  head=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo 0)
  start=$(( 16#${head:0:8} % ${#names[@]} ))
  for ((i = 0; i < rotate && i < ${#names[@]}; i++)); do
    want+=("${names[$(( (start + i) % ${#names[@]} ))]}")
  done
fi

failed=()
ran=0
need_ceph=0
for c in "${CASES[@]}"; do
  IFS='|' read -r name file _ <<<"$c"
  if { ((${#want[@]} == 0)) || [[ " ${want[*]} " == *" $name "* ]]; } &&
     [[ $file != core/* ]]; then
    need_ceph=1
  fi
done
if [ "$mode" != check ] && [ "$need_ceph" = 1 ]; then
  echo "bringing the Ceph build up to date (ceph_test_mimstore)"
  "$REPO/cmake/ceph-build.sh" ceph_test_mimstore >/dev/null || {
    echo "the Ceph build failed" >&2; exit 1; }
  export WITHOUT_FIX_BUILT=1
fi
for c in "${CASES[@]}"; do
  IFS='|' read -r name file filter edit <<<"$c"
  if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
    continue
  fi
  ran=$((ran + 1))
  if [ "$mode" = check ]; then
    if /usr/bin/python3 "$HERE/without_fix_edit.py" \
         "$REPO/src/os/mimstore/$file" /dev/null "$edit"; then
      echo "$name: the edit applies"
    else
      failed+=("$name")
    fi
  elif ! FILE=$file "$HERE/without-fix.sh" "$name" "$filter" "$edit"; then
    failed+=("$name")
  fi
done
if ((${#failed[@]})); then
  echo "NOT caught (or the edit no longer applies): ${failed[*]}" >&2
  exit 1
fi
[ "$ran" -gt 0 ] || { echo "no case ran" >&2; exit 1; }
if [ "$mode" = check ]; then
  echo "all $ran edits apply, each replace exactly once"
else
  echo "every fix ($ran cases) is caught by its tests"
fi
