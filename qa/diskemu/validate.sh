#!/usr/bin/env bash
# qa/diskemu/validate.sh: fio on emulated raw disks against datasheet
# expectations, and the emulator's CPU cost per request.
#
#   sudo qa/diskemu/validate.sh [--build DIR] [--runtime S] [--model M]
#                               [--size SIZE] [--out FILE]
#                               [--ramp-qd1 S] [--ramp-qd32 S]
#
# Mounts diskemu with three disks of the same model: write cache off (nc),
# on (wc), and off with C-LOOK instead of the default fw (ck, QD32 runs only),
# attaches loop devices with direct I/O and runs fio (libaio, direct):
#   4 KiB random write at QD1 and QD32 over the whole disk, 4 KiB random
#   write at QD1 and QD32 within the first 1%, 1 MiB sequential write at
#   QD1 and QD4.
# With the cache on, a ramp (--ramp_time, excluded from the figures) fills
# the cache first so that the steady state is measured; the cache is
# drained (uncharged) between runs. Expected values come from the datasheet figures via
# `diskemu-replay --info` (README: Validation). At the end, the request
# stream the daemon recorded (--trace) is replayed open-loop on the model
# and its service time compared with the daemon's.
# Writes a markdown table to --out (default /var/tmp/diskemu-validation.md)
# and stdout. The expectations are those of a drive without a media cache
# (hdd7200, hdd10k): with one (exos-x24, exos-m30) writes with the cache
# off are staged, and the replay (which destages the band to empty) is not
# comparable with the daemon's busy time; calibrate.py is their table.
set -euo pipefail

BUILD=/var/tmp/diskemu-build
RUNTIME=20
RAMP_QD1=40      # write cache on: QD1 fills 128 MiB at ~1000 writes/s
RAMP_QD32=12     # ... QD32 at ~4000 writes/s
MODEL=hdd7200
SIZE=64G
OUT=/var/tmp/diskemu-validation.md
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --runtime) RUNTIME=$2; shift 2 ;;
    --ramp-qd1) RAMP_QD1=$2; shift 2 ;;
    --ramp-qd32) RAMP_QD32=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "validate: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "validate: needs root" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "validate: no /dev/fuse" >&2; exit 1; }
for c in fio losetup python3 sync; do
  command -v "$c" >/dev/null || { echo "validate: needs $c" >&2; exit 1; }
done
[ -x "$BUILD/diskemu" ] || { echo "validate: no $BUILD/diskemu" >&2; exit 1; }

WORK=$(mktemp -d /var/tmp/diskemu-validate.XXXXXX)
MNT=$WORK/emu
CTL=$MNT/.control
mkdir -p "$MNT"
PID=
LOOPS=()
cleanup() {
  local rc=$?
  set +e
  for l in "${LOOPS[@]}"; do
    losetup -d "$l"
  done
  if [ -n "$PID" ]; then
    kill "$PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PID" 2>/dev/null
  fi
  mountpoint -q "$MNT" && { fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"; }
  [ "$rc" = 0 ] || { echo "--- daemon log:"; cat "$WORK/daemon.log"; }
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$BUILD/diskemu" --mount "$MNT" --trace "$WORK/trace.csv" \
  --disk "nc:size=$SIZE:model=$MODEL:wc=off:backing=$WORK/nc.img" \
  --disk "wc:size=$SIZE:model=$MODEL:wc=on:backing=$WORK/wc.img" \
  --disk "ck:size=$SIZE:model=$MODEL:wc=off:sched=clook:backing=$WORK/ck.img" \
  >"$WORK/daemon.log" 2>&1 &
PID=$!
echo "diskemu --mount MNT --trace TRACE --disk nc:size=$SIZE:model=$MODEL:wc=off:backing=... \\
  --disk wc:size=$SIZE:model=$MODEL:wc=on:backing=... \\
  --disk ck:size=$SIZE:model=$MODEL:wc=off:sched=clook:backing=... &
losetup --direct-io=on -f --show MNT/nc   # and wc, ck" >"$WORK/commands"
for _ in $(seq 100); do [ -e "$CTL" ] && break; sleep 0.1; done
[ -e "$CTL" ] || { echo "validate: daemon did not mount" >&2; exit 1; }

declare -A DEV
for d in nc wc ck; do
  l=$(losetup --direct-io=on -f --show "$MNT/$d")
  LOOPS+=("$l")
  [ "$(cat "/sys/block/$(basename "$l")/loop/dio")" = 1 ] || { echo "no dio on $l" >&2; exit 1; }
  DEV[$d]=$l
done

"$BUILD/diskemu-replay" --info --model "$MODEL" --size "$SIZE" >"$WORK/info.json"
DISK_BYTES=$(stat -c %s "$MNT/nc")
ONE_PCT=$(( DISK_BYTES / 100 / 4096 * 4096 ))
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

stats() { echo "stats $1" >"$CTL"; cat "$CTL"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }

# run NAME DISK EXTRA-FIO-ARGS...
run() {
  local name=$1 disk=$2; shift 2
  local ramp=0
  if [ "$disk" = wc ]; then
    case $name in
      seq*) ramp=2 ;;
      *qd1) ramp=$RAMP_QD1 ;;
      *) ramp=$RAMP_QD32 ;;
    esac
  fi
  # The previous run's dirty data goes out uncharged (fast mode drains the
  # cache): a FLUSH of 128 MiB of random 4 KiB writes would take minutes.
  echo "fast $disk on" >"$CTL"
  echo "fast $disk off" >"$CTL"
  local cmd=(fio --name="$name" --filename="${DEV[$disk]}" --ioengine=libaio --direct=1
             --time_based --runtime="$RUNTIME" --ramp_time="$ramp" --output-format=json "$@")
  echo "${cmd[*]}" >>"$WORK/commands"
  stats "$disk" >"$WORK/s0.json"
  local c0; c0=$(cpu_ticks)
  "${cmd[@]}" >"$WORK/fio.json"
  local c1; c1=$(cpu_ticks)
  stats "$disk" >"$WORK/s1.json"
  python3 - "$name" "$disk" "$c0" "$c1" "$(getconf CLK_TCK)" "$WORK" >>"$WORK/rows.jsonl" <<'EOF'
import json, sys
name, disk, c0, c1, hz, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
f = json.load(open(work + '/fio.json'))['jobs'][0]['write']
s0, s1 = json.load(open(work + '/s0.json')), json.load(open(work + '/s1.json'))
req = s1['requests'] - s0['requests']
print(json.dumps({
    'name': name, 'disk': disk, 'iops': f['iops'], 'mb_s': f['bw_bytes'] / 1e6,
    'lat_ms': f['lat_ns']['mean'] / 1e6, 'requests': req,
    'busy_ms': s1['busy_ms'] - s0['busy_ms'],
    'cpu_us_per_req': (c1 - c0) / hz * 1e6 / req if req else 0,
    'written': f['io_bytes'],
    'qd_max': max([int(k.rstrip('+')) for k, v in s1['qd_hist'].items()
                   if v > s0['qd_hist'].get(k, 0)] or [0]),
}))
EOF
  echo "  $name on $disk: $(tail -1 "$WORK/rows.jsonl")" >&2
}

RND=(--rw=randwrite --bs=4k --randrepeat=0)
for d in nc wc; do
  run rand4k_qd1 "$d" "${RND[@]}" --iodepth=1
  run rand4k_qd32 "$d" "${RND[@]}" --iodepth=32
  run rand4k_1pct_qd1 "$d" "${RND[@]}" --iodepth=1 --size="$ONE_PCT"
  run rand4k_1pct_qd32 "$d" "${RND[@]}" --iodepth=32 --size="$ONE_PCT"
  run seq1m_qd1 "$d" --rw=write --bs=1M --iodepth=1
  run seq1m_qd4 "$d" --rw=write --bs=1M --iodepth=4
done
run rand4k_qd32 ck "${RND[@]}" --iodepth=32
run rand4k_1pct_qd32 ck "${RND[@]}" --iodepth=32 --size="$ONE_PCT"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# The daemon's own stream, replayed open-loop on the model (the disks
# without write cache: the cache drains between runs are not in the trace).
for d in nc ck; do
  stats "$d" >"$WORK/final_$d.json"
  sched=fw   # the daemon's default
  [ "$d" = ck ] && sched=clook
  "$BUILD/diskemu-replay" --model "$MODEL" --size "$SIZE" --sched "$sched" \
    --mode open "$WORK/trace.csv.$d" >"$WORK/replay_$d.json"
done

python3 - "$WORK" "$MODEL" "$SIZE" "$RUNTIME" "$RAMP_QD1/$RAMP_QD32" "$LOAD_START" "$LOAD_END" "$DISK_BYTES" >"$OUT" <<'EOF'
import json, sys
work, model, size, runtime, ramp, load0, load1, disk_bytes = sys.argv[1:9]
disk_bytes = int(disk_bytes)
info = json.load(open(work + '/info.json'))
rows = [json.loads(l) for l in open(work + '/rows.jsonl')]
rev = info['revolution_ms']
ovh = info['overhead_ms']
outer, inner = info['outer_mb_s'], info['inner_mb_s']
ws = info['write_seek']
x4k = 4096 / ((outer + inner) / 2 * 1e3)           # ms at the mean rate
qd1 = 1000 / (ovh + ws['avg_full_ms'] + rev / 2 + x4k)
pct = 1000 / (ovh + ws['avg_1pct_ms'] + rev / 2 + 4096 / (outer * 1e3))
by = {(r['name'], r['disk']): r for r in rows}

def expect(r):
    n, d = r['name'], r['disk']
    if n == 'rand4k_qd1' and d == 'nc':
        return (qd1, qd1), 'datasheet: 1/(overhead + avg write seek + rev/2 + transfer)'
    if n == 'rand4k_1pct_qd1' and d == 'nc':
        return (pct, pct), 'datasheet: same, seek averaged over 1% of the stroke'
    if n == 'rand4k_qd32' and d == 'nc':
        return (1.5 * qd1, 2 * qd1), 'rule of thumb: NCQ gives 1.5-2x QD1'
    if n == 'rand4k_1pct_qd32' and d == 'nc':
        return (1.5 * pct, 2 * pct), 'rule of thumb: 1.5-2x the 1% QD1 figure'
    if n.startswith('seq'):
        mid = r['written'] / 2 / disk_bytes
        rate = outer + (inner - outer) * mid
        return (rate, rate), 'datasheet: sustained rate at the zone written (MB/s)'
    if d == 'ck':
        return expect(by[(n, 'nc')])[0], 'rule of thumb, as with fw'
    # Write cache on, steady state: every write waits for a destage, which
    # the drive reorders over its 32 oldest dirty writes like NCQ: the
    # same rate as the measured QD32 run without cache.
    base = {'rand4k_qd1': 'rand4k_qd32', 'rand4k_qd32': 'rand4k_qd32',
            'rand4k_1pct_qd1': 'rand4k_1pct_qd32', 'rand4k_1pct_qd32': 'rand4k_1pct_qd32'}[n]
    e = by[(base, 'nc')]['iops']
    return (e, e), 'model: destage-bound, = measured %s without cache' % base

def fmt(lo, hi):
    return '%.0f' % lo if abs(hi - lo) < 1e-9 else '%.0f-%.0f' % (lo, hi)

print('| test | write cache, sched | measured | expected | deviation | basis of expectation | mean latency ms | max QD seen | CPU us/request |')
print('|---|---|---|---|---|---|---|---|---|')
for r in rows:
    (lo, hi), basis = expect(r)
    seq = r['name'].startswith('seq')
    m = r['mb_s'] if seq else r['iops']
    dev = 0.0 if lo <= m <= hi else ((m - hi) / hi if m > hi else (m - lo) / lo)
    unit = ' MB/s' if seq else ' IOPS'
    print('| %s | %s | %.0f%s | %s%s | %+.0f%% | %s | %.2f | %d | %.0f |' % (
        r['name'], {'nc': 'off, fw', 'wc': 'on, fw', 'ck': 'off, clook'}[r['disk']],
        m, unit, fmt(lo, hi), unit,
        100 * dev, basis, r['lat_ms'], r['qd_max'], r['cpu_us_per_req']))
print()
print('Closed loop (daemon) against open-loop replay of its recorded stream:')
print()
print('| disk | requests | daemon busy ms | replay service ms | difference |')
print('|---|---|---|---|---|')
for d in ('nc', 'ck'):
    s = json.load(open('%s/final_%s.json' % (work, d)))
    p = json.load(open('%s/replay_%s.json' % (work, d)))
    print('| %s | %d | %.0f | %.0f | %+.2f%% |' % (
        'sched ' + ('fw' if d == 'nc' else 'clook'), s['requests'], s['busy_ms'],
        p['service_ms'], 100 * (p['service_ms'] - s['busy_ms']) / s['busy_ms']))
print()
tot_req = sum(r['requests'] for r in rows)
print('Model %s, disk %s, %s s per run (write cache on: after a ramp of %s s for QD1/QD32 '
      'random, 2 s for sequential, that fills the cache), load average %s at the start, %s at the end; CPU per request is the '
      'daemon\'s user+system time over the run divided by the requests it served '
      '(%d in all).' % (model, size, runtime, ramp, load0, load1, tot_req))
print()
print('Commands:')
print()
print('```')
for l in open(work + '/commands'):
    print(l.rstrip())
print('```')
EOF
cat "$OUT"
