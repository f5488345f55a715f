#!/usr/bin/env bash
# qa/testbed.sh - the emulated HDD/NVMe test bed on its own.
#
#   qa/testbed.sh down   [--workdir DIR]   remove everything a (crashed) run left:
#                                          daemons it started, tracefs instances,
#                                          mounts, loop devices, the HDD emulator
#                                          and its FUSE mount, blkio throttles,
#                                          backing files. Idempotent.
#   qa/testbed.sh status [--workdir DIR]   show what exists
#   qa/testbed.sh up N   [--workdir DIR] [--hdd emu|throttle]
#                                          build N HDD+NVMe pairs and leave them
#                                          (for manual experiments; 'down' removes)
#
# Device parameters come from the environment, see qa/lib/testbed.sh
# (TB_HDD_KIND, TB_HDD_SIZE, TB_EMU_PRESET, TB_EMU_WCACHE, TB_NVME_SIZE,
# TB_WAL_SIZE, TB_HDD_WIOPS, TB_HDD_WBPS, ...).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

QA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$QA_DIR/lib/common.sh"
# shellcheck source=lib/testbed.sh
source "$QA_DIR/lib/testbed.sh"

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

cmd=${1:-}
[[ -n $cmd ]] || usage 1
shift
n=1
workdir=$BENCH_WORKDIR
while (($#)); do
  case $1 in
    --workdir) workdir=$2; shift 2 ;;
    --hdd) TB_HDD_KIND=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    [0-9]*) n=$1; shift ;;
    *) usage 1 ;;
  esac
done
tb_init "$(realpath -m "$workdir")"

case $cmd in
  down)
    require_root
    tb_down
    log "testbed under $TB_DIR is down"
    ;;
  status)
    tb_status
    ;;
  up)
    require_root
    tb_up "$n"
    log "devices in $TB_DIR/devices.json; remove with: $0 down --workdir $workdir"
    ;;
  *) usage 1 ;;
esac
