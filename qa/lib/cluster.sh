# shellcheck shell=bash
# qa/lib/cluster.sh - start and stop a benchmark cluster for one store profile.
# Sourced after qa/lib/common.sh and qa/lib/testbed.sh (uses TB_* devices).
#
# A profile is vstart-configs/<name>.conf: "#% key = value" lines tell the
# harness how to build the cluster, the other non-comment lines are ceph.conf
# options for it:
#   #% kind        = vstart | pacific   (Reef build via vstart.sh, or Debian's Pacific)
#   #% store       = mimstore | bluestore | filestore
#   #% vstart_args = extra vstart.sh flags (kind = vstart)
#   #% wal         = yes                (needs a separate NVMe loop for block.wal)
#   #% hdd         = xfs | raw          (XFS-formatted and mounted HDD, default; or raw for BlueStore)
#   #% description = one line for the report
# For kind=vstart every option line becomes a vstart "-o 'key = value'" (vstart
# writes those into every section, [global] [client] [osd] [mon] ...); for
# kind=pacific the fragment is appended to the generated ceph.conf as is.

# shellcheck source=ports.sh
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
# shellcheck source=clients.sh
source "$(dirname "${BASH_SOURCE[0]}")/clients.sh"

VSTART_CONFIGS=${VSTART_CONFIGS:-$REPO_DIR/vstart-configs}
CLUSTER_POOL=${CLUSTER_POOL:-rbd}

profile_file() { echo "$VSTART_CONFIGS/$1.conf"; }

# profile_meta PROFILE KEY: value of "#% KEY = value" (empty if absent).
profile_meta() {
  local f; f=$(profile_file "$1")
  sed -n "s/^#%[[:space:]]*$2[[:space:]]*=[[:space:]]*//p" "$f" | head -n1 | sed 's/[[:space:]]*$//'
}

# profile_options PROFILE: the option lines (no comments, no blank lines, no sections).
profile_options() {
  local f; f=$(profile_file "$1")
  grep -Ev '^[[:space:]]*([#;]|\[|$)' "$f" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' || true
}

profile_list() {
  local f
  for f in "$VSTART_CONFIGS"/*.conf; do basename "$f" .conf; done
}

# profile_check PROFILE: can this profile run here? Prints the reason if not.
profile_check() {
  local p=$1 kind store f
  f=$(profile_file "$p")
  [[ -f $f ]] || { echo "no profile file $f (known: $(profile_list | xargs))"; return 1; }
  kind=$(profile_meta "$p" kind)
  store=$(profile_meta "$p" store)
  case $kind in
    pacific)
      local c
      for c in ceph-mon ceph-osd ceph-mgr monmaptool ceph-authtool ceph; do
        command -v "$c" >/dev/null || { echo "$c not installed (run qa/setup.sh as root)"; return 1; }
      done
      ceph-osd --version 2>/dev/null | grep -q 'pacific' ||
        { echo "/usr/bin/ceph-osd is not Pacific: $(ceph-osd --version 2>&1)"; return 1; }
      ;;
    vstart)
      [[ -e $MIMSTORE_BUILD_OK ]] ||
        { echo "the Ceph build is not finished ($MIMSTORE_BUILD_OK missing; build dir $MIMSTORE_BUILD_DIR)"; return 1; }
      [[ -x $MIMSTORE_BUILD_DIR/bin/ceph-osd && -x $MIMSTORE_BUILD_DIR/bin/ceph-mon &&
         -x $MIMSTORE_BUILD_DIR/bin/ceph-mgr ]] ||
        { echo "no ceph-osd/ceph-mon/ceph-mgr in $MIMSTORE_BUILD_DIR/bin (cmake/ceph-build.sh)"; return 1; }
      [[ -x $MIMSTORE_SRC_DIR/src/vstart.sh ]] || { echo "no $MIMSTORE_SRC_DIR/src/vstart.sh"; return 1; }
      # A build writing into the build dir now could swap binaries mid-run.
      local nj
      nj=$(pgrep -f "ninja -C $MIMSTORE_BUILD_DIR" | head -n1 || true)
      if [[ -n $nj && ${MIMSTORE_BENCH_ALLOW_BUILD:-0} != 1 ]]; then
        echo "a build is running in $MIMSTORE_BUILD_DIR (ninja pid $nj); wait for it" \
             "(or set MIMSTORE_BENCH_ALLOW_BUILD=1)"
        return 1
      fi
      # Every Ceph binary checks its option schema at start-up and aborts on
      # an error (e.g. a see_also naming an option that does not exist).
      local out
      if ! out=$("$MIMSTORE_BUILD_DIR/bin/ceph-conf" -c /dev/null --show-config-value fsid 2>&1); then
        echo "the Ceph build's binaries abort at start-up: $(echo "$out" | head -n1)" \
             "(rebuild needed: cmake/ceph-build.sh)"
        return 1
      fi
      if [[ $store == mimstore ]]; then
        grep -q -- '--mimstore-data-dirs' "$MIMSTORE_SRC_DIR/src/vstart.sh" ||
          { echo "vstart.sh has no --mimstore flags (vstart patch not applied)"; return 1; }
        # The store registers its options; without them the store is not built in.
        "$MIMSTORE_BUILD_DIR/bin/ceph-conf" -c /dev/null --show-config-value mimstore_merge \
          >/dev/null 2>&1 ||
          { echo "this build's ceph-osd does not know mimstore (no mimstore_merge option)"; return 1; }
      fi
      ;;
    *) echo "profile $p: unknown kind '$kind'"; return 1 ;;
  esac
}

# ceph CLI against the current cluster (Debian's Pacific client for both kinds)
# harness_osd_options: ceph.conf option lines every profile gets from the
# harness (CLUSTER_PG_LOG: PG log entries and dups per PG, unset or 0 =
# Ceph's defaults). min = max pins the log's length, so its memory is the
# same in every profile whatever the ops done (see bench.sh --pg-log).
# CLUSTER_OSD_MEM (bytes, unset or 0 = no bound) adds osd_memory_target at
# 3/4 of it, see _osd_mem_limit. CLUSTER_INDEX_BUDGET (bytes, unset or 0 =
# the option's default) sets mimstore's merge-index budget, for STORE
# mimstore only (Pacific's daemons do not know the option); a profile's own
# line comes after it and wins (vstart-configs/*-index*.conf).
harness_osd_options() {
  local store=${1:-} n=${CLUSTER_PG_LOG:-0} mem=${CLUSTER_OSD_MEM:-0} ib=${CLUSTER_INDEX_BUDGET:-0}
  if ((n > 0)); then
    printf '%s\n' "osd min pg log entries = $n" "osd max pg log entries = $n" \
      "osd pg log dups tracked = $n"
  fi
  if ((mem > 0)); then echo "osd memory target = $((mem * 3 / 4))"; fi
  if [[ $store == mimstore ]] && ((ib > 0)); then echo "mimstore cache index max bytes = $ib"; fi
  return 0
}

# _osd_mem_limit: with CLUSTER_OSD_MEM bytes, give each OSD that much of the
# host, as an OSD host sized per OSD does, the same for every store: a
# cgroup-v1 memory cgroup per OSD charges its RSS and the page cache it
# fills, which for FileStore and mimstore is their cache of object files,
# and osd_memory_target at 3/4 (harness_osd_options) is what BlueStore
# sizes its own caches to. Without it the page-cache stores have this
# host's 24 GiB and BlueStore its 4 GiB default target. Called for every
# (re)started OSD; pages charged before the move stay where they were,
# which the page-cache drop before each measured window clears.
CLUSTER_MEMCG=${CLUSTER_MEMCG:-/sys/fs/cgroup/memory}
_osd_mem_limit() {
  local mem=${CLUSTER_OSD_MEM:-0} w cg
  ((mem > 0)) || return 0
  for w in $CLUSTER_OSD_PIDS; do
    # named by the workdir (TB_ID), as the test bed's other devices: a run
    # elsewhere, or the tests, never touch these
    cg=$CLUSTER_MEMCG/mimstore-$TB_ID-${w%%=*}
    _tb_memcg "$cg" "$mem" "run with --osd-mem 0 to leave the OSDs unbounded"
    echo "${w#*=}" >"$cg/cgroup.procs" || die "cannot move ${w%%=*} (pid ${w#*=}) into $cg"
  done
  log "OSD memory: $((mem >> 20)) MiB each (memory cgroups $CLUSTER_MEMCG/mimstore-$TB_ID-osd.N), osd_memory_target $((mem * 3 / 4 >> 20)) MiB"
}

cceph() { timeout "${CCEPH_TIMEOUT:-60}" ceph --conf "$CEPH_CONF" "$@"; }

# cluster_start PROFILE NOSD POOLSIZE PGNUM: start the cluster on TB_* devices,
# create the pool. Sets CLUSTER_DIR, CEPH_CONF (exported), CLUSTER_OSD_PIDS
# ("osd.N=PID" words), CLUSTER_LOG.
cluster_start() {
  local p=$1 n=$2 ps=$3 pg=$4 kind
  kind=$(profile_meta "$p" kind)
  CLUSTER_DIR=$TB_WORKDIR/cluster
  CLUSTER_LOG=$CLUSTER_DIR/start.log
  rm -rf "$CLUSTER_DIR"
  mkdir -p "$CLUSTER_DIR"
  export CEPH_CONF=$CLUSTER_DIR/ceph.conf
  case $kind in
    pacific) clients_for debian; _pacific_start "$p" "$n" "$ps" ;;
    vstart) clients_for build "$MIMSTORE_BUILD_DIR" "$MIMSTORE_SRC_DIR" ||
              die "profile $p: no client tools for the cluster"
            _vstart_start "$p" "$n" "$ps" ;;
  esac
  _record_daemon_pids
  _pool_create "$ps" "$pg"
}

_record_daemon_pids() {
  local f pid name
  CLUSTER_OSD_PIDS=""
  for f in "$CLUSTER_DIR"/out/*.pid; do
    [[ -f $f ]] || continue
    pid=$(cat "$f"); name=$(basename "$f" .pid)
    _tb_rec pid "$pid" "$name"
    [[ $name == osd.* ]] && CLUSTER_OSD_PIDS+="$name=$pid "
  done
  CLUSTER_OSD_PIDS=${CLUSTER_OSD_PIDS% }
  [[ -n $CLUSTER_OSD_PIDS ]] || die "no OSD is running (see $CLUSTER_LOG and $CLUSTER_DIR/out/)"
  _osd_mem_limit
  log "daemons: $(cd "$CLUSTER_DIR/out" && for f in *.pid; do printf '%s=%s ' "${f%.pid}" "$(cat "$f")"; done)"
}

# --- Pacific FileStore (Debian 12 packages), bootstrapped by hand --------------

_pacific_start() {
  local p=$1 n=$2 ps=$3 d=$CLUSTER_DIR i port fsid uuid secret id host store osd_dir
  store=$(profile_meta "$p" store)
  [[ $store == filestore || $store == bluestore ]] || die "profile $p: store '$store' is not supported with kind=pacific"
  port=$(free_port_pair) || die "no free port"
  fsid=$(uuidgen)
  host=$(hostname -s)
  mkdir -p "$d/out" "$d/asok" "$d/mon.a" "$d/mgr.x"
  {
    cat <<EOF
; generated by qa/lib/cluster.sh for profile $p
[global]
        fsid = $fsid
        mon host = [v2:127.0.0.1:$port,v1:127.0.0.1:$((port + 1))]
        mon initial members = a
        auth cluster required = cephx
        auth service required = cephx
        auth client required = cephx
        osd pool default size = $ps
        osd pool default min size = 1
        osd pool default pg autoscale mode = off
        mon allow pool size one = true
        mon allow pool delete = true
        osd crush chooseleaf type = 0
        mon data avail warn = 2
        mon data avail crit = 1
        mon max pg per osd = 1000
        run dir = $d/out
        crash dir = $d/out
        log file = $d/out/\$name.log
        pid file = $d/out/\$name.pid
        admin socket = $d/asok/\$name.asok
$(harness_osd_options | sed 's/^/        /')
[mon.a]
        host = $host
        mon data = $d/mon.a
[mgr.x]
        host = $host
        mgr data = $d/mgr.x
[client]
        keyring = $d/keyring
        rbd cache = false
        log file = $d/out/client.\$name.\$pid.log
        admin socket = $d/asok/client.\$name.\$pid.asok
EOF
    for ((i = 0; i < n; i++)); do
      printf '[osd.%d]\n        host = %s\n' "$i" "$host"
      if [[ $store == filestore ]]; then
        printf '        osd data = %s\n        osd journal = %s\n' "${TB_HDD_MNTS[$i]}" "${TB_NVME_DEVS[$i]}"
      else    # bluestore: small osd dir here, data on the raw HDD loop, DB/WAL on NVMe
        printf '        osd data = %s\n        bluestore block path = %s\n        bluestore block db path = %s\n' \
          "$d/osd$i" "${TB_HDD_DEVS[$i]}" "${TB_NVME_DEVS[$i]}"
        if [[ -n ${TB_WAL_DEVS[$i]:-} ]]; then
          printf '        bluestore block wal path = %s\n' "${TB_WAL_DEVS[$i]}"
        fi
      fi
    done
    echo "; --- profile $p ($(profile_file "$p"))"
    grep -Ev '^[[:space:]]*#%' "$(profile_file "$p")"
  } >"$CEPH_CONF"

  {
    run ceph-authtool --create-keyring --gen-key -n mon. --cap mon 'allow *' "$d/keyring"
    run ceph-authtool --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
      --cap mgr 'allow *' --cap mds 'allow *' "$d/keyring"
    run monmaptool --create --clobber --fsid "$fsid" \
      --addv a "[v2:127.0.0.1:$port,v1:127.0.0.1:$((port + 1))]" "$d/monmap"
    run ceph-mon -c "$CEPH_CONF" --mkfs -i a --monmap "$d/monmap" --keyring "$d/keyring"
    run ceph-mon -c "$CEPH_CONF" -i a
  } >>"$CLUSTER_LOG" 2>&1 || die "Pacific mon bootstrap failed, see $CLUSTER_LOG"
  _tb_rec pid "$(cat "$d/out/mon.a.pid")" mon.a
  wait_until 60 cceph mon stat || die "Pacific mon did not come up, see $d/out/mon.a.log"
  _pacific_mgr_start

  for ((i = 0; i < n; i++)); do
    uuid=$(uuidgen)
    secret=$(ceph-authtool --gen-print-key)
    printf '{"cephx_secret": "%s"}\n' "$secret" >"$d/osd$i.json"
    id=$(cceph osd new "$uuid" -i "$d/osd$i.json" 2>>"$CLUSTER_LOG") || die "ceph osd new failed, see $CLUSTER_LOG"
    rm -f "$d/osd$i.json"
    [[ $id == "$i" ]] || die "expected osd id $i, got '$id'"
    if [[ $store == filestore ]]; then osd_dir=${TB_HDD_MNTS[$i]}; else osd_dir=$d/osd$i; fi
    mkdir -p "$osd_dir"
    {
      run ceph-osd -c "$CEPH_CONF" -i "$i" --mkfs --osd-uuid "$uuid" --key "$secret"
      printf '[osd.%d]\n        key = %s\n' "$i" "$secret" >"$osd_dir/keyring"
      run ceph-osd -c "$CEPH_CONF" -i "$i"
    } >>"$CLUSTER_LOG" 2>&1 || die "Pacific osd.$i failed to start, see $CLUSTER_LOG and $d/out/osd.$i.log"
    _tb_rec pid "$(cat "$d/out/osd.$i.pid")" "osd.$i"
  done
}

# A manager, as every profile has one (vstart starts the Reef ones): it
# reports PG states and carries out pg_num changes, and costs every profile
# the same CPU.
_pacific_mgr_start() {
  local d=$CLUSTER_DIR
  {
    cceph auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
      -o "$d/mgr.x/keyring" &&
    run ceph-mgr -c "$CEPH_CONF" -i x
  } >>"$CLUSTER_LOG" 2>&1 || die "Pacific mgr failed to start, see $CLUSTER_LOG and $d/out/mgr.x.log"
  _tb_rec pid "$(cat "$d/out/mgr.x.pid")" mgr.x
}

# --- Reef build via the patched vstart.sh ----------------------------------------

_join() { local IFS=,; echo "$*"; }

_vstart_start() {
  local p=$1 n=$2 ps=$3 store args=() opt port
  store=$(profile_meta "$p" store)
  port=$(free_port_pair) || die "no free port"
  case $store in
    mimstore)
      # The journal is the whole NVMe loop, as FileStore's journal is.
      args+=(-o "osd journal size = $(($(blockdev --getsize64 "${TB_NVME_DEVS[0]}") >> 20))")
      args+=(--mimstore --mimstore-data-dirs "$(_join "${TB_HDD_MNTS[@]}")"
             --mimstore-journal-devs "$(_join "${TB_NVME_DEVS[@]}")")
      # The DB on its NVMe device (TB_DB_SIZE): OSD i's is mounted on
      # mnt/db<i>, and Ceph expands $id per OSD.
      if ((${#TB_DB_MNTS[@]})); then args+=(-o "mimstore db dir = $TB_DIR/mnt/db\$id"); fi ;;
    bluestore)
      args+=(--bluestore --bluestore-devs "$(_join "${TB_HDD_DEVS[@]}")"
             --bluestore-db-devs "$(_join "${TB_NVME_DEVS[@]}")")
      ((${#TB_WAL_DEVS[@]})) && args+=(--bluestore-wal-devs "$(_join "${TB_WAL_DEVS[@]}")") ;;
    *) die "profile $p: store '$store' is not supported with kind=vstart" ;;
  esac
  local extra=()
  read -r -a extra <<<"$(profile_meta "$p" vstart_args)"
  args+=("${extra[@]}")
  # Our client-side settings first, the profile's options after (last wins).
  args+=(-o "rbd cache = false")
  # The manager's autoscaler must not change pg_num under a measurement; no
  # .mgr pool (its sqlite store needs libcephsqlite, not in the lean build).
  args+=(-o "osd pool default pg autoscale mode = off" -o "mgr pool = false")
  while IFS= read -r opt; do args+=(-o "$opt"); done < <(harness_osd_options "$store")
  while IFS= read -r opt; do args+=(-o "$opt"); done < <(profile_options "$p")
  log "vstart: OSD=$n ${args[*]}"
  (
    cd "$MIMSTORE_BUILD_DIR" &&
    # vstart runs the build's bin/ceph, a python script built against Debian's
    # /usr/bin/python3; a python3 earlier on PATH (pyenv) lacks its modules.
    env PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH" VSTART_DEST="$CLUSTER_DIR" CEPH_PORT="$port" MON=1 OSD="$n" MGR=1 MDS=0 RGW=0 NFS=0 FS=0 \
      "$MIMSTORE_SRC_DIR/src/vstart.sh" -n -x -l --nolockdep --without-dashboard "${args[@]}"
  ) >>"$CLUSTER_LOG" 2>&1 || {
    local why="vstart.sh failed"
    if [[ $store == mimstore ]] && grep -qs -- '--mkfs' "$CLUSTER_LOG"; then
      why="vstart.sh failed while creating the mimstore OSDs: is the mimstore store functional in this build?"
    fi
    tail -n 15 "$CLUSTER_LOG" >&2
    die "$why (profile $p; full log $CLUSTER_LOG, daemon logs $CLUSTER_DIR/out/)"
  }
  # vstart turns on debugging checks that cost time on every op; turn them off
  # so that all profiles run with production settings.
  cceph config set osd osd_debug_op_order false >/dev/null 2>&1 || true
  cceph config set osd osd_debug_misdirected_ops false >/dev/null 2>&1 || true
  cceph config set global debug_asok_assert_abort false >/dev/null 2>&1 || true
}

# --- pool, image ------------------------------------------------------------------

_pool_create() {
  local ps=$1 pg=$2
  {
    cceph osd pool create "$CLUSTER_POOL" "$pg" "$pg" replicated
    cceph osd pool set "$CLUSTER_POOL" size "$ps" --yes-i-really-mean-it
    cceph osd pool set "$CLUSTER_POOL" min_size 1
    cceph osd pool application enable "$CLUSTER_POOL" rbd
  } >>"$CLUSTER_LOG" 2>&1 || die "pool creation failed, see $CLUSTER_LOG"
  # Every PG active+clean (the manager reports PG states), then a small
  # object written and read back.
  log "waiting for pool $CLUSTER_POOL: PGs active+clean, then a write"
  wait_until "${POOL_TIMEOUT:-300}" _pool_clean "$pg" 2>>"$CLUSTER_LOG" ||
    die "pool $CLUSTER_POOL: PGs not active+clean after ${POOL_TIMEOUT:-300}s ($(cceph pg stat 2>&1 | head -c 300); see $CLUSTER_DIR/out/)"
  wait_until "${POOL_TIMEOUT:-300}" _pool_probe 2>>"$CLUSTER_LOG" ||
    die "pool $CLUSTER_POOL not writable after ${POOL_TIMEOUT:-300}s (see $CLUSTER_DIR/out/)"
  timeout 120 rbd --conf "$CEPH_CONF" pool init "$CLUSTER_POOL" >>"$CLUSTER_LOG" 2>&1 ||
    die "rbd pool init failed, see $CLUSTER_LOG"
}

# _pool_clean PG: the pool's PG count is PG and all of them are active+clean.
_pool_clean() {
  local j
  j=$(CCEPH_TIMEOUT=20 cceph pg ls-by-pool "$CLUSTER_POOL" -f json 2>/dev/null) || return 1
  # On stdin: the PG list of a large pool outgrows one argument (128 KiB).
  /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
pgs = d["pg_stats"] if isinstance(d, dict) else d
sys.exit(0 if len(pgs) == int(sys.argv[1]) and
         all(p["state"] == "active+clean" for p in pgs) else 1)' "$1" <<<"$j"
}

_pool_probe() {
  timeout 10 rados --conf "$CEPH_CONF" -p "$CLUSTER_POOL" put mimbench-probe /etc/hostname &&
  timeout 10 rados --conf "$CEPH_CONF" -p "$CLUSTER_POOL" stat mimbench-probe &&
  timeout 10 rados --conf "$CEPH_CONF" -p "$CLUSTER_POOL" rm mimbench-probe
}

# cluster_stop: stop daemons we started (by pid), wait for them.
cluster_stop() {
  local f pids=()
  [[ -n ${CLUSTER_DIR:-} && -d $CLUSTER_DIR/out ]] || return 0
  for f in "$CLUSTER_DIR"/out/*.pid; do
    [[ -f $f ]] || continue
    _tb_ours "$(cat "$f")" && pids+=("$(cat "$f")")
  done
  ((${#pids[@]})) && KILL_GRACE=${KILL_GRACE:-30} kill_pids "${pids[@]}"
  return 0
}

# cluster_versions: "mon: ..., osd: ..." for the report
cluster_versions() {
  cceph versions 2>/dev/null | tr -d '\n' | tr -s ' ' || echo "{}"
}
