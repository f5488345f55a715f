#!/usr/bin/env bash
# Fetch, verify and extract the Ceph Reef source, or validate a tree given by
# CEPH_SOURCE_DIR. Idempotent: an already extracted, verified tree is kept.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# A tree is accepted only if it is Reef 18.2.x: the top-level project()
# version and src/ceph_release must both say so.
check_reef_tree() {
  local dir=$1 ver rel
  [ -f "$dir/CMakeLists.txt" ] || die "$dir is not a Ceph source tree (no CMakeLists.txt); point CEPH_SOURCE_DIR at a Ceph Reef 18.2.x checkout"
  ver=$(sed -n '/^project(ceph/,/)/s/.*VERSION \([0-9.]*\).*/\1/p' "$dir/CMakeLists.txt" | head -1)
  rel=$(sed -n 2p "$dir/src/ceph_release" 2>/dev/null || true)
  case "$ver" in
    18.2.*) ;;
    *) die "$dir is Ceph ${ver:-of unknown version}, not Reef 18.2.x; mimstore's patch series targets Reef 18.2.x only (unset CEPH_SOURCE_DIR to use Debian's $CEPH_DEB_VERSION)" ;;
  esac
  [ "$rel" = reef ] || die "$dir/src/ceph_release names '${rel:-nothing}', not reef"
  log "Ceph source: $dir (Ceph $ver, $rel)"
}

# Checksums come from the Sources index, which apt has verified against the
# signed InRelease file. They are the list the .dsc carries; the .dsc itself
# is checked too when the mirror serves it.
verify_downloads() {
  local sums
  sums=$(apt-cache showsrc "ceph" | awk -v v="$CEPH_DEB_VERSION" '
      /^Version: /{ok = ($2 == v)}
      ok && /^Checksums-Sha256:/{s=1; next}
      s && /^ /{print $1 "  " $3; next}
      s{s=0; ok=0}' | sort -u)
  [ -n "$sums" ] || die "apt knows no ceph source $CEPH_DEB_VERSION; the deb-src entry for $CEPH_DEB_SUITE is missing"
  local line file n=0
  while read -r line; do
    file=${line##* }
    if [ -f "$file" ]; then
      echo "$line" | sha256sum -c --quiet - || die "$MIMSTORE_WORKDIR/dl/$file does not match its checksum; delete it and run again"
      n=$((n + 1))
    elif [[ $file != *.dsc ]]; then
      die "$file was not downloaded"
    else
      log "note: the mirror does not serve $file; tarballs checked against the signed Sources index"
    fi
  done <<<"$sums"
  log "verified $n source files against the Sources index checksums"
}

ensure_deb_src() {
  local f=/etc/apt/sources.list.d/mimstore-ceph-src.sources
  if ! apt-cache showsrc ceph 2>/dev/null | grep -qx "Version: $CEPH_DEB_VERSION"; then
    [ "$(id -u)" = 0 ] || die "need root to add the deb-src entry for $CEPH_DEB_SUITE ($f)"
    log "adding deb-src entries for $CEPH_DEB_SUITE ($f)"
    cat >"$f" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $CEPH_DEB_SUITE $CEPH_DEB_SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $CEPH_DEB_SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -qq
  fi
}

main() {
  if [ -n "${CEPH_SOURCE_DIR_FROM_USER:-}" ]; then
    check_reef_tree "$CEPH_SOURCE_DIR"
    return
  fi
  local tree=$MIMSTORE_WORKDIR/src/$CEPH_TREE_NAME
  if [ -f "$tree/.mimstore-extracted" ]; then
    check_reef_tree "$tree"
    return
  fi
  ensure_deb_src
  mkdir -p "$MIMSTORE_WORKDIR/dl" "$MIMSTORE_WORKDIR/src"
  cd "$MIMSTORE_WORKDIR/dl"
  local orig=ceph_${CEPH_DEB_VERSION%%-*}.orig.tar.xz
  if [ ! -f "$orig" ]; then
    log "downloading Debian source package ceph $CEPH_DEB_VERSION (about 150 MB)"
    # --download-only: the .dsc may be missing on the mirror, which makes
    # apt-get fail after the tarballs arrived; verify_downloads decides.
    apt-get source --download-only "ceph=$CEPH_DEB_VERSION" || true
  fi
  verify_downloads
  log "extracting $orig"
  rm -rf "$tree"
  tar -C "$MIMSTORE_WORKDIR/src" -xf "$orig"
  touch "$tree/.mimstore-extracted"
  check_reef_tree "$tree"
}

main "$@"
