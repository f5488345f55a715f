#!/usr/bin/env bash
# The Ceph-free tier's lock check: clang's thread safety analysis over every
# core/ source (core/thread_annotations.h says what it checks), with its
# warnings as errors; then the deliberate mistakes of
# src/test/core/lockcheck/violations.cc, which clang -verify must find, one
# by one, so that a check that no longer bites fails here too.
#
#   qa/lock-annotations.sh        (needs clang; cmake/install-deps.sh core)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CXX=${MIMSTORE_CLANG:-clang++}
command -v "$CXX" >/dev/null ||
  { echo "lock-annotations: $CXX not found (cmake/install-deps.sh core installs clang)" >&2; exit 1; }
flags=(-std=c++20 -fsyntax-only -I"$REPO/src/os/mimstore"
       -Wthread-safety -Werror=thread-safety)
n=0
for f in "$REPO"/src/os/mimstore/core/*.cc; do
  "$CXX" "${flags[@]}" "$f"
  n=$((n + 1))
done
echo "lock-annotations: $n core sources, no thread-safety warning"
"$CXX" -std=c++20 -fsyntax-only -I"$REPO/src/os/mimstore" -Wthread-safety \
  -Xclang -verify "$REPO/src/test/core/lockcheck/violations.cc"
echo "lock-annotations: every deliberate mistake in violations.cc is reported"
