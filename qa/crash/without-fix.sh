#!/usr/bin/env bash
# Show that a test catches the bug its fix removed: build a private copy of
# the test binary with the fix taken out of src/os/mimstore/$FILE (a python
# edit of the source), run the named tests against it, and check that they
# fail.
#
#   [FILE=MIMFlush.cc] qa/crash/without-fix.sh NAME GTEST_FILTER PYTHON_EDIT
#
# FILE is relative to src/os/mimstore (default MIMOps.cc): a store .cc, a
# header, or a file of core/. Where the tests run:
#   core/*          mimcore_tests (the Ceph-free tier), built from a private
#                   copy of this checkout's core in a scratch directory
#   a store .cc     ceph_test_mimstore, the edited file compiled and linked
#                   into a private copy in a scratch directory
#   a store header  ceph_test_mimstore, rebuilt with the edit in the Ceph
#                   tree and the tree's copy restored after (the build
#                   directory then rebuilds once more)
# The Ceph build is brought up to date first (cmake/ceph-build.sh
# ceph_test_mimstore), unless WITHOUT_FIX_BUILT=1 says the caller did.
#
# PYTHON_EDIT acts on `s`, the file's text; each s.replace(old, new) must
# find `old` exactly once (a stale case fails here instead of doing
# nothing). Example:
#   FILE=MIMCollOps.cc qa/crash/without-fix.sh nobarrier \
#     '*MergeKeepsCachedWritesToDest*' \
#     's = s.replace("_collection_barrier(cid, dest)", "0")'
# Every positive pattern of GTEST_FILTER must match a test that failed (or
# crashed) without the fix: the case names the tests that catch it.
# Exit status: 0 if the named tests FAILED without the fix (as they should).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
[ $# = 3 ] || { sed -n '2,29p' "$0"; exit 2; }
name=$1 filter=$2 edit=$3
FILE=${FILE:-MIMOps.cc}
B=$CEPH_BUILD_DIR
# Under the release's work directory: a Reef and a Tentacle run side by side
# do not share scratch space.
scratch=$MIMSTORE_WORKDIR/without-fix
d=$scratch/$name
rm -rf "$d"; mkdir -p "$d/run"
src=$REPO/src/os/mimstore/$FILE
[ -f "$src" ] || die "$name: no file src/os/mimstore/$FILE"

# The edited text, in $d/edited.
/usr/bin/python3 "$REPO/qa/crash/without_fix_edit.py" "$src" "$d/edited" "$edit" ||
  die "$name: the edit does not apply: the fix is not where the case says"

case $FILE in
  core/*) kind=core ;;
  *.cc) kind=store-cc ;;
  *) kind=store-header ;;
esac
if [ "$kind" != core ] && [ "${WITHOUT_FIX_BUILT:-0}" != 1 ]; then
  log "bringing the Ceph build up to date (ceph_test_mimstore)"
  "$REPO/cmake/ceph-build.sh" ceph_test_mimstore >"$d/build.log" 2>&1 ||
    die "the Ceph build failed; see $d/build.log"
fi

case $kind in
  core)
    # A private copy of what the core's CMakeLists.txt builds from, shared
    # by the core cases: rsync -c rewrites only what differs from this
    # checkout (the last case's edit), so ninja rebuilds only that.
    core=$scratch/core
    mkdir -p "$core/tree"
    for x in CMakeLists.txt cmake src; do
      rsync -rc --delete "$REPO/$x" "$core/tree/"
    done
    cp "$d/edited" "$core/tree/src/os/mimstore/$FILE"
    cmake -S "$core/tree" -B "$core/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      >"$d/build.log" 2>&1 &&
      ninja -C "$core/build" mimcore_tests >>"$d/build.log" 2>&1 ||
      die "building the core without the fix failed; see $d/build.log"
    cp "$core/build/mimcore_tests" "$d/mimcore_tests"
    bin=("$d/mimcore_tests")
    ;;
  store-cc)
    obj=src/os/CMakeFiles/os.dir/mimstore/$FILE.o
    base=$(basename "$FILE")
    cp "$d/edited" "$d/$base"
    cc=$(ninja -C "$B" -t commands "$obj" | tail -1 |
         sed "s|/usr/bin/ccache ||; s| -o [^ ]*| -o $d/$base.o|; s| -MD -MT [^ ]* -MF [^ ]*||; s| -c [^ ]*$FILE| -c $d/$base -I$CEPH_SOURCE_DIR/src/os/mimstore|")
    ln=$(ninja -C "$B" -t commands bin/ceph_test_mimstore | tail -1 |
         sed "s|^: && ||; s| lib/libos.a| $d/libos.a|; s| -o bin/ceph_test_mimstore| -o $d/ceph_test_mimstore|; s|&& :\$||")
    cp "$B/lib/libos.a" "$d/libos.a"
    (cd "$B" && eval "$cc") || die "compiling the edited $FILE failed"
    (cd "$d" && ar r libos.a "$base.o")
    (cd "$B" && eval "$ln") || die "linking failed"
    bin=("$d/ceph_test_mimstore" "--log-file=$d/run/log")
    ;;
  store-header)
    tree=$CEPH_SOURCE_DIR/src/os/mimstore/$FILE
    restore() {
      cp "$src" "$tree"
      ninja -C "$B" bin/ceph_test_mimstore >>"$d/build.log" 2>&1 ||
        echo "without-fix.sh: rebuilding after restoring $FILE failed; see $d/build.log" >&2
    }
    trap restore EXIT
    cp "$d/edited" "$tree"
    ninja -C "$B" bin/ceph_test_mimstore >"$d/build.log" 2>&1 ||
      die "building with the edited $FILE failed; see $d/build.log"
    cp "$B/bin/ceph_test_mimstore" "$d/ceph_test_mimstore"
    bin=("$d/ceph_test_mimstore" "--log-file=$d/run/log")
    ;;
esac

log "running $filter without the fix ($name)"
rc=0
MIMSTORE_TEST_DIR=$d/run "${bin[@]}" --gtest_filter="$filter" \
  >"$d/out.txt" 2>&1 || rc=$?
if /usr/bin/python3 "$REPO/qa/crash/without_fix_edit.py" --check-failed \
     "$filter" "$rc" "$d/out.txt"; then
  log "$name: the tests FAILED without the fix, as they should"
else
  log "$name: the named tests did not fail without the fix: they do not catch it (output: $d/out.txt)"
  exit 1
fi
