#!/usr/bin/env bash
# What an operator sees of a mimstore OSD, on a vstart cluster of one OSD
# whose data (XFS), journal and omap DB (XFS) are on loop devices of their
# own:
#   - `ceph-osd --version` and `ceph osd metadata`: the release the build is
#     of, osd_objectstore mimstore, the devices, their ids, which is data,
#     journal, DB
#   - `ceph device ls`: the three devices (the loop devices get a udev
#     identity, model and serial, as udev gives a real disk)
#   - `ceph osd df`: the omap DB's bytes in the OMAP column
#   - ceph-exporter: with --prio-limit 8, every mimstore counter of
#     priority 8 or more on its Prometheus endpoint, none below
#   - each MIMSTORE_* health warning, raised by causing it and cleared by
#     taking the cause away (core/health_alerts.h has the rules):
#       MIMSTORE_DATA_FS_INODES  objects written until the data filesystem
#                                (1% of its space for inodes) has under half
#                                its inodes free (the test's ratio); removed
#       MIMSTORE_DB_FS_FULL      the DB's filesystem filled by a file past
#                                the test's ratio; removed
#       MIMSTORE_JOURNAL_FULL    random writes faster than the data disk
#                                writes them back (a blkio throttle of a few
#                                writes a second on its loop device): the
#                                journal fills, writers wait; throttle off
#       MIMSTORE_WRITEBACK_STALLED  the data filesystem frozen (fsfreeze)
#                                under random writes; thawed
#       MIMSTORE_FSCK_ERRORS     a stray file found by ceph-objectstore-tool
#                                --op fsck on the stopped OSD; removed, a
#                                clean fsck clears it
#       MIMSTORE_CSUM_ERRORS     a bit of an object's file flipped on the
#                                stopped OSD (after --flush-journal wrote
#                                it back), found by a deep scrub's read;
#                                the object rewritten, cleared after the
#                                test's window
#
#   qa/vstart-health.sh        (root: loop devices, mounts, fsfreeze, blkio
#                               throttles, /run/udev)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

[ "$(id -u)" = 0 ] || die "run as root (loop devices, mounts, fsfreeze)"
# Where a udevd runs, the loop devices' identities come from a rule of
# ours (udevd owns its database); where none runs (a container), the test
# writes the records itself.
# A udevd is one that answers: a control socket can be left behind by one
# that is gone (ceph-volume.sh's, which it runs in a container).
UDEVD=0
command -v udevadm >/dev/null && udevadm control --ping -t 2 >/dev/null 2>&1 && UDEVD=1
command -v fsfreeze >/dev/null || die "fsfreeze not found (util-linux)"
BLKIO=/sys/fs/cgroup/blkio
[ -w $BLKIO/blkio.throttle.write_iops_device ] ||
  die "no cgroup-v1 blkio throttle at $BLKIO (the journal-full test slows the data disk with it)"
# hdd_throttle WIOPS WBPS: the data device's write throttle (0 0: none),
# in the blkio cgroups of THROTTLED (set by hdd_throttle_where). v1
# throttles are flat: a rule binds the I/O charged to its own cgroup only,
# so it goes in the root's (the kernel's writeback) and the OSD's.
hdd_throttle() {
  local mm d; mm=$(cat "/sys/block/$(basename "$HDD")/dev")
  for d in $THROTTLED; do
    echo "$mm $1" >"$d/blkio.throttle.write_iops_device"
    echo "$mm $2" >"$d/blkio.throttle.write_bps_device"
  done
}
hdd_throttle_where() {
  local cg
  cg=$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ {print $3}' "/proc/$(dev_osd_pid 0)/cgroup")
  THROTTLED=$BLKIO
  if [ -n "$cg" ] && [ "$cg" != / ]; then
    [ -w "$BLKIO$cg/blkio.throttle.write_iops_device" ] ||
      die "osd.0 is in blkio cgroup $cg, whose throttle this test cannot set"
    THROTTLED="$BLKIO $BLKIO$cg"
  fi
}

W=$(mktemp -d /var/tmp/mimstore-health.XXXXXX)
LOOPS=()
UDEV_FILES=()
UDEV_MADE=()  # /run/udev and its data directory, when this test made them
FROZEN=""
THROTTLED=""
FIO_PID=""
EXPORTER_PID=""
cleanup() {
  local rc=$?
  # thawed first: nothing that writes to it (the OSD, fio's client, umount)
  # could end otherwise
  if [ -n "$FROZEN" ]; then fsfreeze -u "$FROZEN" || true; fi
  if [ -n "$THROTTLED" ]; then hdd_throttle 0 0 || true; fi
  if [ -n "$FIO_PID" ]; then
    kill "$FIO_PID" 2>/dev/null || true
    wait "$FIO_PID" 2>/dev/null || true
  fi
  if [ -n "$EXPORTER_PID" ]; then
    kill "$EXPORTER_PID" 2>/dev/null || true
    wait "$EXPORTER_PID" 2>/dev/null || true
  fi
  dev_cluster_stop "$rc"
  local f m l
  for f in "${UDEV_FILES[@]}"; do rm -f "$f"; done
  rm -rf "${UDEV_MADE[@]}"
  if [ "$UDEVD" = 1 ] && ((${#UDEV_FILES[@]})); then
    udevadm control --reload || true
  fi
  for m in "$W/hdd" "$W/dbfs"; do
    if mountpoint -q "$m"; then umount "$m" || umount -l "$m" || true; fi
  done
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# new_loop NAME SIZE MODEL: a loop device on W/NAME.img with a udev
# identity (model, serial) in udev's database, which libudev (Ceph's
# get_device_id) reads as it does a disk's; removed at the end. The
# device in NEW_LOOP (not a subshell: cleanup needs LOOPS and UDEV_FILES).
new_loop() {
  local name=$1 size=$2 model=$3 dev mm rec serial
  truncate -s "$size" "$W/$name.img"
  dev=$(losetup --find --show "$W/$name.img")
  LOOPS+=("$dev")
  serial="$(basename "$W")-$name"
  if [ "$UDEVD" = 1 ]; then
    rec="/run/udev/rules.d/99-mimstore-health-$(basename "$W")-$name.rules"
    mkdir -p /run/udev/rules.d
    printf 'KERNEL=="%s", ENV{ID_MODEL}="%s", ENV{ID_SERIAL_SHORT}="%s"\n' \
      "$(basename "$dev")" "$model" "$serial" >"$rec"
    UDEV_FILES+=("$rec")
    udevadm control --reload
    udevadm trigger --action=change "$dev"
    udevadm settle
  else
    mm=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
    rec=/run/udev/data/b$mm
    for f in /run/udev /run/udev/data; do
      [ -e "$f" ] || { mkdir "$f"; UDEV_MADE+=("$f"); }
    done
    # a record of an earlier run of this test (killed before its cleanup)
    # is replaced; anything else is not ours
    if [ -e "$rec" ] && ! grep -q '^E:ID_MODEL=MIMTEST_' "$rec"; then
      die "$rec exists and is not this test's: something manages $dev's udev record"
    fi
    printf 'E:ID_MODEL=%s\nE:ID_SERIAL_SHORT=%s\n' "$model" "$serial" >"$rec"
    UDEV_FILES+=("$rec")
  fi
  NEW_LOOP=$dev
}

new_loop hdd 512M MIMTEST_HDD; HDD=$NEW_LOOP
new_loop nvme 64M MIMTEST_NVME; NVME=$NEW_LOOP
new_loop db 320M MIMTEST_DB; DBDEV=$NEW_LOOP
# At most 1 % of the data filesystem for inodes, 2 KiB each: a few
# thousand, so that the inode test needs only that many objects.
mkfs.xfs -q -f -i size=2048,maxpct=1 "$HDD"
mkfs.xfs -q -f "$DBDEV"
mkdir -p "$W/hdd" "$W/dbfs"
mount -o noatime "$HDD" "$W/hdd"
mount -o noatime "$DBDEV" "$W/dbfs"
log "data $HDD (XFS on $W/hdd), journal $NVME, DB $DBDEV (XFS on $W/dbfs)"

# shellcheck disable=SC2034  # read by dev_cluster_start (qa/lib/dev-cluster.sh)
DEV_VSTART_ARGS=(--mimstore-data-dirs "$W/hdd" --mimstore-journal-devs "$NVME")
# Windows short enough for a test, ratios that a few thousand objects and
# one file cross with room to spare; the op threads may wait for journal
# room longer than the 15 s default before the OSD calls itself unhealthy.
# No mClock benchmark at start: its 400 MiB of writes fill this 64 MiB
# journal (rightly raising MIMSTORE_JOURNAL_FULL) before any test.
dev_cluster_start 1 true \
  "mimstore db dir = $W/dbfs/db" \
  "mimstore warn journal full window = 30" \
  "mimstore warn writeback stall age = 20" \
  "mimstore warn inodes free ratio = 0.5" \
  "mimstore warn db free ratio = 0.5" \
  "mimstore warn csum error window = 30" \
  "mimstore backoff max delay = 0" "mimstore backoff pace = false" \
  "osd mclock skip benchmark = true" \
  "osd op thread timeout = 120" "osd op thread suicide timeout = 600"
POOL=health
dev_pool_create $POOL 8 1

# ---- devices ------------------------------------------------------------------
hddn=$(basename "$HDD") nvmen=$(basename "$NVME") dbn=$(basename "$DBDEV")
log "ceph-osd --version and ceph osd metadata: the release ($CEPH_UPSTREAM_VERSION), the store, the three devices and their ids"
osd_version=$("$BIN/ceph-osd" --version) || die "ceph-osd --version failed"
echo "  $osd_version"
case $osd_version in
  "ceph version $CEPH_UPSTREAM_VERSION "*) ;;
  *) die "ceph-osd --version says \"$osd_version\", not $CEPH_UPSTREAM_VERSION" ;;
esac
meta=$($CEPH osd metadata 0 -f json)
/usr/bin/python3 - "$meta" "$hddn" "$nvmen" "$dbn" "$CEPH_UPSTREAM_VERSION" <<'EOF' || die "osd metadata is not what it should be (above)"
import json, sys
m = json.loads(sys.argv[1]); hdd, nvme, db, version = sys.argv[2:6]
want = {"devices": ",".join(sorted([hdd, nvme, db])),
        "mimstore_data_devices": hdd, "mimstore_journal_devices": nvme,
        "mimstore_db_devices": db, "osd_objectstore": "mimstore"}
bad = [(k, m.get(k), v) for k, v in want.items() if m.get(k) != v]
if not m.get("ceph_version", "").startswith("ceph version %s " % version):
    bad.append(("ceph_version", m.get("ceph_version"), "ceph version %s ..." % version))
ids = dict(x.split("=", 1) for x in m.get("device_ids", "").split(",") if "=" in x)
for d, model in ((hdd, "MIMTEST_HDD"), (nvme, "MIMTEST_NVME"), (db, "MIMTEST_DB")):
    if not ids.get(d, "").startswith(model + "_"):
        bad.append(("device_ids", m.get("device_ids"), d + "=" + model + "_..."))
for k, got, exp in bad:
    print("  %s: %r, expected %r" % (k, got, exp), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
log "ceph device ls: the HDD, the NVMe and the DB device, each of osd.0"
$CEPH device ls
$CEPH device ls -f json | /usr/bin/python3 -c '
import json, sys
devs = json.load(sys.stdin)
got = {d["devid"].rsplit("_", 1)[0] for d in devs if "osd.0" in d.get("daemons", [])}
want = {"MIMTEST_HDD", "MIMTEST_NVME", "MIMTEST_DB"}
sys.exit(0 if want <= got else "device ls: %s, expected %s" % (sorted(got), sorted(want)))'

# ---- metrics ------------------------------------------------------------------
# ceph-exporter, as cephadm runs one per host: it reads every daemon's
# admin socket in its directory and serves the counters at or above its
# priority limit to Prometheus. Its default limit (5, PRIO_USEFUL) takes
# every mimstore counter; at 8 (PRIO_INTERESTING) some are left out, so
# that the test sees the limit applied as well as the names and values.
log "ceph-exporter --prio-limit 8: the mimstore counters of priority 8 or more on its /metrics, none below"
[ -x "$BIN/ceph-exporter" ] || die "no ceph-exporter in $BIN (cmake/ceph-build.sh builds it)"
exporter_port=$(free_port_pair) || die "no free TCP port for ceph-exporter"
env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-exporter" -c "$CEPH_CONF" \
  --sock-dir "$DEV_DEST/asok" --addrs 127.0.0.1 --port "$exporter_port" --stats-period 2 \
  --prio-limit 8 \
  >"$DEV_DEST/exporter.log" 2>&1 &
EXPORTER_PID=$!
$CEPH tell osd.0 counter schema -f json >"$DEV_DEST/counter-schema.json"
/usr/bin/python3 - "$DEV_DEST/counter-schema.json" "http://127.0.0.1:$exporter_port/metrics" <<'EOF' ||
import json, re, sys, time, urllib.request
schema = json.load(open(sys.argv[1]))
groups = schema.get("mimstore") or sys.exit("osd.0's counter schema has no mimstore group")
want, below = set(), set()
for g in groups:
    for name, c in g["counters"].items():
        metric = "ceph_mimstore_" + re.sub(r"[./ -]", "_", name)
        # averages come out as a _sum and a _count (PERFCOUNTER_LONGRUNAVG = 4)
        names = {metric + "_sum", metric + "_count"} if c["type"] & 4 else {metric}
        (want if c["priority"] >= 8 else below).update(names)
if not want or not below:
    sys.exit("the schema has %d mimstore metrics at priority 8 or more and %d below: "
             "this test needs both" % (len(want), len(below)))
got = {}
for _ in range(30):
    try:
        text = urllib.request.urlopen(sys.argv[2], timeout=5).read().decode()
    except OSError:
        text = ""
    got = {}
    for line in text.splitlines():
        m = re.match(r'(ceph_mimstore_\w+)\{([^}]*)\} (\S+)$', line)
        if m and 'ceph_daemon="osd.0"' in m.group(2):
            got[m.group(1)] = float(m.group(3))
    if want <= set(got):
        break
    time.sleep(2)
missing = sorted(want - set(got))
if missing:
    sys.exit("ceph-exporter's /metrics lacks %d of %d mimstore metrics of osd.0: %s"
             % (len(missing), len(want), " ".join(missing[:10])))
if below & set(got):
    sys.exit("exported below the priority limit: %s" % sorted(below & set(got)))
if not got.get("ceph_mimstore_journal_bytes", 0) > 0:
    sys.exit("ceph_mimstore_journal_bytes is %r after the pool's writes"
             % got.get("ceph_mimstore_journal_bytes"))
print("  %d mimstore metrics of osd.0 exported (%d below the limit left out); "
      "journal_bytes %d" % (len(got), len(below), got["ceph_mimstore_journal_bytes"]))
EOF
  { tail -n 5 "$DEV_DEST/exporter.log" >&2; die "ceph-exporter does not show the mimstore counters (above)"; }
kill "$EXPORTER_PID" 2>/dev/null || true
wait "$EXPORTER_PID" 2>/dev/null || true
EXPORTER_PID=""

# ---- health warnings ------------------------------------------------------------
checks() { $CEPH health detail -f json | /usr/bin/python3 -c \
  'import json,sys; print(" ".join(sorted(json.load(sys.stdin).get("checks", {}))))'; }
# wait_check present|absent SECONDS KEY...: until every KEY is raised
# (present) or cleared (absent); with several, in whatever order they come
wait_check() {
  local want=$1 limit=$2 t=0 now k off
  shift 2
  while :; do
    now=$(checks); off=""
    for k in "$@"; do
      case " $now " in
        *" $k "*) [ "$want" = present ] || off+=" $k" ;;
        *) [ "$want" = absent ] || off+=" $k" ;;
      esac
    done
    [ -z "$off" ] && break
    [ $t -ge "$limit" ] && die "not $want after $limit s:$off (health checks: $now)"
    sleep 2; t=$((t + 2))
  done
  for k in "$@"; do
    if [ "$want" = present ]; then
      log "  $k raised after ${t} s: $($CEPH health detail | grep -A1 "$k" | tail -n 1 | sed 's/^ *//')"
    else
      log "  $k cleared after ${t} s"
    fi
  done
}
before=$(checks)
case " $before " in
  *" MIMSTORE_"*) $CEPH health detail >&2; die "a MIMSTORE warning before any cause: $before" ;;
esac
# counters NAME...: "NAME=VALUE ..." of osd.0's mimstore perf counters
counters() {
  $CEPH tell osd.0 perf dump mimstore -f json | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["mimstore"]
print(" ".join("%s=%s" % (k, m[k]) for k in sys.argv[1:]))' "$@"
}
journal_full_waits() { counters journal_full_waits | cut -d= -f2; }

# ---- statfs -------------------------------------------------------------------
log "ceph osd df: the omap DB's bytes follow an omap write (OMAP column)"
osd_omap_kb() {
  $CEPH osd df -f json | /usr/bin/python3 -c \
    'import json,sys; print([n for n in json.load(sys.stdin)["nodes"] if n["id"] == 0][0]["kb_used_omap"])'
}
omap0=$(osd_omap_kb)
# 16 MiB of omap values: RocksDB's log and tables grow by at least half
env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" PYTHONPATH="$CEPH_BUILD_DIR/lib/cython_modules/lib.3" \
  /usr/bin/python3 - "$CEPH_CONF" $POOL <<'EOF'
import sys, rados
c = rados.Rados(conffile=sys.argv[1]); c.connect(); io = c.open_ioctx(sys.argv[2])
for i in range(64):
    with rados.WriteOpCtx() as op:
        io.set_omap(op, tuple("k%03d-%03d" % (i, j) for j in range(64)),
                    tuple(b"v" * 4096 for _ in range(64)))
        io.operate_write_op(op, "omap-probe-%d" % (i % 4))
EOF
omap_kb=$omap0
for _ in $(seq 45); do
  omap_kb=$(osd_omap_kb)
  [ "$omap_kb" -ge $((omap0 + 8192)) ] && break
  sleep 2
done
[ "$omap_kb" -ge $((omap0 + 8192)) ] ||
  die "ceph osd df: osd.0's OMAP went from $omap0 to $omap_kb KiB after 16 MiB of omap (expected +8192 KiB at least)"
log "  osd.0 OMAP: $omap0 -> $omap_kb KiB"
# 16 MiB of omap in a 64 MiB journal may make writers wait for room (a
# batch of 256 KiB transactions against the checkpoint's pace): then
# MIMSTORE_JOURNAL_FULL is right, and it must have cleared before the
# journal test below causes it again.
full_waits=$(journal_full_waits)
log "  journal_full_waits after the omap writes: $full_waits"
if [ "$full_waits" -gt 0 ]; then
  wait_check absent 120 MIMSTORE_JOURNAL_FULL
fi

log "MIMSTORE_DATA_FS_INODES: objects until under 45 % of the data filesystem's inodes are free"
# objs fill|remove: write one-byte objects until under 45 % of the data
# filesystem's inodes are free (the warning's ratio is 50 %; in batches of
# at most a fifth of what is left above 40 %, so that it never runs out),
# or remove them
objs() {
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" PYTHONPATH="$CEPH_BUILD_DIR/lib/cython_modules/lib.3" \
    /usr/bin/python3 - "$CEPH_CONF" $POOL "$W/hdd" "$1" <<'EOF'
import os, sys, time, rados
conf, pool, mnt, what = sys.argv[1:5]
c = rados.Rados(conffile=conf); c.connect(); io = c.open_ioctx(pool)
if what == "fill":
    n = 0
    while True:
        st = os.statvfs(mnt)
        if st.f_ffree < 0.45 * st.f_files:
            break
        for _ in range(max(1, min(200, (st.f_ffree - int(0.40 * st.f_files)) // 5))):
            io.write_full("inode-%06d" % n, b"x"); n += 1
        time.sleep(0.3)
    print("wrote %d objects: %d of %d inodes free" % (n, st.f_ffree, st.f_files))
else:
    gone = 0
    for o in list(io.list_objects()):
        if o.key.startswith("inode-"):
            io.remove_object(o.key); gone += 1
    print("removed %d objects" % gone)
EOF
}
objs fill
wait_check present 90 MIMSTORE_DATA_FS_INODES
objs remove
wait_check absent 90 MIMSTORE_DATA_FS_INODES

log "MIMSTORE_DB_FS_FULL: the DB's filesystem filled to 40 % free (the warning's ratio is 50 %)"
avail=$(df -B1 --output=avail "$W/dbfs" | tail -n 1)
size=$(df -B1 --output=size "$W/dbfs" | tail -n 1)
[ "$avail" -gt $((size * 45 / 100)) ] || die "the DB's filesystem is already under 45 % free before the fill"
fallocate -l $((avail - size * 40 / 100)) "$W/dbfs/filler"
wait_check present 90 MIMSTORE_DB_FS_FULL
rm -f "$W/dbfs/filler"
wait_check absent 90 MIMSTORE_DB_FS_FULL

# fio: 4 KiB random writes at 16 outstanding on a 64 MiB image, in the
# background until fio_stop; the image's 16 objects exist when it returns
fio_start() {
  fio --name=health --ioengine=rbd --clientname=admin --pool=$POOL --rbdname=img \
    --rw=randwrite --bs=4k --iodepth=16 --time_based --runtime=600 \
    --output="$DEV_DEST/fio-health-$1.txt" >/dev/null 2>&1 &
  FIO_PID=$!
  sleep 5
}
fio_stop() {
  kill "$FIO_PID" 2>/dev/null || true
  wait "$FIO_PID" 2>/dev/null || true
  FIO_PID=""
}
# the counters that say where writers wait, for the log
waits() { counters journal_full_waits throttle_waits cache_full_waits journal_used_bytes; }
rbd -c "$CEPH_CONF" create --size 64M $POOL/img

# MIMSTORE_JOURNAL_FULL is about writers waiting for journal room, which
# they do when the data disk writes back slower than clients write. A hung
# data filesystem does not do it reliably: the sweep blocks writing an
# object with the object's lock held, the apply thread blocks at the next
# write to that object, and the writers then wait in the OSD (SLOW_OPS)
# with journal room left. So the disk is slowed, not stopped: a blkio
# throttle on the data device's loop device (hdd_throttle: the kernel's
# writeback and the OSD's own I/O); the journal and the DB are not touched.
log "MIMSTORE_JOURNAL_FULL: random writes onto a data disk throttled to 20 writes and 1 MiB a second"
# Throttled before the first write: unthrottled, 16 writers may fill this
# 64 MiB journal on their own within seconds, and the test would not show
# that a slow disk is what raises the warning.
wait_check absent 120 MIMSTORE_JOURNAL_FULL
hdd_throttle_where
hdd_throttle 20 1048576
fio_start journal-full
wait_check present 120 MIMSTORE_JOURNAL_FULL
log "  $(waits)"
hdd_throttle 0 0
THROTTLED=""
fio_stop
log "throttle off, writes stopped"
# held for the window (30 s) after the last wait
wait_check absent 120 MIMSTORE_JOURNAL_FULL

log "MIMSTORE_WRITEBACK_STALLED: random writes onto a frozen data filesystem"
fio_start stalled
FROZEN=$W/hdd
fsfreeze -f "$FROZEN"
wait_check present 120 MIMSTORE_WRITEBACK_STALLED
# thawed before fio goes: its writes wait on the frozen filesystem. (No
# `ceph tell osd.0 perf dump` while frozen: seen to hang until the thaw.)
fsfreeze -u "$FROZEN"
FROZEN=""
fio_stop
log "thawed, writes stopped; $(waits)"
wait_check absent 60 MIMSTORE_WRITEBACK_STALLED
# the journal may have filled behind the frozen filesystem too
wait_check absent 120 MIMSTORE_JOURNAL_FULL

log "MIMSTORE_FSCK_ERRORS: a stray file in a collection, found by ceph-objectstore-tool --op fsck"
cot() {
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-objectstore-tool" -c "$CEPH_CONF" \
    --data-path "$W/hdd" --journal-path "$NVME" --no-mon-config "$@"
}
dev_osd_stop 0
coll=$(find "$W/hdd/objects" -mindepth 1 -maxdepth 1 -type d -name '*_head' -print -quit)
[ -n "$coll" ] || die "no collection directory under $W/hdd/objects"
echo stray >"$coll/not-an-object"
out=$(cot --op fsck 2>&1) && die "fsck passed a stray file: $out"
echo "$out" | tail -n 3
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not come back"
wait_check present 90 MIMSTORE_FSCK_ERRORS
dev_osd_stop 0
rm -f "$coll/not-an-object"
cot --op fsck >/dev/null 2>&1 || die "fsck still fails after the stray file went: $(cot --op fsck 2>&1 | tail -n 3)"
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not come back"
wait_check absent 90 MIMSTORE_FSCK_ERRORS

log "MIMSTORE_CSUM_ERRORS: a bit of an object's file flipped on the stopped OSD, read by a deep scrub"
probe() {  # probe put|get: write, or read back, the object csumprobe
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" PYTHONPATH="$CEPH_BUILD_DIR/lib/cython_modules/lib.3" \
    /usr/bin/python3 - "$CEPH_CONF" $POOL "$1" <<'EOF'
import sys, rados
conf, pool, what = sys.argv[1:4]
c = rados.Rados(conffile=conf); c.connect(); io = c.open_ioctx(pool)
data = bytes((i * 31 + i // 4096) & 0xff for i in range(65536))
if what == "put":
    io.write_full("csumprobe", data)
elif io.read("csumprobe", len(data)) != data:
    sys.exit("csumprobe does not read back as written")
EOF
}
probe put
dev_osd_stop 0
# the merge window written back, so that the bytes are in the object file
(cd "$CEPH_BUILD_DIR" && LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib \
   "$BIN/ceph-osd" -i 0 -c "$CEPH_CONF" --flush-journal) >"$DEV_DEST/flush.txt" 2>&1 ||
  { cat "$DEV_DEST/flush.txt" >&2; die "ceph-osd --flush-journal failed"; }
file=$(find "$W/hdd/objects" -type f -name '*csumprobe*' -print -quit)
[ -n "$file" ] || die "no object file of csumprobe under $W/hdd/objects"
/usr/bin/python3 - "$file" <<'EOF' || die "cannot flip a bit of $file"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
b = os.pread(fd, 1, 12295)
os.pwrite(fd, bytes([b[0] ^ 0x10]), 12295)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # read from the disk
os.close(fd)
EOF
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not come back"
pgid=$($CEPH osd map $POOL csumprobe -f json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["pgid"])')
$CEPH pg deep-scrub "$pgid" >/dev/null
wait_check present 120 MIMSTORE_CSUM_ERRORS
log "  $(counters csum_errors csum_verified)"
# rewritten whole: new bytes, new checksums; a deep scrub finds the PG
# clean again, and the warning goes a window (30 s) after the error
probe put
probe get
$CEPH pg deep-scrub "$pgid" >/dev/null
wait_check absent 120 MIMSTORE_CSUM_ERRORS
log "PASS: devices, metrics through ceph-exporter, omap bytes and six health warnings, each raised and cleared"
