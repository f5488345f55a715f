#!/usr/bin/env bash
# Show that a test catches the bug its fix removed: build a private copy of
# ceph_test_mimstore whose src/os/mimstore/$FILE (default MIMOps.cc) has
# the fix taken out (a python edit of the source), run the given tests
# against it, and report whether they fail. The Ceph build itself (tree,
# objects, bin/) is not touched: the edited file is compiled and linked in a
# scratch directory.
#
#   [FILE=MIMFlush.cc] qa/crash/without-fix.sh NAME GTEST_FILTER PYTHON_EDIT
#
# PYTHON_EDIT acts on `s`, the file's text; it must change it. Example:
#   FILE=MIMCollOps.cc qa/crash/without-fix.sh nobarrier \
#     '*MergeKeepsCachedWritesToDest*' \
#     's = s.replace("_collection_barrier(cid, dest)", "0")'
# Exit status: 0 if the tests FAILED without the fix (as they should).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
source "$REPO/cmake/common.sh"
[ $# = 3 ] || { sed -n '2,16p' "$0"; exit 2; }
name=$1 filter=$2 edit=$3
FILE=${FILE:-MIMOps.cc}
B=$CEPH_BUILD_DIR
d=/var/tmp/mimstore-without-fix/$name
rm -rf "$d"; mkdir -p "$d/run"
/usr/bin/python3 - "$REPO/src/os/mimstore/$FILE" "$d/$FILE" "$edit" <<'PY'
import sys
src, dst, edit = sys.argv[1:]
s = open(src).read()
s0 = s
exec(edit)
if s == s0:
    sys.exit("the edit changed nothing: the fix is not where it says")
open(dst, "w").write(s)
PY
obj=src/os/CMakeFiles/os.dir/mimstore/$FILE.o
cc=$(ninja -C "$B" -t commands "$obj" | tail -1 |
     sed "s|/usr/bin/ccache ||; s| -o [^ ]*| -o $d/$FILE.o|; s| -MD -MT [^ ]* -MF [^ ]*||; s| -c [^ ]*$FILE| -c $d/$FILE -I$CEPH_SOURCE_DIR/src/os/mimstore|")
ln=$(ninja -C "$B" -t commands bin/ceph_test_mimstore | tail -1 |
     sed "s|^: && ||; s| lib/libos.a| $d/libos.a|; s| -o bin/ceph_test_mimstore| -o $d/ceph_test_mimstore|; s|&& :\$||")
cp "$B/lib/libos.a" "$d/libos.a"
(cd "$B" && eval "$cc") || die "compiling the edited $FILE failed"
(cd "$d" && ar r libos.a "$FILE.o")
(cd "$B" && eval "$ln") || die "linking failed"
log "running $filter without the fix ($name)"
if MIMSTORE_TEST_DIR=$d/run "$d/ceph_test_mimstore" --gtest_brief=1 \
     --gtest_filter="$filter" --log-file="$d/run/log" >"$d/out.txt" 2>&1; then
  log "$name: the tests PASSED without the fix: they do not catch it"
  exit 1
fi
grep -E '^\[  FAILED  \]' "$d/out.txt" | sort -u | head -20
log "$name: the tests FAILED without the fix, as they should"
