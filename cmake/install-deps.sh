#!/usr/bin/env bash
# Install the Debian 12 packages mimstore needs. Idempotent; installs only
# what is missing.
#   cmake/install-deps.sh core    the Ceph-free tier (compilers, gtest, ...)
#   cmake/install-deps.sh ceph    everything to build Ceph Reef (lean)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
what=${1:-ceph}
case $what in
  core)
    # clang-19: only for qa/lock-annotations.sh (its thread safety analysis;
    # Tentacle's headers need clang 16 or later, Debian 12's clang is 14)
    pkgs=(build-essential cmake ninja-build googletest libgtest-dev
          libgmock-dev libbenchmark-dev libaio-dev python3 python3-numpy
          python3-yaml rsync fuse3 libfuse3-dev xfsprogs clang-19)
    ;;
  ceph)
    mapfile -t pkgs < <(grep -Ev '^[[:space:]]*(#|$)' "$HERE/debian-build-deps.txt")
    ;;
  *) echo "usage: $0 core|ceph" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "missing Debian packages: ${missing[*]} (run as root: $0 $what)" >&2
  exit 1
fi
echo "[mimstore] installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
