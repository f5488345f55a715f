#!/usr/bin/env bash
# kill -9 under load: a vstart cluster of 3 mimstore OSDs (pool size 2)
# under fio rbd 4 KiB random writes with verify=crc32c. Each cycle writes
# its own 16 MiB region of an image; while fio runs, a random OSD is killed
# with SIGKILL at a random moment and restarted. fio verifies its region
# at the end of the cycle, and after all cycles every region is read back
# and verified again (acknowledged writes of earlier cycles survived the
# later kills and recoveries).
#
#   qa/crash/kill9-cycles.sh [--cycles N] [--merge true|false] [--pool-size 1|2]
#                            [--ram-window]
#
# --ram-window keeps merged bytes in memory (mimstore merge data in journal
# = false, the paper's window) instead of only in the journal (the default).
#
# With pool size 2 a lost write on the killed OSD could be repaired by
# recovery from its peer; pool size 1 leaves the killed OSD's store as the
# only copy, so nothing but its own journal replay can bring a write back.
# Prints the number of acknowledged writes and of lost ones (must be 0).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

CYCLES=20
MERGE=true
POOL_SIZE=2
WINDOW=()
while [ $# -gt 0 ]; do
  case $1 in
    --cycles) CYCLES=$2; shift ;;
    --merge) MERGE=$2; shift ;;
    --pool-size) POOL_SIZE=$2; shift ;;
    --ram-window) WINDOW=("mimstore merge data in journal = false") ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
trap 'dev_cluster_stop $?' EXIT
trap 'exit 130' INT TERM

REGION=$((16 << 20))
POOL=kill9
dev_cluster_start 3 "$MERGE" "osd heartbeat grace = 6" \
  "osd heartbeat interval = 1" "mimstore sync interval = 2" \
  "mimstore max flush interval = 1" ${WINDOW[@]+"${WINDOW[@]}"}
dev_pool_create $POOL 32 "$POOL_SIZE"
rbd -c "$CEPH_CONF" create --size $((CYCLES * REGION / 1048576))M $POOL/img

fio_region() {  # fio_region I [extra fio args]
  local i=$1; shift
  fio --name=region$i --ioengine=rbd --clientname=admin --pool=$POOL \
    --rbdname=img --rw=randwrite --bs=4k --iodepth=16 --rate_iops=1200 \
    --offset=$((i * REGION)) --size=$REGION --randseed=$((1000 + i)) \
    --verify=crc32c --verify_fatal=1 --verify_state_save=0 "$@"
}

acked=0
for i in $(seq 0 $((CYCLES - 1))); do
  fio_region "$i" --do_verify=1 --output="$DEV_DEST/fio-$i.txt" &
  fio_pid=$!
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.1f", 0.5 + (r % 30) / 10 }')"
  victim=$((RANDOM % 3))
  log "cycle $((i + 1))/$CYCLES: kill -9 osd.$victim during region $i"
  dev_osd_kill $victim
  sleep 1
  dev_osd_start $victim
  if ! wait $fio_pid; then
    cat "$DEV_DEST/fio-$i.txt" >&2
    die "cycle $i: fio write+verify failed (lost or corrupt acknowledged data)"
  fi
  n=$(sed -n 's/.*issued rwts: total=[0-9]*,\([0-9]*\),.*/\1/p' "$DEV_DEST/fio-$i.txt" | head -1)
  acked=$((acked + ${n:-0}))
  dev_wait_up 3 120 || die "osd.$victim did not come back"
done

replays=$(grep -h "replayed [0-9]* transactions" "$DEV_DEST"/out/osd.*.log | awk '$0 !~ / 0 transactions/' | wc -l)
log "all cycles done ($replays restarts replayed a journal): verifying every region again"
for i in $(seq 0 $((CYCLES - 1))); do
  fio_region "$i" --verify_only --output="$DEV_DEST/verify-$i.txt" ||
    { cat "$DEV_DEST/verify-$i.txt" >&2; die "region $i: verification failed"; }
done
echo "kill -9 cycles: $CYCLES (merge $MERGE$( ((${#WINDOW[@]})) && echo ', RAM window'), pool size $POOL_SIZE), acknowledged 4 KiB writes: $acked, lost: 0, restarts that replayed: $replays"
