#!/usr/bin/env bash
# qa/fio-objectstore-compare.sh - Ceph's fio objectstore engine on mimstore,
# BlueStore and memstore in one run, on one emulated HDD (qa/diskemu, as
# qa/bench.sh uses) with the fast device on tmpfs. No cluster.
#
#   qa/fio-objectstore-compare.sh [--runtime S] [--ramp S] [--stores a,b,c]
#                                 [--workdir DIR] [--results DIR]
#
# Each store gets a fresh XFS on the same emulated disk (the test bed is
# rebuilt between stores). The working set is the job's: 64 objects of
# 4 MiB (qa/fio/objectstore-4k-randwrite.fio), which fits one merge
# generation; this is a microbenchmark of the stores' write paths, not the
# cluster benchmark (qa/bench.sh). Writes results.md with the command and
# commit, and each store's fio.json and perf counters.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
QA_DIR=$REPO/qa
source "$QA_DIR/lib/common.sh"
source "$QA_DIR/lib/testbed.sh"

runtime=60 ramp=10 stores=mimstore,bluestore,memstore
workdir=/var/tmp/mimstore-fio-compare results=""
cmdline="qa/fio-objectstore-compare.sh $*"
while (($#)); do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --stores) stores=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done
results=${results:-$workdir/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$results"
tb_init "$workdir"
trap 'tb_down >/dev/null 2>&1 || true' EXIT

{
  echo "# fio objectstore engine: $stores"
  echo
  echo "- command: \`$cmdline\`"
  echo "- commit: $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet || echo ' (with local changes)')"
  echo "- job: qa/fio/objectstore-4k-randwrite.fio (4 KiB random writes, iodepth 16, 64 objects of 4 MiB = 256 MiB, fits one merge generation), ${ramp} s ramp + ${runtime} s measured"
  echo "- HDD: emulated ${TB_EMU_PRESET} (qa/diskemu), write cache ${TB_EMU_WCACHE}, XFS; fast device (mimstore journal file, BlueStore block.db/block.wal files): tmpfs; memstore: memory only"
  echo "- host: $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo
} >"$results/results.md"

IFS=, read -r -a list <<<"$stores"
for s in "${list[@]}"; do
  tb_up 1      # ends by checking the emulated disk is timed (not in fast mode)
  log "== $s on ${TB_HDD_MNTS[0]}"
  "$QA_DIR/fio-objectstore.sh" "$s" --dir "${TB_HDD_MNTS[0]}" --journal-dir "$TB_SHM/fio" \
    --runtime "$runtime" --ramp "$ramp" | tee -a "$results/summary.txt"
  mkdir -p "$results/$s"
  cp "${TB_HDD_MNTS[0]}/$s/fio.json" "${TB_HDD_MNTS[0]}/$s/fio.stderr" "$results/$s/"
  tb_down
done
{
  echo '```'
  cat "$results/summary.txt"
  echo '```'
} >>"$results/results.md"
log "results: $results"
