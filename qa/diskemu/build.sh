#!/usr/bin/env bash
# qa/diskemu/build.sh [TARGET...] - build the HDD emulator (idempotent).
#
#   cmake -S qa/diskemu -B $DISKEMU_BUILD -G Ninja   (only when not configured yet)
#   ninja -C $DISKEMU_BUILD TARGET...                (default: diskemu diskemu-replay)
#
# DISKEMU_BUILD defaults to ${MIMSTORE_WORKDIR:-/var/tmp/mimstore}/diskemu-build.
# `build.sh all` builds every target, the gtest binary diskemu_tests too.
# Ninja rebuilds only what changed, so calling it again is cheap. Prints the
# daemon's path on success. Debian packages: cmake ninja-build g++ pkg-config
# libfuse3-dev (and fuse3 for fusermount3 at run time; libgtest-dev for the tests).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${DISKEMU_BUILD:-${MIMSTORE_WORKDIR:-/var/tmp/mimstore}/diskemu-build}
PKGS="cmake ninja-build g++ pkg-config libfuse3-dev fuse3"

die() { echo "diskemu/build.sh: $*" >&2; exit 1; }

targets=("$@")
((${#targets[@]})) || targets=(diskemu diskemu-replay)
if [[ ${targets[*]} == all ]]; then targets=(); fi

for c in cmake ninja g++ pkg-config; do
  command -v "$c" >/dev/null ||
    die "$c not found; install the build packages: apt-get install -y $PKGS"
done
pkg-config --exists fuse3 ||
  die "libfuse3 development files not found (pkg-config fuse3); install: apt-get install -y $PKGS"

# Configure once; a build dir configured from another source tree is redone
# (CMake refuses to mix the two).
cache=$B/CMakeCache.txt
if [[ ! -f $B/build.ninja ]] || ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$SRC" "$cache" 2>/dev/null; then
  rm -rf "$B"
  mkdir -p "$B"
  cmake -S "$SRC" -B "$B" -G Ninja >"$B/configure.log" 2>&1 ||
    { tail -n 20 "$B/configure.log" >&2; die "cmake failed (full log: $B/configure.log)"; }
fi
ninja -C "$B" "${targets[@]}" >&2 || die "ninja failed in $B"
# CMake only warns when libfuse3 is missing: the daemon target is then absent.
[[ -x $B/diskemu ]] || { ((${#targets[@]})) && [[ " ${targets[*]} " != *" diskemu "* ]]; } ||
  die "no $B/diskemu after the build: CMake found no libfuse3 (see $B/configure.log); install: apt-get install -y $PKGS"
echo "$B/diskemu"
