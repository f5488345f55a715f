#!/usr/bin/env bash
# qa/fio-objectstore.sh - drive one ObjectStore directly with Ceph's fio
# objectstore engine (no cluster): mimstore, bluestore or memstore.
#
#   qa/fio-objectstore.sh STORE [--dir DIR] [--journal-dir DIR]
#                         [--runtime S] [--ramp S] [--job FILE] [-- FIO ARGS]
#
#   STORE          mimstore | bluestore | memstore (conf: qa/fio/objectstore-STORE.conf)
#   --dir          where the store lives; DIR/STORE is wiped first (/var/tmp/mimstore-fio)
#   --journal-dir  the fast device: mimstore's journal file, BlueStore's
#                  block.db and block.wal go here (/dev/shm/mimstore-fio)
#   --runtime S    measured seconds (60); --ramp S: unmeasured seconds before (10)
#   --job FILE     fio job file (qa/fio/objectstore-4k-randwrite.fio)
#
# fio and the engine come from the Ceph build (cmake/ceph-build.sh):
# $CEPH_BUILD_DIR/bin/fio, the same fio version as Debian's, and
# $CEPH_BUILD_DIR/lib/libfio_ceph_objectstore.so. Debian's /usr/bin/fio cannot
# load the engine (see cmake/fio-build.sh). Writes DIR/STORE/fio.json, the
# store's perf counters at the end (DIR/STORE/fio.stderr) and prints one
# summary line.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

store=${1:-}
[[ -n $store && $store != -* ]] || usage
shift
dir=/var/tmp/mimstore-fio
jdir=/dev/shm/mimstore-fio
runtime=60 ramp=10
job=$REPO/qa/fio/objectstore-4k-randwrite.fio
extra=()
while (($#)); do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --journal-dir) jdir=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --ramp) ramp=$2; shift 2 ;;
    --job) job=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done

conf=$REPO/qa/fio/objectstore-$store.conf
[[ -f $conf ]] || die "no conf for store '$store' ($conf); stores: mimstore bluestore memstore"
[[ -f $job ]] || die "no fio job file $job"
fio=$CEPH_BUILD_DIR/bin/fio
engine=$CEPH_BUILD_DIR/lib/libfio_ceph_objectstore.so
[[ -x $fio && -f $engine ]] ||
  die "no fio objectstore engine in $CEPH_BUILD_DIR ($fio, $engine): run cmake/ceph-build.sh"
[[ $runtime =~ ^[0-9]+$ && $ramp =~ ^[0-9]+$ ]] || die "--runtime and --ramp take whole seconds"

# A fresh store each run: the engine runs mkfs, which expects an empty place.
out=$dir/$store
rm -rf "${out:?}" "${jdir:?}/$store"
mkdir -p "$out/data" "$jdir/$store"
case $store in
  # the journal file made first: mkfs makes none through a dangling link
  mimstore) : >"$jdir/$store/journal"; ln -s "$jdir/$store/journal" "$out/journal" ;;
  bluestore) ln -s "$jdir/$store/block.db" "$out/block.db"
             ln -s "$jdir/$store/block.wal" "$out/block.wal" ;;
esac

log "fio objectstore engine: $store, data $out, fast device $jdir/$store, ${ramp}+${runtime} s"
MIMSTORE_FIO_CONF=$conf MIMSTORE_FIO_DIR=$out MIMSTORE_FIO_RUNTIME=$runtime MIMSTORE_FIO_RAMP=$ramp \
LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib \
  "$fio" --output-format=json --output="$out/fio.json" "${extra[@]}" "$job" 2>"$out/fio.stderr" ||
  { tail -30 "$out/fio.stderr" "$out/log" 2>/dev/null >&2; die "fio failed; see $out/fio.stderr and the store log $out/log"; }
/usr/bin/python3 - "$out/fio.json" "$store" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
w = job["write"]
if job.get("error") or not w["total_ios"]:
    sys.exit(f"{sys.argv[2]}: fio did no writes (error {job.get('error')}); see fio.stderr and the store log")
pct = w["clat_ns"].get("percentile", {})
ms = lambda k: pct.get(k, 0) / 1e6
print(f"{sys.argv[2]}: {w['iops']:.0f} IOPS, {w['bw'] / 1024:.1f} MiB/s, "
      f"clat p50 {ms('50.000000'):.2f} ms, p99 {ms('99.000000'):.2f} ms, "
      f"p99.9 {ms('99.900000'):.2f} ms, {w['total_ios']} writes in {job['job_runtime'] / 1000:.0f} s")
PY
