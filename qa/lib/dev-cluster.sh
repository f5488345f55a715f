# shellcheck shell=bash
# qa/lib/dev-cluster.sh - a throwaway vstart cluster of mimstore OSDs for the
# test tier (smoke test, kill -9 cycles). Journals and data are files in a
# scratch directory. Sourced after cmake/common.sh.
#
#   dev_cluster_start OSDS MERGE [extra vstart -o options...]
#                       DEV_STORE=bluestore: BlueStore OSDs instead (for
#                       tests that compare; MERGE is then ignored);
#                       DEV_VSTART_ARGS (an array): more vstart.sh flags,
#                       e.g. --mimstore-data-dirs and --mimstore-journal-devs
#   dev_cluster_stop
#   dev_pg_num POOL N   change pg_num (the manager splits or merges PGs)
#                       and wait until it is done and every PG is active+clean
#   dev_osd_kill N (SIGKILL) / dev_osd_stop N (SIGTERM) / dev_osd_start N / dev_osds_up
#   $CEPH (the build's ceph CLI), $DEV_DEST (the cluster's directory)

# shellcheck source=ports.sh
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
# shellcheck source=clients.sh
source "$(dirname "${BASH_SOURCE[0]}")/clients.sh"

BIN=$CEPH_BUILD_DIR/bin
DEV_DEST=
DEV_KEEP=${DEV_KEEP:-0}

dev_cluster_env() {
  export VSTART_DEST=$DEV_DEST
  export CEPH_CONF=$DEV_DEST/ceph.conf
  export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH  # Debian's python3 for bin/ceph
  # rbd and fio's rbd engine: Debian's on Reef, the build's on Tentacle
  # (clients.sh); Debian's must not see the build's libraries.
  clients_for build "$CEPH_BUILD_DIR" "$CEPH_SOURCE_DIR" || die "no client tools for the cluster"
  local reef_env="env LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib PYTHONPATH=$CEPH_SOURCE_DIR/src/pybind:$CEPH_BUILD_DIR/lib/cython_modules/lib.3:$CEPH_SOURCE_DIR/src/python-common"
  CEPH="$reef_env $BIN/ceph -c $CEPH_CONF"
  RADOS="$reef_env $BIN/rados -c $CEPH_CONF"
}

dev_cluster_start() {
  local osds=$1 merge=$2; shift 2
  [ -x "$BIN/ceph-osd" ] || die "no Ceph build at $CEPH_BUILD_DIR"
  local c
  for c in fio rbd; do
    command -v $c >/dev/null || die "$c is missing: run cmake/install-deps.sh ceph"
  done
  DEV_DEST=$(mktemp -d /var/tmp/mimstore-dev.XXXXXX)
  dev_cluster_env
  # The autoscaler off: pg_num changes only when a test asks for one. No
  # .mgr pool: the modules' sqlite store needs libcephsqlite, which the lean
  # build leaves out (devicehealth would fail with "no such vfs: ceph").
  local opts=(-o "osd journal size = 512" -o "mimstore merge = $merge"
              -o "mimstore journal throughput = 1000000000"
              -o "osd pool default size = 2"
              -o "osd pool default pg autoscale mode = off"
              -o "mgr pool = false")
  for c in "$@"; do opts+=(-o "$c"); done
  # A manager, as in every real cluster: it reports PG states and carries
  # out pg_num changes (PG split and merge). DEV_MGR=0 leaves it out.
  local mgr=${DEV_MGR:-1}
  [ "$mgr" = 0 ] || [ -x "$BIN/ceph-mgr" ] ||
    die "no ceph-mgr in $CEPH_BUILD_DIR (rebuild with cmake/ceph-build.sh)"
  local store=${DEV_STORE:-mimstore}
  case $store in
    mimstore|bluestore) ;;
    *) die "DEV_STORE=$store: mimstore or bluestore" ;;
  esac
  local port
  port=$(free_port_pair) || die "no free TCP port pair for the monitor"
  log "starting vstart: 1 mon, $mgr mgr, $osds $store OSDs (merge $merge) in $DEV_DEST"
  (cd "$CEPH_BUILD_DIR" &&
   MON=1 OSD=$osds MGR=$mgr MDS=0 RGW=0 NFS=0 CEPH_PORT=$port \
     "$CEPH_SOURCE_DIR/src/vstart.sh" -n -x --$store --without-dashboard \
     --nolockdep "${opts[@]}" ${DEV_VSTART_ARGS[@]+"${DEV_VSTART_ARGS[@]}"} \
     >"$DEV_DEST/vstart.log" 2>&1) ||
    { tail -40 "$DEV_DEST/vstart.log" >&2; die "vstart failed"; }
  dev_wait_up "$osds" 120 || die "not all $osds OSDs came up"
}

dev_osds_up() {
  $CEPH osd stat -f json 2>/dev/null | /usr/bin/python3 -c \
    'import json,sys; print(json.load(sys.stdin)["num_up_osds"])' 2>/dev/null || echo 0
}

dev_wait_up() {  # dev_wait_up N TIMEOUT
  local want=$1 timeout=$2 t=0
  while [ "$(dev_osds_up)" != "$want" ]; do
    [ $t -ge "$timeout" ] && return 1
    sleep 2; t=$((t + 2))
  done
}

dev_pool_create() {  # dev_pool_create NAME PGS SIZE
  $CEPH osd pool create "$1" "$2" "$2" replicated >/dev/null
  if [ "$3" = 1 ]; then
    $CEPH config set global mon_allow_pool_size_one true >/dev/null
    $CEPH osd pool set "$1" size 1 --yes-i-really-mean-it >/dev/null
  else
    $CEPH osd pool set "$1" size "$3" >/dev/null
  fi
  $CEPH osd pool application enable "$1" rbd >/dev/null
  # usable = a small object can be written (PG states: dev_pool_pg_state)
  for _ in $(seq 60); do
    timeout 10 $RADOS -p "$1" put probe /etc/hostname 2>/dev/null && return 0
    sleep 2
  done
  die "pool $1 did not become usable"
}

# pg_num, pgp_num and the target of POOL, and whether every PG of it is
# active+clean: "PG_NUM PGP_NUM TARGET CLEAN(0|1)".
dev_pool_pg_state() {
  local j p
  j=$($CEPH osd pool ls detail -f json 2>/dev/null) || return 1
  p=$($CEPH pg ls-by-pool "$1" -f json 2>/dev/null) || return 1
  # The PG list on stdin: with dozens of PGs it outgrows one argument
  # (128 KiB, MAX_ARG_STRLEN).
  /usr/bin/python3 -c '
import json, sys
pools = json.loads(sys.argv[1]); pgs = json.load(sys.stdin)
pool = [x for x in pools if x["pool_name"] == sys.argv[2]][0]
stats = pgs["pg_stats"] if isinstance(pgs, dict) else pgs
clean = len(stats) == pool["pg_num"] and all(
    s["state"] == "active+clean" for s in stats)
print(pool["pg_num"], pool["pg_placement_num"], pool["pg_num_target"],
      int(clean))' "$j" "$1" <<<"$p"
}

dev_pg_num() {  # dev_pg_num POOL N [TIMEOUT]
  local pool=$1 n=$2 timeout=${3:-600} t=0 st=""
  $CEPH osd pool set "$pool" pg_num "$n" >/dev/null
  while :; do
    st=$(dev_pool_pg_state "$pool" || true)
    [ "$st" = "$n $n $n 1" ] && return 0
    [ $t -ge "$timeout" ] &&
      die "pg_num of $pool did not reach $n in $timeout s (pg_num pgp_num target clean: $st)"
    sleep 3; t=$((t + 3))
  done
}

dev_osd_pid() { cat "$DEV_DEST/out/osd.$1.pid" 2>/dev/null; }

dev_osd_kill() {  # SIGKILL, like a crash
  local pid; pid=$(dev_osd_pid "$1")
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
}

dev_osd_stop() {  # SIGTERM, as systemd stops an OSD; returns once it is gone
  local pid; pid=$(dev_osd_pid "$1")
  [ -n "$pid" ] || die "no pid file for osd.$1"
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
}

dev_osd_start() {
  (cd "$CEPH_BUILD_DIR" && LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib "$BIN/ceph-osd" -i "$1" -c "$CEPH_CONF") \
    >>"$DEV_DEST/osd-restart.log" 2>&1
}

dev_cluster_stop() {
  local rc=${1:-0} p
  [ -n "$DEV_DEST" ] || return 0
  for p in "$DEV_DEST"/out/*.pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
  done
  sleep 2
  for p in "$DEV_DEST"/out/*.pid; do
    [ -f "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null || true
  done
  if [ "$rc" != 0 ]; then
    echo "---- failed; last lines of osd.0's log:" >&2
    tail -n 30 "$DEV_DEST"/out/osd.0.log >&2 2>/dev/null || true
    local keep=$MIMSTORE_WORKDIR/dev-failed
    rm -rf "$keep"; mkdir -p "$keep"
    cp -a "$DEV_DEST"/out "$DEV_DEST"/*.log "$keep"/ 2>/dev/null || true
    echo "logs kept in $keep" >&2
  fi
  [ "$DEV_KEEP" = 1 ] || rm -rf "$DEV_DEST"
  DEV_DEST=
}
