# shellcheck shell=bash
# qa/lib/testbed.sh - emulated HDDs and NVMe devices for the benchmarks.
# Sourced by qa/bench.sh and qa/testbed.sh, after qa/lib/common.sh.
#
# Per OSD i:
#   HDD  i: loop device on a sparse file $TB_DIR/hdd$i.img (local disk, not
#           tmpfs), XFS (mkfs.xfs -f, defaults, reflink stays on), mounted on
#           $TB_DIR/mnt/hdd$i, rotational=1, scheduler $TB_HDD_SCHED
#           (mq-deadline, what Linux gives a SATA HDD), and a blkio throttle in
#           the root cgroup-v1 blkio controller:
#             write/read IOPS $TB_HDD_WIOPS/$TB_HDD_RIOPS (default 200)
#             write/read bytes/s $TB_HDD_WBPS/$TB_HDD_RBPS (default 150 MB/s)
#           With TB_HDD_FS=raw (BlueStore) the loop device is left unformatted.
#           200 IOPS is what a 7200 rpm disk reaches on short seeks with a few
#           commands queued (a full-stroke random IO costs ~14 ms = 70 IOPS,
#           see qa/hddmodel.py); 150 MB/s is its outer-zone sequential rate.
#   NVMe i: loop device on $TB_SHM/nvme$i.img (tmpfs), no throttle,
#           rotational=0, scheduler none (what Linux gives NVMe); FileStore /
#           mimstore journal, BlueStore block.db.
#   WAL  i: (only when TB_WAL_SIZE != 0) a second NVMe loop for block.wal.
#
# Everything created is recorded in $TB_STATE (one "kind args" line each) and
# removed by tb_down, which also scans for leftovers of a crashed run (loop
# devices backed by our files, mounts under our dir, tracefs instances with
# our prefix), so it can be called any number of times, standalone too.

TB_HDD_SIZE=${TB_HDD_SIZE:-1T}          # sparse; the size of a 1 TB-class disk
TB_NVME_SIZE=${TB_NVME_SIZE:-1G}        # journal / block.db per OSD
TB_WAL_SIZE=${TB_WAL_SIZE:-0}           # block.wal per OSD (bluestore only)
TB_HDD_WIOPS=${TB_HDD_WIOPS:-200}
TB_HDD_RIOPS=${TB_HDD_RIOPS:-200}
TB_HDD_WBPS=${TB_HDD_WBPS:-150000000}
TB_HDD_RBPS=${TB_HDD_RBPS:-150000000}
TB_HDD_FS=${TB_HDD_FS:-xfs}            # xfs (FileStore, mimstore) or raw (BlueStore)
TB_HDD_SCHED=${TB_HDD_SCHED:-mq-deadline}
TB_NVME_SCHED=${TB_NVME_SCHED:-none}
TB_TRACE_BUF_KB=${TB_TRACE_BUF_KB:-32768}   # per CPU

BLKIO=/sys/fs/cgroup/blkio
TRACEFS=/sys/kernel/tracing

# tb_init WORKDIR: set the testbed paths for WORKDIR (no side effects).
tb_init() {
  local wd=$1
  TB_WORKDIR=$wd
  TB_DIR=$wd/tb
  TB_STATE=$TB_DIR/state
  # tmpfs directory and tracefs prefix derived from the workdir, so runs with
  # different --workdir never touch each other's devices.
  TB_ID=$(printf '%s' "$wd" | md5sum | cut -c1-8)
  TB_SHM=/dev/shm/mimstore-bench-$TB_ID
  TB_TRACE_PREFIX=mimbench-$TB_ID
  TB_HDD_DEVS=() TB_HDD_MNTS=() TB_NVME_DEVS=() TB_WAL_DEVS=()
}

# _tb_ours PID: alive, and its command line mentions our workdir or trace prefix.
_tb_ours() {
  local cmd
  pid_alive "$1" || return 1
  cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"$TB_WORKDIR"* || $cmd == *"$TB_TRACE_PREFIX"* ]]
}

_tb_rec() { mkdir -p "$(dirname "$TB_STATE")"; echo "$*" >>"$TB_STATE"; }

_majmin() { local b; b=$(basename "$1"); cat "/sys/block/$b/dev"; }

_set_queue() {   # dev scheduler rotational
  local b q; b=$(basename "$1"); q=/sys/block/$b/queue
  echo "$2" >"$q/scheduler" || die "cannot set scheduler $2 on $1 (available: $(cat "$q/scheduler"))"
  echo "$3" >"$q/rotational" || warn "cannot set rotational=$3 on $1"
  grep -q "\[$2\]" "$q/scheduler" || die "scheduler of $1 is $(cat "$q/scheduler"), wanted $2"
}

_new_loop() {    # file size -> prints /dev/loopN
  local file=$1 size=$2 dev
  truncate -s "$size" "$file"
  _tb_rec file "$file"
  dev=$(losetup -f --show "$file") || die "losetup failed for $file"
  _tb_rec loop "$dev" "$file"
  echo "$dev"
}

_throttle() {    # dev wiops riops wbps rbps (0 removes)
  local mm; mm=$(_majmin "$1")
  echo "$mm $2" >"$BLKIO/blkio.throttle.write_iops_device"
  echo "$mm $3" >"$BLKIO/blkio.throttle.read_iops_device"
  echo "$mm $4" >"$BLKIO/blkio.throttle.write_bps_device"
  echo "$mm $5" >"$BLKIO/blkio.throttle.read_bps_device"
}

_fstype() {      # filesystem type of the nearest existing ancestor of $1
  local p=$1
  while [[ ! -e $p ]]; do p=$(dirname "$p"); done
  stat -f -c %T "$p"
}

tb_preflight() {
  require_root
  require_cmds losetup mkfs.xfs mount umount truncate findmnt blockdev md5sum
  [[ -w $BLKIO/blkio.throttle.write_iops_device ]] ||
    die "no cgroup-v1 blkio throttle at $BLKIO (needed for the HDD emulation)"
  [[ $(_fstype "$TB_DIR") != tmpfs ]] ||
    die "workdir $TB_WORKDIR is on tmpfs; the HDD backing files must be on a local disk"
  [[ $(_fstype /dev/shm) == tmpfs ]] || die "/dev/shm is not tmpfs"
}

# tb_up NOSD: build the devices. Fills TB_HDD_DEVS, TB_HDD_MNTS, TB_NVME_DEVS, TB_WAL_DEVS.
tb_up() {
  local n=$1 i dev mnt
  tb_preflight
  if [[ -s $TB_STATE ]]; then
    warn "testbed state $TB_STATE exists (crashed run?); tearing it down first"
    tb_down
  fi
  mkdir -p "$TB_DIR/mnt" "$TB_SHM"
  _tb_rec dir "$TB_SHM"
  TB_HDD_DEVS=() TB_HDD_MNTS=() TB_NVME_DEVS=() TB_WAL_DEVS=()
  for ((i = 0; i < n; i++)); do
    dev=$(_new_loop "$TB_DIR/hdd$i.img" "$TB_HDD_SIZE")
    _set_queue "$dev" "$TB_HDD_SCHED" 1
    mnt=""
    if [[ $TB_HDD_FS == xfs ]]; then
      mkfs.xfs -f -q "$dev" >/dev/null || die "mkfs.xfs $dev failed"
      mnt=$TB_DIR/mnt/hdd$i
      mkdir -p "$mnt"
      mount -t xfs -o noatime "$dev" "$mnt" || die "mount $dev $mnt failed"
      _tb_rec mount "$mnt"
    fi
    _throttle "$dev" "$TB_HDD_WIOPS" "$TB_HDD_RIOPS" "$TB_HDD_WBPS" "$TB_HDD_RBPS"
    _tb_rec throttle "$(_majmin "$dev")"
    TB_HDD_DEVS+=("$dev") TB_HDD_MNTS+=("$mnt")

    dev=$(_new_loop "$TB_SHM/nvme$i.img" "$TB_NVME_SIZE")
    _set_queue "$dev" "$TB_NVME_SCHED" 0
    TB_NVME_DEVS+=("$dev")
    if [[ $TB_WAL_SIZE != 0 ]]; then
      dev=$(_new_loop "$TB_SHM/wal$i.img" "$TB_WAL_SIZE")
      _set_queue "$dev" "$TB_NVME_SCHED" 0
      TB_WAL_DEVS+=("$dev")
    fi
  done
  tb_write_env
  log "testbed: HDD ${TB_HDD_DEVS[*]} (${TB_HDD_FS}${TB_HDD_MNTS[*]:+ on ${TB_HDD_MNTS[*]}}; ${TB_HDD_WIOPS}/${TB_HDD_RIOPS} w/r IOPS," \
      "$((TB_HDD_WBPS / 1000000))/$((TB_HDD_RBPS / 1000000)) w/r MB/s; $TB_HDD_SCHED)" \
      "NVMe ${TB_NVME_DEVS[*]} ${TB_WAL_DEVS[*]} ($TB_NVME_SCHED)"
}

# Device description for the analysis tools.
tb_write_env() {
  local f=$TB_DIR/devices.json i d first=1
  {
    echo '{"hdd": ['
    for i in "${!TB_HDD_DEVS[@]}"; do
      d=${TB_HDD_DEVS[$i]}
      ((first)) || echo ','
      first=0
      printf '{"osd": %d, "dev": "%s", "name": "%s", "majmin": "%s", "bytes": %s, "fs": "%s", "mount": "%s", "scheduler": "%s"}' \
        "$i" "$d" "$(basename "$d")" "$(_majmin "$d")" "$(blockdev --getsize64 "$d")" \
        "$TB_HDD_FS" "${TB_HDD_MNTS[$i]:-}" "$TB_HDD_SCHED"
    done
    echo '], "nvme": ['
    first=1
    for i in "${!TB_NVME_DEVS[@]}"; do
      d=${TB_NVME_DEVS[$i]}
      ((first)) || echo ','
      first=0
      printf '{"osd": %d, "dev": "%s", "name": "%s", "majmin": "%s", "bytes": %s, "role": "journal/db"}' \
        "$i" "$d" "$(basename "$d")" "$(_majmin "$d")" "$(blockdev --getsize64 "$d")"
    done
    for i in "${!TB_WAL_DEVS[@]}"; do
      d=${TB_WAL_DEVS[$i]}
      printf ',{"osd": %d, "dev": "%s", "name": "%s", "majmin": "%s", "bytes": %s, "role": "wal"}' \
        "$i" "$d" "$(basename "$d")" "$(_majmin "$d")" "$(blockdev --getsize64 "$d")"
    done
    printf '], "throttle": {"write_iops": %s, "read_iops": %s, "write_bps": %s, "read_bps": %s}}\n' \
      "$TB_HDD_WIOPS" "$TB_HDD_RIOPS" "$TB_HDD_WBPS" "$TB_HDD_RBPS"
  } >"$f"
}

# --- tracefs -------------------------------------------------------------------

_tracefs_ready() {
  if [[ ! -d $TRACEFS/instances ]]; then
    mount -t tracefs nodev "$TRACEFS" || die "cannot mount tracefs on $TRACEFS"
    _tb_rec tracefs-mounted "$TRACEFS"
  fi
  [[ -d $TRACEFS/events/block/block_rq_issue ]] || die "no block tracepoints in $TRACEFS"
}

# trace_start NAME OUTFILE DEV...: trace block_rq_issue/complete of DEVs into
# OUTFILE through a private tracefs instance; prints the instance path.
trace_start() {
  local name=$TB_TRACE_PREFIX-$1 out=$2; shift 2
  local inst=$TRACEFS/instances/$name filter="" d mm maj min ev
  _tracefs_ready
  [[ -d $inst ]] && trace_stop "$inst"
  mkdir "$inst" || die "cannot create tracefs instance $inst"
  _tb_rec trace "$inst"
  echo "$TB_TRACE_BUF_KB" >"$inst/buffer_size_kb"
  echo mono >"$inst/trace_clock"
  for d in "$@"; do
    mm=$(_majmin "$d"); maj=${mm%:*} min=${mm#*:}
    filter+="${filter:+ || }dev == $(((maj << 20) | min))"
  done
  for ev in block_rq_issue block_rq_complete; do
    echo "$filter" >"$inst/events/block/$ev/filter"
    echo 1 >"$inst/events/block/$ev/enable"
  done
  echo 1 >"$inst/tracing_on"
  cat "$inst/trace_pipe" >"$out" &
  _tb_rec pid $! trace-reader
  echo "$inst"
}

# trace_mark INSTANCE TAG: a wall-clock marker, to map trace time to wall time.
trace_mark() {
  echo "MIMBENCH $2 wall=$(date +%s.%N)" >"$1/trace_marker" 2>/dev/null || true
}

# trace_stop INSTANCE: stop, drain the reader, remove the instance.
trace_stop() {
  local inst=$1 ev pid
  [[ -d $inst ]] || return 0
  echo 0 >"$inst/tracing_on" 2>/dev/null || true
  sleep 1
  # readers of this instance (only the ones we recorded)
  if [[ -f $TB_STATE ]]; then
    while read -r _ pid _; do
      if pid_alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$inst/trace_pipe"; then
        kill_pids "$pid"
      fi
    done < <(grep '^pid ' "$TB_STATE" || true)
  fi
  for ev in block_rq_issue block_rq_complete; do
    echo 0 >"$inst/events/block/$ev/enable" 2>/dev/null || true
    echo 0 >"$inst/events/block/$ev/filter" 2>/dev/null || true
  done
  rmdir "$inst" 2>/dev/null || warn "could not remove tracefs instance $inst"
}

# --- teardown -------------------------------------------------------------------

# tb_unthrottle: lift the throttles of our HDD loops (at teardown: a store
# shutting down writes back what it holds; no need to do that at 200 IOPS).
tb_unthrottle() {
  local d f
  while read -r d f; do
    [[ -n $d && $f == "$TB_DIR/"* && -e /sys/block/$(basename "$d")/dev ]] || continue
    _throttle "$d" 0 0 0 0 2>/dev/null || true
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
}

# tb_down: remove everything this testbed created. Idempotent.
tb_down() {
  local kind a b pids=() d mm f
  [[ -n ${TB_DIR:-} ]] || die "tb_init not called"
  # 0. no throttle from here on: daemons stop faster
  tb_unthrottle
  # 1. processes we started (daemons, readers, samplers), recorded by pid;
  #    a pid is only signalled if its command line still names our workdir
  #    or trace instance (pids get reused after a crash)
  if [[ -f $TB_STATE ]]; then
    while read -r kind a b; do
      [[ $kind == pid ]] && _tb_ours "$a" && pids+=("$a")
    done <"$TB_STATE"
  fi
  if ((${#pids[@]})); then
    mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -un)
    kill_pids "${pids[@]}"
  fi
  # 2. tracefs instances (recorded or with our prefix)
  if [[ -d $TRACEFS/instances ]]; then
    for d in "$TRACEFS/instances/$TB_TRACE_PREFIX"-*; do
      [[ -d $d ]] && trace_stop "$d"
    done
  fi
  # 3. mounts under our dir (deepest first)
  while read -r d; do
    [[ -n $d ]] || continue
    local tries=0
    until umount "$d" 2>/dev/null; do
      if ((++tries >= 30)); then
        warn "umount $d still busy after 30 s; lazy unmount"
        umount -l "$d" || true
        break
      fi
      sleep 1
    done
  done < <(findmnt -rn -o TARGET | grep -F "$TB_DIR/" | sort -r || true)
  # 4. our loop devices: throttles off, detach
  while read -r d f; do
    [[ -n $d ]] || continue
    if [[ $f == "$TB_DIR/"* || $f == "$TB_SHM/"* ]]; then
      if [[ -e /sys/block/$(basename "$d")/dev ]]; then
        _throttle "$d" 0 0 0 0 2>/dev/null || true
      fi
      losetup -d "$d" 2>/dev/null || warn "losetup -d $d failed"
    fi
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
  # 5. throttle lines recorded for devices that are gone or reused
  if [[ -f $TB_STATE ]]; then
    while read -r kind mm _; do
      [[ $kind == throttle ]] || continue
      for f in write_iops read_iops write_bps read_bps; do
        if grep -q "^$mm " "$BLKIO/blkio.throttle.${f}_device" 2>/dev/null; then
          echo "$mm 0" >"$BLKIO/blkio.throttle.${f}_device" 2>/dev/null || true
        fi
      done
    done <"$TB_STATE"
  fi
  # 6. backing files, and the cluster directory (mon store, daemon logs;
  #    bench.sh has copied the logs into the results already)
  rm -f "$TB_DIR"/hdd*.img "$TB_DIR/devices.json"
  rm -rf "$TB_WORKDIR/cluster"
  rm -rf "$TB_SHM"
  [[ -d $TB_DIR/mnt ]] && find "$TB_DIR/mnt" -maxdepth 1 -type d -empty -delete
  # 7. tracefs, if we mounted it and no instance (ours or anyone's) is left
  if [[ -f $TB_STATE ]] && grep -q '^tracefs-mounted' "$TB_STATE" &&
     [[ -z $(ls -A "$TRACEFS/instances" 2>/dev/null) ]]; then
    umount "$TRACEFS" 2>/dev/null || true
  fi
  rm -f "$TB_STATE"
  rmdir "$TB_DIR" 2>/dev/null || true
}

# tb_status: print what exists now.
tb_status() {
  echo "workdir testbed: $TB_DIR  (tmpfs: $TB_SHM, trace prefix: $TB_TRACE_PREFIX)"
  echo "loop devices:"; losetup -n -l -O NAME,BACK-FILE | grep -E "$TB_DIR/|$TB_SHM/" | sed 's/^/  /' || echo "  none"
  echo "mounts:"; findmnt -rn -o TARGET,SOURCE | grep -F "$TB_DIR/" | sed 's/^/  /' || echo "  none"
  echo "blkio throttles (root cgroup):"
  local f
  for f in write_iops read_iops write_bps read_bps; do
    sed "s/^/  $f: /" "$BLKIO/blkio.throttle.${f}_device" 2>/dev/null
  done
  echo "tracefs instances:"
  find "$TRACEFS/instances" -maxdepth 1 -name "$TB_TRACE_PREFIX-*" 2>/dev/null | sed 's/^/  /'

  echo "state file:"; if [[ -f $TB_STATE ]]; then sed 's/^/  /' "$TB_STATE"; else echo "  none"; fi
}
