#!/usr/bin/env bash
# A replica that missed a copy_from must not keep the target's old omap.
#
# ceph_test_rados under kill -9 thrashing read back omap keys that had been
# removed (issue 11, finding 6). The cause is in the OSD, not in a store:
# copy_from removes the target object and writes the copy in its place,
# but when the source has no omap, PrimaryLogPG::finish_copyfrom clears
# FLAG_OMAP without marking the omap dirty in the log entry's clean
# regions. A replica that was down during the copy_from is then recovered
# by a partial push that carries the data and xattrs but no omap
# (omap_complete=true, object_exist=1), so it keeps the old keys. They stay
# hidden while FLAG_OMAP is off; the next omap write sets it again and, once
# that replica serves reads, the stale keys come back. Fixed by
# cmake/patches/0007-osd-copy-from-marks-omap-dirty.patch.
#
# Deterministic steps on a 2-OSD cluster, pool size 2, min_size 1:
#   1. A with omap keys old0..old4; B with data only;
#   2. kill -9 A's replica; `rados cp B A` (copy_from); restart the replica
#      and wait for recovery;
#   3. set omap key "new" on A; kill -9 A's primary, so the replica serves;
#   4. A's omap keys must be exactly {new}.
#
#   qa/crash/copyfrom-omap.sh [mimstore|bluestore]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

export DEV_STORE=${1:-mimstore}
trap 'dev_cluster_stop $?' EXIT
trap 'exit 130' INT TERM

POOL=cf
dev_cluster_start 2 true "osd pool default min size = 1"
dev_pool_create $POOL 1 2
$CEPH osd pool set $POOL min_size 1 >/dev/null

# until CMD succeeds (reads and writes block while the PG peers)
retry() {
  local i
  for i in $(seq 60); do
    timeout 20 "$@" && return 0
    sleep 2
  done
  die "gave up: $*"
}

wait_clean() {
  local t=0 st
  while :; do
    st=$(dev_pool_pg_state $POOL || true)
    [ "$st" = "1 1 1 1" ] && return 0
    [ $t -ge 300 ] && die "pool $POOL not active+clean after 300 s: $st"
    sleep 2; t=$((t + 2))
  done
}

kill_osd() {  # kill -9 and have the monitor mark it down at once
  dev_osd_kill "$1"
  $CEPH osd down "osd.$1" >/dev/null 2>&1 || true
}

retry $RADOS -p $POOL put A /etc/hostname
for i in 0 1 2 3 4; do
  retry $RADOS -p $POOL setomapval A old$i v$i
done
retry $RADOS -p $POOL put B /etc/os-release
wait_clean

read -r primary replica < <($CEPH osd map $POOL A -f json |
  /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); a=m["acting"]; print(m["acting_primary"], [o for o in a if o != m["acting_primary"]][0])')
log "A: primary osd.$primary, replica osd.$replica"

kill_osd "$replica"
retry $RADOS -p $POOL cp B A
log "copied B over A while osd.$replica was down"
dev_osd_start "$replica"
dev_wait_up 2 120 || die "osd.$replica did not come back"
wait_clean

retry $RADOS -p $POOL setomapval A new v
kill_osd "$primary"
keys=$(retry $RADOS -p $POOL listomapkeys A | sort | tr '\n' ' ')
log "A's omap keys read from osd.$replica: ${keys:-<none>}"
[ "$keys" = "new " ] ||
  die "$DEV_STORE: stale omap after copy_from and recovery (want: new)"
log "$DEV_STORE: copy_from then recovery leaves A with exactly its new omap: PASSED"
