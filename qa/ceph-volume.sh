#!/usr/bin/env bash
# ceph-volume deploys a mimstore OSD, as an operator does on an HDD and an
# NVMe partition (patch 0014: `raw prepare --mimstore`, `raw list`, `raw
# activate`), on loop devices, against a vstart cluster (a mon and a mgr,
# no OSDs):
#   1. `raw prepare --mimstore --data HDD --journal NVME`: an XFS labelled
#      mimstore on the HDD, mounted at /var/lib/ceph/osd/<cluster>-<id>, the
#      journal link, the OSD's mkfs (as the ceph user), the OSD in the map
#   2. `raw list` (every device, and the HDD alone): the OSD, its id, its
#      cluster fsid, its data and journal devices, type mimstore; the OSD
#      directory unmounted first, so that list reads it from a read-only
#      mount of its own
#   3. `raw activate --device HDD --no-systemd`: mounted again, the journal
#      link there; the OSD started as systemd would start it, up, serving
#      a pool of its own: an object written and read back, and `ceph osd
#      metadata` names the HDD and the NVMe
#   4. the HDD replaced (docs/operating.md): the OSD stopped and destroyed,
#      its devices wiped, `raw prepare --osd-id N`: the same id, a new
#      fsid; activated, up, serving a new pool
# Then ceph-volume's own unit tests of the raw commands and of the helpers
# they use, with the mimstore cases of the patch, and of the lvm commands
# (patch 0015: `lvm prepare/create/activate --mimstore`, which needs
# device-mapper to run, and this machine has none: its unit tests only).
#
# The cluster has a name of its own (ceph-volume --cluster), so nothing of
# this test touches /var/lib/ceph/osd/ceph-* or /etc/ceph.
#
#   qa/ceph-volume.sh        (root: loop devices, mkfs, mount)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

[ "$(id -u)" = 0 ] || die "run as root (loop devices, mkfs, mount)"
getent passwd ceph >/dev/null || die "no ceph user (Debian's ceph-common makes it: qa/setup.sh)"
CV_SRC=$CEPH_SOURCE_DIR/src/ceph-volume
grep -q -- "--mimstore" "$CV_SRC/ceph_volume/devices/raw/common.py" ||
  die "ceph-volume has no --mimstore (patch 0014 not applied: cmake/ceph-build.sh)"
grep -q -- "--mimstore" "$CV_SRC/ceph_volume/devices/lvm/common.py" ||
  die "ceph-volume lvm has no --mimstore (patch 0015 not applied: cmake/ceph-build.sh)"
for c in mkfs.xfs blkid lsblk; do command -v $c >/dev/null || die "$c not found"; done

CLUSTER=mimtest$$
OSD_DIR=""
OSD_PID=""
W=$(mktemp -d /var/tmp/mimstore-cv.XXXXXX)
LOOPS=()
UDEVD_OURS=0
UDEV_MADE=()
UDEV_BEFORE=""  # with a udevd of ours: what /run/udev and /dev/disk held before
cleanup() {
  local rc=$? l
  osd_stop
  dev_cluster_stop "$rc"
  # Ours told to exit (it waits for its workers), and gone, before what it
  # made is removed: a live one would write it again.
  if [ "$UDEVD_OURS" = 1 ]; then
    udevadm control --exit 2>/dev/null || pkill -x systemd-udevd || true
    wait_gone
    # everything it made, its control socket too, also under a /run/udev
    # that was there before: a socket left behind reads as a live udevd
    comm -13 <(printf '%s\n' "$UDEV_BEFORE") \
      <(find /run/udev /dev/disk 2>/dev/null | sort) | sort -r |
      while read -r p; do rm -rf "$p"; done
  fi
  rm -rf "${UDEV_MADE[@]}"
  for l in "${UDEV_MADE[@]}"; do
    [ ! -e "$l" ] || { echo "cleanup: $l is back after its removal (a udevd still running?)" >&2; rc=1; }
  done
  if [ -n "$OSD_DIR" ]; then
    if mountpoint -q "$OSD_DIR"; then umount "$OSD_DIR" || umount -l "$OSD_DIR" || true; fi
    rm -rf "$OSD_DIR"
  fi
  rm -f "/var/lib/ceph/bootstrap-osd/$CLUSTER.keyring"
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  if [ "$rc" != 0 ] && [ -d "$W/log" ]; then
    echo "---- failed; the last lines of the OSD's output and log:" >&2
    tail -n 20 "$W/log/osd.out" >&2 2>/dev/null || true
    tail -n 30 "$W/log/$CLUSTER-osd.0.log" >&2 2>/dev/null || true
    local keep=$MIMSTORE_WORKDIR/cv-failed
    rm -rf "$keep"
    cp -a "$W/log" "$keep" 2>/dev/null &&
      echo "ceph-volume's and the OSD's logs kept in $keep" >&2
  fi
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT
wait_gone() {  # wait_gone: no systemd-udevd left (10 s at most)
  local i
  for ((i = 0; i < 100; i++)); do pgrep -x systemd-udevd >/dev/null || return 0; sleep 0.1; done
}
# The OSD started as ceph-osd@.service starts it, in the background, and
# stopped (SIGTERM, waited for)
osd_start() {
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" CEPH_CONF="$CV_CONF" "$BIN/ceph-osd" -f \
    --cluster "$CLUSTER" -i "$OSD_ID" --setuser ceph --setgroup ceph \
    >>"$W/log/osd.out" 2>&1 &
  OSD_PID=$!
}
osd_stop() {
  [ -n "$OSD_PID" ] || return 0
  kill "$OSD_PID" 2>/dev/null || true
  while kill -0 "$OSD_PID" 2>/dev/null; do sleep 0.5; done
  OSD_PID=""
}
# osd_state: osd.$OSD_ID's states in the osd map, space separated
osd_state() {
  $CEPH osd dump -f json | /usr/bin/python3 -c '
import json, sys
o = [o for o in json.load(sys.stdin)["osds"] if o["osd"] == int(sys.argv[1])]
print(" ".join(o[0]["state"]) if o else "")' "$OSD_ID"
}
trap 'exit 130' INT TERM

# sparse files: they hold only what is written
new_loop() {
  truncate -s 6G "$W/$1.img"
  NEW_LOOP=$(losetup --find --show "$W/$1.img")
  LOOPS+=("$NEW_LOOP")
}
new_loop hdd; HDD=$NEW_LOOP
new_loop nvme; NVME=$NEW_LOOP

# Squid's and later ceph-volume read the udev database entry of every
# block device (/run/udev/data/b<major>:<minor>, disk.UdevData), which
# systemd-udevd keeps on a host. Where none runs (a container), one is
# started for this test and stopped at its end; only our two devices are
# announced to it, and every other device without an entry gets what udev
# knows of it, the kernel's properties, as a host has. What the test made
# (/run/udev and /dev/disk when they were not there, and each entry it
# wrote) is removed at the end, so that no later test sees it.
udev_entry() { echo "/run/udev/data/b$(cat "$1/dev")"; }  # udev_entry SYSFS_DIR
if grep -q "class UdevData" "$CV_SRC/ceph_volume/util/disk.py"; then
  for p in /run/udev /dev/disk; do [ -e "$p" ] || UDEV_MADE+=("$p"); done
  # (no udevd answering: a control socket or entries left by one that is
  # gone do not count; udevadm trigger --settle would wait for it forever)
  if ! udevadm control --ping -t 2 >/dev/null 2>&1 && ! pgrep -x systemd-udevd >/dev/null; then
    UDEV_BEFORE=$(find /run/udev /dev/disk 2>/dev/null | sort || true)
    /lib/systemd/systemd-udevd --daemon || die "systemd-udevd did not start"
    UDEVD_OURS=1
  fi
  udevadm trigger --action=add --settle "$HDD" "$NVME" ||
    die "udevadm trigger of $HDD $NVME failed"
  for d in /sys/class/block/*; do
    e=$(udev_entry "$d")
    [ -e "$e" ] && continue
    udevadm info --query=property --path="$d" | sed 's/^/E:/' >"$e"
    UDEV_MADE+=("$e")
  done
  for l in "$HDD" "$NVME"; do
    e=$(udev_entry "/sys/class/block/${l#/dev/}")
    [ -e "$e" ] || die "no udev entry for $l ($e)"
  done
fi

# A mon and a mgr; the OSD comes from ceph-volume
DEV_MGR=1 dev_cluster_start 0 true "osd mclock skip benchmark = true"

# The cluster as its hosts see it: a ceph.conf of its own (the vstart one
# names vstart's paths, which the ceph user cannot write), with the log,
# admin socket and pid file where it can
chmod 755 "$W"
mkdir -p "$W/bin" "$W/log" "$W/run"
chown ceph:ceph "$W/run"
chmod 1777 "$W/log"
CV_CONF=$W/$CLUSTER.conf
cat >"$CV_CONF" <<EOF
[global]
        fsid = $($CEPH fsid)
        mon host = $(LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-conf" -c "$CEPH_CONF" --show-config-value mon_host)
        plugin dir = $CEPH_BUILD_DIR/lib
        erasure code dir = $CEPH_BUILD_DIR/lib
        log file = $W/log/\$cluster-\$name.log
        admin socket = $W/run/\$cluster-\$name.asok
        pid file = $W/run/\$cluster-\$name.pid
[osd]
        osd class dir = $CEPH_BUILD_DIR/lib
        osd mclock skip benchmark = true
EOF
# What ceph-volume runs by name: the Reef build's tools, and its ceph CLI
# with the build's python bindings
for t in ceph-osd ceph-authtool ceph-bluestore-tool; do
  [ -x "$BIN/$t" ] || die "no $t in $BIN (cmake/ceph-build.sh builds it)"
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$CEPH_BUILD_DIR/lib" "$BIN/$t" >"$W/bin/$t"
done
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s PYTHONPATH=%s exec %s "$@"\n' "$CEPH_BUILD_DIR/lib" \
  "$CEPH_SOURCE_DIR/src/pybind:$CEPH_BUILD_DIR/lib/cython_modules/lib.3:$CEPH_SOURCE_DIR/src/python-common" \
  "$BIN/ceph" >"$W/bin/ceph"
chmod +x "$W/bin/"*
cv() {
  env PATH="$W/bin:$PATH" CEPH_CONF="$CV_CONF" CEPH_VOLUME_ALLOW_LOOP_DEVICES=true \
    PYTHONPATH="$CV_SRC:$CEPH_SOURCE_DIR/src/python-common" \
    /usr/bin/python3 -c 'import sys; from ceph_volume.main import Volume; Volume(argv=sys.argv)' \
    --cluster "$CLUSTER" --log-path "$W/log" "$@"
}
$CEPH auth get-or-create client.bootstrap-osd mon 'allow profile bootstrap-osd' \
  -o "/var/lib/ceph/bootstrap-osd/$CLUSTER.keyring" >/dev/null

# ---- prepare -------------------------------------------------------------------
log "ceph-volume raw prepare --mimstore --data $HDD --journal $NVME"
cv raw prepare --mimstore --data "$HDD" --journal "$NVME" >"$W/prepare.out" 2>&1 ||
  { tail -n 20 "$W/prepare.out" >&2; die "raw prepare failed"; }
OSD_ID=$($CEPH osd ls | tail -n 1)
[ "$OSD_ID" = 0 ] || die "expected osd.0 in the map after prepare, osd ls: $($CEPH osd ls | xargs)"
OSD_DIR=/var/lib/ceph/osd/$CLUSTER-$OSD_ID
mountpoint -q "$OSD_DIR" || die "$OSD_DIR is not mounted after prepare"
[ "$(findmnt -no SOURCE "$OSD_DIR")" = "$HDD" ] || die "$OSD_DIR is not the HDD's filesystem"
[ "$(blkid -c /dev/null -p -s LABEL -o value "$HDD")" = mimstore ] || die "the HDD's XFS is not labelled mimstore"
[ "$(readlink -f "$OSD_DIR/journal")" = "$NVME" ] || die "journal link: $(readlink "$OSD_DIR/journal")"
[ "$(cat "$OSD_DIR/type")" = mimstore ] || die "$OSD_DIR/type: $(cat "$OSD_DIR/type")"
[ "$(stat -c %U "$OSD_DIR/objects")" = ceph ] || die "the OSD's files are not the ceph user's"
log "  osd.$OSD_ID: XFS 'mimstore' on $HDD at $OSD_DIR, journal -> $NVME, mkfs done as ceph"
OSD_UUID=$(cat "$OSD_DIR/fsid")

# ---- list ----------------------------------------------------------------------
umount "$OSD_DIR"
check_list() {  # check_list WHAT [DEVICE]: raw list's JSON names this OSD
  cv raw list --format json ${2:+"$2"} >"$W/list.json" 2>"$W/list.err" ||
    { cat "$W/list.err" >&2; die "raw list $1 failed"; }
  /usr/bin/python3 - "$W/list.json" "$OSD_UUID" "$OSD_ID" "$HDD" "$NVME" \
      "$($CEPH fsid)" "$1" <<'EOF'
import json, sys
path, uuid, osd_id, hdd, nvme, fsid, what = sys.argv[1:8]
report = json.load(open(path))
want = {"osd_uuid": uuid, "osd_id": int(osd_id), "device": hdd, "device_journal": nvme,
        "ceph_fsid": fsid, "type": "mimstore"}
got = report.get(uuid)
if got != want:
    sys.exit("raw list %s: %r, expected %r (whole report: %r)" % (what, got, want, report))
EOF
}
check_list "(every device)"
check_list "$HDD" "$HDD"
mountpoint -q "$OSD_DIR" && die "raw list left $OSD_DIR mounted"
log "  raw list (every device, and $HDD): osd.$OSD_ID, mimstore, data $HDD, journal $NVME"

# ---- activate and start --------------------------------------------------------
log "ceph-volume raw activate --device $HDD --no-systemd"
cv raw activate --device "$HDD" --no-systemd >"$W/activate.out" 2>&1 ||
  { tail -n 20 "$W/activate.out" >&2; die "raw activate failed"; }
mountpoint -q "$OSD_DIR" || die "$OSD_DIR is not mounted after activate"
[ "$(readlink -f "$OSD_DIR/journal")" = "$NVME" ] || die "journal link after activate: $(readlink "$OSD_DIR/journal")"
osd_start
dev_wait_up 1 120 || { tail -n 20 "$W/log/osd.out" >&2; die "osd.$OSD_ID did not come up"; }
dev_pool_create cv 8 1
echo "written through a ceph-volume OSD" >"$W/obj"
$RADOS -p cv put obj "$W/obj"
$RADOS -p cv get obj "$W/obj.back"
cmp -s "$W/obj" "$W/obj.back" || die "the object read back differs"
$CEPH osd metadata "$OSD_ID" -f json | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin); hdd, nvme = sys.argv[1:3]
want = {"osd_objectstore": "mimstore", "mimstore_data_devices": hdd, "mimstore_journal_devices": nvme}
bad = {k: m.get(k) for k, v in want.items() if m.get(k) != v}
sys.exit("osd metadata: %r, expected %r" % (bad, want) if bad else 0)' \
  "$(basename "$HDD")" "$(basename "$NVME")"
log "  osd.$OSD_ID up, an object written and read back; osd metadata: mimstore on $(basename "$HDD"), journal $(basename "$NVME")"

# ---- replacing the HDD -----------------------------------------------------------
# docs/operating.md "Replacing a failed HDD": the OSD stopped and marked
# destroyed (its id and key kept for the new disk), both of its devices
# wiped (the journal holds the lost disk's window, useless without it),
# then prepare with --osd-id: the same id, a new fsid, an empty store.
# The pool here has one copy, so it goes first (with replicas, recovery
# refills the new OSD; a size-1 PG on a new disk would stay incomplete).
log "replacing the HDD of osd.$OSD_ID: stop, osd destroy, wipe, raw prepare --osd-id $OSD_ID, activate"
$CEPH osd pool rm cv cv --yes-i-really-really-mean-it >/dev/null 2>&1 ||
  { $CEPH config set mon mon_allow_pool_delete true >/dev/null &&
    $CEPH osd pool rm cv cv --yes-i-really-really-mean-it >/dev/null; } ||
  die "cannot remove pool cv"
osd_stop
$CEPH osd destroy "$OSD_ID" --yes-i-really-mean-it >/dev/null
state=" $(osd_state) "
[[ $state == *" destroyed "* ]] || die "osd.$OSD_ID is not destroyed: '$state'"
umount "$OSD_DIR"
# a new disk in the old one's slot: here the same loop device, wiped
wipefs -a -q "$HDD"
dd if=/dev/zero of="$NVME" bs=1M count=1 oflag=direct status=none
cv raw prepare --mimstore --osd-id "$OSD_ID" --data "$HDD" --journal "$NVME" >"$W/prepare2.out" 2>&1 ||
  { tail -n 20 "$W/prepare2.out" >&2; die "raw prepare --osd-id $OSD_ID failed"; }
[ "$($CEPH osd ls | xargs)" = "$OSD_ID" ] || die "osd ls after the replacement: $($CEPH osd ls | xargs)"
NEW_UUID=$(cat "$OSD_DIR/fsid")
[ "$NEW_UUID" != "$OSD_UUID" ] || die "the new store kept the old fsid"
umount "$OSD_DIR"
cv raw activate --device "$HDD" --no-systemd >"$W/activate2.out" 2>&1 ||
  { tail -n 20 "$W/activate2.out" >&2; die "raw activate after the replacement failed"; }
osd_start
dev_wait_up 1 120 || { tail -n 20 "$W/log/osd.out" >&2; die "the replaced osd.$OSD_ID did not come up"; }
state=" $(osd_state) "
[[ $state == *" exists "* && $state == *" up "* && $state != *" destroyed "* ]] ||
  die "osd.$OSD_ID state '$state' after the replacement (wanted exists and up, not destroyed)"
dev_pool_create cv2 8 1
$RADOS -p cv2 put obj "$W/obj"
$RADOS -p cv2 get obj "$W/obj.back2"
cmp -s "$W/obj" "$W/obj.back2" || die "the object read back from the replaced OSD differs"
log "  osd.$OSD_ID replaced: same id, new fsid $NEW_UUID, up, serving a new pool"

# ---- ceph-volume's unit tests ---------------------------------------------------
log "ceph-volume unit tests: raw prepare, list, activate; lvm prepare, create, activate, batch, list; the prepare helpers; the objectstore classes (Squid and later)"
# One upstream test is left out: it expects argparse's "optional
# arguments" heading, which Python 3.10 renamed "options" (Debian 12 has
# 3.11); it fails without any patch of ours.
L=ceph_volume/tests/devices/lvm
# Squid and later: the objectstore classes (raw and lvm, mimstore's too).
OS_TESTS=()
[ ! -d "$CV_SRC/ceph_volume/tests/objectstore" ] || OS_TESTS=(ceph_volume/tests/objectstore)
(cd "$CV_SRC" && PYTHONPATH="$CV_SRC:$CEPH_SOURCE_DIR/src/python-common" \
   /usr/bin/python3 -m pytest -q -p no:cacheprovider \
   ceph_volume/tests/devices/raw ceph_volume/tests/util/test_prepare.py "${OS_TESTS[@]}" \
   $L/test_mimstore.py $L/test_prepare.py $L/test_create.py $L/test_activate.py \
   $L/test_common.py $L/test_trigger.py $L/test_batch.py $L/test_listing.py $L/test_zap.py \
   ceph_volume/tests/util/test_device.py \
   --deselect $L/test_prepare.py::TestActivate::test_main_shows_full_help) >"$W/pytest.out" 2>&1 ||
  { tail -n 30 "$W/pytest.out" >&2; die "ceph-volume's unit tests failed"; }
log "  $(tail -n 1 "$W/pytest.out")"
log "PASS"
