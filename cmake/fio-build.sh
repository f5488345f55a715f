#!/usr/bin/env bash
# Prepare fio for Ceph's objectstore engine (src/test/fio): the source of the
# fio Debian 12 installs (Debian's source package, its patches applied),
# configured, and a fio binary built from it into $CEPH_BUILD_DIR/bin/fio.
# Prints the source directory; cmake/ceph-build.sh passes it to Ceph's
# configure as MIMSTORE_FIO_DIR and the overlay builds the engine against it.
#
# Why not Ceph's WITH_FIO: its cmake clones fio from GitHub, which this
# project does not depend on. Why a fio binary of our own: Debian's
# /usr/bin/fio links Pacific's librbd, which loads Pacific's
# libceph-common.so.2; the engine needs Reef's library of the same SONAME,
# and the loader would hand it the one already loaded. Ours is the same
# version and configure flags as Debian's, without the rbd engine, and links
# tcmalloc as Ceph's own fio build does (the engine's Ceph libraries expect
# the allocator to be there from the start).
#
# Idempotent: an extracted, configured, built tree is kept.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/deb-source.sh"

FIO_DEB_VERSION=3.33-3
FIO_UPSTREAM=${FIO_DEB_VERSION%-*}
FIO_TREE=$MIMSTORE_WORKDIR/src/fio-$FIO_UPSTREAM

check_installed_fio() {
  local have
  have=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
  [ -n "$have" ] || return 0
  [ "${have%-*}" = "$FIO_UPSTREAM" ] ||
    log "warning: the installed fio is $have; the engine is built against fio $FIO_UPSTREAM (Debian 12's) and runs with $CEPH_BUILD_DIR/bin/fio"
}

extract() {
  [ -f "$FIO_TREE/.mimstore-extracted" ] && return 0
  ( deb_src_fetch fio "$FIO_DEB_VERSION" ) >&2
  local dl=$MIMSTORE_WORKDIR/dl p
  rm -rf "$FIO_TREE"
  mkdir -p "$MIMSTORE_WORKDIR/src"
  tar -C "$MIMSTORE_WORKDIR/src" -xzf "$dl/fio_$FIO_UPSTREAM.orig.tar.gz"
  tar -C "$FIO_TREE" -xJf "$dl/fio_$FIO_DEB_VERSION.debian.tar.xz"
  # Debian's patches, in the order of its series file (no quilt needed).
  while read -r p; do
    [[ -z $p || $p == \#* ]] && continue
    patch -d "$FIO_TREE" -p1 -s -f --no-backup-if-mismatch <"$FIO_TREE/debian/patches/$p" ||
      die "Debian's fio patch $p does not apply to $FIO_TREE"
  done <"$FIO_TREE/debian/patches/series"
  touch "$FIO_TREE/.mimstore-extracted"
  log "fio $FIO_DEB_VERSION extracted in $FIO_TREE"
}

configure() {
  [ -f "$FIO_TREE/config-host.h" ] && [ -f "$FIO_TREE/.mimstore-configured" ] && return 0
  # Debian's debian/rules flags (--disable-native --prefix=/usr), without
  # gfio (a GTK front end) and rbd (see the top of this file).
  (cd "$FIO_TREE" && ./configure --disable-native --prefix=/usr --disable-rbd) \
    >"$FIO_TREE/mimstore-configure.log" 2>&1 ||
    { tail -20 "$FIO_TREE/mimstore-configure.log" >&2; die "fio configure failed; log: $FIO_TREE/mimstore-configure.log"; }
  touch "$FIO_TREE/.mimstore-configured"
}

build() {
  local out=$CEPH_BUILD_DIR/bin/fio
  [ -x "$out" ] && [ "$out" -nt "$FIO_TREE/.mimstore-configured" ] && return 0
  log "building fio $FIO_UPSTREAM (about a minute)"
  make -C "$FIO_TREE" -j "${MIMSTORE_BUILD_JOBS:-$(nproc)}" fio \
    EXTFLAGS=-Wno-format-truncation EXTLIBS=-ltcmalloc \
    >"$FIO_TREE/mimstore-build.log" 2>&1 ||
    { tail -20 "$FIO_TREE/mimstore-build.log" >&2; die "fio build failed; log: $FIO_TREE/mimstore-build.log"; }
  mkdir -p "$CEPH_BUILD_DIR/bin"
  install -m 755 "$FIO_TREE/fio" "$out"
}

check_installed_fio
extract
configure
build
echo "$FIO_TREE"
