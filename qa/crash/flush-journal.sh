#!/usr/bin/env bash
# Replacing an OSD's journal device, as an operator does when an NVMe
# fails (issue 61 items 6 and 7), on a 1-OSD vstart cluster with merging on
# and pool size 1 (no peer can repair a loss):
#   1. fio rbd writes 4 KiB random writes with verify=crc32c over a region;
#   2. `ceph daemon osd.0 flush_journal` on the running OSD (OSD::shutdown
#      makes the same call): the OSD keeps serving (more writes, verified),
#      and its next stop leaves the journal empty;
#   3. the OSD starts again, writes a third region, and stops with
#      osd_journal_flush_on_shutdown off and no flush asked for, so its
#      merge window stays in the journal (`--dump-journal` lists entries);
#   4. with the journal file moved away, `--mkjournal` must refuse (the lost
#      journal held the window); the journal comes back;
#   5. `ceph-osd --flush-journal`, then `--dump-journal` lists no live
#      entry; the journal file is moved away (the new device) and
#      `--mkjournal` makes a new one;
#   6. the OSD starts on it and fio's verify pass reads every write back.
#
#   qa/crash/flush-journal.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"
[ $# = 0 ] || { sed -n '2,17p' "$0"; exit 2; }

trap 'dev_cluster_stop $?' EXIT
trap 'exit 130' INT TERM

POOL=fj
REGION=$((32 << 20))
dev_cluster_start 1 true "osd journal flush on shutdown = false" \
  "mimstore max flush interval = 600" "mimstore sync interval = 1"
dev_pool_create $POOL 8 1
rbd -c "$CEPH_CONF" create --size 128M $POOL/img

fio_region() {  # fio_region I [extra fio args]
  local i=$1; shift
  fio --name=region$i --ioengine=rbd --clientname=admin --pool=$POOL \
    --rbdname=img --rw=randwrite --bs=4k --iodepth=16 \
    --offset=$((i * REGION)) --size=$REGION --randseed=$((2000 + i)) \
    --verify=crc32c --verify_fatal=1 --verify_state_save=0 "$@"
}
osd_tool() {  # ceph-osd -i 0 with a tool flag; output in $DEV_DEST/tool.txt
  (cd "$CEPH_BUILD_DIR" && LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib \
     "$BIN/ceph-osd" -i 0 -c "$CEPH_CONF" "$@") >"$DEV_DEST/tool.txt" 2>&1
}
live_entries() {  # live entries --dump-journal lists
  osd_tool --dump-journal || { cat "$DEV_DEST/tool.txt" >&2; die "--dump-journal failed"; }
  grep -c '^  sn [0-9]* off ' "$DEV_DEST/tool.txt" || true
}

log "1. writing region 0 (fio rbd, verify=crc32c)"
fio_region 0 --do_verify=0 --output="$DEV_DEST/fio-0.txt" ||
  { cat "$DEV_DEST/fio-0.txt" >&2; die "fio write failed"; }
log "2. flush_journal on the running OSD (admin socket), then region 1"
$CEPH daemon osd.0 flush_journal >"$DEV_DEST/flush-daemon.txt" 2>&1 ||
  { cat "$DEV_DEST/flush-daemon.txt" >&2; die "ceph daemon osd.0 flush_journal failed"; }
dev_wait_up 1 60 || die "osd.0 went down after flush_journal"
fio_region 1 --do_verify=1 --output="$DEV_DEST/fio-1.txt" ||
  { cat "$DEV_DEST/fio-1.txt" >&2; die "fio write+verify after flush_journal failed"; }

dev_osd_stop 0
n=$(live_entries)
[ "$n" = 0 ] || { cat "$DEV_DEST/tool.txt" >&2; die "the stop after the admin socket's flush_journal left $n live entries"; }

log "3. osd.0 again, region 2, a stop that keeps the window (osd_journal_flush_on_shutdown off)"
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not start again"
fio_region 2 --do_verify=0 --output="$DEV_DEST/fio-2.txt" ||
  { cat "$DEV_DEST/fio-2.txt" >&2; die "fio write of region 2 failed"; }
dev_osd_stop 0
journal=$(cd "$CEPH_BUILD_DIR" && LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib \
  "$BIN/ceph-osd" -i 0 -c "$CEPH_CONF" --show-config-value osd_journal)
[ -e "$journal" ] || die "no journal at $journal"
window=$(live_entries)
log "the stopped OSD's journal holds $window live entries (its merge window)"
[ "$window" -gt 0 ] || die "the stop left no window in the journal: nothing to test"

log "4. --mkjournal with the journal gone must refuse"
mv "$journal" "$journal.old"
if osd_tool --mkjournal; then
  cat "$DEV_DEST/tool.txt" >&2
  die "--mkjournal made a new journal although the lost one held $window entries"
fi
# (derr reaches stderr and the OSD's log)
grep -q 'not have been left\|was not left' "$DEV_DEST/tool.txt" "$DEV_DEST"/out/osd.0.log ||
  { cat "$DEV_DEST/tool.txt" >&2; die "--mkjournal failed, but not with the lost-window refusal"; }
[ ! -e "$journal" ] || die "the refused --mkjournal left a journal at $journal"
mv "$journal.old" "$journal"

log "5. --flush-journal, --dump-journal, a new journal"
osd_tool --flush-journal || { cat "$DEV_DEST/tool.txt" >&2; die "--flush-journal failed"; }
n=$(live_entries)
[ "$n" = 0 ] || { cat "$DEV_DEST/tool.txt" >&2; die "--dump-journal lists $n live entries after --flush-journal"; }
mv "$journal" "$journal.old"
osd_tool --mkjournal || { cat "$DEV_DEST/tool.txt" >&2; die "--mkjournal after --flush-journal failed"; }
[ -e "$journal" ] || die "--mkjournal made no journal at $journal"

log "6. osd.0 on the new journal; every write read back"
dev_osd_start 0
dev_wait_up 1 120 || die "osd.0 did not start on the new journal"
for i in 0 1 2; do
  fio_region $i --verify_only --output="$DEV_DEST/verify-$i.txt" ||
    { cat "$DEV_DEST/verify-$i.txt" >&2; die "region $i: verification failed after the journal was replaced"; }
done
w0=$(sed -n 's/.*issued rwts: total=[0-9]*,\([0-9]*\),.*/\1/p' "$DEV_DEST/fio-0.txt" | head -1)
w1=$(sed -n 's/.*issued rwts: total=[0-9]*,\([0-9]*\),.*/\1/p' "$DEV_DEST/fio-1.txt" | head -1)
w2=$(sed -n 's/.*issued rwts: total=[0-9]*,\([0-9]*\),.*/\1/p' "$DEV_DEST/fio-2.txt" | head -1)
[ "${w0:-0}" -gt 0 ] && [ "${w1:-0}" -gt 0 ] && [ "${w2:-0}" -gt 0 ] ||
  die "fio wrote nothing (regions: ${w0:-0}, ${w1:-0}, ${w2:-0})"
echo "journal replaced after --flush-journal: $((w0 + w1 + w2)) acknowledged 4 KiB writes, all read back; --mkjournal refused while the lost journal held $window entries"
