#!/usr/bin/env bash
# qa/setup.sh - make a Debian 12 machine ready for mimstore: the packages the
# benchmark harness needs, the packages to build Ceph, and the patched lean
# Ceph build with mimstore: Tentacle 20.2.x, or Reef 18.2.x with
# MIMSTORE_CEPH_RELEASE=reef (cmake/ceph-build.sh: hours on 2 cores the
# first time, an incremental build after that; docs/build.md).
#
#   qa/setup.sh                  packages and the Ceph build
#   qa/setup.sh --packages-only  packages only
#
# Idempotent: packages already installed are left alone; apt-get runs only when
# something is missing. Needs root.
#
#   ceph-mon ceph-osd ceph-mgr  Pacific 16.2.15, the stock-FileStore
#                       comparator (profile filestore-pacific), with a manager
#                       as every profile has; monmaptool comes with ceph-mon
#   ceph-common         rbd / rados / ceph-authtool CLIs (talk to Reef clusters
#                       too; a Tentacle cluster is talked to with the build's
#                       own, qa/lib/clients.sh)
#   fio                 3.33, with the rbd ioengine
#   xfsprogs util-linux mkfs.xfs, losetup, mount
#   fuse3 libfuse3-dev  the HDD emulator (qa/diskemu), the harness's default HDD
#   rbd-fuse            RBD images as files, for the filesystem workloads
#                       (bench.sh --rw varmail,fileserver: XFS on a loop on it)
#   jq iproute2 procps uuid-runtime  the harness's tools (jq, ss, pgrep, uuidgen)
#   python3-venv python3-pytest  the harness's venv (numpy, matplotlib from
#                       PyPI, pinned in qa/requirements.txt: Debian 12's
#                       python3-matplotlib is removed by the Ceph build
#                       dependencies' Boost 1.81) and unit tests
#   python3-mock python3-pyfakefs python3-yaml  ceph-volume's unit tests,
#   udev                and udevadm, which ceph-volume calls for every device
#                       (qa/ceph-volume.sh, Ceph tier)
#   (shellcheck)        optional, only for developers linting qa/*.sh
#
# Ends by checking that everything the main job (qa/bench.sh) needs is still
# there after all installs: commands, the venv's imports, fio's rbd engine,
# the Ceph build.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# The release, its work directory (the venv and the HDD emulator's build
# live there: exported for qa/diskemu/build.sh) and build.
source "$REPO/cmake/common.sh"
export MIMSTORE_WORKDIR
build=1
for a in "$@"; do
  case $a in
    --packages-only) build=0 ;;
    *) echo "setup.sh: unknown argument $a (try --packages-only)" >&2; exit 2 ;;
  esac
done

if [[ $(id -u) -ne 0 ]]; then
  echo "setup.sh: must run as root (it installs packages; use sudo if you are not root)" >&2
  exit 1
fi

pkgs=(ceph-mon ceph-osd ceph-mgr ceph-common fio xfsprogs util-linux
      fuse3 libfuse3-dev rbd-fuse jq iproute2 procps uuid-runtime
      python3-venv python3-numpy python3-pytest
      python3-mock python3-pyfakefs python3-yaml udev)
optional=(shellcheck)

missing=()
for p in "${pkgs[@]}" "${optional[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup.sh: all packages present"
else
  echo "setup.sh: installing: ${missing[*]}"
  # The Ceph packages' maintainer scripts try to start services; there is no
  # init system to talk to here, and the harness starts daemons by hand.
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    created_policy=1
  fi
  trap '[[ $created_policy == 1 ]] && rm -f "$policy"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
  apt-get install -y -qq --no-install-recommends "${optional[@]}" ||
    echo "setup.sh: optional ${optional[*]} not installed (only needed for linting)"
fi

"$REPO/cmake/install-deps.sh" core
"$REPO/cmake/install-deps.sh" ceph

# The harness's python packages, in a venv of Debian's python3 (the ceph CLI
# and the build keep using /usr/bin/python3 itself).
VENV=${MIMSTORE_VENV:-$MIMSTORE_WORKDIR/venv}
if ! "$VENV/bin/python" -c 'import matplotlib, numpy' 2>/dev/null; then
  echo "setup.sh: making $VENV (numpy, matplotlib from PyPI)"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    -r "$REPO/qa/requirements.txt"
fi

# The HDD emulator the benchmarks run on (seconds to build); build.sh prints
# the daemon's path.
emu=$("$REPO/qa/diskemu/build.sh")

if [[ $build == 1 ]]; then
  "$REPO/cmake/ceph-build.sh"
fi

# Everything the main job needs, checked after every install above (a later
# install can remove what an earlier one brought).
fail=0
for c in ceph-mon ceph-osd ceph-mgr monmaptool ceph-authtool rbd rados fio mkfs.xfs losetup \
         fusermount3 jq ss pgrep uuidgen; do
  command -v "$c" >/dev/null || { echo "setup.sh: $c not found" >&2; fail=1; }
done
"$VENV/bin/python" -c 'import matplotlib, numpy' ||
  { echo "setup.sh: $VENV cannot import matplotlib/numpy" >&2; fail=1; }
fio --enghelp 2>/dev/null | grep -qw rbd ||
  { echo "setup.sh: this fio has no rbd ioengine" >&2; fail=1; }
[[ -n $emu && -x $emu ]] ||
  { echo "setup.sh: the HDD emulator was not built (qa/diskemu/build.sh)" >&2; fail=1; }
[[ -c /dev/fuse ]] ||
  { echo "setup.sh: no /dev/fuse: the HDD emulator needs FUSE (modprobe fuse; in a container, pass /dev/fuse)" >&2; fail=1; }
[[ -d /sys/fs/cgroup/blkio ]] ||
  echo "setup.sh: note: no cgroup-v1 blkio controller at /sys/fs/cgroup/blkio (only qa/bench.sh --hdd throttle needs it)" >&2
if [[ $build == 1 ]]; then
  for b in ceph-osd ceph-mon ceph-mgr ceph_test_objectstore ceph_test_mimstore ceph_test_rados; do
    [[ -x $CEPH_BUILD_DIR/bin/$b ]] || { echo "setup.sh: $CEPH_BUILD_DIR/bin/$b missing" >&2; fail=1; }
  done
  [[ -x $CEPH_BUILD_DIR/bin/fio && -f $CEPH_BUILD_DIR/lib/libfio_ceph_objectstore.so ]] ||
    { echo "setup.sh: fio's objectstore engine missing in $CEPH_BUILD_DIR (bin/fio, lib/libfio_ceph_objectstore.so)" >&2; fail=1; }
  ldd "$CEPH_BUILD_DIR/bin/ceph-osd" | grep -q tcmalloc ||
    { echo "setup.sh: ceph-osd is not linked with tcmalloc" >&2; fail=1; }
fi
[[ $fail == 0 ]] || exit 1
echo "setup.sh: ready (run qa/bench.sh for the main job, qa/run-tests.sh for the tests)"
