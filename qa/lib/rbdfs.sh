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
# The client's memory (rbdfs_client_limit): a cgroup-v1 memory cgroup for the
# workload's driver, and the loop device's per-device dirty limit.
# Named by the workdir (TB_ID) when made, as the test bed's other devices.
RBDFS_MEMCG=${RBDFS_MEMCG:-/sys/fs/cgroup/memory}
RBDFS_CGROUP=""
RBDFS_CLIENT_MEM=0   # bytes; 0 = no bound (the host's page cache)

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

# rbdfs_client_limit BYTES: make the client a machine with BYTES of memory,
# as a VM on RBD is. Without it the workload runs in this host's page cache
# (24 GiB here): FileServer, which never fsyncs, then writes ~1 % of its
# writes to the store in a minute and reads its fileset from memory. With it:
#   - the driver (rbdfs_client_exec) runs in a memory cgroup of BYTES: its
#     page cache, file data read and written, is bounded;
#   - the XFS's loop device may hold at most BYTES/5 dirty (strict_limit:
#     throttled at its own limit even while the host is far below its
#     dirty_ratio), a VM's dirty_ratio of 20 %. The cgroup-v1 memory
#     controller does not throttle writers on their own dirty pages; this is
#     what keeps reclaim from finding the cgroup all dirty.
# 0: no bound. After rbdfs_up; rbdfs_down undoes both.
rbdfs_client_limit() {
  local bytes=$1 bdi
  RBDFS_CLIENT_MEM=$bytes
  ((bytes > 0)) || return 0
  bdi=/sys/block/$(basename "$RBDFS_LOOP")/bdi
  [[ -w $bdi/max_bytes && -w $bdi/strict_limit ]] ||
    die "no per-device dirty limit at $bdi (needs Linux 6.2 or later); run with --fs-client-mem 0 to use the host's page cache"
  { echo $((bytes / 5)) >"$bdi/max_bytes" && echo 1 >"$bdi/strict_limit"; } ||
    die "cannot set the dirty limit of $RBDFS_LOOP ($bdi)"
  RBDFS_CGROUP=$RBDFS_MEMCG/mimstore-${TB_ID:?}-fsclient
  _tb_memcg "$RBDFS_CGROUP" "$bytes" "run with --fs-client-mem 0 to use the host's page cache"
  log "client memory: $((bytes >> 20)) MiB (memory cgroup $RBDFS_CGROUP), at most $((bytes / 5 >> 20)) MiB dirty on $RBDFS_LOOP"
}

# rbdfs_client_exec CMD...: run CMD as the client (in its memory cgroup, if any).
rbdfs_client_exec() {
  (
    if ((RBDFS_CLIENT_MEM > 0)); then echo "$BASHPID" >"$RBDFS_CGROUP/cgroup.procs"; fi
    exec "$@"
  )
}

# _rbdfs_unlimit: undo rbdfs_client_limit (the loop device outlives the run:
# the next user of it must not find our dirty limit).
_rbdfs_unlimit() {
  if [[ -n $RBDFS_LOOP ]]; then _tb_dirty_limit_off "$RBDFS_LOOP"; fi
  if [[ -n $RBDFS_CGROUP && -d $RBDFS_CGROUP ]]; then
    rmdir "$RBDFS_CGROUP" 2>/dev/null || warn "cannot remove $RBDFS_CGROUP (a client still in it?)"
  fi
  RBDFS_CLIENT_MEM=0
}

# rbdfs_down: unmount XFS, detach the loop device, unmount rbd-fuse (it
# exits). Idempotent; also cleans what a failed run left (found by path).
rbdfs_down() {
  local fmnt=${RBDFS_FUSE_MNT:-$TB_DIR/mnt/rbd-fuse} mnt=${RBDFS_MNT:-$TB_DIR/mnt/rbdfs} d f pid
  if mountpoint -q "$mnt"; then
    timeout 300 umount "$mnt" || { warn "umount $mnt failed or hung; lazy unmount"; umount -l "$mnt" || true; }
  fi
  _rbdfs_unlimit
  while read -r d f; do
    [[ -n $d && $f == "$fmnt/"* ]] && _tb_loop_release "$d"
  done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null || true)
  for d in $(_tb_orphan_loops "$fmnt/"); do _tb_loop_release "$d"; done
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
