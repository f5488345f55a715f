#!/usr/bin/env bash
# What an operator sees of a mimstore OSD, on a vstart cluster of one OSD
# whose data (XFS), journal and omap DB (XFS) are on loop devices of their
# own:
#   - `ceph osd metadata`: the devices, their ids, which is data, journal, DB
#   - `ceph device ls`: the three devices (the loop devices get a udev
#     identity, model and serial, as udev gives a real disk)
#   - `ceph osd df`: the omap DB's bytes in the OMAP column
#   - each MIMSTORE_* health warning, raised by causing it and cleared by
#     taking the cause away (core/health_alerts.h has the rules):
#       MIMSTORE_DATA_FS_INODES  objects written until the data filesystem
#                                (1% of its space for inodes) runs low; removed
#       MIMSTORE_DB_FS_FULL      the DB's filesystem filled by a file; removed
#       MIMSTORE_WRITEBACK_LAG,  the data disk throttled (blkio) under random
#       MIMSTORE_JOURNAL_FULL    writes: the write back stalls, the journal
#                                fills; throttle lifted
#       MIMSTORE_FSCK_ERRORS     a stray file found by ceph-objectstore-tool
#                                --op fsck on the stopped OSD; removed, a
#                                clean fsck clears it
#
#   qa/vstart-health.sh        (root: loop devices, mounts, blkio, /run/udev)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

[ "$(id -u)" = 0 ] || die "run as root (loop devices, mounts, blkio throttle)"
BLKIO=/sys/fs/cgroup/blkio
[ -w $BLKIO/blkio.throttle.write_iops_device ] || die "no cgroup-v1 blkio throttle at $BLKIO"

W=$(mktemp -d /var/tmp/mimstore-health.XXXXXX)
LOOPS=()
UDEV_FILES=()
THROTTLED=""
cleanup() {
  local rc=$?
  if [ -n "$THROTTLED" ]; then throttle "$THROTTLED" 0 0; fi
  dev_cluster_stop "$rc"
  local f m l
  for f in "${UDEV_FILES[@]}"; do rm -f "$f"; done
  for m in "$W/hdd" "$W/dbfs"; do mountpoint -q "$m" && umount "$m"; done
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# new_loop NAME SIZE MODEL: a loop device on W/NAME.img with a udev
# identity (model, serial) in udev's database, which libudev (Ceph's
# get_device_id) reads as it does a disk's; removed at the end
new_loop() {
  local name=$1 size=$2 model=$3 dev mm
  truncate -s "$size" "$W/$name.img"
  dev=$(losetup --find --show "$W/$name.img")
  LOOPS+=("$dev")
  mm=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
  mkdir -p /run/udev/data
  [ -e "/run/udev/data/b$mm" ] && die "/run/udev/data/b$mm exists: a udev manages $dev here; this test would overwrite its record"
  printf 'E:ID_MODEL=%s\nE:ID_SERIAL_SHORT=%s\n' "$model" "$(basename "$W")-$name" >"/run/udev/data/b$mm"
  UDEV_FILES+=("/run/udev/data/b$mm")
  echo "$dev"
}

throttle() {  # throttle DEV WRITE_IOPS WRITE_BPS (0 0: lifted)
  local mm; mm=$(lsblk -dno MAJ:MIN "$1" | tr -d ' ')
  echo "$mm $2" >$BLKIO/blkio.throttle.write_iops_device
  echo "$mm $3" >$BLKIO/blkio.throttle.write_bps_device
}

HDD=$(new_loop hdd 512M MIMTEST_HDD)
NVME=$(new_loop nvme 64M MIMTEST_NVME)
DBDEV=$(new_loop db 320M MIMTEST_DB)
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
# Windows short enough for a test; the op threads may wait for journal
# room longer than the 15 s default before the OSD calls itself unhealthy.
dev_cluster_start 1 true \
  "mimstore db dir = $W/dbfs/db" \
  "mimstore warn journal full window = 30" \
  "mimstore warn checkpoint age = 20" \
  "mimstore backoff max delay = 0" "mimstore backoff pace = false" \
  "osd op thread timeout = 120" "osd op thread suicide timeout = 600"
POOL=health
dev_pool_create $POOL 8 1

# ---- devices ------------------------------------------------------------------
hddn=$(basename "$HDD") nvmen=$(basename "$NVME") dbn=$(basename "$DBDEV")
log "ceph osd metadata: the three devices and their ids"
meta=$($CEPH osd metadata 0 -f json)
/usr/bin/python3 - "$meta" "$hddn" "$nvmen" "$dbn" <<'EOF' || die "osd metadata lacks the devices (above)"
import json, sys
m = json.loads(sys.argv[1]); hdd, nvme, db = sys.argv[2:5]
want = {"devices": ",".join(sorted([hdd, nvme, db])),
        "mimstore_data_devices": hdd, "mimstore_journal_devices": nvme,
        "mimstore_db_devices": db}
bad = [(k, m.get(k), v) for k, v in want.items() if m.get(k) != v]
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

# ---- statfs -------------------------------------------------------------------
log "ceph osd df: the omap DB's bytes"
$RADOS -p $POOL setomapval probe k v
omap_kb=0
for _ in $(seq 30); do
  omap_kb=$($CEPH osd df -f json | /usr/bin/python3 -c \
    'import json,sys; print([n for n in json.load(sys.stdin)["nodes"] if n["id"] == 0][0]["kb_used_omap"])')
  [ "$omap_kb" -gt 0 ] && break
  sleep 2
done
[ "$omap_kb" -gt 0 ] || die "ceph osd df shows no omap bytes for osd.0"
log "  osd.0 OMAP: $omap_kb KiB"

# ---- health warnings ------------------------------------------------------------
checks() { $CEPH health detail -f json | /usr/bin/python3 -c \
  'import json,sys; print(" ".join(sorted(json.load(sys.stdin).get("checks", {}))))'; }
# wait_check KEY present|absent SECONDS
wait_check() {
  local key=$1 want=$2 limit=$3 t=0 now
  while :; do
    now=$(checks)
    case " $now " in
      *" $key "*) [ "$want" = present ] && break ;;
      *) [ "$want" = absent ] && break ;;
    esac
    [ $t -ge "$limit" ] && die "$key not $want after $limit s (health checks: $now)"
    sleep 2; t=$((t + 2))
  done
  if [ "$want" = present ]; then
    log "  $key raised after ${t} s: $($CEPH health detail | grep -A1 "$key" | tail -n 1 | sed 's/^ *//')"
  else
    log "  $key cleared after ${t} s"
  fi
}
before=$(checks)
case " $before " in *" MIMSTORE_"*) die "a MIMSTORE warning before any cause: $before" ;; esac

log "MIMSTORE_DATA_FS_INODES: objects until under 4 % of the data filesystem's inodes are free"
# objs fill|remove: write one-byte objects until under 4 % of the data
# filesystem's inodes are free (in batches of at most a fifth of what is
# left above 3.5 %, so that it never runs out), or remove them
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
        if st.f_ffree < 0.04 * st.f_files:
            break
        for _ in range(max(1, min(200, (st.f_ffree - int(0.035 * st.f_files)) // 5))):
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
wait_check MIMSTORE_DATA_FS_INODES present 90
objs remove
wait_check MIMSTORE_DATA_FS_INODES absent 90

log "MIMSTORE_DB_FS_FULL: the DB's filesystem filled to 97 %"
avail=$(df -B1 --output=avail "$W/dbfs" | tail -n 1)
size=$(df -B1 --output=size "$W/dbfs" | tail -n 1)
fallocate -l $((avail - size * 3 / 100)) "$W/dbfs/filler"
wait_check MIMSTORE_DB_FS_FULL present 90
rm -f "$W/dbfs/filler"
wait_check MIMSTORE_DB_FS_FULL absent 90

log "MIMSTORE_WRITEBACK_LAG and MIMSTORE_JOURNAL_FULL: random writes onto a data disk throttled to 10 writes/s, 256 KB/s"
rbd -c "$CEPH_CONF" create --size 64M $POOL/img
THROTTLED=$HDD
throttle "$HDD" 10 262144
fio --name=health --ioengine=rbd --clientname=admin --pool=$POOL --rbdname=img \
  --rw=randwrite --bs=4k --iodepth=16 --time_based --runtime=90 \
  --output="$DEV_DEST/fio-health.txt" >/dev/null 2>&1 &
fio_pid=$!
wait_check MIMSTORE_WRITEBACK_LAG present 80
wait_check MIMSTORE_JOURNAL_FULL present 80
kill "$fio_pid" 2>/dev/null || true
wait "$fio_pid" 2>/dev/null || true
throttle "$HDD" 0 0
THROTTLED=""
log "throttle lifted, writes stopped"
wait_check MIMSTORE_WRITEBACK_LAG absent 120
wait_check MIMSTORE_JOURNAL_FULL absent 120

log "MIMSTORE_FSCK_ERRORS: a stray file in a collection, found by ceph-objectstore-tool --op fsck"
osd_stop() {
  local pid; pid=$(dev_osd_pid 0)
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.5; done
}
cot() {
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-objectstore-tool" -c "$CEPH_CONF" \
    --data-path "$W/hdd" --journal-path "$NVME" --no-mon-config "$@"
}
osd_stop
coll=$(find "$W/hdd/objects" -mindepth 1 -maxdepth 1 -type d -name '*_head' | head -n 1)
[ -n "$coll" ] || die "no collection directory under $W/hdd/objects"
echo stray >"$coll/not-an-object"
out=$(cot --op fsck 2>&1) && die "fsck passed a stray file: $out"
echo "$out" | tail -n 3
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not come back"
wait_check MIMSTORE_FSCK_ERRORS present 90
osd_stop
rm -f "$coll/not-an-object"
cot --op fsck >/dev/null 2>&1 || die "fsck still fails after the stray file went: $(cot --op fsck 2>&1 | tail -n 3)"
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not come back"
wait_check MIMSTORE_FSCK_ERRORS absent 90
log "PASS: devices, omap bytes and five health warnings, each raised and cleared"
