#!/usr/bin/env bash
# The lock check: clang's thread safety analysis (core/thread_annotations.h
# says what it checks), with its warnings as errors.
#
#   qa/lock-annotations.sh                 the Ceph-free tier: every core/
#                                          source, then the deliberate
#                                          mistakes of
#                                          src/test/core/lockcheck/violations.cc,
#                                          which clang -verify must find
#   qa/lock-annotations.sh --store [DIR]   the Ceph tier: every store source
#                                          (src/os/mimstore/*.cc) with the
#                                          Ceph build DIR's include flags
#                                          (default: the release's,
#                                          cmake/common.sh); then
#                                          locks removed from copies of three
#                                          of them must be reported
#
# The mistakes are checked so that a check which no longer bites (an
# annotation macro emptied, a flag lost) fails here too. Needs clang
# clang 16 or later (cmake/install-deps.sh core installs Debian 12's
# clang-19): Tentacle's headers use C++20's optional `typename`, which
# clang 14, Debian 12's default, rejects.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z ${MIMSTORE_CLANG:-} ]]; then
  for MIMSTORE_CLANG in clang++-19 clang++-16 clang++; do
    command -v "$MIMSTORE_CLANG" >/dev/null && break
  done
fi
CXX=$MIMSTORE_CLANG
command -v "$CXX" >/dev/null ||
  { echo "lock-annotations: $CXX not found (cmake/install-deps.sh core installs clang)" >&2; exit 1; }

core_check() {
  local flags=(-std=c++20 -fsyntax-only -I"$REPO/src/os/mimstore"
               -Wthread-safety -Werror=thread-safety)
  local n=0 f
  for f in "$REPO"/src/os/mimstore/core/*.cc; do
    "$CXX" "${flags[@]}" "$f"
    n=$((n + 1))
  done
  echo "lock-annotations: $n core sources, no thread-safety warning"
  "$CXX" -std=c++20 -fsyntax-only -I"$REPO/src/os/mimstore" -Wthread-safety \
    -Xclang -verify "$REPO/src/test/core/lockcheck/violations.cc"
  echo "lock-annotations: every deliberate mistake in violations.cc is reported"
}

# The defines and include paths the Ceph build compiles the store with, read
# from its ninja file (one store object's command), so that the check sees
# the headers the build sees. The overlay copy of the store in Ceph's tree
# is left out: the repo's own sources go first.
store_flags() {
  local build=$1 obj=src/os/CMakeFiles/os.dir/mimstore/Sequencer.cc.o cmd
  cmd=$(ninja -C "$build" -t commands "$obj" 2>/dev/null | tail -1) || true
  [[ $cmd == *Sequencer.cc* ]] ||
    { echo "lock-annotations: no compile command for $obj in $build (run cmake/ceph-build.sh)" >&2; return 1; }
  local w prev="" out=()
  for w in $cmd; do
    if [[ $prev == -isystem ]]; then
      out+=(-isystem "$w")
    elif [[ $w == -D* ]]; then
      out+=("$w")
    elif [[ $w == -I* && $w != */src/os/mimstore ]]; then
      out+=("$w")
    fi
    prev=$w
  done
  printf '%s\n' -std=c++20 -fsyntax-only -fsigned-char -ftemplate-depth-1024 \
    -Wthread-safety -Werror=thread-safety "${out[@]}"
}

# store_check_one SRC_DIR FLAGS_FILE FILE: compile FILE with the store's
# sources at SRC_DIR first on the include path.
store_check_one() {
  local dir=$1 flags=() f=$3
  mapfile -t flags <"$2"
  "$CXX" -I"$dir" "${flags[@]}" "$f" ||
    { echo "lock-annotations: $f: see above" >&2; return 1; }
}

# A copy of the store with one lock taken out of FUNC in FILE (the first line
# after FUNC's start that matches LOCK_RE is removed); clang must say it.
store_mutation() {
  local file=$1 func=$2 lock_re=$3 want=$4 tmp out
  tmp=$(mktemp -d)
  cp -r "$REPO/src/os/mimstore/." "$tmp/"
  awk -v fn="$func" -v re="$lock_re" '
    index($0, fn) { in_func = 1 }
    in_func && !done && $0 ~ re { done = 1; next }
    { print }
    END { if (!done) exit 3 }' "$REPO/src/os/mimstore/$file" >"$tmp/$file" || {
    echo "lock-annotations: the mutation of $file ($func) no longer finds its lock" >&2
    rm -rf "$tmp"; return 1; }
  if out=$(store_check_one "$tmp" "$FLAGS_FILE" "$tmp/$file" 2>&1); then
    echo "lock-annotations: $func without its lock compiled cleanly: the check does not bite" >&2
    rm -rf "$tmp"; return 1
  fi
  rm -rf "$tmp"
  grep -q "$want" <<<"$out" || {
    echo "lock-annotations: $func without its lock failed, but not with \"$want\":" >&2
    echo "$out" | head -20 >&2; return 1; }
  echo "lock-annotations: $func without its lock is reported ($want)"
}

store_check() {
  local build=$1
  FLAGS_FILE=$(mktemp)
  trap 'rm -f "$FLAGS_FILE"' EXIT
  store_flags "$build" >"$FLAGS_FILE"
  local srcs=("$REPO"/src/os/mimstore/*.cc)
  # Two at a time: a store source parses Ceph's headers (15 s or so each).
  printf '%s\0' "${srcs[@]}" |
    xargs -0 -n1 -P2 "$0" --store-one "$REPO/src/os/mimstore" "$FLAGS_FILE"
  echo "lock-annotations: ${#srcs[@]} store sources, no thread-safety warning"
  store_mutation Sequencer.cc "Sequencer::queue_length()" \
    "MutexLock l[(]apply_lock[)]" "requires holding mutex 'apply_lock'"
  store_mutation MIMMergeControl.cc "MIMStore::_time_tick()" \
    "MutexLock l[(]freeze_lock[)]" "requires holding mutex 'freeze_lock'"
  store_mutation MIMStore.cc "MIMStore::collection_bits(" \
    "ReadLock l[(]c->lock[)]" "requires holding mutex 'c->lock'"
}

case "${1:-}" in
  "") core_check ;;
  --store) store_check "${2:-$(source "$REPO/cmake/common.sh"; echo "$CEPH_BUILD_DIR")}" ;;
  --store-one) store_check_one "$2" "$3" "$4" ;;  # store_check's workers
  *) echo "usage: qa/lock-annotations.sh [--store [CEPH_BUILD_DIR]]" >&2; exit 2 ;;
esac
