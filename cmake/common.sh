# Shared settings for the Ceph build scripts. Sourced, not run.
#
# Everything heavy lives in one work directory outside the repository so a
# fresh clone reuses it:
#   $MIMSTORE_WORKDIR/dl      downloaded Debian source package
#   $MIMSTORE_WORKDIR/src     extracted Ceph tree (unless CEPH_SOURCE_DIR is set)
#   $MIMSTORE_WORKDIR/build   Ceph build directory; binaries in build/bin
#   $MIMSTORE_WORKDIR/ccache  compiler cache

#
# MIMSTORE_CEPH_RELEASE picks the Ceph release (issue 67): tentacle (the
# default: the maintained release, what the test command builds and tests)
# or reef (the second target, and the only one that converts a store made
# before format 3), each with its own work directory, Debian source package
# and patch series.
MIMSTORE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MIMSTORE_CEPH_RELEASE=${MIMSTORE_CEPH_RELEASE:-tentacle}
case "$MIMSTORE_CEPH_RELEASE" in
  reef)
    _default_workdir=/var/tmp/mimstore
    CEPH_DEB_VERSION=18.2.7+ds-1+deb13u1
    CEPH_DEB_SUITE=trixie
    CEPH_UPSTREAM_VERSION=18.2.7
    CEPH_SERIES_DIR=$MIMSTORE_REPO/cmake/patches
    ;;
  tentacle)
    _default_workdir=/var/tmp/mimstore-t
    CEPH_DEB_VERSION=20.2.4+ds-2
    CEPH_DEB_SUITE=sid
    CEPH_UPSTREAM_VERSION=20.2.4
    CEPH_SERIES_DIR=$MIMSTORE_REPO/cmake/patches-tentacle
    ;;
  *)
    printf '[mimstore] ERROR: MIMSTORE_CEPH_RELEASE is "%s"; it must be reef or tentacle\n' \
      "$MIMSTORE_CEPH_RELEASE" >&2
    exit 1
    ;;
esac
MIMSTORE_WORKDIR=${MIMSTORE_WORKDIR:-$_default_workdir}
CEPH_TREE_NAME=ceph-${CEPH_DEB_VERSION%%-*}

CEPH_SOURCE_DIR_FROM_USER=${CEPH_SOURCE_DIR:-}
CEPH_SOURCE_DIR=${CEPH_SOURCE_DIR:-$MIMSTORE_WORKDIR/src/$CEPH_TREE_NAME}
CEPH_BUILD_DIR=${CEPH_BUILD_DIR:-$MIMSTORE_WORKDIR/build}
export CCACHE_DIR=${CCACHE_DIR:-$MIMSTORE_WORKDIR/ccache}

# Debian's interpreter: Ceph's configure needs cython3, which the pyenv
# python3 that may come first on PATH does not have.
CEPH_PYTHON=/usr/bin/python3

# The targets the mimstore work needs; never `all`.
CEPH_TARGETS=(
  ceph-osd ceph-mon ceph-mgr ceph-authtool monmaptool crushtool osdmaptool ceph-conf
  ceph_test_objectstore ceph_test_mimstore
  cls_rbd cls_lock ec_jerasure ec_lrc
  ceph-objectstore-tool ceph_test_rados ceph-exporter ceph-bluestore-tool
  fio_ceph_objectstore
  cython_rados cython_rbd cython_cephfs
)
# Debian 12's rbd (Pacific) talks to Reef's libraries but not to Tentacle's.
[ "$MIMSTORE_CEPH_RELEASE" = reef ] || CEPH_TARGETS+=(rbd)

log() { printf '[mimstore] %s\n' "$*" >&2; }
die() { printf '[mimstore] ERROR: %s\n' "$*" >&2; exit 1; }
