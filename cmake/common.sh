# Shared settings for the Ceph build scripts. Sourced, not run.
#
# Everything heavy lives in one work directory outside the repository so a
# fresh clone reuses it:
#   $MIMSTORE_WORKDIR/dl      downloaded Debian source package
#   $MIMSTORE_WORKDIR/src     extracted Ceph tree (unless CEPH_SOURCE_DIR is set)
#   $MIMSTORE_WORKDIR/build   Ceph build directory; binaries in build/bin
#   $MIMSTORE_WORKDIR/ccache  compiler cache

MIMSTORE_WORKDIR=${MIMSTORE_WORKDIR:-/var/tmp/mimstore}
MIMSTORE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

CEPH_DEB_VERSION=18.2.7+ds-1+deb13u1
CEPH_UPSTREAM_VERSION=18.2.7
CEPH_TREE_NAME=ceph-18.2.7+ds

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

log() { printf '[mimstore] %s\n' "$*" >&2; }
die() { printf '[mimstore] ERROR: %s\n' "$*" >&2; exit 1; }
