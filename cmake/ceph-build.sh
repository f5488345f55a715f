#!/usr/bin/env bash
# Configure (once) and build the Ceph targets mimstore needs, with the
# patch series and the mimstore overlay applied: Tentacle, or Reef with
# MIMSTORE_CEPH_RELEASE=reef (its own work directory, common.sh).
#
#   cmake/ceph-build.sh            fetch/verify source, patch, configure, build
#   cmake/ceph-build.sh TARGET...  build only the named targets
#
# Ninja's progress line is printed while it runs ("[done/total elapsed]");
# the total time is printed at the end. Re-running resumes where Ninja and
# ccache left off.
set -euo pipefail
source "$(dirname "$0")/common.sh"
start=$(date +%s)

# One work directory per release: a build directory of another tree (a
# MIMSTORE_WORKDIR shared by Reef and Tentacle) would build that tree.
# Checked first, before any download.
if [ -f "$CEPH_BUILD_DIR/CMakeCache.txt" ]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$CEPH_BUILD_DIR/CMakeCache.txt")
  [ "$home" = "$CEPH_SOURCE_DIR" ] || [ "$home" -ef "$CEPH_SOURCE_DIR" ] ||
    die "$CEPH_BUILD_DIR builds $home, not $CEPH_SOURCE_DIR ($MIMSTORE_CEPH_RELEASE): give each release its own MIMSTORE_WORKDIR"
fi

# Debian's python3 and its cython3 must be found first (see common.sh).
export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH

"$MIMSTORE_REPO/cmake/ceph-source.sh"
"$MIMSTORE_REPO/cmake/apply-patches.sh"

# Lean configuration: DESIGN.md "Build shape". -g0 keeps the build directory
# near 2 GB; Ninja plus ccache make re-runs cheap. tcmalloc as Ceph's packages
# ship it (memory figures are then what users see); the manager, since it
# carries out pg_num changes (PG split and merge) and reports PG states;
# Debian's RocksDB 7.8 instead of the bundled 7.9 (Reef needs >= 5.14), which
# takes the largest single component out of the cold build.
CONFIGURE_FLAGS=(
  -G Ninja
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g0 -DNDEBUG"
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g0 -DNDEBUG"
  -DWITH_CCACHE=ON
  -DWITH_SYSTEM_LIBURING=ON
  -DPython3_EXECUTABLE=$CEPH_PYTHON
  -DALLOCATOR=tcmalloc
  -DWITH_SYSTEM_ROCKSDB=ON
  -DWITH_MGR=ON -DWITH_MGR_ROOK_CLIENT=OFF -DWITH_RADOSGW=OFF -DWITH_CEPHFS=OFF
  -DWITH_LIBCEPHSQLITE=OFF -DWITH_KRBD=OFF -DWITH_LTTNG=OFF
  -DWITH_BABELTRACE=OFF -DWITH_MANPAGE=OFF -DWITH_RDMA=OFF
  -DWITH_OPENLDAP=OFF -DWITH_FUSE=OFF -DWITH_JAEGER=OFF
  -DWITH_SPDK=OFF -DWITH_SYSTEMD=OFF -DWITH_GRAFANA=OFF
  -DWITH_MGR_DASHBOARD_FRONTEND=OFF -DWITH_CEPH_DEBUG_MUTEX=OFF
  -DWITH_EC_ISA_PLUGIN=OFF -DDISABLE_DENCODER=ON
  -DWITH_TESTS=ON -DWITH_RBD=ON -DWITH_BLUESTORE=ON -DWITH_XFS=ON
)
case $MIMSTORE_CEPH_RELEASE in
  # Debian 12's Boost 1.81 is what Reef wants.
  reef) CONFIGURE_FLAGS+=(-DWITH_SYSTEM_BOOST=ON -DWITH_SEASTAR=OFF) ;;
  # Tentacle wants Boost >= 1.87: the copy in its tarball is built (once;
  # ccache keeps it). Crimson's switch was renamed; the NVMe-oF gateway
  # client needs gRPC, which the lean build leaves out.
  tentacle) CONFIGURE_FLAGS+=(-DWITH_SYSTEM_BOOST=OFF -DWITH_CRIMSON=OFF
                              -DWITH_NVMEOF_GATEWAY_MONITOR_CLIENT=OFF) ;;
esac

mkdir -p "$CEPH_BUILD_DIR" "$CCACHE_DIR"
# fio's source and a fio binary for Ceph's objectstore engine (see the script).
fio_dir=$("$MIMSTORE_REPO/cmake/fio-build.sh")
# Flags added after the first release of this script, so an existing build
# directory is reconfigured with them ("NAME:TYPE=VALUE" as in CMakeCache):
#   libcephfs and its python binding: every manager module imports cephfs
#     (mgr_util.py); without Reef's, python finds Debian's Pacific binding,
#     which fails against Reef's libceph-common and takes 12 modules down
#     (pg_autoscaler, progress, balancer, status, iostat, rbd_support, ...)
#     with HEALTH_WARN. Patch 0008 builds the binding without WITH_CEPHFS
#     (which would add the MDS, Lua, and a define that rebuilds everything).
LATE_FLAGS=("WITH_LIBCEPHFS:BOOL=ON"
            "MIMSTORE_FIO_DIR:UNINITIALIZED=$fio_dir")
# Tentacle: Intel QAT compression (qatlib, QATzip) would build bundled
# sources that need libtool; QAT hardware is not what mimstore is about.
[ "$MIMSTORE_CEPH_RELEASE" = reef ] ||
  LATE_FLAGS+=("WITH_QATLIB:BOOL=OFF" "WITH_QATZIP:BOOL=OFF")
for f in "${LATE_FLAGS[@]}"; do CONFIGURE_FLAGS+=("-D${f%%:*}=${f#*=}"); done

configure() {
  (cd "$CEPH_BUILD_DIR" && cmake "$@") \
    >"$CEPH_BUILD_DIR/mimstore-configure.log" 2>&1 \
    || { tail -40 "$CEPH_BUILD_DIR/mimstore-configure.log" >&2; die "Ceph configure failed; full log: $CEPH_BUILD_DIR/mimstore-configure.log"; }
}
if [ ! -f "$CEPH_BUILD_DIR/build.ninja" ]; then
  log "configuring Ceph in $CEPH_BUILD_DIR (a few minutes)"
  configure "${CONFIGURE_FLAGS[@]}" "$CEPH_SOURCE_DIR"
else
  late=()
  for f in "${LATE_FLAGS[@]}"; do
    grep -qx "$f" "$CEPH_BUILD_DIR/CMakeCache.txt" || late+=("-D${f%%:*}=${f#*=}")
  done
  if [ ${#late[@]} -gt 0 ]; then
    log "reconfiguring $CEPH_BUILD_DIR with ${late[*]} (about a minute)"
    configure "-DPython3_EXECUTABLE=$CEPH_PYTHON" "${late[@]}" .
  fi
fi
ccache -M 8G >/dev/null

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${CEPH_TARGETS[@]}")
log "building ${targets[*]}"
export NINJA_STATUS="[%f/%t %es] "
jobs=${MIMSTORE_BUILD_JOBS:-$(nproc)}
ninja -C "$CEPH_BUILD_DIR" -j "$jobs" "${targets[@]}" 2>&1 \
  | tee "$CEPH_BUILD_DIR/mimstore-build.log" \
  | { if [ -t 2 ]; then cat; else awk '/^\[[0-9]+\/[0-9]+ / { n++; if (n % 25 == 0) print; next } { print }'; fi; }
rc=${PIPESTATUS[0]}
end=$(date +%s)
log "build $( [ "$rc" = 0 ] && echo finished || echo FAILED ) in $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s; binaries in $CEPH_BUILD_DIR/bin"
[ "$rc" = 0 ] || die "ninja failed (exit $rc); see $CEPH_BUILD_DIR/mimstore-build.log"
touch "$CEPH_BUILD_DIR/.mimstore-build-ok"
# What the binaries were built from: a benchmark run from another checkout
# (qa/bench.sh) records it, and says so when the store's source differs
# from its own (git tree ids of src/ and the patch series: equal across
# commits that change neither).
git_in() { git -C "$MIMSTORE_REPO" "$@" 2>/dev/null || echo unknown; }
series=${CEPH_SERIES_DIR#"$MIMSTORE_REPO"/}
cat >"$CEPH_BUILD_DIR/mimstore-built-from.json" <<STAMP
{"repo": "$MIMSTORE_REPO", "commit": "$(git_in rev-parse HEAD)", "series": "$series",
 "src_tree": "$(git_in rev-parse HEAD:src)", "patches_tree": "$(git_in rev-parse "HEAD:$series")",
 "worktree_changes": $(git_in status --porcelain --untracked-files=no -- src "$series" | wc -l),
 "built": "$(date '+%Y-%m-%d %H:%M:%S %z')"}
STAMP
