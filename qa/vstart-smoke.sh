#!/usr/bin/env bash
# vstart smoke test: a real cluster (1 mon, 1 mgr, 3 mimstore OSDs, pool
# size 2) from the Ceph build: rados bench write + read, an RBD image
# written with fio's rbd engine with verify=crc32c and read back, then
# pg_num raised and lowered (PG split and merge) with the data read back
# after each, and the OSDs' mimstore perf counters must have moved. The
# manager must be active with every module loaded. A runtime change of a
# mimstore option is refused (options are read at mount).
#
#   qa/vstart-smoke.sh [--merge true|false]
#
# Journals and data are files in a scratch directory (no devices needed);
# qa/bench.sh is the one that builds the emulated NVMe/HDD test bed.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

MERGE=true
while [ $# -gt 0 ]; do
  case $1 in
    --merge) MERGE=$2; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
trap 'dev_cluster_stop $?' EXIT
trap 'exit 130' INT TERM

POOL=smoke
dev_cluster_start 3 "$MERGE"
dev_pool_create $POOL 16 2
log "3 OSDs up, pool $POOL (size 2) usable"

# The manager loaded its modules (pg_autoscaler, progress, balancer,
# status, iostat, rbd_support, ...): a module that fails to import, e.g. on
# an installed Ceph release's python packages, shows in the health checks.
log "manager: active, no module failed to load"
$CEPH mgr stat -f json | /usr/bin/python3 -c \
  'import json,sys; m=json.load(sys.stdin); sys.exit(0 if m["available"] else "no active manager")'
health=$($CEPH health detail -f json)
/usr/bin/python3 -c '
import json, sys
checks = json.loads(sys.argv[1]).get("checks", {})
bad = {k: v for k, v in checks.items() if k.startswith("MGR_MODULE")}
for k, v in bad.items():
    print(k, v["summary"]["message"], file=sys.stderr)
    for d in v.get("detail", []):
        print("  ", d["message"], file=sys.stderr)
sys.exit(1 if bad else 0)' "$health" || die "manager modules failed to load (see above)"

log "rados bench: 15 s write, then sequential read"
$RADOS -p $POOL bench 15 write -b 65536 -t 16 --no-cleanup \
  >"$DEV_DEST/bench-write.txt"
tail -n 12 "$DEV_DEST/bench-write.txt"
$RADOS -p $POOL bench 15 seq -t 16 >"$DEV_DEST/bench-read.txt"
tail -n 10 "$DEV_DEST/bench-read.txt"
grep -q "Bandwidth (MB/sec)" "$DEV_DEST/bench-write.txt" || die "rados bench write failed"
grep -q "Bandwidth (MB/sec)" "$DEV_DEST/bench-read.txt" || die "rados bench read failed"

log "fio rbd: 4 KiB random writes with verify=crc32c, then read back"
rbd -c "$CEPH_CONF" create --size 256M $POOL/img
fio --name=smoke --ioengine=rbd --clientname=admin --pool=$POOL \
  --rbdname=img --rw=randwrite --bs=4k --iodepth=16 --size=64M \
  --verify=crc32c --verify_fatal=1 --do_verify=1 --verify_state_save=0 \
  --output="$DEV_DEST/fio.txt" || { cat "$DEV_DEST/fio.txt" >&2; die "fio verify failed"; }
grep -E "write: IOPS|read: IOPS" "$DEV_DEST/fio.txt" || true
fio --name=smoke --ioengine=rbd --clientname=admin --pool=$POOL \
  --rbdname=img --rw=randwrite --bs=4k --size=64M --verify=crc32c \
  --verify_only --verify_fatal=1 --verify_state_save=0 --output="$DEV_DEST/fio-read.txt" \
  || { cat "$DEV_DEST/fio-read.txt" >&2; die "fio read-back verify failed"; }

# PG split and merge under the data just written, carried out by the
# manager step by step, as an operator's pg_num change (or the autoscaler)
# does; every byte is read back after each.
for n in 32 8; do
  log "pg_num 16 -> $n: the manager $( [ $n -gt 16 ] && echo splits || echo merges ) PGs"
  start=$SECONDS
  dev_pg_num $POOL $n
  log "pg_num $n reached, every PG active+clean, in $((SECONDS - start)) s"
  $CEPH pg stat
  fio --name=smoke --ioengine=rbd --clientname=admin --pool=$POOL \
    --rbdname=img --rw=randwrite --bs=4k --size=64M --verify=crc32c \
    --verify_only --verify_fatal=1 --verify_state_save=0 \
    --output="$DEV_DEST/fio-read-pg$n.txt" \
    || { cat "$DEV_DEST/fio-read-pg$n.txt" >&2; die "read-back after pg_num $n failed"; }
done

log "perf counters"
total=0
for i in 0 1 2; do
  dump=$($CEPH daemon osd.$i perf dump mimstore)
  read -r entries merged < <(echo "$dump" | /usr/bin/python3 -c \
    'import json,sys; m=json.load(sys.stdin)["mimstore"]; print(m["journal_entries"], m["merged"])')
  echo "  osd.$i: journal_entries $entries merged $merged"
  total=$((total + entries))
  if [ "$MERGE" = true ] && [ "$merged" -le 0 ]; then
    die "osd.$i merged nothing with merge on"
  fi
done
[ "$total" -gt 0 ] || die "no journal entries counted"
$CEPH daemon osd.0 dump_mimstore_htmll >/dev/null || die "dump_mimstore_htmll failed"

# Options are read at mount: Ceph says so and refuses a change to a
# running OSD, instead of accepting one the store would ignore.
log "options: read at mount, a runtime change refused"
$CEPH config help mimstore_max_flush_interval | grep -q "Can update at runtime: false" ||
  die "ceph config help claims mimstore_max_flush_interval changes at runtime"
if out=$($CEPH tell osd.0 config set mimstore_max_flush_interval 7 2>&1); then
  die "a running OSD accepted a change of mimstore_max_flush_interval: $out"
fi
# (the config-set command reports the errno; injectargs would print Ceph's
# "may not be modified at runtime")
grep -q "Operation not permitted" <<<"$out" ||
  die "the runtime change failed otherwise than refused (EPERM): $out"
log "vstart smoke test passed"
