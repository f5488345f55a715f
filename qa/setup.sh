#!/usr/bin/env bash
# qa/setup.sh - make a Debian 12 machine ready for mimstore: the packages the
# benchmark harness needs, the packages to build Ceph, and the patched lean
# Ceph Reef build with mimstore (cmake/ceph-build.sh: about 70 minutes on 2
# cores the first time, an incremental build after that).
#
#   qa/setup.sh                  packages and the Ceph build
#   qa/setup.sh --packages-only  packages only
#
# Idempotent: packages already installed are left alone; apt-get runs only when
# something is missing. Needs root.
#
#   ceph-mon ceph-osd   Pacific 16.2.15, the stock-FileStore comparator
#                       (profile filestore-pacific); monmaptool comes with ceph-mon
#   ceph-common         rbd / rados / ceph-authtool CLIs (talk to Reef clusters too)
#   fio                 3.33, with the rbd ioengine
#   xfsprogs util-linux mkfs.xfs, losetup, mount
#   python3-matplotlib python3-numpy python3-pytest   analysis, plots, unit tests
#                       (used with Debian's /usr/bin/python3)
#   (shellcheck)        optional, only for developers linting qa/*.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
build=1
for a in "$@"; do
  case $a in
    --packages-only) build=0 ;;
    *) echo "setup.sh: unknown argument $a (try --packages-only)" >&2; exit 2 ;;
  esac
done

if [[ $(id -u) -ne 0 ]]; then
  echo "setup.sh: must run as root (sudo qa/setup.sh)" >&2
  exit 1
fi

pkgs=(ceph-mon ceph-osd ceph-common fio xfsprogs util-linux
      python3-matplotlib python3-numpy python3-pytest)
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

# Sanity: the pieces the harness relies on.
fail=0
for c in ceph-mon ceph-osd monmaptool ceph-authtool rbd rados fio mkfs.xfs losetup; do
  command -v "$c" >/dev/null || { echo "setup.sh: $c not found" >&2; fail=1; }
done
/usr/bin/python3 -c 'import matplotlib, numpy' ||
  { echo "setup.sh: python3-matplotlib/numpy not importable by /usr/bin/python3" >&2; fail=1; }
fio --enghelp 2>/dev/null | grep -qw rbd ||
  { echo "setup.sh: this fio has no rbd ioengine" >&2; fail=1; }
[[ -d /sys/fs/cgroup/blkio ]] ||
  echo "setup.sh: warning: no cgroup-v1 blkio controller at /sys/fs/cgroup/blkio (HDD throttle unavailable)" >&2
[[ $fail == 0 ]] || exit 1

"$REPO/cmake/install-deps.sh" core
"$REPO/cmake/install-deps.sh" ceph
if [[ $build == 1 ]]; then
  "$REPO/cmake/ceph-build.sh"
fi
