#!/usr/bin/env bash
# mimstore's test command (the README's; .ci/run calls it).
#
#   qa/run-tests.sh            both tiers
#   qa/run-tests.sh --quick    Ceph-free tier only (seconds)
#   qa/run-tests.sh --long     also the long variants (more crash points,
#                              crash loops, kill -9 cycles); the ObjectStore
#                              suite runs whole, three times, in every mode
#
# Tiers:
#   Ceph-free  the MIM core library and its tests (gtest; all of them again
#              under ThreadSanitizer, and under ASan+UBSan in a Debug
#              build), the benchmark harness's python
#              tests. Always runs; needs only Debian's compilers and gtest.
#   Ceph       runs whenever a Ceph build is present in $MIMSTORE_WORKDIR:
#              brings it up to date with this checkout (patch series and
#              overlay; an incremental build), the lock check over the store
#              (clang, Ceph's include flags), ceph_test_mimstore,
#              ceph_test_objectstore on mimstore (merge on and off), the
#              crash tests and a vstart smoke test. When there is no build it
#              prints "ceph tier: NOT RUN (<reason>)"; the run then FAILS if
#              the store, the patch series or the Ceph tier's tests differ
#              from those of the last Ceph-tier pass on this machine
#              ($MIMSTORE_WORKDIR/ceph-tier-passed), and its status is the
#              Ceph-free tier's otherwise (a change outside them).
#
# Every step has a time limit (a step past it is killed and FAILS), and the
# summary gives each step's time; the table is kept in
# $MIMSTORE_WORKDIR/test-times/. A gtest step fails on a SKIPPED test not on
# its allowlist, on fewer tests than its minimum, and (the ObjectStore
# suite) on an instantiation other than mimstore's; a check fails when a
# test of ceph_test_mimstore is run by no step, or by two.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"

MODE=normal
for a in "$@"; do
  case $a in
    --quick) MODE=quick ;;
    --long) MODE=long ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $a" >&2; exit 2 ;;
  esac
done

PY=/usr/bin/python3
RESULTS=()
FAILED=0
note() { printf '\n==== %s\n' "$*"; }
TIMES=()
record() {  # record NAME STATUS [SECONDS]
  RESULTS+=("$1: $2${3:+ (${3} s)}")
  [ -z "${3:-}" ] || TIMES+=("$(printf '%6d s  %-8s %s' "$3" "$2" "$1")")
  [ "$2" = PASSED ] || FAILED=1
}
# (gtest steps run without --gtest_brief: brief output counts skips but does
# not name them, so gtest_check.py could not tell an allowed one.)
# Each step's output also goes to a log, so that a failed step's reasons can
# be printed again after the summary: CI may keep only the end of the output.
STEP_LOGS=$(mktemp -d /var/tmp/mimstore-steplogs.XXXXXX)
FAILED_LOGS=()
STEP_LIMIT_DEFAULT=1800
STEP_PID=
# A step runs in its own process group: when this script is stopped, so is
# the step under way (its ninja, its daemons), not left running.
stop_step() {
  [ -n "$STEP_PID" ] && kill -TERM -- -"$STEP_PID" 2>/dev/null
  return 0
}
trap 'stop_step; exit 130' INT TERM
run_step() {  # run_step [--limit SECONDS] NAME cmd...
  local limit=$STEP_LIMIT_DEFAULT
  if [ "$1" = --limit ]; then
    limit=$2; shift 2
  fi
  local name=$1; shift
  note "$name"
  local start=$SECONDS rc log fd teepid pid timed_out=0 status
  log="$STEP_LOGS/$(printf '%02d' ${#RESULTS[@]}).log"
  exec {fd}> >(tee "$log")
  teepid=$!
  # In its own process group, so that a step past its limit is killed
  # whole (a hung ceph_test_rados, fio, vstart daemons it started).
  set -m
  "$@" >&"$fd" 2>&1 &
  pid=$!
  STEP_PID=$pid
  set +m
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - start > limit)); then
      timed_out=1
      echo "run-tests: $name passed its limit of $limit s: killed" >&"$fd"
      kill -TERM -- -"$pid" 2>/dev/null
      sleep 10
      kill -KILL -- -"$pid" 2>/dev/null
      break
    fi
    sleep 1
  done
  wait "$pid"
  rc=$?
  STEP_PID=
  exec {fd}>&-
  wait "$teepid"  # tee has written everything
  status=PASSED
  if [ "$timed_out" = 1 ]; then
    status=TIMEOUT
  elif [ "$rc" != 0 ]; then
    status=FAILED
  fi
  record "$name" "$status" "$((SECONDS - start))"
  [ "$status" = PASSED ] || FAILED_LOGS+=("$name|$log")
  echo "---- $name: $((SECONDS - start)) s ($status)"
}
# After the summary: for each failed step, its failure lines (gtest's, our
# scripts' "FAIL"/"lost"/"error") and its last lines.
why_failed() {
  local entry name log
  for entry in "${FAILED_LOGS[@]}"; do
    name=${entry%%|*}
    log=${entry#*|}
    note "why \"$name\" failed (full log: $log)"
    grep -nE '\[  FAILED  \]|Failure$|^.*\.(cc|h):[0-9]+: (Failure|error)|Expected|Which is|Value of|actual|FAIL|[Ee]rror|lost: [1-9]' \
      "$log" | grep -v 'ERROR_LOG' | head -60
    echo "-- last 25 lines:"
    tail -n 25 "$log"
  done
}

# ---------------------------------------------------------------------------
# Ceph-free tier

# One core build directory per checkout: CMake refuses a build directory
# configured from another source tree, and a shared one would let a stale
# test binary from another checkout stand in for this one's.
CORE_BUILD=${MIMSTORE_CORE_BUILD:-$MIMSTORE_WORKDIR/core-build/$(printf '%s' "$REPO" | sha1sum | cut -c1-12)}
# Steps run in subshells: a marker tells the tests the build of this run
# succeeded.
CORE_BUILT=$STEP_LOGS/core-built
core_build() {
  cmake -S "$REPO" -B "$CORE_BUILD/release" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    ninja -C "$CORE_BUILD/release" mimcore_tests && touch "$CORE_BUILT"
}
core_tests() {
  # Never run a binary left over from an earlier build.
  [ -f "$CORE_BUILT" ] || { echo "not run: the core build failed"; return 1; }
  $PY "$REPO/qa/gtest_check.py" run --min 250 \
    --allow-skip 'IoEnvTest.DirectOpenRefusedIsExplained=needs a filesystem without O_DIRECT; tmpfs has it from Linux 6.6' \
    -- "$CORE_BUILD/release/mimcore_tests"
}
core_tsan() {
  # Every core unit under ThreadSanitizer (the threaded ones: HTMLL,
  # CheckpointTracker, Durability, JournalPacer, the I/O seam), not only
  # the concurrency tests: a unit test that starts threads counts too.
  cmake -S "$REPO" -B "$CORE_BUILD/tsan" -G Ninja -DMIMSTORE_TSAN=ON >/dev/null &&
    ninja -C "$CORE_BUILD/tsan" mimcore_tests &&
    TSAN_OPTIONS="halt_on_error=1" $PY "$REPO/qa/gtest_check.py" run --min 250 \
      --allow-skip 'IoEnvTest.DirectOpenRefusedIsExplained=needs a filesystem without O_DIRECT; tmpfs has it from Linux 6.6' \
      --allow-skip 'Htmll.MemoryGrowsWithBytesNotSlotsTimesBlocks=RSS bound: sanitizer shadow memory inflates RSS' \
      --allow-skip 'Htmll.HeapPerJournalOnlyWrite=needs glibc malloc (mallinfo2), not the sanitizer allocator' \
      -- "$CORE_BUILD/tsan/mimcore_tests"
}
core_asan() {
  # A Debug build (asserts on: every other build has NDEBUG) under
  # AddressSanitizer and UBSan, halting on the first report.
  cmake -S "$REPO" -B "$CORE_BUILD/asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DMIMSTORE_ASAN=ON >/dev/null &&
    ninja -C "$CORE_BUILD/asan" mimcore_tests &&
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 $PY "$REPO/qa/gtest_check.py" run --min 250 \
      --allow-skip 'IoEnvTest.DirectOpenRefusedIsExplained=needs a filesystem without O_DIRECT; tmpfs has it from Linux 6.6' \
      --allow-skip 'Htmll.EndFlushForgetsWhatWasNotTaken=release builds only: end_flush() asserts in a Debug build' \
      --allow-skip 'Htmll.MemoryGrowsWithBytesNotSlotsTimesBlocks=RSS bound: sanitizer shadow memory inflates RSS' \
      --allow-skip 'Htmll.HeapPerJournalOnlyWrite=needs glibc malloc (mallinfo2), not the sanitizer allocator' \
      -- "$CORE_BUILD/asan/mimcore_tests"
}
diskemu_tests() {
  # The HDD emulator (qa/diskemu): its model on a virtual clock, then the
  # FUSE daemon under a loop device with XFS and a power cut (test-fuse.sh
  # says SKIP where there is no /dev/fuse or no root).
  cmake -S "$REPO/qa/diskemu" -B "$CORE_BUILD/diskemu" -G Ninja >/dev/null &&
    ninja -C "$CORE_BUILD/diskemu" &&
    "$CORE_BUILD/diskemu/diskemu_tests" --gtest_brief=1 || return 1
  # A skipped test is not a passed one.
  local out
  out=$("$REPO/qa/diskemu/test-fuse.sh" "$CORE_BUILD/diskemu" 2>&1)
  local rc=$?
  echo "$out"
  [ "$rc" = 0 ] && ! grep -q '^SKIP:' <<<"$out"
}
lock_annotations() {
  "$REPO/qa/lock-annotations.sh"
}
py_tests() {
  (cd "$REPO/qa" && $PY -m unittest -q test_hddmodel test_analyze test_sampler test_sweep_report test_report test_fsworkload test_rbdfs test_osdmem test_sums_check test_bench_plan test_host_reclaim test_machine test_options test_osdwait test_structure test_buildstamp test_sweep_estimate test_without_fix test_gtest_check)
}

# A fresh Debian 12 machine: install what the Ceph-free tier needs.
"$REPO/cmake/install-deps.sh" core || { echo "cannot install the Ceph-free tier's packages"; exit 1; }
run_step "core build" core_build
run_step "core tests (gtest)" core_tests
run_step "core tests under ThreadSanitizer (every unit, threaded ones included)" core_tsan
run_step "core tests, Debug build (asserts on) under AddressSanitizer and UBSan" core_asan
run_step "lock annotations (clang -Wthread-safety over core/)" lock_annotations
run_step "HDD emulator tests (model, FUSE + loop + XFS, power cut)" diskemu_tests
run_step "harness python tests" py_tests
run_step "without-fix cases: every edit still applies, each replace exactly once" \
  "$REPO/qa/crash/without-fix-all.sh" --check-edits
CEPH_FREE_FAILED=$FAILED

# ---------------------------------------------------------------------------
# Ceph tier

# What the Ceph tier tests: the store and its core, the patch series and
# the build, the Ceph tier's scripts. Its fingerprint is the git tree ids of
# these paths at HEAD ("dirty" with uncommitted changes there, which are
# never recorded); a Ceph-tier pass records it, and a run without the tier
# fails unless the fingerprint is one that passed.
CEPH_TIER_PATHS=(src cmake qa/crash qa/lib qa/run-tests.sh qa/vstart-smoke.sh qa/vstart-health.sh
                 qa/objectstore-tool.sh qa/ceph-volume.sh
                 qa/fio-objectstore.sh qa/objectstore-filter.sh qa/gtest_check.py
                 qa/lock-annotations.sh)
CEPH_TIER_RECORD=$MIMSTORE_WORKDIR/ceph-tier-passed
ceph_tier_fingerprint() {
  if ! git -C "$REPO" rev-parse HEAD >/dev/null 2>&1; then
    echo "no-git"
    return
  fi
  if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no -- "${CEPH_TIER_PATHS[@]}")" ]; then
    echo "dirty"
    return
  fi
  local p
  for p in "${CEPH_TIER_PATHS[@]}"; do
    printf '%s %s\n' "$p" "$(git -C "$REPO" rev-parse "HEAD:$p" 2>/dev/null || echo none)"
  done | sha1sum | cut -c1-40
}
CEPH_TIER_FP=$(ceph_tier_fingerprint)

# The second target's build (Reef), in its own work directory.
REEF_WORKDIR=${MIMSTORE_REEF_WORKDIR:-/var/tmp/mimstore}
reef_line=""
# Reef's paths from cmake/common.sh, none of this release's.
reef_env=(env MIMSTORE_CEPH_RELEASE=reef MIMSTORE_WORKDIR="$REEF_WORKDIR"
          CEPH_BUILD_DIR= CEPH_SOURCE_DIR= CCACHE_DIR=)
reef_target() {
  "${reef_env[@]}" "$REPO/cmake/ceph-build.sh" ceph-osd ceph_test_mimstore || return 1
  $PY "$REPO/qa/gtest_check.py" run --min 3 -- \
    "$REEF_WORKDIR/build/bin/ceph_test_mimstore" \
    --gtest_filter='MIMStoreFormat.*:MIMStoreJournal.RefusesNewerStoreFormat:MIMStoreOmap.*' \
    --log-file="$TESTDIR/reef.log" || return 1
  "${reef_env[@]}" "$REPO/qa/crash/without-fix-all.sh" nomigrateclean
}

ceph_tier_reason=""
if [ "$MODE" = quick ]; then
  ceph_tier_reason="--quick"
elif [ ! -x "$CEPH_BUILD_DIR/bin/ceph-osd" ]; then
  ceph_tier_reason="no Ceph build at $CEPH_BUILD_DIR (make one with cmake/ceph-build.sh; the first build takes 1.5 to 2.5 hours on 2 cores, docs/build.md)"
fi

FAILED=0
if [ -z "$ceph_tier_reason" ]; then
  BIN=$CEPH_BUILD_DIR/bin
  # Up to date with this checkout: patches, overlay, incremental build.
  run_step "ceph build (incremental, patch series + overlay)" \
    "$REPO/cmake/ceph-build.sh"
  [ "$MIMSTORE_CEPH_RELEASE" = reef ] ||
    reef_line="reef target: NOT RUN (the $MIMSTORE_CEPH_RELEASE build failed first)"
  if [ "$FAILED" = 0 ]; then
    TESTDIR=$(mktemp -d /var/tmp/mimstore-tests.XXXXXX)
    trap 'stop_step; rm -rf "$TESTDIR"' EXIT
    export MIMSTORE_TEST_DIR=$TESTDIR
    run_step "lock annotations over the store (clang -Wthread-safety, Ceph's include flags)" \
      "$REPO/qa/lock-annotations.sh" --store "$CEPH_BUILD_DIR"
    # ceph_test_mimstore's tests, each run by exactly one of these steps
    # (checked below): the ops crash tests, the crash loop, and the rest.
    OPS_FILTER='*OpsCrash*:*SplitCrash*:*MergeCrash*'
    LOOP_FILTER='Merge/MIMStoreCrash.*'
    MAIN_FILTER="-$OPS_FILTER:$LOOP_FILTER"
    # Skips allowed, with why (any other SKIPPED fails its step).
    MIMSTORE_SKIPS=(
      --allow-skip 'MIMStoreFaultEnv.FullDataFilesystem=needs root to mount a small tmpfs'
      --allow-skip 'MIMStoreFaultEnv.JournalNotWritable=needs chattr +i on the test directory'
    )
    run_step --limit 300 "every test of ceph_test_mimstore is run by exactly one step" \
      $PY "$REPO/qa/gtest_check.py" select --binary "$BIN/ceph_test_mimstore" \
      --step "main=$MAIN_FILTER" --step "ops crash=$OPS_FILTER" \
      --step "crash loop=$LOOP_FILTER"
    run_step --limit 2400 "ceph_test_mimstore (replay, journal, differential, merge, config, faults, tools)" \
      $PY "$REPO/qa/gtest_check.py" run --min 110 "${MIMSTORE_SKIPS[@]}" -- \
      "$BIN/ceph_test_mimstore" --gtest_filter="$MAIN_FILTER" \
      --log-file="$TESTDIR/ceph_test_mimstore.log"
    # The ObjectStore suite on mimstore (its instantiations found by
    # name), merge on and off. With merging on, every cached extent is also
    # checked against its copy in the journal.
    objectstore_suite() {
      local merge=$1 jdata=${2:-false} filter
      filter=$("$REPO/qa/objectstore-filter.sh" "$MODE" "$BIN/ceph_test_objectstore") || return 1
      (cd "$TESTDIR" && $PY "$REPO/qa/gtest_check.py" run --min 120 --param mimstore \
         --allow-skip 'ObjectStore/StoreTestSpecificAUSize.ZeroBlockDetection*=BlueStore zero-block detection: GTEST_SKIP on every other store' \
         --allow-skip 'ObjectStore/StoreTest.BlueFS_truncate_remove_race/*=BlueFS (Tentacle): GTEST_SKIP on every other store' -- \
         "$BIN/ceph_test_objectstore" \
         --gtest_filter="$filter" --mimstore_merge="$merge" \
         --mimstore_merge_data_in_journal="$jdata" \
         --mimstore_debug_verify_journal_data="$merge" \
         --mimstore_debug_verify_csums=true \
         --mimstore_journal_throughput=1000000000 \
         --log-file="$TESTDIR/objectstore-$merge-$jdata.log" --debug-mimstore=5)
    }
    run_step "ceph_test_objectstore on mimstore, merge on, data in memory (the RAM window)" objectstore_suite true
    run_step "ceph_test_objectstore on mimstore, merge on, data in the journal (the default)" \
      objectstore_suite true true
    run_step "ceph_test_objectstore on mimstore, merge off" objectstore_suite false
    run_step "ops crash tests (death inside split, merge, rename; clone replay)" \
      $PY "$REPO/qa/gtest_check.py" run --min 45 -- \
      "$BIN/ceph_test_mimstore" --gtest_filter="$OPS_FILTER" \
      --log-file="$TESTDIR/ops_crash.log"
    run_step "crash loop (power loss at walking I/O points; merge off, on, on with data in a 512 B journal, on with 8 collections; cuts inside a journal wrap)" \
      "$REPO/qa/crash/crash-loop.sh" "$MODE"
    # The same with XFS's metadata log modelled: 60 points here, 200 for
    # each of three seeds in --long.
    if [ "$MODE" = long ]; then
      for seed in 1 2 3; do
        run_step "crash loop, XFS metadata model, seed $seed" \
          "$REPO/qa/crash/crash-loop.sh" --seed $seed --meta xfs
      done
    else
      run_step "crash loop, XFS metadata model (60 points)" \
        "$REPO/qa/crash/crash-loop.sh" --points 60 --meta xfs
    fi
    run_step "vstart smoke test (1 mon, 1 mgr, 3 mimstore OSDs, pg_num up and down)" \
      "$REPO/qa/vstart-smoke.sh"
    run_step "operator's view (vstart, 1 OSD on loop devices): osd metadata and device ls list the data, journal and DB devices; osd df the omap bytes; each MIMSTORE_* health warning raised by its cause and cleared (mon patch 0013)" \
      "$REPO/qa/vstart-health.sh"
    run_step "ceph-objectstore-tool (vstart, a BlueStore and a mimstore OSD): a PG exported from BlueStore, imported into mimstore and back, reads back identical (data, xattrs, omap, a clone); list, info, fsck, fsck-deep; refusals; repair of each fsck error class" \
      "$REPO/qa/objectstore-tool.sh"
    run_step "ceph-volume (patches 0014-0015, loop devices): raw prepare --mimstore, raw list, raw activate; the OSD up and serving; its HDD replaced (destroy, wipe, prepare --osd-id); ceph-volume's raw and lvm unit tests (lvm --mimstore: unit tests only, no device-mapper here)" \
      "$REPO/qa/ceph-volume.sh"
    run_step "copy_from then recovery keeps no stale omap (OSD patch 0007)" \
      "$REPO/qa/crash/copyfrom-omap.sh" mimstore
    run_step "a PG without replicas whose read lease lapsed recovers (OSD patch 0010)" \
      "$REPO/qa/crash/laggy-pg.sh"
    run_step "journal device replaced: --flush-journal, --dump-journal, --mkjournal, fio verify (vstart, merge on)" \
      "$REPO/qa/crash/flush-journal.sh"
    run_step "fio objectstore engine: 4 KiB random writes into mimstore, no cluster" \
      "$REPO/qa/fio-objectstore.sh" mimstore --dir "$TESTDIR/fio" \
      --journal-dir "$TESTDIR/fio-journal" --runtime 5 --ramp 0
    # Whole-stack power cuts: HDD and NVMe emulated with write caches,
    # fio rbd verify; and the harness's own check, a journal device that
    # ignores FLUSH, which must be caught.
    power_cut() {
      MIMSTORE_BUILD_DIR=$CEPH_BUILD_DIR MIMSTORE_SRC_DIR=$CEPH_SOURCE_DIR \
        "$REPO/qa/crash/power-cut.sh" --workdir "$TESTDIR/power-cut" "$@"
    }
    if [ "$MODE" = long ]; then
      for p in mimstore mimstore-ram mimstore-nomerge bluestore-hybrid; do
        run_step "whole-stack power cuts, $p, 100 cuts" power_cut --profile $p --cuts 100
      done
      run_step "whole-stack power cuts: a journal device that ignores FLUSH is caught" \
        power_cut --unsafe --cuts 20
    else
      run_step "whole-stack power cuts (emulated HDD + NVMe, fio verify), mimstore, 4 cuts" \
        power_cut --cuts 4
      run_step "whole-stack power cuts, merged bytes in RAM (profile mimstore-ram), 2 cuts" \
        power_cut --profile mimstore-ram --cuts 2
      run_step "whole-stack power cuts: a journal device that ignores FLUSH is caught" \
        power_cut --unsafe --cuts 10
    fi
    if [ "$MODE" = long ]; then
      run_step --limit 3600 "without-fix cases, all (each fix taken out must fail its tests)" \
        "$REPO/qa/crash/without-fix-all.sh"
    else
      run_step --limit 1200 "without-fix cases, three of them (a different three for each commit)" \
        "$REPO/qa/crash/without-fix-all.sh" --rotate 3
    fi
    if [ "$MODE" = long ]; then
      run_step "kill -9 under load (vstart, fio verify), merge on" \
        "$REPO/qa/crash/kill9-cycles.sh" --cycles 20 --merge true
      run_step "kill -9 under load (vstart, fio verify), merge on, merged bytes in RAM" \
        "$REPO/qa/crash/kill9-cycles.sh" --cycles 20 --merge true --ram-window
      run_step "kill -9 under load (vstart, fio verify), merge off" \
        "$REPO/qa/crash/kill9-cycles.sh" --cycles 20 --merge false
      for size in 1 2; do
        for merge in true false; do
          run_step "ceph_test_rados, OSDs killed with -9, pool size $size, merge $merge, 20 min" \
            "$REPO/qa/crash/rados-thrash.sh" --size $size --merge $merge \
            --minutes 20
        done
      done
      run_step "ceph_test_rados, OSDs killed with -9 and pg_num changes, 10 min" \
        "$REPO/qa/crash/rados-thrash.sh" --size 2 --merge true \
        --minutes 10 --pg-changes
    else
      run_step "kill -9 under load (vstart, fio verify), 5 cycles" \
        "$REPO/qa/crash/kill9-cycles.sh" --cycles 5 --merge true
      # No replica to repair a loss: only the killed OSD's replay can.
      run_step "kill -9 under load (vstart, fio verify), pool size 1, 3 cycles" \
        "$REPO/qa/crash/kill9-cycles.sh" --cycles 3 --merge true --pool-size 1
      run_step "ceph_test_rados, OSDs killed with -9 (short)" \
        "$REPO/qa/crash/rados-thrash.sh" --size 2 --merge true --ops 1500
    fi
    # Reef, the second target (issue 67): the store built against it, and
    # what only a Reef build can test, the conversion of a format 1/2 store
    # out of DBObjectMap (gone in Tentacle), its without-fix case included.
    # Runs when a Reef build exists; its line in the summary says which. (A
    # REEF_WORKDIR that is this release's fails in ceph-build.sh, which
    # refuses a build directory of another tree.)
    if [ "$MIMSTORE_CEPH_RELEASE" != reef ]; then
      if [ -x "$REEF_WORKDIR/build/bin/ceph_test_mimstore" ]; then
        run_step --limit 1800 "Reef 18.2.x, the second target: the store and its tests built against it; the DBObjectMap conversion tests and their without-fix case" \
          reef_target
        reef_line="reef target: ${RESULTS[${#RESULTS[@]}-1]##*: }"
      else
        reef_line="reef target: NOT RUN (no Reef build at $REEF_WORKDIR/build; MIMSTORE_CEPH_RELEASE=reef cmake/ceph-build.sh makes one)"
      fi
    fi
  fi
fi

# ---------------------------------------------------------------------------
why_failed
[ "${#FAILED_LOGS[@]}" = 0 ] && rm -rf "$STEP_LOGS"
note "summary"
for r in "${RESULTS[@]}"; do
  echo "  $r"
done
if [ "$CEPH_FREE_FAILED" = 0 ]; then
  echo "ceph-free tier: PASSED"
else
  echo "ceph-free tier: FAILED"
fi
# The per-step times, kept with the run.
times_dir=$MIMSTORE_WORKDIR/test-times
mkdir -p "$times_dir" 2>/dev/null &&
  { echo "# qa/run-tests.sh $MODE at $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null), $(date '+%F %T %z'), total $SECONDS s"
    printf '%s\n' "${TIMES[@]}"; } >"$times_dir/$(date +%Y%m%d-%H%M%S)-$MODE.txt"
note "step times (total $SECONDS s)"
printf '%s\n' "${TIMES[@]}"
if [ -n "$ceph_tier_reason" ]; then
  echo "ceph tier: NOT RUN ($ceph_tier_reason)"
  if [ "$MODE" != quick ] && ! grep -qx "$CEPH_TIER_FP" "$CEPH_TIER_RECORD" 2>/dev/null; then
    echo "ceph tier: REQUIRED: the store, the patch series or the Ceph tier's tests ($CEPH_TIER_FP) have not passed the Ceph tier on this machine ($CEPH_TIER_RECORD); build Ceph (qa/setup.sh) and run the tests again"
    exit 1
  fi
  exit "$CEPH_FREE_FAILED"
fi
[ -z "$reef_line" ] || echo "$reef_line"
if [ "$FAILED" = 0 ]; then
  echo "ceph tier: PASSED"
  # Recorded as a pass of everything the fingerprint covers only when the
  # Reef target (cmake/patches, the conversion) was tested too.
  case $CEPH_TIER_FP in
    dirty|no-git) ;;
    *) if [ -z "$reef_line" ] || [[ $reef_line == "reef target: PASSED"* ]]; then
         grep -qx "$CEPH_TIER_FP" "$CEPH_TIER_RECORD" 2>/dev/null ||
           echo "$CEPH_TIER_FP" >>"$CEPH_TIER_RECORD"
       fi ;;
  esac
else
  echo "ceph tier: FAILED"
fi
[ "$CEPH_FREE_FAILED" = 0 ] && [ "$FAILED" = 0 ]
