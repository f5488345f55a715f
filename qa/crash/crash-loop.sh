#!/usr/bin/env bash
# The seeded crash loop (power loss at the Nth I/O, N walking through the
# write path), merge on and off. See src/test/ceph/test_mimstore_crash.cc.
#
#   qa/crash/crash-loop.sh [normal|long] [--seed S] [--points N] [--only N]
#                          [--meta xfs]
#
# normal: 200 crash points per merge setting; long: 1000. A failure prints
# the seed and crash point, and MIMSTORE_CRASH_ONLY replays exactly that one.
# --meta xfs: metadata operations (create, rename, unlink, link, mkdir,
# rmdir, file xattrs, clones) become durable only at the next fsync or
# syncfs, and a crash keeps a seeded prefix of the rest (FaultIoEnv's XFS
# model). RocksDB's files are always under the crash model.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"

mode=normal
export MIMSTORE_CRASH_SEED=${MIMSTORE_CRASH_SEED:-1}
export MIMSTORE_CRASH_POINTS=${MIMSTORE_CRASH_POINTS:-}
while [ $# -gt 0 ]; do
  case $1 in
    normal|long) mode=$1 ;;
    --seed) MIMSTORE_CRASH_SEED=$2; shift ;;
    --points) MIMSTORE_CRASH_POINTS=$2; shift ;;
    --only) export MIMSTORE_CRASH_ONLY=$2; shift ;;
    --meta) export MIMSTORE_CRASH_META=$2; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$MIMSTORE_CRASH_POINTS" ]; then
  MIMSTORE_CRASH_POINTS=$([ "$mode" = long ] && echo 1000 || echo 200)
fi
dir=$(mktemp -d /var/tmp/mimstore-crash.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export MIMSTORE_TEST_DIR=$dir
"$CEPH_BUILD_DIR/bin/ceph_test_mimstore" --gtest_filter='Merge/MIMStoreCrash.*' \
  --log-file="$dir/crash.log"
