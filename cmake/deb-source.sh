# shellcheck shell=bash
# Fetch and verify a Debian source package. Sourced after common.sh, not run.
#
#   deb_src_fetch PACKAGE VERSION SUITE
#       download PACKAGE=VERSION's source files into $MIMSTORE_WORKDIR/dl
#       (once) and check them against the Sources index of SUITE
#
# Checksums come from the Sources index, which apt has verified against the
# signed InRelease file. They are the list the .dsc carries; the .dsc itself
# is checked too when the mirror serves it.

DEB_SRC_LIST=/etc/apt/sources.list.d/mimstore-src.sources

# The suites whose deb-src entries mimstore needs: trixie for Ceph Reef,
# bookworm for fio (the version Debian 12 installs), sid for Tentacle (only
# when it is built). One file for all.
DEB_SRC_SUITES=(trixie bookworm)
[ "${CEPH_DEB_SUITE:-trixie}" = trixie ] || DEB_SRC_SUITES+=("$CEPH_DEB_SUITE")

_deb_src_known() {  # _deb_src_known PACKAGE VERSION
  # Not a pipe into grep -q: under pipefail, apt-cache dying of SIGPIPE
  # after an early match would read as "unknown".
  local out
  out=$(apt-cache showsrc "$1" 2>/dev/null) || return 1
  grep -qx "Version: $2" <<<"$out"
}

_deb_src_ensure() {  # _deb_src_ensure PACKAGE VERSION
  _deb_src_known "$1" "$2" && return 0
  [ "$(id -u)" = 0 ] || die "need root to add the deb-src entries for ${DEB_SRC_SUITES[*]} ($DEB_SRC_LIST)"
  log "adding deb-src entries for ${DEB_SRC_SUITES[*]} ($DEB_SRC_LIST)"
  local s suites="" sec=""
  for s in "${DEB_SRC_SUITES[@]}"; do
    # Unstable has no -updates or -security suite: naming one makes
    # apt-get update fail on a fresh machine ("does not have a Release
    # file").
    case $s in
      sid|unstable) suites+=" $s" ;;
      *) suites+=" $s $s-updates"; sec+=" $s-security" ;;
    esac
  done
  cat >"$DEB_SRC_LIST" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites:$suites
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites:$sec
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  # The single-suite file of earlier versions of this script.
  rm -f /etc/apt/sources.list.d/mimstore-ceph-src.sources
  apt-get update -qq
  _deb_src_known "$1" "$2" ||
    die "apt knows no $1 source $2 even with deb-src for ${DEB_SRC_SUITES[*]}; is deb.debian.org reachable?"
}

_deb_src_verify() {  # _deb_src_verify PACKAGE VERSION (in the download dir)
  local sums
  sums=$(apt-cache showsrc "$1" | awk -v v="$2" '
      /^Version: /{ok = ($2 == v)}
      ok && /^Checksums-Sha256:/{s=1; next}
      s && /^ /{print $1 "  " $3; next}
      s{s=0; ok=0}' | sort -u)
  [ -n "$sums" ] || die "apt knows no $1 source $2"
  local line file n=0
  while read -r line; do
    file=${line##* }
    if [ -f "$file" ]; then
      echo "$line" | sha256sum -c --quiet - || die "$PWD/$file does not match its checksum; delete it and run again"
      n=$((n + 1))
    elif [[ $file == *.orig.tar.* && $file != *.asc ]]; then
      die "$file was not downloaded"
    else
      # (the build uses only the orig tarball; the mirror may lag for the
      # rest, as it does for sid's)
      log "note: the mirror does not serve $file; the orig tarball is checked against the signed Sources index"
    fi
  done <<<"$sums"
  log "$1 $2: verified $n source files against the Sources index checksums"
}

deb_src_fetch() {
  local pkg=$1 ver=$2 orig="" f
  mkdir -p "$MIMSTORE_WORKDIR/dl"
  cd "$MIMSTORE_WORKDIR/dl" || die "cannot enter $MIMSTORE_WORKDIR/dl"
  for f in "${pkg}_${ver%-*}".orig.tar.*; do
    if [[ -f $f && $f != *.asc ]]; then orig=$f; fi
  done
  # The Sources index is needed either way: it holds the checksums.
  _deb_src_ensure "$pkg" "$ver"
  if [ -z "$orig" ]; then
    log "downloading Debian source package $pkg $ver"
    # --download-only: the .dsc may be missing on the mirror, which makes
    # apt-get fail after the tarballs arrived; the verification decides.
    apt-get source --download-only "$pkg=$ver" || true
  fi
  _deb_src_verify "$pkg" "$ver"
}
