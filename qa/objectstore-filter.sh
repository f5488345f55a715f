#!/usr/bin/env bash
# The gtest filter that runs Ceph's ObjectStore suite (ceph_test_objectstore)
# on mimstore: the mimstore instantiation is index 3 (memstore, bluestore,
# kstore, mimstore; patch 0004 appends it).
#   qa/objectstore-filter.sh [normal|long]
# "long" runs every case; "normal" leaves out the cases listed below, which
# take minutes each (they are in the long variant and were run for the
# issue notes).
mode=${1:-normal}
inc="ObjectStore/StoreTest.*/3:ObjectStore/StoreTestSpecificAUSize.*/3:ObjectStore/StoreTestOmapUpgrade.*/3"
slow=(
)
if [ "$mode" = long ] || [ ${#slow[@]} -eq 0 ]; then
  echo "$inc"
else
  neg=$(printf '%s/3:' "${slow[@]}")
  echo "$inc:-${neg%:}"
fi
