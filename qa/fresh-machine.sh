#!/usr/bin/env bash
# The README's two commands from nothing: a fresh Debian 12 made here
# (`debootstrap --variant=minbase bookworm` into a chroot, nothing else
# installed), a fresh clone of this checkout's HEAD in it, then
# `qa/setup.sh && qa/bench.sh` and `qa/run-tests.sh` run inside as root,
# each timed. What it shows: that the two commands need nothing a new
# machine lacks (a package, a file of this host, a build left over).
#
#   qa/fresh-machine.sh [--root DIR] [--ccache DIR] [--tests-only] [--keep-mounts]
#
#   --root DIR      where the chroot goes (/var/tmp/mimstore-fresh). An
#                   existing one is reused: debootstrap and the clone are
#                   skipped, the two commands run again (setup.sh picks up
#                   an interrupted build where it stopped)
#   --ccache DIR    share a compiler cache, bind-mounted where the chroot's
#                   build keeps its own (cmake/common.sh's default CCACHE_DIR):
#                   the build then takes minutes, and its printed time is not
#                   a cold build's.
#                   Without it the build is cold (2-3 hours on 2 cores)
#   --tests-only    run only qa/run-tests.sh (after an earlier setup)
#   --keep-mounts   leave /proc, /sys, /dev and /run mounted in the chroot
#
# Run as root on a host with loop devices, XFS, FUSE and cgroup v1 (the
# README's requirements; the chroot shares the host's kernel and /dev).
# About 60 GB free under DIR. Not part of the test command: it takes hours
# cold, and needs Debian's mirrors. Never remove DIR while its mounts are
# up (/dev is the host's): `--keep-mounts` leaves them, findmnt lists them.
#
# The host's extra CA certificates (/usr/local/share/ca-certificates/*.crt)
# are copied into the chroot and trusted there: on a network whose TLS
# goes through a proxy, pip needs them; a real machine there would have
# them too. Logs: DIR/root/fresh-{setup,tests}.log; times in
# DIR/root/fresh-times.txt and at the end.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=/var/tmp/mimstore-fresh ccache="" tests_only=0 keep_mounts=0
while (($#)); do
  case $1 in
    --root) ROOT=$2; shift 2 ;;
    --ccache) ccache=$2; shift 2 ;;
    --tests-only) tests_only=1; shift ;;
    --keep-mounts) keep_mounts=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
log() { printf '[fresh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"

MOUNTS=()
undo_mounts() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    umount -l "${MOUNTS[i]}" 2>/dev/null || true
  done
}
bind() {  # bind SRC DST [rbind]
  mkdir -p "$2"
  mount "--${3:-bind}" "$1" "$2"
  [ "${3:-bind}" = rbind ] && mount --make-rslave "$2"
  MOUNTS+=("$2")
}
[ "$keep_mounts" = 1 ] || trap undo_mounts EXIT

if [ ! -x "$ROOT/bin/bash" ]; then
  command -v debootstrap >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; } ||
    die "cannot install debootstrap"
  log "debootstrap --variant=minbase bookworm $ROOT"
  mkdir -p "$ROOT"
  debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian \
    >"$ROOT.debootstrap.log" 2>&1 || die "debootstrap failed: $ROOT.debootstrap.log"
fi
C=$ROOT/root/mimstore
if [ ! -d "$C/.git" ]; then
  log "a fresh clone of $(git -C "$REPO" rev-parse --short HEAD) in $C"
  git clone -q "$REPO" "$C"
fi

bind /proc "$ROOT/proc"
bind /sys "$ROOT/sys" rbind
bind /dev "$ROOT/dev" rbind
mkdir -p "$ROOT/run"
mount -t tmpfs tmpfs "$ROOT/run"
MOUNTS+=("$ROOT/run")
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
if [ -n "$ccache" ]; then
  # where the chroot's build looks: the default, as its empty environment
  # (in_root) gives it
  cache_in_root=$(env -i /bin/bash -c "source '$REPO/cmake/common.sh' && echo \$CCACHE_DIR")
  bind "$ccache" "$ROOT$cache_in_root"
fi
certs=(/usr/local/share/ca-certificates/*.crt)
ca_env=""
if [ -e "${certs[0]}" ]; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp "${certs[@]}" "$ROOT/usr/local/share/ca-certificates/"
  # pip in a venv trusts its own bundle unless told
  ca_env="PIP_CERT=/etc/ssl/certs/ca-certificates.crt"
fi

# A user who cloned the repository has git; trusting the network's CA is
# the host's business, done before the commands as an admin would.
in_root() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb $ca_env \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "$1"
}
in_root 'apt-get update -qq && apt-get install -y -qq git ca-certificates >/dev/null &&
  update-ca-certificates >/dev/null' || die "cannot install git and ca-certificates in the chroot"

times=$ROOT/root/fresh-times.txt
run_timed() {  # run_timed NAME COMMAND
  local t0=$SECONDS rc=0
  log "$1: $2 (log: $ROOT/root/fresh-$1.log)"
  in_root "cd /root/mimstore && $2" >"$ROOT/root/fresh-$1.log" 2>&1 || rc=$?
  printf '%s: exit %d after %d s (%s)\n' "$1" "$rc" $((SECONDS - t0)) "$2" |
    tee -a "$times" >&2
  return "$rc"
}
rc=0
if [ "$tests_only" = 0 ]; then
  run_timed setup 'qa/setup.sh && qa/bench.sh' || rc=$?
fi
if [ "$rc" = 0 ]; then
  run_timed tests 'qa/run-tests.sh' || rc=$?
  grep -E '^(ceph-free tier|ceph tier|reef target):' "$ROOT/root/fresh-tests.log" >&2 || true
fi
exit "$rc"
