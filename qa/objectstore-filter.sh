#!/usr/bin/env bash
# The gtest filter that runs Ceph's ObjectStore suite (ceph_test_objectstore)
# on mimstore: in each of the three suites, the instantiation whose
# GetParam() is "mimstore", found in the binary's own test list (its index
# moves with the stores the build has: memstore, bluestore with
# WITH_BLUESTORE, kstore, then mimstore, which patch 0004 appends).
#   qa/objectstore-filter.sh [normal|long] BINARY
# "long" runs every case; "normal" leaves out the cases listed below, which
# take minutes each (they are in the long variant and were run for the
# issue notes). Fails (and prints nothing) if a suite has no mimstore
# instantiation.
set -euo pipefail
mode=${1:-normal}
bin=${2:?usage: objectstore-filter.sh MODE BINARY}
here=$(cd "$(dirname "$0")" && pwd)
suites=(StoreTest StoreTestSpecificAUSize StoreTestOmapUpgrade)
slow=(
)
inc=()
neg=()
for s in "${suites[@]}"; do
  i=$(/usr/bin/python3 "$here/gtest_check.py" param-index --binary "$bin" \
        --suite "$s" --param mimstore)
  inc+=("ObjectStore/$s.*/$i")
  for t in "${slow[@]}"; do
    [[ $t == "$s".* ]] && neg+=("ObjectStore/$t/$i")
  done
done
filter=$(IFS=:; echo "${inc[*]}")
if [ "$mode" != long ] && [ ${#neg[@]} -gt 0 ]; then
  filter="$filter-$(IFS=:; echo "${neg[*]}")"
fi
echo "$filter"
