#!/usr/bin/env bash
# qa/diskemu/test-fuse.sh [BUILD_DIR]: end-to-end test of the diskemu daemon.
#
# Mounts the daemon with two disks (write cache on), attaches loop devices
# with direct I/O, and checks:
#   1. mkfs.xfs (in fast mode) + mount + write + remount + read back;
#   2. a power cut under XFS: data synced before the cut is intact after
#      restore and a remount (log recovery);
#   3. on the raw device: a flushed write survives a cut, an acknowledged
#      but unflushed one is gone; a torn cut keeps whole 512-byte sectors;
#   4. a disk told to ignore FLUSH loses a fsync'd write at a cut; cut all
#      and restore all take every disk down and back;
#   5. stats answer valid JSON.
# Everything (mounts, loop devices, daemon, files) is removed on exit, on
# failure too. Prints "SKIP: ..." and exits 0 without root or /dev/fuse.
set -euo pipefail

BUILD=${1:-/var/tmp/diskemu-build}
DAEMON=$BUILD/diskemu
[ -x "$DAEMON" ] || { echo "test-fuse: no $DAEMON (build qa/diskemu first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: test-fuse needs root"; exit 0; }
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 0; }
for c in losetup mkfs.xfs mount umount dd cmp python3; do
  command -v "$c" >/dev/null || { echo "SKIP: no $c"; exit 0; }
done

WORK=$(mktemp -d /var/tmp/diskemu-fusetest.XXXXXX)
MNT=$WORK/emu
FS=$WORK/fs
CTL=$MNT/.control
mkdir -p "$MNT" "$FS"
PID=
LOOPS=()

cleanup() {
  local rc=$?
  set +e
  mountpoint -q "$FS" && umount "$FS"
  for l in "${LOOPS[@]}"; do
    losetup -d "$l"
  done
  if [ -n "$PID" ]; then
    kill "$PID" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$PID" 2>/dev/null
  fi
  mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
  if [ "$rc" != 0 ]; then
    echo "--- daemon log:"
    cat "$WORK/daemon.log" 2>/dev/null
    echo "test-fuse: FAILED"
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "test-fuse: $*" >&2; exit 1; }
ctl() { echo "$*" >"$CTL" || fail "control '$*' refused: $(cat "$CTL")"; }
pattern() { python3 -c "import sys; sys.stdout.buffer.write(bytes([ord('$1')]) * $2)"; }

"$DAEMON" --mount "$MNT" --write-cache on \
  --disk "hdd0:size=8G:backing=$WORK/hdd0.img" \
  --disk "hdd1:size=1G:backing=$WORK/hdd1.img" >"$WORK/daemon.log" 2>&1 &
PID=$!
for _ in $(seq 100); do
  [ -e "$CTL" ] && break
  kill -0 "$PID" 2>/dev/null || fail "daemon exited"
  sleep 0.1
done
[ -e "$CTL" ] || fail "daemon did not mount"
[ "$(stat -c %s "$MNT/hdd0")" = $((8 << 30)) ] || fail "hdd0 size"

LOOP=
attach() {   # attach FILE: a loop device with direct I/O, in $LOOP
  LOOP=$(losetup --direct-io=on -f --show "$1") || fail "losetup $1"
  LOOPS+=("$LOOP")   # not in a subshell: cleanup must see it
  [ "$(cat "/sys/block/$(basename "$LOOP")/loop/dio")" = 1 ] || fail "$LOOP: direct I/O not on"
}

# 1. XFS
attach "$MNT/hdd0"
L0=$LOOP
ctl fast hdd0 on
mkfs.xfs -f -q "$L0" || fail "mkfs.xfs"
ctl fast hdd0 off
mount "$L0" "$FS"
head -c $((8 << 20)) /dev/urandom >"$WORK/data"
cp "$WORK/data" "$FS/a"
sync
umount "$FS"
mount "$L0" "$FS"
cmp "$WORK/data" "$FS/a" || fail "XFS read back differs"
echo "ok 1 - mkfs.xfs, mount, write, remount, read back"

# 2. A cut under XFS: what was synced survives.
ctl destage hdd0 off
head -c $((4 << 20)) /dev/urandom >"$FS/b"   # page cache, maybe written, never synced
dd if=/dev/urandom of="$FS/c" bs=1M count=2 oflag=direct status=none
ctl cut hdd0 7
umount "$FS" 2>/dev/null || umount -l "$FS" || true
ctl restore hdd0
ctl destage hdd0 on
mount "$L0" "$FS" || fail "mount after the cut (log recovery)"
cmp "$WORK/data" "$FS/a" || fail "synced file damaged by the cut"
umount "$FS"
echo "ok 2 - power cut under XFS: synced data intact after log recovery"

# 3. Raw device: flushed survives, unflushed is gone, torn keeps sectors.
attach "$MNT/hdd1"
L1=$LOOP
ctl destage hdd1 off
pattern A 65536 >"$WORK/A"
pattern B 65536 >"$WORK/B"
pattern C 65536 >"$WORK/C"
dd if="$WORK/A" of="$L1" bs=64k seek=16 oflag=direct conv=fsync status=none   # 1 MiB, flushed
dd if="$WORK/B" of="$L1" bs=64k seek=32 oflag=direct status=none              # 2 MiB, not flushed
ctl stats hdd1
dirty=$(python3 -c "import json,sys; print(json.load(open('$CTL'))['dirty_bytes'])")
[ "$dirty" = 65536 ] || fail "expected 64 KiB dirty before the cut, got $dirty"
ctl cut hdd1 1
if dd if="$L1" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
  fail "a cut disk answered a read"
fi
ctl restore hdd1
dd if="$L1" of="$WORK/got" bs=64k skip=16 count=1 iflag=direct status=none
cmp "$WORK/A" "$WORK/got" || fail "flushed data lost by the cut"
dd if="$L1" of="$WORK/got" bs=64k skip=32 count=1 iflag=direct status=none
cmp <(head -c 65536 /dev/zero) "$WORK/got" || fail "unflushed data survived the cut"
dd if="$WORK/C" of="$L1" bs=64k seek=48 oflag=direct status=none              # 3 MiB, not flushed
ctl cut hdd1 12345 torn
ctl restore hdd1
dd if="$L1" of="$WORK/got" bs=64k skip=48 count=1 iflag=direct status=none
python3 - "$WORK/got" <<'EOF' || fail "torn cut is not sector-granular"
import sys
d = open(sys.argv[1], 'rb').read()
kinds = set()
for s in range(0, len(d), 512):
    sec = d[s:s + 512]
    assert sec in (b'C' * 512, b'\0' * 512), "sector %d is mixed" % (s // 512)
    kinds.add(sec[0])
assert len(kinds) == 2, "expected some sectors kept and some lost"
EOF
echo "ok 3 - raw: flushed survives a cut, unflushed is lost, torn keeps whole sectors"

# 4. A drive that ignores FLUSH loses a fsync'd write at a cut (the unsafe
#    configuration the whole-stack crash test must catch); cut all / restore
#    all take every disk down and back.
ctl flush hdd1 ignore
pattern D 65536 >"$WORK/D"
dd if="$WORK/D" of="$L1" bs=64k seek=64 oflag=direct conv=fsync status=none   # 4 MiB, "flushed"
ctl cut all 5
for l in "$L0" "$L1"; do
  if dd if="$l" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
    fail "$l answered a read after cut all"
  fi
done
ctl restore all
dd if="$L1" of="$WORK/got" bs=64k skip=64 count=1 iflag=direct status=none
cmp <(head -c 65536 /dev/zero) "$WORK/got" || fail "a write whose FLUSH was ignored survived the cut"
ctl flush hdd1 obey
dd if="$WORK/D" of="$L1" bs=64k seek=64 oflag=direct conv=fsync status=none
ctl cut hdd1 6
ctl restore hdd1
dd if="$L1" of="$WORK/got" bs=64k skip=64 count=1 iflag=direct status=none
cmp "$WORK/D" "$WORK/got" || fail "flushed data lost after flush obey"
echo "ok 4 - flush ignore loses a flushed write at a cut; cut all, restore all"

# 5. Stats.
ctl stats all
python3 -c "import json; d = json.load(open('$CTL')); assert len(d) == 2 and d[0]['writes']['count'] > 0 and d[1]['flushes_ignored'] == 1 and d[1]['flush'] == 'obey'" ||
  fail "stats all is not the expected JSON"
echo "ok 5 - stats"
echo "test-fuse: PASSED"
