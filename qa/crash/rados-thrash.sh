#!/usr/bin/env bash
# Ceph's own randomized RADOS workload (ceph_test_rados: writes, appends,
# deletes, omap and xattr set/remove, snapshots, rollback, copy_from) on a
# vstart cluster of 3 mimstore OSDs, while a random OSD is killed with -9
# and restarted every 10-20 s; optionally pg_num is raised and lowered
# during the run, so the manager splits and merges PGs under load and
# across kills. ceph_test_rados checks every read against its model: any
# lost or stale write, omap key or xattr stops it with an error.
#
#   qa/crash/rados-thrash.sh [--merge true|false] [--size 1|2]
#                            [--ops N] [--minutes M] [--pg-changes]
#                            [--debug]
#
# --ops: operations of ceph_test_rados (default 3000); --minutes: keep
# running rounds of --ops until M minutes have passed (default: one round).
# --debug: OSD logs at debug mimstore 15 and debug osd 10 (every store op,
# replay decision, peering and recovery step), to find the cause of a failure.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

MERGE=true SIZE=2 OPS=3000 MINUTES=0 PGCHANGES=0
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --merge) MERGE=$2; shift ;;
    --size) SIZE=$2; shift ;;
    --ops) OPS=$2; shift ;;
    --minutes) MINUTES=$2; shift ;;
    --pg-changes) PGCHANGES=1 ;;
    --debug) EXTRA=("debug mimstore = 15" "debug osd = 10") ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BIN/ceph_test_rados" ] || die "no $BIN/ceph_test_rados (cmake/ceph-build.sh builds it)"

THRASH_PID=
stop_all() {
  local rc=$1
  [ -n "$THRASH_PID" ] && kill "$THRASH_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  dev_cluster_stop "$rc"
}
trap 'stop_all $?' EXIT
trap 'exit 130' INT TERM

POOL=thrash
# min_size 1: with pool size 2 a PG stays writable while one OSD is down.
dev_cluster_start 3 "$MERGE" "osd pool default min size = 1" "${EXTRA[@]}"
dev_pool_create $POOL 8 "$SIZE"
$CEPH osd pool set $POOL min_size 1 >/dev/null
log "3 OSDs, pool $POOL size $SIZE, merge $MERGE"

# The thrasher: every 10-20 s kill -9 a random OSD, restart it after 2-5 s.
# With --pg-changes, pg_num also moves between 8 and 32 (the manager does
# the split or merge step by step, across the kills).
thrash() {
  local kills=0 osd pg=8
  while :; do
    sleep $((10 + RANDOM % 11))
    osd=$((RANDOM % 3))
    dev_osd_kill $osd
    kills=$((kills + 1))
    echo "thrash: kill -9 osd.$osd (#$kills)"
    sleep $((2 + RANDOM % 4))
    # (not under set -e: a start that fails is said, and the check after
    # the workload finds the OSD down)
    dev_osd_start $osd || echo "thrash: osd.$osd failed to start"
    if [ "$PGCHANGES" = 1 ] && [ $((kills % 3)) = 0 ]; then
      pg=$([ $pg = 8 ] && echo 32 || echo 8)
      echo "thrash: pg_num -> $pg"
      $CEPH osd pool set $POOL pg_num $pg >/dev/null 2>&1 || true
    fi
  done
}
(set +e; thrash) >"$DEV_DEST/thrash.log" 2>&1 &
THRASH_PID=$!

round=0 total_ops=0 start=$SECONDS
while :; do
  round=$((round + 1))
  log "round $round: ceph_test_rados, $OPS operations"
  if ! env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph_test_rados" \
       --pool $POOL --max-ops "$OPS" --objects 50 \
       --max-in-flight 16 --size 4000000 --min-stride-size 400000 \
       --max-stride-size 800000 --max-seconds 0 \
       --op read 100 --op write 50 --op write_excl 50 --op append 30 \
       --op delete 10 --op snap_create 10 --op snap_remove 10 \
       --op rollback 10 --op setattr 25 --op rmattr 25 --op copy_from 5 \
       >"$DEV_DEST/test_rados.$round.log" 2>&1; then
    tail -n 30 "$DEV_DEST/test_rados.$round.log" >&2
    cat "$DEV_DEST/thrash.log" >&2
    die "ceph_test_rados failed in round $round (log above)"
  fi
  total_ops=$((total_ops + OPS))
  kill -0 "$THRASH_PID" 2>/dev/null ||
    { cat "$DEV_DEST/thrash.log" >&2; die "the thrasher died in round $round"; }
  [ $((SECONDS - start)) -ge $((MINUTES * 60)) ] && break
done
kills=$(grep -c 'kill -9' "$DEV_DEST/thrash.log" || true)
# The thrash must have thrashed, and left every OSD up and every PG clean:
# with min_size 1, ceph_test_rados passes with an OSD down.
kill "$THRASH_PID" 2>/dev/null || true
wait "$THRASH_PID" 2>/dev/null || true
THRASH_PID=
[ "$kills" -ge 1 ] || die "the thrasher killed no OSD: nothing was tested"
sleep 6  # a restart the thrasher had begun
for o in 0 1 2; do
  pid=$(dev_osd_pid $o)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    log "osd.$o is not running after the thrash: starting it"
    dev_osd_start $o
  fi
done
dev_wait_up 3 180 || die "not all 3 OSDs up after the thrash"
clean=0
for _ in $(seq 1 120); do
  # (pg_num pgp_num pg_num_target clean)
  if st=$(dev_pool_pg_state $POOL) && [ "${st##* }" = 1 ]; then
    clean=1
    break
  fi
  sleep 2
done
[ "$clean" = 1 ] || die "pool $POOL's PGs not all active+clean 240 s after the thrash (pg_num pgp_num target clean: ${st:-no answer})"
pgs=$(grep -c 'pg_num ->' "$DEV_DEST/thrash.log" || true)
log "ceph_test_rados passed: $round rounds, $total_ops operations in $((SECONDS - start)) s, $kills OSD kills, $pgs pg_num changes, 0 errors"
