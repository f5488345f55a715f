# shellcheck shell=bash
# qa/lib/testbed.sh - emulated HDDs and NVMe devices for the benchmarks.
# Sourced by qa/bench.sh and qa/testbed.sh, after qa/lib/common.sh.
#
# Per OSD i:
#   HDD  i: one of two kinds (TB_HDD_KIND):
#           emu (default): the HDD emulator qa/diskemu. One daemon per run
#             serves a file per disk, $TB_EMU_MNT/hdd$i (FUSE, thin backing
#             file $TB_DIR/hdd$i.img on the local disk), emulated size
#             $TB_HDD_SIZE, disk model $TB_EMU_PRESET (exos-x24 by default), write
#             cache $TB_EMU_WCACHE; a loop device with direct I/O on that
#             file. Every request is answered when the modelled disk (seek,
#             rotation, NCQ, write cache) would have completed it.
#           throttle: a loop device on a sparse file $TB_DIR/hdd$i.img, under
#             a blkio throttle in the root cgroup-v1 blkio controller:
#               write/read IOPS $TB_HDD_WIOPS/$TB_HDD_RIOPS (default 200)
#               write/read bytes/s $TB_HDD_WBPS/$TB_HDD_RBPS (default 150 MB/s)
#             200 IOPS is what a 7200 rpm disk reaches on short seeks with a
#             few commands queued (a full-stroke random IO costs ~14 ms = 70
#             IOPS, see qa/hddmodel.py); 150 MB/s is its outer-zone sequential
#             rate.
#           Both: rotational=1, scheduler $TB_HDD_SCHED (mq-deadline, what
#           Linux gives a SATA HDD), XFS (mkfs.xfs -f, defaults, reflink stays
#           on; on the emulator in fast mode) mounted on $TB_DIR/mnt/hdd$i.
#           With TB_HDD_FS=raw (BlueStore) the loop device is left unformatted.
#   NVMe i: loop device on $TB_SHM/nvme$i.img (tmpfs), no throttle,
#           rotational=0, scheduler none (what Linux gives NVMe); FileStore /
#           mimstore journal, BlueStore block.db. With TB_NVME_KIND=emu (crash
#           tests; needs TB_HDD_KIND=emu) the emulator serves it instead, as
#           disk nvme$i of its "nvme" model (20 us per command, 2 GB/s, a
#           volatile write cache that a power cut empties), backing file
#           still on tmpfs.
#   WAL  i: (only when TB_WAL_SIZE != 0) a second NVMe device for block.wal
#           (disk wal$i on the emulator with TB_NVME_KIND=emu).
#   DB   i: (only when TB_DB_SIZE != 0) a second NVMe device for mimstore's
#           RocksDB (omap and xattrs), XFS mounted on $TB_DIR/mnt/db$i (disk
#           db$i on the emulator with TB_NVME_KIND=emu): an NVMe partition
#           for the DB, as BlueStore's block.db has, so that the DB's log is
#           not queued behind the data disk's write back.
#
# Everything created is recorded in $TB_STATE (one "kind args" line each) and
# removed by tb_down, which also scans for leftovers of a crashed run (loop
# devices backed by our files, mounts under our dir, emulator daemons mounted
# under our dir, tracefs instances with our prefix), so it can be called any
# number of times, standalone too.

TB_HDD_KIND=${TB_HDD_KIND:-emu}         # emu (qa/diskemu) or throttle (blkio throttle)
TB_HDD_SIZE=${TB_HDD_SIZE:-1T}          # sparse / thin; the size of a 1 TB-class disk
TB_EMU_PRESET=${TB_EMU_PRESET:-exos-x24} # emu: the emulator's disk model (exos-x24, exos-m30, hdd7200, hdd10k)
# emu: the drives' volatile write cache. Off by default, as Ceph's hardware
# recommendations advise for HDD OSDs (writes then need the media; a drive
# with a media cache stages random ones). On, as drives ship: writes are
# acknowledged from the cache, FLUSH/FUA (fsync through the loop) waits for
# the platter, a sustained load runs at the destage rate.
TB_EMU_WCACHE=${TB_EMU_WCACHE:-off}
DISKEMU_BUILD=${DISKEMU_BUILD:-${MIMSTORE_WORKDIR:-/var/tmp/mimstore}/diskemu-build}
TB_EMU_BIN=${TB_EMU_BIN:-$DISKEMU_BUILD/diskemu}
TB_NVME_SIZE=${TB_NVME_SIZE:-1G}        # journal / block.db per OSD
TB_NVME_KIND=${TB_NVME_KIND:-loop}      # loop (tmpfs loop device) or emu (the emulator's nvme model)
TB_WAL_SIZE=${TB_WAL_SIZE:-0}           # block.wal per OSD (bluestore only)
TB_DB_SIZE=${TB_DB_SIZE:-0}             # mimstore's DB device per OSD (mimstore only)
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
  TB_EMU_MNT=$TB_DIR/emu                # the emulator's FUSE mount: one file per disk
  TB_EMU_LOG=$TB_DIR/diskemu.log
  TB_HDD_DEVS=() TB_HDD_MNTS=() TB_NVME_DEVS=() TB_WAL_DEVS=() TB_DB_DEVS=() TB_DB_MNTS=() TB_EMU_DISKS=()
}

# _tb_ours PID: alive, and its command line mentions our workdir or trace prefix.
_tb_ours() {
  local cmd
  pid_alive "$1" || return 1
  cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"$TB_WORKDIR"* || $cmd == *"$TB_TRACE_PREFIX"* ]]
}

_tb_rec() { mkdir -p "$(dirname "$TB_STATE")"; echo "$*" >>"$TB_STATE"; }

# _tb_memcg PATH BYTES HINT: a cgroup-v1 memory cgroup at PATH of BYTES (it
# charges its processes' RSS and the page cache they fill), recorded for
# tb_down to remove. HINT says how to run without one when the memory
# controller is missing. Callers move their processes in (cgroup.procs).
_tb_memcg() {
  local cg=$1 bytes=$2 hint=$3
  [[ -d ${cg%/*} ]] || die "no cgroup-v1 memory controller at ${cg%/*}; $hint"
  { mkdir -p "$cg" && echo "$bytes" >"$cg/memory.limit_in_bytes"; } ||
    die "cannot make the memory cgroup $cg of $bytes bytes"
  _tb_rec cgroup "$cg"
}

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
  tb_hdd_check
  case $TB_HDD_KIND in
    throttle)
      [[ -w $BLKIO/blkio.throttle.write_iops_device ]] ||
        die "no cgroup-v1 blkio throttle at $BLKIO (needed for --hdd throttle; --hdd emu does without)" ;;
    emu) _emu_preflight ;;
  esac
  [[ $(_fstype "$TB_DIR") != tmpfs ]] ||
    die "workdir $TB_WORKDIR is on tmpfs; the HDD backing files must be on a local disk"
  [[ $(_fstype /dev/shm) == tmpfs ]] || die "/dev/shm is not tmpfs"
}

# tb_up NOSD: build the devices. Fills TB_HDD_DEVS, TB_HDD_MNTS, TB_NVME_DEVS,
# TB_WAL_DEVS (and TB_EMU_DISKS with the emulator).
tb_up() {
  local n=$1 i dev mnts
  tb_preflight
  if [[ -s $TB_STATE ]]; then
    warn "testbed state $TB_STATE exists (crashed run?); tearing it down first"
    tb_down
  fi
  mkdir -p "$TB_DIR/mnt" "$TB_SHM"
  _tb_rec dir "$TB_SHM"
  TB_HDD_DEVS=() TB_HDD_MNTS=() TB_NVME_DEVS=() TB_WAL_DEVS=() TB_DB_DEVS=() TB_DB_MNTS=() TB_EMU_DISKS=()
  # (if, not &&: set -e stays in force inside the function)
  if [[ $TB_HDD_KIND == emu ]]; then _emu_start "$n"; fi
  for ((i = 0; i < n; i++)); do
    _hdd_up "$i"
    dev=$(_nvme_up "nvme$i" "$TB_NVME_SIZE")
    TB_NVME_DEVS+=("$dev")
    if [[ $TB_WAL_SIZE != 0 ]]; then
      dev=$(_nvme_up "wal$i" "$TB_WAL_SIZE")
      TB_WAL_DEVS+=("$dev")
    fi
    if [[ $TB_DB_SIZE != 0 ]]; then _db_up "$i"; fi
  done
  tb_hdd_assert_timed
  tb_write_env
  mnts=$(printf '%s ' "${TB_HDD_MNTS[@]}" | xargs)   # empty with raw HDDs
  log "testbed: HDD ${TB_HDD_DEVS[*]} (${TB_HDD_FS}${mnts:+ on $mnts}; $(tb_hdd_label); $TB_HDD_SCHED)" \
      "NVMe ${TB_NVME_DEVS[*]} ${TB_WAL_DEVS[*]} ${TB_DB_DEVS[*]}${TB_DB_DEVS[*]:+ (DB on ${TB_DB_MNTS[*]})} ($TB_NVME_SCHED)"
}

# _db_up I: mimstore's DB device of OSD i: an NVMe device with XFS, mounted
# on $TB_DIR/mnt/db$i. Appends to TB_DB_DEVS and TB_DB_MNTS.
_db_up() {
  local i=$1 dev mnt=$TB_DIR/mnt/db$1
  dev=$(_nvme_up "db$i" "$TB_DB_SIZE")
  mkfs.xfs -f -q "$dev" >/dev/null || die "mkfs.xfs $dev failed"
  _mount_xfs "$dev" "$mnt"
  TB_DB_DEVS+=("$dev") TB_DB_MNTS+=("$mnt")
}

# _mount_xfs DEV MNT: mount DEV's XFS on MNT (created), recorded for tb_down.
_mount_xfs() {
  mkdir -p "$2"
  mount -t xfs -o noatime "$1" "$2" || die "mount $1 $2 failed"
  _tb_rec mount "$2"
}

# _hdd_up I: HDD i, a loop device on the emulator's file or on a throttled
# sparse file, formatted and mounted unless TB_HDD_FS=raw. Appends to
# TB_HDD_DEVS and TB_HDD_MNTS.
_hdd_up() {
  local i=$1 dev mnt=""
  if [[ $TB_HDD_KIND == emu ]]; then
    dev=$(_emu_loop "$TB_EMU_MNT/hdd$i")
  else
    dev=$(_new_loop "$TB_DIR/hdd$i.img" "$TB_HDD_SIZE")
  fi
  _set_queue "$dev" "$TB_HDD_SCHED" 1
  if [[ $TB_HDD_FS == xfs ]]; then
    _hdd_mkfs "$dev" "hdd$i"
    mnt=$TB_DIR/mnt/hdd$i
    _mount_xfs "$dev" "$mnt"
  fi
  if [[ $TB_HDD_KIND == throttle ]]; then
    _throttle "$dev" "$TB_HDD_WIOPS" "$TB_HDD_RIOPS" "$TB_HDD_WBPS" "$TB_HDD_RBPS"
    _tb_rec throttle "$(_majmin "$dev")"
  fi
  TB_HDD_DEVS+=("$dev") TB_HDD_MNTS+=("$mnt")
}

# _nvme_up NAME SIZE: a fast device (journal, block.db, block.wal): a loop
# device on tmpfs, or the emulator's disk NAME (TB_NVME_KIND=emu). Prints it.
_nvme_up() {
  local name=$1 size=$2 dev
  if [[ $TB_NVME_KIND == emu ]]; then
    dev=$(_emu_loop "$TB_EMU_MNT/$name")
  else
    dev=$(_new_loop "$TB_SHM/$name.img" "$size")
  fi
  _set_queue "$dev" "$TB_NVME_SCHED" 0
  echo "$dev"
}

# _hdd_mkfs DEV DISK: XFS on DEV. mkfs is set-up, not a measurement: the
# emulated disk DISK serves it in fast mode (no delays, not charged).
_hdd_mkfs() {
  local dev=$1 disk=$2
  if [[ $TB_HDD_KIND == emu ]]; then _emu_fast "$disk" on; fi
  mkfs.xfs -f -q "$dev" >/dev/null || die "mkfs.xfs $dev failed"
  if [[ $TB_HDD_KIND == emu ]]; then _emu_fast "$disk" off; fi
}

# tb_hdd_label: one line naming the HDD kind and its settings, for logs.
tb_hdd_label() {
  if [[ $TB_HDD_KIND == emu ]]; then
    echo "emulated $TB_EMU_PRESET (qa/diskemu), $TB_HDD_SIZE thin, write cache $TB_EMU_WCACHE"
  else
    echo "throttle ${TB_HDD_WIOPS}/${TB_HDD_RIOPS} w/r IOPS, $((TB_HDD_WBPS / 1000000))/$((TB_HDD_RBPS / 1000000)) w/r MB/s, $TB_HDD_SIZE sparse"
  fi
}

# _nvme_json OSD DEV ROLE: one fast device's entry of devices.json.
_nvme_json() {
  printf '{"osd": %d, "dev": "%s", "name": "%s", "majmin": "%s", "bytes": %s, "role": "%s"}' \
    "$1" "$2" "$(basename "$2")" "$(_majmin "$2")" "$(blockdev --getsize64 "$2")" "$3"
}

# Device description for the analysis tools.
tb_write_env() {
  local f=$TB_DIR/devices.json i d first=1 backend
  backend=$(_hdd_backend_json)
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
      ((first)) || echo ','
      first=0
      _nvme_json "$i" "${TB_NVME_DEVS[$i]}" journal/db
    done
    for i in "${!TB_WAL_DEVS[@]}"; do printf ','; _nvme_json "$i" "${TB_WAL_DEVS[$i]}" wal; done
    for i in "${!TB_DB_DEVS[@]}"; do printf ','; _nvme_json "$i" "${TB_DB_DEVS[$i]}" db; done
    printf '], "hdd_backend": %s' "$backend"
    if [[ $TB_HDD_KIND == throttle ]]; then
      printf ', "throttle": {"write_iops": %s, "read_iops": %s, "write_bps": %s, "read_bps": %s}}\n' \
        "$TB_HDD_WIOPS" "$TB_HDD_RIOPS" "$TB_HDD_WBPS" "$TB_HDD_RBPS"
    else
      printf ', "throttle": null}\n'
    fi
  } >"$f"
}

# _hdd_backend_json: what the HDDs are, so that every result is labelled. For
# the emulator, the drives' settings as the daemon reports them.
_hdd_backend_json() {
  local disks
  if [[ $TB_HDD_KIND == emu ]]; then
    disks=$(_emu_ctl stats all | jq -c '[.[] | {disk, model, disk_bytes, sched, queue_depth,
                                                 write_cache, cache_bytes}]') ||
      die "cannot read the emulator's stats from $TB_EMU_MNT/.control (log: $TB_EMU_LOG)"
    printf '{"kind": "emu", "preset": "%s", "write_cache": "%s", "size": "%s", "daemon": "%s", "mount": "%s", "disks": %s}' \
      "$TB_EMU_PRESET" "$TB_EMU_WCACHE" "$TB_HDD_SIZE" "$TB_EMU_BIN" "$TB_EMU_MNT" "$disks"
  else
    printf '{"kind": "throttle", "write_iops": %s, "read_iops": %s, "write_bps": %s, "read_bps": %s, "size": "%s"}' \
      "$TB_HDD_WIOPS" "$TB_HDD_RIOPS" "$TB_HDD_WBPS" "$TB_HDD_RBPS" "$TB_HDD_SIZE"
  fi
}

# --- HDD emulator (qa/diskemu) ----------------------------------------------------

# tb_hdd_check: the HDD settings are valid (no side effects; bench.sh calls
# it before its plan, tb_preflight before building anything).
tb_hdd_check() {
  case $TB_HDD_KIND in
    emu|throttle) ;;
    *) die "HDD kind must be emu or throttle (--hdd, TB_HDD_KIND), not '$TB_HDD_KIND'" ;;
  esac
  [[ $TB_HDD_KIND == emu ]] || return 0
  case $TB_EMU_PRESET in
    exos-x24|exos-m30|hdd7200|hdd10k) ;;
    *) die "emulated HDD preset must be exos-x24, exos-m30, hdd7200 or hdd10k (--hdd-preset, TB_EMU_PRESET), not '$TB_EMU_PRESET'" ;;
  esac
  [[ $TB_EMU_WCACHE == on || $TB_EMU_WCACHE == off ]] ||
    die "emulated HDD write cache must be on or off (--hdd-write-cache, TB_EMU_WCACHE), not '$TB_EMU_WCACHE'"
  case $TB_NVME_KIND in
    loop) ;;
    emu) [[ $TB_HDD_KIND == emu ]] || die "TB_NVME_KIND=emu needs the HDD emulator (TB_HDD_KIND=emu)" ;;
    *) die "NVMe kind must be loop or emu (TB_NVME_KIND), not '$TB_NVME_KIND'" ;;
  esac
}

_emu_preflight() {
  require_cmds setsid fusermount3 jq timeout
  [[ -c /dev/fuse ]] || die "no /dev/fuse (modprobe fuse); the HDD emulator needs it (or use --hdd throttle)"
  tb_emu_build
}

# _emu_binary_fresh: the daemon exists and is newer than its sources.
_emu_binary_fresh() {
  [[ -x $TB_EMU_BIN ]] || return 1
  [[ -z $(find "$QA_DIR/diskemu" -maxdepth 1 \( -name '*.cc' -o -name '*.h' -o -name CMakeLists.txt \) \
            -newer "$TB_EMU_BIN" -print -quit) ]]
}

# tb_emu_build: build the daemon with qa/diskemu/build.sh when it is missing
# or older than its sources (Ninja then decides what to recompile).
tb_emu_build() {
  _emu_binary_fresh && return 0
  [[ $TB_EMU_BIN == "$DISKEMU_BUILD/diskemu" ]] ||
    die "TB_EMU_BIN=$TB_EMU_BIN is missing or older than $QA_DIR/diskemu; rebuild it or unset TB_EMU_BIN (then qa/diskemu/build.sh builds one)"
  log "building the HDD emulator: qa/diskemu/build.sh (into $DISKEMU_BUILD)"
  DISKEMU_BUILD=$DISKEMU_BUILD "$QA_DIR/diskemu/build.sh" >/dev/null ||
    die "qa/diskemu/build.sh failed (see above); fix that, or run with --hdd throttle"
  [[ -x $TB_EMU_BIN ]] || die "qa/diskemu/build.sh made no $TB_EMU_BIN"
}

# _emu_ctl CMD...: one command to our daemon's control file; prints the
# answer ("ok", JSON or "error: ..."), fails if the command failed. The answer
# is read with a second open, which returns the latest answer: we are the
# only controller. The timeout keeps a wedged daemon from hanging the harness.
_emu_ctl() {
  # shellcheck disable=SC2016  # $1 $2 are the inner shell's arguments
  timeout 20 bash -c 'printf "%s\n" "$1" >"$2" 2>/dev/null; rc=$?; cat "$2"; exit "$rc"' \
    _ "$*" "$TB_EMU_MNT/.control"
}

# _emu_fast DISK on|off: fast mode (no delays, not charged) or timed.
_emu_fast() {
  local out
  out=$(_emu_ctl fast "$1" "$2") ||
    die "the HDD emulator refused 'fast $1 $2': ${out:-no answer} (log: $TB_EMU_LOG)"
}

# tb_hdd_fast on|off: every emulated HDD in fast mode (set-up: mkfs, image
# prefill) or timed (measurements). No-op with the throttle.
tb_hdd_fast() {
  local d
  [[ $TB_HDD_KIND == emu ]] || return 0
  for d in "${TB_EMU_DISKS[@]}"; do _emu_fast "$d" "$1"; done
  log "emulated HDDs ${TB_EMU_DISKS[*]}: fast mode $1"
}

# tb_hdd_assert_timed: every emulated HDD is timed (fast mode off) and not
# cut. Called before each measurement: a set-up step that left fast mode on
# must not pass as a result. No-op with the throttle.
tb_hdd_assert_timed() {
  local st bad n
  [[ $TB_HDD_KIND == emu ]] || return 0
  st=$(_emu_ctl stats all) || die "cannot read the HDD emulator's stats ($TB_EMU_MNT/.control; log: $TB_EMU_LOG)"
  n=$(jq length <<<"$st") || die "the HDD emulator's stats are not JSON: $st"
  ((n == ${#TB_EMU_DISKS[@]})) || die "the HDD emulator serves $n disks, expected ${#TB_EMU_DISKS[@]} (${TB_EMU_DISKS[*]})"
  bad=$(jq -r '.[] | select(.fast or .failed) | "\(.disk) (fast \(.fast), cut \(.failed))"' <<<"$st" | xargs)
  [[ -z $bad ]] || die "emulated HDD not timed before a measurement: $bad; set-up must end with 'fast DISK off' (tb_hdd_fast off)"
}

# tb_emu_stats OUT: the emulated HDDs' counters (stats all) into OUT; nothing
# with the throttle. Best effort: a missing snapshot only loses figures.
tb_emu_stats() {
  [[ $TB_HDD_KIND == emu ]] || return 0
  if _emu_ctl stats all >"$1.tmp" 2>/dev/null; then
    mv "$1.tmp" "$1"
  else
    rm -f "$1.tmp"
  fi
}

# _emu_start NOSD: one daemon serving hdd0..hdd<NOSD-1>; waits for its mount.
_emu_start() {
  local n=$1 i args=() pid extra size
  mkdir -p "$TB_EMU_MNT"
  for ((i = 0; i < n; i++)); do
    # a backing file of an earlier run would hand its data to the new disk
    rm -f "$TB_DIR/hdd$i.img"
    _tb_rec file "$TB_DIR/hdd$i.img"
    args+=(--disk "hdd$i:size=$TB_HDD_SIZE:model=$TB_EMU_PRESET:backing=$TB_DIR/hdd$i.img")
    TB_EMU_DISKS+=("hdd$i")
    if [[ $TB_NVME_KIND == emu ]]; then
      rm -f "$TB_SHM/nvme$i.img" "$TB_SHM/wal$i.img" "$TB_SHM/db$i.img"
      args+=(--disk "nvme$i:size=$TB_NVME_SIZE:model=nvme:backing=$TB_SHM/nvme$i.img")
      TB_EMU_DISKS+=("nvme$i")
      for extra in "wal:$TB_WAL_SIZE" "db:$TB_DB_SIZE"; do   # block.wal, mimstore's DB
        size=${extra#*:} extra=${extra%%:*}
        if [[ $size == 0 ]]; then continue; fi
        args+=(--disk "$extra$i:size=$size:model=nvme:backing=$TB_SHM/$extra$i.img")
        TB_EMU_DISKS+=("$extra$i")
      done
    fi
  done
  # Own session, and not our child (the subshell exits): neither a Ctrl-C to
  # the terminal's process group nor bench.sh's kill of a profile's process
  # tree may stop the disks under mounted filesystems; tb_down stops it last.
  (
    setsid "$TB_EMU_BIN" --mount "$TB_EMU_MNT" --write-cache "$TB_EMU_WCACHE" "${args[@]}" \
      </dev/null >>"$TB_EMU_LOG" 2>&1 &
    echo $! >"$TB_DIR/diskemu.pid"
  )
  pid=$(cat "$TB_DIR/diskemu.pid")
  _tb_rec diskemu "$pid" "$TB_EMU_MNT"
  local deadline=$((SECONDS + 30))
  until _emu_mounted; do
    pid_alive "$pid" || { tail -n 5 "$TB_EMU_LOG" >&2; die "the HDD emulator exited at start (log: $TB_EMU_LOG)"; }
    ((SECONDS < deadline)) || die "the HDD emulator (pid $pid) did not mount $TB_EMU_MNT within 30 s (log: $TB_EMU_LOG)"
    sleep 0.2
  done
  log "HDD emulator: pid $pid, ${TB_EMU_DISKS[*]} on $TB_EMU_MNT ($(tb_hdd_label))"
}

# _emu_mounted: our FUSE mount is there and answers.
_emu_mounted() {
  findmnt -rn -o FSTYPE "$TB_EMU_MNT" 2>/dev/null | grep -q '^fuse' && [[ -e $TB_EMU_MNT/.control ]]
}

# _emu_loop FILE: a loop device with direct I/O on the emulator's FILE.
_emu_loop() {
  local file=$1 dev b
  dev=$(losetup --direct-io=on -f --show "$file") ||
    die "losetup --direct-io=on failed for $file (log: $TB_EMU_LOG)"
  _tb_rec loop "$dev" "$file"
  b=$(basename "$dev")
  # Without direct I/O the loop driver reads and writes through the host's
  # page cache, which would absorb the emulated disk's timing.
  [[ $(cat "/sys/block/$b/loop/dio" 2>/dev/null) == 1 ]] ||
    die "$dev on $file has direct I/O off (/sys/block/$b/loop/dio is not 1); the emulator needs a kernel whose loop driver does direct I/O on FUSE files, or use --hdd throttle"
  echo "$dev"
}

# _emu_daemons: pids of emulator daemons mounted under our dir, recorded or
# not (a crashed run leaves no state line for a daemon it was starting).
_emu_daemons() {
  local p argv kind a b
  for p in /proc/[0-9]*; do
    mapfile -d '' -t argv 2>/dev/null <"$p/cmdline" || continue
    ((${#argv[@]})) && [[ ${argv[0]##*/} == diskemu && " ${argv[*]} " == *" --mount $TB_EMU_MNT "* ]] &&
      echo "${p#/proc/}"
  done
  if [[ -f $TB_STATE ]]; then
    while read -r kind a b; do
      [[ $kind == diskemu ]] && _tb_ours "$a" && echo "$a"
    done <"$TB_STATE"
  fi
  return 0
}

# _tb_mounts fuse|fs: mount points under our dir, deepest first; fuse = the
# emulator's, fs = every other (XFS).
_tb_mounts() {
  findmnt -rn -o TARGET,FSTYPE 2>/dev/null |
    awk -v dir="$TB_DIR/" -v want="$1" 'index($1, dir) == 1 && (($2 ~ /^fuse/) == (want == "fuse")) { print $1 }' |
    sort -r
}

# _emu_down: stop the emulator, after the loop devices on its files are gone:
# the daemon (TERM: it unmounts its FUSE mount and exits), then the mount a
# killed daemon left behind ("transport endpoint is not connected").
_emu_down() {
  local pids d
  mapfile -t pids < <(_emu_daemons | sort -un)
  if ((${#pids[@]})); then kill_pids "${pids[@]}"; fi
  while read -r d; do
    [[ -n $d ]] || continue
    fusermount3 -u "$d" 2>/dev/null || umount -l "$d" 2>/dev/null ||
      warn "cannot unmount $d; run: fusermount3 -uz $d"
  done < <(_tb_mounts fuse)
  [[ -d $TB_EMU_MNT ]] && rmdir "$TB_EMU_MNT" 2>/dev/null
  return 0
}

# _loops_on PREFIX: loop devices whose backing file starts with PREFIX.
_loops_on() {
  losetup -n -l -O NAME,BACK-FILE 2>/dev/null | awk -v p="$1" 'index($2, p) == 1 { print $1 }'
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

# tb_unthrottle: lift the HDD limits (at teardown: a store shutting down
# writes back what it holds; no need to do that at 200 IOPS or at the pace of
# an emulated disk): the throttles of our HDD loops, fast mode on every disk
# of our emulator.
tb_unthrottle() {
  local d f names
  while read -r d f; do
    [[ -n $d && $f == "$TB_DIR/"* && -e /sys/block/$(basename "$d")/dev ]] || continue
    _throttle "$d" 0 0 0 0 2>/dev/null || true
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
  grep -qxF "$TB_EMU_MNT" <<<"$(_tb_mounts fuse)" || return 0
  # a dead daemon's mount fails at once, a stopped one would hang: timeout
  names=$(timeout 10 ls "$TB_EMU_MNT" 2>/dev/null) || return 0
  for d in $names; do
    _emu_ctl fast "$d" on >/dev/null 2>&1 || true
  done
}

# tb_leftovers: anything of this testbed exists (state, loop devices on our
# files, mounts under our dir, emulator daemons).
tb_leftovers() {
  [[ -s $TB_STATE ]] ||
    [[ -n $(_loops_on "$TB_DIR/") || -n $(_loops_on "$TB_SHM/") ]] ||
    [[ -n $(_tb_mounts fs) || -n $(_tb_mounts fuse) || -n $(_emu_daemons) ]]
}

# tb_down: remove everything this testbed created. Idempotent. Order: users
# of the devices, filesystems, loop devices, then the emulator under them.
tb_down() {
  local kind a b pids=() d f
  [[ -n ${TB_DIR:-} ]] || die "tb_init not called"
  # 0. no throttle, no emulated delays from here on: daemons stop faster
  tb_unthrottle
  # 1. processes we started (daemons, readers, samplers), recorded by pid;
  #    a pid is only signalled if its command line still names our workdir
  #    or trace instance (pids get reused after a crash). The emulator is
  #    recorded as "diskemu" and stopped in step 5.
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
  # 3. filesystem mounts under our dir (deepest first); the emulator's FUSE
  #    mount stays until the loop devices on its files are detached
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
  done < <(_tb_mounts fs)
  # 4. our loop devices: throttles off, detach
  while read -r d f; do
    [[ -n $d ]] || continue
    if [[ $f == "$TB_DIR/"* || $f == "$TB_SHM/"* ]]; then _tb_loop_release "$d"; fi
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
  for d in $(_tb_orphan_loops "$TB_DIR/"); do _tb_loop_release "$d"; done
  # a loop device still held open is only marked for detaching; the emulator
  # must outlive it
  if ! wait_until 15 _no_loops_on "$TB_EMU_MNT/"; then
    warn "loop devices on $TB_EMU_MNT still attached: $(_loops_on "$TB_EMU_MNT/" | xargs); stopping the emulator anyway"
  fi
  # 5. the emulator: daemon, then a FUSE mount a killed daemon left
  _emu_down
  # 6. throttle lines recorded for devices that are gone or reused, and
  #    memory cgroups recorded (_tb_memcg; their processes are gone)
  if [[ -f $TB_STATE ]]; then
    while read -r kind a _; do
      case $kind in
        throttle)
          for f in write_iops read_iops write_bps read_bps; do
            if grep -q "^$a " "$BLKIO/blkio.throttle.${f}_device" 2>/dev/null; then
              echo "$a 0" >"$BLKIO/blkio.throttle.${f}_device" 2>/dev/null || true
            fi
          done ;;
        cgroup)
          if [[ -d $a ]]; then rmdir "$a" 2>/dev/null || warn "cannot remove the cgroup $a"; fi ;;
      esac
    done <"$TB_STATE"
  fi
  # 7. backing files, and the cluster directory (mon store, daemon logs;
  #    bench.sh has copied the logs into the results already)
  rm -f "$TB_DIR"/hdd*.img "$TB_DIR/devices.json" "$TB_EMU_LOG" "$TB_DIR/diskemu.pid"
  rm -rf "$TB_WORKDIR/cluster"
  rm -rf "$TB_SHM"
  [[ -d $TB_DIR/mnt ]] && find "$TB_DIR/mnt" -maxdepth 1 -type d -empty -delete
  # 8. tracefs, if we mounted it and no instance (ours or anyone's) is left
  if [[ -f $TB_STATE ]] && grep -q '^tracefs-mounted' "$TB_STATE" &&
     [[ -z $(ls -A "$TRACEFS/instances" 2>/dev/null) ]]; then
    umount "$TRACEFS" 2>/dev/null || true
  fi
  rm -f "$TB_STATE"
  rmdir "$TB_DIR" 2>/dev/null || true
}

_no_loops_on() { [[ -z $(_loops_on "$1") ]]; }

# _tb_loop_release DEV: throttle and dirty limit off, detach. The device
# outlives the detach with its settings: the next run's HDD loop may be
# the same number (lib/rbdfs.sh sets a client's dirty limit on its loop).
_tb_loop_release() {
  local d=$1 b
  b=/sys/block/$(basename "$d")
  if [[ -e $b/dev ]]; then
    _throttle "$d" 0 0 0 0 2>/dev/null || true
    _tb_dirty_limit_off "$d"
  fi
  losetup -d "$d" 2>/dev/null || warn "losetup -d $d failed"
}

# _tb_dirty_limit_off DEV: the device's own dirty limit back to the
# kernel's default (no strict limit, 100 % of the host's).
_tb_dirty_limit_off() {
  local b
  b=/sys/block/$(basename "$1")/bdi
  if [[ $(cat "$b/strict_limit" 2>/dev/null) == 1 ]]; then
    { echo 0 >"$b/strict_limit" && echo 100 >"$b/max_ratio"; } || warn "cannot reset the dirty limit of $1"
  fi
}

# _tb_orphan_loops PREFIX: loop devices recorded in the state, on a file
# under PREFIX, whose FUSE mount has gone (rbd-fuse killed before its loop
# was detached): the kernel then names the file "/NAME", outside our
# directory, and a listing by path misses them.
_tb_orphan_loops() {
  local kind d f bf
  [[ -f $TB_STATE ]] || return 0
  while read -r kind d f; do
    [[ $kind == loop && $f == "$1"* ]] || continue
    bf=/sys/block/$(basename "$d")/loop/backing_file
    [[ -r $bf && $(cat "$bf") == "/$(basename "$f")" ]] && echo "$d"
  done <"$TB_STATE"
  return 0
}

# tb_status: print what exists now.
tb_status() {
  local p
  echo "workdir testbed: $TB_DIR  (tmpfs: $TB_SHM, trace prefix: $TB_TRACE_PREFIX)"
  echo "loop devices:"; losetup -n -l -O NAME,BACK-FILE | grep -E "$TB_DIR/|$TB_SHM/" | sed 's/^/  /' || echo "  none"
  echo "mounts:"; findmnt -rn -o TARGET,SOURCE,FSTYPE | grep -F "$TB_DIR/" | sed 's/^/  /' || echo "  none"
  echo "HDD emulator daemons:"
  for p in $(_emu_daemons | sort -un); do
    echo "  $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
  done
  echo "blkio throttles (root cgroup):"
  local f
  for f in write_iops read_iops write_bps read_bps; do
    sed "s/^/  $f: /" "$BLKIO/blkio.throttle.${f}_device" 2>/dev/null || true
  done
  echo "tracefs instances:"
  # (tracefs may not be mounted: no instances, not an error)
  find "$TRACEFS/instances" -maxdepth 1 -name "$TB_TRACE_PREFIX-*" 2>/dev/null | sed 's/^/  /' || true

  echo "state file:"; if [[ -f $TB_STATE ]]; then sed 's/^/  /' "$TB_STATE"; else echo "  none"; fi
}
