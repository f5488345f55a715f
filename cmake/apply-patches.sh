#!/usr/bin/env bash
# Apply mimstore's patch series to the Ceph tree and copy the overlay
# (src/os/mimstore, src/test/mimstore, the options yaml) into it.
#
# Idempotent: a patch already applied is recognised (it reverses cleanly) and
# skipped; a patch that neither applies nor reverses stops the build and the
# files it could not patch are named. Overlay files are copied only when
# their content changed, so Ninja rebuilds only what really changed.
set -euo pipefail
source "$(dirname "$0")/common.sh"

PATCH_DIR=$CEPH_SERIES_DIR
cd "$CEPH_SOURCE_DIR"

apply_one() {
  local p=$1 name out
  name=$(basename "$p")
  if patch -p1 -R --dry-run -s -f <"$p" >/dev/null 2>&1; then
    log "patch $name: already applied"
    return
  fi
  if ! out=$(patch -p1 --dry-run -f <"$p" 2>&1); then
    printf '%s\n' "$out" >&2
    local files
    files=$(printf '%s\n' "$out" | sed -n 's/^patching file //p' | tr '\n' ' ')
    die "patch $name does not apply to $CEPH_SOURCE_DIR (files: $files); is this the Ceph $CEPH_UPSTREAM_VERSION tree the $MIMSTORE_CEPH_RELEASE series was written for?"
  fi
  patch -p1 -s -f --no-backup-if-mismatch <"$p"
  log "patch $name: applied"
}

while read -r p; do
  case "$p" in ''|'#'*) continue ;; esac
  apply_one "$PATCH_DIR/$p"
done <"$PATCH_DIR/series"

sync_dir() {
  local from=$1 to=$2
  mkdir -p "$to"
  # -c: compare content, so unchanged files keep their mtime.
  rsync -rc --delete "$from/" "$to/"
}
sync_dir "$MIMSTORE_REPO/src/os/mimstore" "$CEPH_SOURCE_DIR/src/os/mimstore"
sync_dir "$MIMSTORE_REPO/src/test/ceph" "$CEPH_SOURCE_DIR/src/test/mimstore"
rsync -c "$MIMSTORE_REPO/src/os/mimstore/options/mimstore.yaml.in" \
  "$CEPH_SOURCE_DIR/src/common/options/mimstore.yaml.in"
log "overlay copied into $CEPH_SOURCE_DIR"
