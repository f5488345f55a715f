# shellcheck shell=bash
# qa/lib/common.sh - logging, defaults and small helpers shared by qa/*.sh.
# Sourced, not executed.

QA_DIR=${QA_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
REPO_DIR=${REPO_DIR:-$(cd "$QA_DIR/.." && pwd)}
# The Ceph release and its work directory, build and source (cmake/common.sh,
# MIMSTORE_CEPH_RELEASE; a caller's CEPH_BUILD_DIR, CEPH_SOURCE_DIR,
# MIMSTORE_BUILD_DIR or MIMSTORE_SRC_DIR win).
# shellcheck source=../../cmake/common.sh
source "$REPO_DIR/cmake/common.sh"
# The harness's python: the venv qa/setup.sh makes (pinned numpy and
# matplotlib from PyPI; Debian's python3-matplotlib is removed by the Ceph
# build dependencies' Boost), else Debian's.
MIMSTORE_VENV=${MIMSTORE_VENV:-$MIMSTORE_WORKDIR/venv}
if [[ -z ${PY:-} ]]; then
  if [[ -x $MIMSTORE_VENV/bin/python ]]; then
    PY=$MIMSTORE_VENV/bin/python
  else
    PY=/usr/bin/python3
  fi
fi

# Where the Ceph build and source live: cmake/common.sh's, or the caller's.
MIMSTORE_BUILD_DIR=${MIMSTORE_BUILD_DIR:-$CEPH_BUILD_DIR}
MIMSTORE_SRC_DIR=${MIMSTORE_SRC_DIR:-$CEPH_SOURCE_DIR}
MIMSTORE_BUILD_OK=${MIMSTORE_BUILD_OK:-$MIMSTORE_BUILD_DIR/.mimstore-build-ok}

BENCH_WORKDIR=${BENCH_WORKDIR:-/var/tmp/mimstore-bench}

# bench.sh --host-reclaim's default, here so that sweep.sh, which checks a
# results directory against the policy its runs will have, cannot drift
# from it (qa/host_reclaim.py says what is paused).
HOST_RECLAIM_DEFAULT=pause

_ts() { date +%H:%M:%S; }
log()  { printf '[%s] %s\n' "$(_ts)" "$*" >&2; }
step() { printf '\n[%s] == %s\n' "$(_ts)" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "$(_ts)" "$*" >&2; }
die()  { printf '[%s] ERROR: %s\n' "$(_ts)" "$*" >&2; exit 1; }

# Run a command, log it; with output to a log file when given as LOG=...
run() {
  log "+ $*"
  "$@"
}

require_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (loop devices, mounts, blkio cgroup, tracefs)"
}

require_cmds() {
  local c missing=()
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  ((${#missing[@]} == 0)) || die "missing commands: ${missing[*]} (run qa/setup.sh as root)"
}

# Size strings (4k, 16M, 2G, 1T; binary units) to bytes.
to_bytes() {
  local s=${1^^} n unit
  [[ $s =~ ^([0-9]+)([KMGT]?)I?B?$ ]] || { echo "bad size: $1" >&2; return 1; }
  n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
  case $unit in
    K) echo $((n << 10)) ;; M) echo $((n << 20)) ;;
    G) echo $((n << 30)) ;; T) echo $((n << 40)) ;; *) echo "$n" ;;
  esac
}

# Wait until "$@" succeeds, at most $1 seconds (first arg), polling each second.
wait_until() {
  local timeout=$1; shift
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

# Is PID alive and is its executable/cmdline ours? (never kill by name)
pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }
# proc_alive PID: like pid_alive, but a process whose every thread has
# exited counts as gone even before its parent reaps it. After SIGKILL the
# group leader shows Z while the other threads still exit and hold the
# OSD's pid file and locks, so the leader's state alone is not enough (a
# start at that moment fails); kill -0 waits for a reaping that a daemon's
# parent may never do.
proc_alive() {
  local t
  for t in /proc/"$1"/task/*/stat; do
    [[ -r $t && $(cut -d' ' -f3 "$t" 2>/dev/null) != Z ]] && return 0
  done
  return 1
}

# Terminate a list of PIDs we started: TERM, wait up to $KILL_GRACE s, KILL.
kill_pids() {
  local grace=${KILL_GRACE:-15} p alive
  local pids=()
  for p in "$@"; do pid_alive "$p" && pids+=("$p"); done
  ((${#pids[@]})) || return 0
  log "stopping pids: ${pids[*]}"
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while ((SECONDS < deadline)); do
    alive=0
    for p in "${pids[@]}"; do pid_alive "$p" && alive=1; done
    ((alive)) || return 0
    sleep 0.5
  done
  for p in "${pids[@]}"; do
    if pid_alive "$p"; then
      warn "pid $p did not exit on TERM within ${grace} s; sending KILL"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  # A killed process can sit in uninterruptible I/O for a while; its mounts
  # stay busy until it is gone.
  deadline=$((SECONDS + 60))
  for p in "${pids[@]}"; do
    while pid_alive "$p" && ((SECONDS < deadline)); do sleep 0.5; done
  done
}

# descendants PID: all descendant pids of PID (children first), from ps --ppid.
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    descendants "$c"
    echo "$c"
  done
}
