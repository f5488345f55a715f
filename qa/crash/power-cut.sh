#!/usr/bin/env bash
# qa/crash/power-cut.sh - whole-stack power cuts: fio rbd with verify against
# one OSD whose HDD and NVMe are emulated disks with volatile write caches
# (qa/diskemu), the power cut at seeded random moments.
#
#   qa/crash/power-cut.sh [--profile P] [--cuts N] [--seed S] [--unsafe]
#                         [--region MIB] [--workdir DIR] [--results DIR]
#
#   --profile   mimstore (default), mimstore-nomerge or bluestore-hybrid
#               (vstart-configs/P.conf, as qa/bench.sh runs them)
#   --unsafe    the journal device (nvme0) acknowledges FLUSH without
#               emptying its cache, a drive that lies: the same as a store
#               that skips its journal's flush. The run must catch it: it
#               passes when an acknowledged write is lost or the store
#               refuses to come back, and fails if N cuts lose nothing.
#
# One cluster (1 mon, 1 mgr, 1 OSD, pool size 1: no replica can hide a
# loss); the mon's store is on the local disk, only the OSD's devices lose
# power. Every disk runs with its write cache on and destaging held
# ("destage off": written data stays in the cache until a FLUSH or a full
# cache forces it out), so a cut loses all that was not flushed, not what
# a timer happened to leave. Cycle i:
#   1. fio writes region i of the image (4 KiB random writes, each block
#      once, iodepth 16, at most 1000/s so that a 16 MiB region takes
#      about 4 s: the cut comes while writes are in flight), with
#      verify=crc32c headers, in the background;
#   2. after a seeded 0.5-3.5 s: "cut all" (every disk at once; odd cycles
#      torn: unflushed writes keep a seeded subset of their 512-byte
#      sectors), kill -9 of the OSD, unmount of XFS (mimstore);
#   3. power back ("restore all"), mount XFS (log recovery), start the OSD
#      (journal replay); fio's outstanding writes are resent by librbd and
#      complete;
#   4. fio --verify_only reads region i back (disks in fast mode: reading
#      is not what is tested) and checks every block.
# After the last cycle every region is verified again: the acknowledged
# writes of earlier cycles survived the later cuts and replays. Each block
# of a region is written once, so a lost write reads back as zeros or as a
# stale header and fails verification.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
QA_DIR=$REPO/qa
source "$QA_DIR/lib/common.sh"
source "$QA_DIR/lib/testbed.sh"
source "$QA_DIR/lib/cluster.sh"

profile=mimstore cuts=100 seed=1 unsafe=0 region_mib=16
workdir=/var/tmp/mimstore-powercut results=""
cmdline="qa/crash/power-cut.sh $*"
while (($#)); do
  case $1 in
    --profile) profile=$2; shift 2 ;;
    --cuts) cuts=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --unsafe) unsafe=1; shift ;;
    --region) region_mib=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done
[[ $cuts =~ ^[1-9][0-9]*$ ]] || die "--cuts must be a positive integer, not '$cuts'"
[[ $seed =~ ^[0-9]+$ ]] || die "--seed must be a non-negative integer, not '$seed'"
[[ $region_mib =~ ^[1-9][0-9]*$ ]] || die "--region must be a positive number of MiB, not '$region_mib'"
why=$(profile_check "$profile") || die "$why"
case $(profile_meta "$profile" store) in
  mimstore|bluestore) ;;
  *) die "profile $profile: power cuts need a store of the Ceph build (mimstore or bluestore)" ;;
esac
if ((unsafe)) && [[ $(profile_meta "$profile" store) != mimstore ]]; then
  die "--unsafe takes the journal device's flushes away: a mimstore profile only"
fi
require_cmds fio rbd jq
tag=$profile
if ((unsafe)); then tag+=-unsafe; fi
results=${results:-$workdir/results/$(date +%Y%m%d-%H%M%S)-power-cut-$tag}
mkdir -p "$results"

# The devices: the emulator serves the HDD and the NVMe (and BlueStore's
# WAL device), all with write caches.
# The drive the harness was validated with (its 128 MiB cache held dirty
# by destage off); the benchmarks' default drive is another.
export TB_HDD_KIND=emu TB_NVME_KIND=emu TB_EMU_WCACHE=on TB_EMU_PRESET=hdd7200
if [[ $(profile_meta "$profile" hdd) == raw ]]; then export TB_HDD_FS=raw; fi
if [[ $(profile_meta "$profile" wal) == yes ]]; then export TB_WAL_SIZE=1G; fi
tb_init "$workdir"
cleanup() {
  local rc=$?
  if ((rc != 0)) && [[ -n ${CLUSTER_DIR:-} && -d $CLUSTER_DIR/out ]]; then
    cp -a "$CLUSTER_DIR/out" "$results/daemon-logs" 2>/dev/null || true
    [[ -f $TB_EMU_LOG ]] && cp "$TB_EMU_LOG" "$results/" 2>/dev/null
  fi
  stop_writer
  cluster_stop >/dev/null 2>&1 || true
  tb_down >/dev/null 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

RANDOM=$seed   # every random choice below follows from --seed
PG=16
REGION=$((region_mib << 20))
tb_up 1
cluster_start "$profile" 1 1 "$PG"
timeout 120 rbd --conf "$CEPH_CONF" create --size "$((cuts * region_mib))M" "$CLUSTER_POOL/img" ||
  die "rbd create failed"

disks=("${TB_EMU_DISKS[@]}")
ctl() {  # ctl CMD...: an emulator command that must succeed
  local out
  out=$(_emu_ctl "$@") || die "the emulator refused '$*': $out"
}
hold_caches() {  # write caches on hold (destage off); --unsafe: nvme0 lies
  local d
  for d in "${disks[@]}"; do ctl destage "$d" off; done
  if ((unsafe)); then ctl flush nvme0 ignore; fi
}
hold_caches

# The OSD's pid: read when it starts (an OSD that aborts on EIO removes
# its pid file on the way out).
osd_pid() { cat "$CLUSTER_DIR/out/osd.0.pid" 2>/dev/null || true; }
osd_start() {
  (cd "$MIMSTORE_BUILD_DIR" &&
   env PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH" LD_LIBRARY_PATH="$MIMSTORE_BUILD_DIR/lib" \
     bin/ceph-osd -i 0 -c "$CEPH_CONF") >>"$CLUSTER_DIR/osd-restart.log" 2>&1
}
# osd.0's up_from epoch; osd_up_after E: a new instance is up (after E).
# (With one OSD no peer reports the dead one: the monitor still shows the
# old instance up until the new one boots.)
osd_up_from() { CCEPH_TIMEOUT=10 cceph osd dump -f json 2>/dev/null | jq -e '.osds[0].up_from'; }
osd_up_after() {
  local j
  j=$(CCEPH_TIMEOUT=10 cceph osd dump -f json 2>/dev/null) || return 1
  jq -e --argjson e "$1" '.osds[0].up == 1 and .osds[0].up_from > $e' <<<"$j" >/dev/null
}
pid_gone() { ! pid_alive "$1"; }
# The background writer of region i: its subshell, and the timeout and fio
# under it (matched by command line: the subshell, our child, lingers as a
# zombie until waited for, and kill -0 would still find it).
writer_running() { pgrep -f -- "--name=region${i:-} " >/dev/null; }
stop_writer() {
  [[ -n ${fio_pid:-} ]] || return 0
  pkill -9 -f -- "--name=region${i:-} " 2>/dev/null || true
  kill -9 "$fio_pid" 2>/dev/null || true
  wait "$fio_pid" 2>/dev/null || true
  fio_pid=
}
hdd_umount() {
  local mnt=${TB_HDD_MNTS[0]} tries=0
  [[ -n $mnt ]] || return 0
  until umount "$mnt" 2>/dev/null; do
    ((++tries < 30)) || die "cannot unmount $mnt after the cut"
    sleep 1
  done
}
hdd_mount() {
  local mnt=${TB_HDD_MNTS[0]}
  [[ -n $mnt ]] || return 0
  mount -t xfs -o noatime "${TB_HDD_DEVS[0]}" "$mnt" ||
    die "XFS on ${TB_HDD_DEVS[0]} does not mount after the cut (log recovery failed; dmesg)"
}

fio_region() {  # fio_region I OUT [extra fio args]
  local i=$1 out=$2; shift 2
  timeout 900 fio --name=region$i --ioengine=rbd --clientname=admin --pool="$CLUSTER_POOL" \
    --rbdname=img --rw=randwrite --bs=4k --iodepth=16 --rate_iops=1000 \
    --offset=$((i * REGION)) --size=$REGION --randseed=$((seed * 100000 + i)) \
    --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
    --output-format=json --output="$out" "$@"
}
verify_region() {  # verify_region I OUT: 0 if every block of region i checks
  tb_hdd_fast on >/dev/null 2>&1
  local rc=0
  fio_region "$1" "$2" --verify_only || rc=$?
  tb_hdd_fast off >/dev/null 2>&1
  hold_caches
  return "$rc"
}
# region_failed I WHAT FILE: a loss. The safe configurations die; --unsafe
# records the catch and stops.
caught=""
region_failed() {
  if ((unsafe)); then
    caught="cut $(($1 + 1)): $2"
    return 0
  fi
  jq -r '.jobs[0].error, (.jobs[0] | tostring | .[0:400])' "$3" >&2 2>/dev/null || cat "$3" >&2
  die "cut $(($1 + 1)) of $cuts: $2 (fio output: $3; logs in $results)"
}

acked=0 torn_cuts=0 replays=0 during=0 done_cuts=0 missed=0
osd_now=$(osd_pid)
[[ -n $osd_now ]] || die "no pid file of osd.0 in $CLUSTER_DIR/out"
log "power cuts: profile $profile, $cuts cuts, seed $seed, region ${region_mib} MiB$( ((unsafe)) && echo ', UNSAFE: nvme0 ignores FLUSH')"
for ((i = 0; i < cuts; i++)); do
  tb_hdd_assert_timed
  up_from=$(osd_up_from) || die "cannot read osd.0's state from the monitor"
  fio_region "$i" "$results/write-$i.json" --do_verify=0 &
  fio_pid=$!
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + (r % 301) / 100 }')
  sleep "$delay"
  torn=""
  if ((i % 2)); then torn=torn; torn_cuts=$((torn_cuts + 1)); fi
  # A cut after fio finished its region (4 s at 1000 IOPS for 16 MiB, the
  # delay at most 3.5 s) cut no load: counted, and it fails the run.
  kill -0 "$fio_pid" 2>/dev/null || missed=$((missed + 1))
  ctl cut all $((seed * 100000 + i)) $torn
  done_cuts=$((i + 1))
  pid=$osd_now
  kill -9 "$pid" 2>/dev/null || true   # (it may have died of EIO already)
  wait_until 60 pid_gone "$pid" || die "osd.0 (pid $pid) did not die after kill -9"
  hdd_umount
  echo 1 >/proc/sys/vm/drop_caches   # nothing read before the cut may be served from RAM
  ctl restore all
  hold_caches
  hdd_mount
  osd_start || { region_failed "$i" "the OSD does not start after the cut" "$CLUSTER_DIR/osd-restart.log"; break; }
  osd_now=$(osd_pid)
  [[ -n $osd_now ]] || die "osd.0 started but wrote no pid file"
  _tb_rec pid "$osd_now" osd.0
  if ! wait_until 180 osd_up_after "$up_from"; then
    region_failed "$i" "osd.0 did not come back up within 180 s (see osd.0.log)" "$CLUSTER_DIR/out/osd.0.log"
    break
  fi
  # The writer finishes once the restarted OSD serves it. If that OSD dies
  # instead (after a lost flush its stored maps may not decode), fio would
  # wait for it until its 900 s timeout: watch both.
  while writer_running && pid_alive "$osd_now"; do sleep 1; done
  if ! pid_alive "$osd_now" && writer_running; then
    stop_writer
    region_failed "$i" "osd.0 died after it came back up (see osd.0.log)" "$CLUSTER_DIR/out/osd.0.log"
    break
  fi
  wait "$fio_pid" || die "fio of region $i failed while writing (see $results/write-$i.json)"
  fio_pid=
  n=$(jq '.jobs[0].write.total_ios' "$results/write-$i.json")
  acked=$((acked + n))
  # fio ran past the cut (its writes waited for the restart): the cut came
  # while it was writing, not after
  rt=$(jq '.jobs[0].job_runtime' "$results/write-$i.json")
  if ((rt > 10#${delay/./} * 10 + 1000)); then during=$((during + 1)); fi
  if ! verify_region "$i" "$results/verify-$i.json"; then
    region_failed "$i" "region $i fails verification: acknowledged writes lost" "$results/verify-$i.json"
    break
  fi
  log "cut $((i + 1))/$cuts after ${delay} s${torn:+ (torn)}: $n writes acknowledged (fio ran ${rt} ms), region verified"
done

if [[ -z $caught ]]; then
  log "all $cuts cuts done: verifying every region again"
  for ((i = 0; i < cuts; i++)); do
    if ! verify_region "$i" "$results/final-$i.json"; then
      region_failed "$i" "region $i fails the final verification (lost after a later cut)" "$results/final-$i.json"
      break
    fi
  done
fi
if [[ $(profile_meta "$profile" store) == mimstore ]]; then
  # (lines of a crash dump start with blanks and repeat earlier ones)
  replays=$(grep -h "^[0-9].*replayed [0-9]* transactions" "$CLUSTER_DIR"/out/osd.0.log 2>/dev/null |
            grep -vc " 0 transactions" || true)
fi
cp "$CLUSTER_DIR/out/osd.0.log" "$CLUSTER_DIR/osd-restart.log" "$results/" 2>/dev/null || true
if [[ $caught == *"does not start"* || $caught == *"did not come back"* ]]; then   # the store's refusal
  grep -h -- "-1 mimstore\|ERROR" "$results/osd.0.log" "$results/osd-restart.log" 2>/dev/null | tail -n 3 >"$results/refusal.txt" || true
fi
tb_emu_stats "$results/emu-stats.json"

{
  echo "# Whole-stack power cuts: $profile$( ((unsafe)) && echo ' (UNSAFE: journal device ignores FLUSH)')"
  echo
  echo "- command: \`$cmdline\`"
  echo "- commit: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet || echo ' (with local changes)')"
  echo "- devices: emulated $TB_EMU_PRESET HDD ($TB_HDD_SIZE thin, ${TB_HDD_FS}), emulated NVMe ${TB_NVME_SIZE}$( [[ ${TB_WAL_SIZE:-0} != 0 ]] && echo " + WAL $TB_WAL_SIZE"), write caches on, destaging held"
  echo "- image: $((cuts * region_mib)) MiB, one ${region_mib} MiB region per cut; 1 OSD, pool size 1, $PG PGs"
  echo "- cuts: $done_cuts of $cuts ($torn_cuts torn; $during while fio was writing: its run outlasted the cut by over 1 s; $missed after fio had finished its region), seed $seed"
  echo "- acknowledged 4 KiB writes: $acked"
  if ((unsafe)); then
    if [[ -n $caught ]]; then
      echo "- result: CAUGHT at $caught"
      if [[ -s $results/refusal.txt ]]; then
        echo "- what the OSD said:"
        echo
        sed 's/^/      /' "$results/refusal.txt"
      fi
    else
      echo "- result: NOT CAUGHT: no loss in $cuts cuts"
    fi
  else
    echo "- lost: 0 (every region verified after its cut and again at the end)"
  fi
  [[ $(profile_meta "$profile" store) == mimstore ]] && echo "- OSD restarts that replayed journal transactions: $replays"
} >"$results/results.md"
cat "$results/results.md"
if ((unsafe)) && [[ -z $caught ]]; then
  die "the unsafe configuration lost nothing in $cuts cuts: the harness cannot see a missing flush"
fi
if ((missed > 0)); then
  die "$missed of $done_cuts cuts came after fio had finished its region: they tested no load (a larger --region, or a faster fio start)"
fi
exit 0
