#!/usr/bin/env bash
# Developer helper: write the diff between pristine Ceph files and the
# patched tree as one patch of the series.
#   cmake/mkpatch.sh OUT.patch "Subject line" "Body" file...
# Pristine copies are read straight from the Debian orig tarball.
set -euo pipefail
source "$(dirname "$0")/common.sh"
out=$1 subject=$2 body=$3; shift 3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
orig=$MIMSTORE_WORKDIR/dl/ceph_${CEPH_DEB_VERSION%%-*}.orig.tar.xz
members=(); for f in "$@"; do members+=("$CEPH_TREE_NAME/$f"); done
tar -C "$tmp" -xf "$orig" "${members[@]}"
{
  printf 'From: mimstore\nSubject: %s\n\n%s\n---\n' "$subject" "$body"
  for f in "$@"; do
    (cd "$tmp/$CEPH_TREE_NAME" && diff -u --label "a/$f" --label "b/$f" "$f" "$CEPH_SOURCE_DIR/$f") || true
  done
} >"$out"
echo "wrote $out"
