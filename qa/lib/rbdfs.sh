# shellcheck shell=bash
# qa/lib/rbdfs.sh - a filesystem on an RBD image without kernel RBD or NBD:
# rbd-fuse exposes the pool's image as a file, a loop device with direct I/O
# carries XFS on it. For the filesystem workloads of qa/bench.sh.
# Sourced, not executed; needs lib/common.sh and lib/testbed.sh (TB_DIR, _tb_rec).
#
# The I/O path of an fsync in the filesystem: XFS flushes its log -> loop
# FLUSH -> fsync of the rbd-fuse file -> rbd_flush; rbd-fuse's writes are
# synchronous librbd writes, acknowledged once the OSDs have them.
#
# Teardown order matters: the filesystem and the loop device go before
# rbd-fuse, and all three before the cluster stops (an unmount that flushes
# into a cluster without OSDs never returns). bench.sh calls rbdfs_down
# after each filesystem workload and before it stops a cluster.

RBDFS_FUSE_MNT=""    # rbd-fuse mount point
RBDFS_MNT=""         # the XFS mount point (the workload's directory)
RBDFS_LOOP=""
RBDFS_PID=""

# rbdfs_up CONF POOL IMAGE: mount IMAGE with rbd-fuse, attach a loop device
# with direct I/O to it, make XFS, mount it at $TB_DIR/mnt/rbdfs.
rbdfs_up() {
  local conf=$1 pool=$2 image=$3 deadline
  require_cmds rbd-fuse mkfs.xfs losetup
  RBDFS_FUSE_MNT=$TB_DIR/mnt/rbd-fuse RBDFS_MNT=$TB_DIR/mnt/rbdfs
  mkdir -p "$RBDFS_FUSE_MNT" "$RBDFS_MNT"
  # -f: in the foreground of its own background process, so its pid is ours
  rbd-fuse -c "$conf" -p "$pool" -r "$image" "$RBDFS_FUSE_MNT" -f \
    >>"$TB_DIR/rbd-fuse.log" 2>&1 &
  RBDFS_PID=$!
  _tb_rec rbdfuse "$RBDFS_PID" "$RBDFS_FUSE_MNT"
  deadline=$((SECONDS + 30))
  until [[ -f $RBDFS_FUSE_MNT/$image ]]; do
    pid_alive "$RBDFS_PID" || { tail -n 5 "$TB_DIR/rbd-fuse.log" >&2; die "rbd-fuse exited at start (log: $TB_DIR/rbd-fuse.log)"; }
    ((SECONDS < deadline)) || die "rbd-fuse: $RBDFS_FUSE_MNT/$image did not appear in 30 s (log: $TB_DIR/rbd-fuse.log)"
    sleep 0.5
  done
  RBDFS_LOOP=$(losetup --direct-io=on -f --show "$RBDFS_FUSE_MNT/$image") ||
    die "losetup on $RBDFS_FUSE_MNT/$image failed"
  _tb_rec loop "$RBDFS_LOOP" "$RBDFS_FUSE_MNT/$image"
  [[ $(cat "/sys/block/$(basename "$RBDFS_LOOP")/loop/dio" 2>/dev/null) == 1 ]] ||
    warn "the loop device on rbd-fuse has no direct I/O: the host page cache sits under XFS as well"
  mkfs.xfs -q -f "$RBDFS_LOOP" || die "mkfs.xfs on $RBDFS_LOOP (RBD image $pool/$image) failed"
  mount -t xfs "$RBDFS_LOOP" "$RBDFS_MNT" || die "mount of XFS on $RBDFS_LOOP failed"
  _tb_rec mount "$RBDFS_MNT"
  log "filesystem on RBD: XFS on $RBDFS_LOOP (direct I/O) on rbd-fuse $RBDFS_FUSE_MNT/$image, at $RBDFS_MNT"
}

# rbdfs_down: unmount XFS, detach the loop device, unmount rbd-fuse (it
# exits). Idempotent; also cleans what a failed run left (found by path).
rbdfs_down() {
  local fmnt=${RBDFS_FUSE_MNT:-$TB_DIR/mnt/rbd-fuse} mnt=${RBDFS_MNT:-$TB_DIR/mnt/rbdfs} d f pid
  if mountpoint -q "$mnt"; then
    timeout 300 umount "$mnt" || { warn "umount $mnt failed or hung; lazy unmount"; umount -l "$mnt" || true; }
  fi
  while read -r d f; do
    [[ -n $d && $f == "$fmnt/"* ]] && { losetup -d "$d" 2>/dev/null || warn "losetup -d $d failed"; }
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
  if mountpoint -q "$fmnt"; then
    wait_until 15 _no_loops_on "$fmnt/" || warn "loop devices still on $fmnt"
    umount "$fmnt" 2>/dev/null || umount -l "$fmnt" 2>/dev/null || warn "cannot unmount $fmnt"
  fi
  for pid in $RBDFS_PID $( [[ -f $TB_STATE ]] && awk '$1 == "rbdfuse" { print $2 }' "$TB_STATE"); do
    pid_alive "$pid" && [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"$fmnt"* ]] &&
      kill_pids "$pid"
  done
  RBDFS_PID="" RBDFS_LOOP=""
  return 0
}
