#!/usr/bin/env bash
# Fetch, verify and extract the Ceph source of MIMSTORE_CEPH_RELEASE (Tentacle
# unless set), or validate a tree given by CEPH_SOURCE_DIR. Idempotent: an
# already extracted, verified tree is kept.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/deb-source.sh"

# A tree is accepted only if it is of the release's x.2 series: the
# top-level project() version and src/ceph_release must both say so.
check_tree() {
  local dir=$1 ver rel want=${CEPH_UPSTREAM_VERSION%.*}
  local name=$MIMSTORE_CEPH_RELEASE
  [ -f "$dir/CMakeLists.txt" ] || die "$dir is not a Ceph source tree (no CMakeLists.txt); point CEPH_SOURCE_DIR at a Ceph $name $want.x checkout"
  ver=$(sed -n '/^project(ceph/,/)/s/.*VERSION \([0-9.]*\).*/\1/p' "$dir/CMakeLists.txt" | head -1)
  rel=$(sed -n 2p "$dir/src/ceph_release" 2>/dev/null || true)
  case "$ver" in
    "$want".*) ;;
    *) die "$dir is Ceph ${ver:-of unknown version}, not $name $want.x; mimstore's $name patch series targets $want.x only (unset CEPH_SOURCE_DIR to use Debian's $CEPH_DEB_VERSION, or set MIMSTORE_CEPH_RELEASE)" ;;
  esac
  [ "$rel" = "$name" ] || die "$dir/src/ceph_release names '${rel:-nothing}', not $name"
  log "Ceph source: $dir (Ceph $ver, $rel)"
}

main() {
  if [ -n "${CEPH_SOURCE_DIR_FROM_USER:-}" ]; then
    check_tree "$CEPH_SOURCE_DIR"
    return
  fi
  local tree=$MIMSTORE_WORKDIR/src/$CEPH_TREE_NAME
  if [ -f "$tree/.mimstore-extracted" ]; then
    check_tree "$tree"
    return
  fi
  deb_src_fetch ceph "$CEPH_DEB_VERSION"
  local orig=$MIMSTORE_WORKDIR/dl/ceph_${CEPH_DEB_VERSION%%-*}.orig.tar.xz
  log "extracting $orig"
  rm -rf "$tree"
  mkdir -p "$MIMSTORE_WORKDIR/src"
  tar -C "$MIMSTORE_WORKDIR/src" -xf "$orig"
  touch "$tree/.mimstore-extracted"
  check_tree "$tree"
}

main "$@"
