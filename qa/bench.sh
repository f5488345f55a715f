#!/usr/bin/env bash
# qa/bench.sh - compare store profiles on emulated HDD + NVMe devices, one run.
#
# Usage: qa/bench.sh [options]   (as root)
#
# With no options: 4 KiB random writes, 8 threads, uniform, 2 GiB image,
# 1 OSD, pool size 1, profiles mimstore and mimstore-nomerge, 30 s warm-up +
# 90 s measured each, HDDs emulated by qa/diskemu (exos-x24, write cache off);
# prints the table, writes plots, cleans up.
#
# Profiles (vstart-configs/<name>.conf):
#   --profile NAME            add a profile (repeatable); --profiles a,b,c
#                             the four: mimstore mimstore-nomerge bluestore-hybrid filestore-pacific;
#                             every vstart-configs/*.conf is one (its first lines say what it
#                             changes; docs/benchmarking.md lists them)
#   --all-profiles            all four
# Workload:
#   --rw W[,W...]             workloads (randwrite):
#                               randwrite   random writes
#                               write       sequential writes
#                               randread    random reads of the prefilled image
#                                           (page cache dropped first)
#                               randrw:P    random mix, P % reads (randrw:50 and
#                                           randrw:33 are the paper's Varmail and
#                                           FileServer ratios; page cache dropped)
#                               readback    random writes, each batch of 32 read
#                                           back and checked at once (fio verify):
#                                           reads of data still in the merge window
#                               varmail     FileBench-style filesystem workloads
#                               fileserver  (qa/fsworkload.py, 16 / 50 threads) on
#                                           XFS on the RBD image through rbd-fuse;
#                                           IOPS = flowops/s; image 3G or more
#   --fs-client-mem SZ        the filesystem workloads' client is a machine with
#                             SZ of memory (1G): the driver in a memory cgroup
#                             of SZ, at most SZ/5 dirty on the filesystem's
#                             device (a VM's dirty_ratio); 0 = this host's page
#                             cache (24 GiB: FileServer never reaches the store)
#   --osd-mem SZ              each OSD has SZ of the host (2G; 0 = no bound,
#                             the bracket): a memory cgroup for its RSS and
#                             page cache, osd_memory_target at 3/4 of SZ; 2G
#                             or more. The bound does not scale with the
#                             image: 2G is the least BlueStore runs in
#                             (docs/benchmarking.md, "Production shape")
#   --index-budget B          mimstore's merge-index budget
#                             (mimstore_cache_index_max_bytes): scaled (the
#                             default) = the NVMe size x 64 MiB / 160 GB, the
#                             share the option's default gives a 16 TB OSD
#                             with a 1 % journal partition (440 KiB for 1G,
#                             at least the store's floor, 256 KiB); default =
#                             the option's default, 64 MiB (the bracket: it
#                             never binds at test-bed journal sizes); or a
#                             size. A profile that sets the option keeps its own
#   --size S[,S...]           block sizes (4k; only sequential writes: 4m);
#                             --sizes is the same option
#   --threads T[,T...]        outstanding writes = paper "threads" (8); fio rbd
#                             is asynchronous: one job, iodepth=T
#   --distribution D          uniform | zipf:THETA | pareto:X | normal:X (fio's
#                             random_distribution) | both = uniform and
#                             zipf:1.2 (uniform)
#   --matrix                  the paper's matrix: randwrite 4k,8k,64k x threads
#                             8,16,64 x uniform,zipf:1.2, then sequential write
#                             1m,4m,16m at 8 threads (--seq-sizes to change)
#   --runtime S               measured seconds per workload (90; matrix 240)
#   --warmup S                warm-up seconds excluded before it (30; matrix 60)
#   --image-size SZ           RBD image (2G), prefilled with 4 MiB sequential writes
# Cluster and devices:
#   --osds N                  1..3 (1)          --pool-size N   1..--osds (1)
#   --pg-num N                PGs of the pool (32 per OSD)
#   --pg-log N                PG log entries kept per PG, and dups tracked, for
#                             every profile (1000; 0 = Ceph's defaults). The PG
#                             log grows with the ops done up to
#                             osd_target_pg_log_entries_per_osd (300,000 in
#                             Reef): a store that does 3x the ops holds 3x the
#                             log until both reach it, which an RSS comparison
#                             would charge to the store. With N the log is full
#                             from the prefill on, in every profile
#   --hdd emu|throttle        what stands in for each HDD (emu):
#                               emu: the HDD emulator qa/diskemu (seek, rotation,
#                               NCQ, write cache in the I/O path; a loop device
#                               with direct I/O on its FUSE file)
#                               throttle: a loop device on a sparse file under a
#                               blkio IOPS and bandwidth throttle
#   --hdd-preset NAME         emu: the emulated drive, exos-x24 | exos-m30 |
#                             hdd7200 | hdd10k (exos-x24: calibrated against its
#                             datasheet, qa/diskemu/README.md)
#   --hdd-write-cache on|off  emu: the emulated drives' volatile write cache (off,
#                             as Ceph advises for HDD OSDs; on is the bracket)
#   --hdd-iops N              throttle: read and write IOPS (200)
#   --hdd-mbps N              throttle: read and write MB/s (150)
#   --hdd-size SZ|Nx          HDD size; thin (emu) or sparse (throttle) (1T).
#                             Nx: N times the data each OSD holds (image x
#                             pool size / OSDs), rounded up to a GiB, so the
#                             disk is 1/N full as a real OSD's is (e.g. 2x);
#                             an emulated disk of any size spans the whole
#                             stroke. Refused below 5/4 of that data
#   --nvme-size SZ            journal / block.db loop per OSD (1G)
#   --hdd-model NAME          open-loop model (qa/hddmodel.py) that prices the
#                             recorded HDD request trace afterwards, with either
#                             --hdd: hitachi-7k320 (default) | deskstar-7k1000c;
#                             not the emulated drive
# Run:
#   --workdir DIR             devices, cluster, results (/var/tmp/mimstore-bench)
#   --results DIR             results directory (WORKDIR/results/<timestamp>)
#   --keep                    leave the last cluster and devices up (qa/testbed.sh down)
#   --restart term|kill9      after each profile's workloads, stop every OSD as
#                             an operator would (term: SIGTERM, the OSD's fast
#                             shutdown, which unmounts the store; kill9: a
#                             crash), start it again and time both: the stop,
#                             and the start until every PG is active (runs/<p>/
#                             restart.json, in the report). Waits at most
#                             --restart-timeout S (1800) for each
#   --restart-in-sweep F      mimstore: stop each OSD only once a sweep of its
#                             merge window is running with at most the
#                             fraction F (0-1) of its objects left (frozen
#                             blocks from dump_mimstore_htmll, polled each
#                             second; at most --restart-timeout S; needs
#                             --restart term or kill9): where in
#                             a sweep a stop falls decides what the next
#                             mount replays
#   --heap-profile            attribution runs: tcmalloc's heap profiler on in
#                             every OSD from each workload's start to its end;
#                             what is in use at the end, by allocating call
#                             site (google-pprof --text), in runs/<p>/<wl>/
#                             heap-<osd>.txt. The profiler records every
#                             allocation: at 16 GiB mimstore fell to ~200 IOPS
#                             and its window stayed small. IOPS of such a run
#                             are not a figure
#   --host-reclaim pause|keep the host's proactive page-cache reclaim
#                             (qa/host_reclaim.py: this project's VMs run a
#                             DAMON pageout of page cache idle ~60 s, which a
#                             real OSD host does not, and which spares
#                             BlueStore's anonymous cache): pause it for the
#                             run and start it again at the end (pause), or
#                             leave it (keep); env.json records it either way
#   --dry-run                 print the plan and exit
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

QA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$QA_DIR/lib/common.sh"
# shellcheck source=lib/testbed.sh
source "$QA_DIR/lib/testbed.sh"
# shellcheck source=lib/cluster.sh
source "$QA_DIR/lib/cluster.sh"
# shellcheck source=lib/rbdfs.sh
source "$QA_DIR/lib/rbdfs.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }

# --- options -----------------------------------------------------------------------
profiles=()
rw=randwrite
sizes=""
threads="8"
dist=uniform
matrix=0
runtime=""
warmup=""
image_size=2G
fs_client_mem=1G
osd_mem=2G
index_budget=scaled
osds=1
pool_size=1
pg_num=""
pg_log=1000
hdd=emu
hdd_preset=exos-x24
hdd_wcache=off
hdd_iops=200
hdd_mbps=150
hdd_opts_emu=""        # emu-only / throttle-only options given, to refuse them with the other kind
hdd_opts_throttle=""
seq_sizes="1m,4m,16m"
workdir=$BENCH_WORKDIR
results=""
keep=0
restart=""
restart_timeout=1800
heap_profile=0
restart_in_sweep=""
dry=0
hdd_model=hitachi-7k320
host_reclaim=$HOST_RECLAIM_DEFAULT
argv=("$@")

while (($#)); do
  case $1 in
    --profile) profiles+=("$2"); shift 2 ;;
    --profiles) IFS=, read -r -a _p <<<"$2"; profiles+=("${_p[@]}"); shift 2 ;;
    --all-profiles) profiles=(mimstore mimstore-nomerge bluestore-hybrid filestore-pacific); shift ;;
    --rw) rw=$2; shift 2 ;;
    --size|--sizes) sizes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --distribution) dist=$2; shift 2 ;;
    --matrix) matrix=1; shift ;;
    --seq-sizes) seq_sizes=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --fs-client-mem) fs_client_mem=$2; shift 2 ;;
    --osd-mem) osd_mem=$2; shift 2 ;;
    --index-budget) index_budget=$2; shift 2 ;;
    --host-reclaim) host_reclaim=$2; shift 2 ;;
    --osds) osds=$2; shift 2 ;;
    --pool-size) pool_size=$2; shift 2 ;;
    --pg-num) pg_num=$2; shift 2 ;;
    --pg-log) pg_log=$2; shift 2 ;;
    --hdd) hdd=$2; shift 2 ;;
    --hdd-preset) hdd_preset=$2; hdd_opts_emu+=" $1"; shift 2 ;;
    --hdd-write-cache) hdd_wcache=$2; hdd_opts_emu+=" $1"; shift 2 ;;
    --hdd-iops) hdd_iops=$2; hdd_opts_throttle+=" $1"; shift 2 ;;
    --hdd-mbps) hdd_mbps=$2; hdd_opts_throttle+=" $1"; shift 2 ;;
    --hdd-size) hdd_size_arg=$2; shift 2 ;;
    --nvme-size) TB_NVME_SIZE=$2; shift 2 ;;
    --hdd-model) hdd_model=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --restart) restart=$2; shift 2 ;;
    --restart-timeout) restart_timeout=$2; shift 2 ;;
    --heap-profile) heap_profile=1; shift ;;
    --restart-in-sweep) restart_in_sweep=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown option: $1" >&2; usage 1 ;;
  esac
done

((${#profiles[@]})) || profiles=(mimstore mimstore-nomerge)
[[ $osds =~ ^[1-3]$ ]] || die "--osds must be 1..3"
if ! [[ $pool_size =~ ^[1-3]$ ]] || ((pool_size > osds)); then die "--pool-size must be 1..--osds"; fi
[[ -n $pg_num ]] || pg_num=$((32 * osds))
[[ -z $restart || $restart == term || $restart == kill9 ]] || die "--restart must be term or kill9"
[[ -z $restart_in_sweep || ( -n $restart && $restart_in_sweep =~ ^(0(\.[0-9]+)?|1(\.0+)?)$ ) ]] ||
  die "--restart-in-sweep takes a fraction from 0 to 1, with --restart term or kill9"
[[ $restart_timeout =~ ^[1-9][0-9]*$ ]] || die "--restart-timeout must be a number of seconds"
[[ $pg_log =~ ^[0-9]+$ ]] || die "--pg-log must be a number of entries (0 = Ceph's defaults)"
[[ $host_reclaim == pause || $host_reclaim == keep ]] ||
  die "--host-reclaim takes pause (stop the host's page-cache reclaim for the run) or keep, not '$host_reclaim'"
export CLUSTER_PG_LOG=$pg_log
[[ $osd_mem == 0 || $osd_mem =~ ^[0-9]+[KMGkmg]?$ ]] ||
  die "--osd-mem takes a size (e.g. 4G) or 0 (no bound), not '$osd_mem'"
CLUSTER_OSD_MEM=$(to_bytes "$osd_mem")
# BlueStore refuses an osd_memory_target below 896 MiB; 3/4 of 2G is above it
((CLUSTER_OSD_MEM == 0 || CLUSTER_OSD_MEM >= 2 << 30)) ||
  die "--osd-mem $osd_mem is below what an OSD needs (BlueStore's smallest osd_memory_target is 896M, set to 3/4 of it): 2G or more, or 0"
export CLUSTER_OSD_MEM
# The production ratio: 64 MiB of index budget for a 1 % partition of a
# 16 TB OSD (160 GB), applied to this run's journal (the NVMe loop).
case $index_budget in
  scaled)
    CLUSTER_INDEX_BUDGET=$(($(to_bytes "$TB_NVME_SIZE") * (64 << 20) / 160000000000))
    ((CLUSTER_INDEX_BUDGET >= 256 << 10)) || CLUSTER_INDEX_BUDGET=$((256 << 10))
    index_budget_label="scaled: $((CLUSTER_INDEX_BUDGET >> 10)) KiB for the ${TB_NVME_SIZE} journal (64 MiB per 160 GB, a 16 TB OSD's 1 % partition; floor 256 KiB)" ;;
  default)
    CLUSTER_INDEX_BUDGET=0
    index_budget_label="the option's default (64 MiB; does not bind at this journal size: the bracket)" ;;
  *)
    [[ $index_budget =~ ^[0-9]+[KMGkmg]?$ ]] ||
      die "--index-budget takes scaled, default or a size (e.g. 1M), not '$index_budget'"
    CLUSTER_INDEX_BUDGET=$(to_bytes "$index_budget")
    ((CLUSTER_INDEX_BUDGET >= 256 << 10)) ||
      die "--index-budget $index_budget is below the store's floor (256K; mimstore_cache_index_max_bytes)"
    index_budget_label="$((CLUSTER_INDEX_BUDGET >> 10)) KiB (--index-budget $index_budget)" ;;
esac
export CLUSTER_INDEX_BUDGET
# Checked here, not by analyze.py after the first workload has run
"$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import hddmodel
sys.exit(sys.argv[2] not in hddmodel.PRESETS)' "$QA_DIR" "$hdd_model" ||
  die "--hdd-model: '$hdd_model' is not a model in qa/hddmodel.py (hitachi-7k320, deskstar-7k1000c)"
if ((matrix)); then
  runtime=${runtime:-240}; warmup=${warmup:-60}
else
  runtime=${runtime:-90}; warmup=${warmup:-30}
fi
workdir=$(realpath -m "$workdir")
# shellcheck disable=SC2034  # used by lib/testbed.sh
TB_HDD_KIND=$hdd TB_EMU_PRESET=$hdd_preset TB_EMU_WCACHE=$hdd_wcache
tb_hdd_check          # kind, preset, write cache: before the plan is printed
case $hdd in
  emu)
    [[ -z $hdd_opts_throttle ]] || die "--hdd-iops and --hdd-mbps apply to --hdd throttle only (this run: --hdd emu, the default); add --hdd throttle or drop${hdd_opts_throttle}" ;;
  throttle)
    [[ -z $hdd_opts_emu ]] || die "--hdd-preset and --hdd-write-cache apply to --hdd emu only; drop${hdd_opts_emu} or --hdd throttle" ;;
esac
# shellcheck disable=SC2034
TB_HDD_WIOPS=$hdd_iops TB_HDD_RIOPS=$hdd_iops
# shellcheck disable=SC2034
TB_HDD_WBPS=$((hdd_mbps * 1000000)) TB_HDD_RBPS=$((hdd_mbps * 1000000))
image_bytes=$(to_bytes "$image_size")
# The disk against the data on it: each OSD holds image x pool size / OSDs
# (evenly, as CRUSH spreads the PGs), plus its filesystem's and stores' own.
hdd_size_arg=${hdd_size_arg:-$TB_HDD_SIZE}
osd_data=$(((image_bytes * pool_size + osds - 1) / osds))
gib_up() { echo $((($1 + (1 << 30) - 1) >> 30)); }   # bytes -> GiB, rounded up
if [[ $hdd_size_arg =~ ^([1-9][0-9]*)x$ ]]; then
  TB_HDD_SIZE="$(gib_up $((BASH_REMATCH[1] * osd_data)))G"
elif [[ $hdd_size_arg =~ ^[1-9][0-9]*[KMGTkmgt]$ ]]; then
  TB_HDD_SIZE=${hdd_size_arg^^}
else
  die "--hdd-size takes a size (e.g. 16G, 1T) or Nx (N times the data each OSD holds, e.g. 2x), not '$hdd_size_arg'"
fi
hdd_bytes=$(to_bytes "$TB_HDD_SIZE")
((hdd_bytes >= osd_data * 5 / 4)) ||
  die "--hdd-size $hdd_size_arg ($TB_HDD_SIZE) cannot hold the $((osd_data >> 20)) MiB each OSD stores (image $image_size x pool size $pool_size / $osds OSDs) with room for its filesystem: give $(gib_up $((osd_data * 5 / 4)))G or more, or e.g. 2x"
[[ $fs_client_mem == 0 || $fs_client_mem =~ ^[0-9]+[KMGkmg]?$ ]] ||
  die "--fs-client-mem takes a size (e.g. 1G) or 0 (the host's page cache), not '$fs_client_mem'"
fs_client_bytes=$(to_bytes "$fs_client_mem")
((fs_client_bytes == 0 || fs_client_bytes >= 256 << 20)) ||
  die "--fs-client-mem $fs_client_mem is too small for the workload's driver (50 threads of Python and their files): 256M or more, or 0"

# Workload list: "rw bs threads dist" per line.
wl_fs() { [[ $1 == varmail || $1 == fileserver ]]; }
wl_reads() { [[ $1 == randread || $1 == readback || $1 == randrw:* ]] || wl_fs "$1"; }
workloads=()
add_wl() { workloads+=("$1 $2 $3 $4"); }
if ((matrix)); then
  for bs in 4k 8k 64k; do
    for t in 8 16 64; do
      for d in uniform zipf:1.2; do add_wl randwrite "$bs" "$t" "$d"; done
    done
  done
  IFS=, read -r -a _s <<<"$seq_sizes"
  for bs in "${_s[@]}"; do add_wl write "$bs" 8 -; done
else
  IFS=, read -r -a _rw <<<"$rw"
  for w in "${_rw[@]}"; do
    [[ $w =~ ^(randwrite|write|randread|readback|varmail|fileserver|randrw:([0-9]|[1-9][0-9]))$ ]] ||
      die "--rw: '$w' is not randwrite, write, randread, readback, randrw:P (P = 0..99 % reads), varmail or fileserver"
  done
  [[ -n $sizes ]] || { [[ $rw == write ]] && sizes=4m || sizes=4k; }
  IFS=, read -r -a _s <<<"$sizes"
  IFS=, read -r -a _t <<<"$threads"
  case $dist in
    both) _d=(uniform zipf:1.2) ;;
    uniform|zipf:*|pareto:*|normal:*) _d=("$dist") ;;
    *) die "--distribution must be uniform, zipf:THETA, pareto:X, normal:X or both" ;;
  esac
  for w in "${_rw[@]}"; do
    # the filesystem workloads: once each, with their personality's threads
    case $w in
      varmail) add_wl varmail - 16 -; continue ;;
      fileserver) add_wl fileserver - 50 -; continue ;;
    esac
    for bs in "${_s[@]}"; do
      for t in "${_t[@]}"; do
        if [[ $w == write ]]; then add_wl "$w" "$bs" "$t" -; continue; fi
        for d in "${_d[@]}"; do add_wl "$w" "$bs" "$t" "$d"; done
      done
    done
  done
fi
fs_wanted=0
for w in "${workloads[@]}"; do wl_fs "${w%% *}" && fs_wanted=1; done
if ((fs_wanted)) && ((image_bytes < 3 << 30)); then
  die "the filesystem workloads need --image-size 3G or more (their fileset holds up to 1.5 GiB on XFS); this run: $image_size"
fi
if ((CLUSTER_OSD_MEM)); then osd_mem_label="${osd_mem} per OSD (memory cgroup: RSS and page cache), osd_memory_target $((CLUSTER_OSD_MEM * 3 / 4 >> 20)) MiB"
else osd_mem_label="unbounded (this host's page cache; Ceph's default osd_memory_target)"; fi
if ((fs_wanted)); then
  if ((fs_client_bytes)); then fs_client_label="client memory ${fs_client_mem} (memory cgroup), at most $((fs_client_bytes / 5 >> 20)) MiB dirty"
  else fs_client_label="client memory unbounded (the host's page cache)"; fi
fi

wl_name() {  # rw bs threads dist -> randwrite-4k-t8-uniform, randrw:50 -> randrw50-...
  if [[ $2 == - ]]; then echo "$1"; return; fi    # a filesystem workload
  local n="${1//:/}-${2,,}-t$3"
  [[ $4 != - ]] && n+="-${4//:/}"
  echo "$n"
}

results=${results:-$workdir/results/$(date +%Y%m%d-%H%M%S)}
per_wl=$((runtime + warmup))
total_s=$((${#profiles[@]} * (${#workloads[@]} * (per_wl + 5) + 120)))
step "plan"
log "profiles:  ${profiles[*]}"
log "workloads: $(for w in "${workloads[@]}"; do read -r a b c d <<<"$w"; printf '%s ' "$(wl_name "$a" "$b" "$c" "$d")"; done)"
log "each: ${warmup} s warm-up (fixed, excluded) + ${runtime} s measured; image ${image_size} prefilled;" \
    "${osds} OSD(s), pool size ${pool_size}, ${pg_num} PGs, PG log $( ((pg_log)) && echo "$pg_log entries per PG" || echo "Ceph's defaults")"
log "HDD: $(tb_hdd_label), $(fill_pm=$(((osd_data * 1000 + hdd_bytes / 2) / hdd_bytes)); echo "$((fill_pm / 10)).$((fill_pm % 10))") % of it the image's data; NVMe: ${TB_NVME_SIZE} tmpfs loop per OSD"
log "OSD memory: $osd_mem_label"
log "mimstore merge-index budget: $index_budget_label"
log "host page-cache reclaim: $("$PY" "$QA_DIR/host_reclaim.py" summary)$(
  [[ $host_reclaim == pause ]] && echo " (paused for the run, if any)" || echo " (kept: --host-reclaim keep)")"
if ((fs_wanted)); then
  log "filesystem workloads: $fs_client_label"
  # After the page cache drop the client's and the OSD's caches fill for
  # minutes (docs/benchmarking.md): a shorter warm-up measures that.
  ((warmup >= 300)) || warn "filesystem workloads with --warmup $warmup: the caches are still warming (about 5 min after the drop); use --warmup 300 for a steady-state figure"
fi
[[ $hdd == emu ]] && log "HDD: mkfs, image prefill and settle in fast mode (not charged); every measurement timed"
log "estimated duration: ~$((total_s / 60)) min; results: $results"
((dry)) && exit 0

# --- preflight ------------------------------------------------------------------------------
require_root
require_cmds fio rbd rados ceph ceph-authtool uuidgen ss jq timeout "$PY"
if ((fs_wanted)); then require_cmds rbd-fuse mkfs.xfs; fi
fio --enghelp 2>/dev/null | grep -qw rbd || die "fio has no rbd engine (Debian 12's fio has it: qa/setup.sh as root)"
"$PY" -c 'import matplotlib, numpy' 2>/dev/null || die "$PY lacks matplotlib/numpy (run qa/setup.sh as root: it makes $MIMSTORE_VENV)"
tb_init "$workdir"
tb_preflight          # with emu: builds qa/diskemu (qa/diskemu/build.sh) if needed
mkdir -p "$results/runs" "$results/logs"
: >"$results/failures.txt"

# Leftovers of a crashed run with this workdir go first.
if tb_leftovers; then
  warn "leftovers of an earlier run in $workdir: tearing them down"
  tb_down
fi

# A run killed before its cleanup leaves the host's reclaim paused: undone
# here, before this run records what the host does.
host_reclaim_file=$workdir/host-reclaim-paused.json
if [[ -f $host_reclaim_file ]]; then
  warn "the host's page-cache reclaim was left paused by an earlier run: $("$PY" "$QA_DIR/host_reclaim.py" resume "$host_reclaim_file")"
fi

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -f $host_reclaim_file ]]; then
    log "host page-cache reclaim: $("$PY" "$QA_DIR/host_reclaim.py" resume "$host_reclaim_file" || echo "could not resume it: see $host_reclaim_file")"
  fi
  if ((keep)) && ((rc == 0)); then
    log "--keep: cluster and devices left up (CEPH_CONF=$workdir/cluster/ceph.conf); remove with: qa/testbed.sh down --workdir $workdir"
  else
    step "teardown"
    rbdfs_down || true      # before the cluster goes: its unmount flushes into RBD
    tb_down || true
  fi
  exit "$rc"
}
trap cleanup EXIT
# Ctrl-C / TERM: stop the running profile (its process tree, by pid), then exit
# through cleanup. The profile runs as a background subshell so that the
# signal is handled at once, not after the current fio run.
interrupted=0
child=""
on_signal() {
  interrupted=1
  warn "interrupted; stopping"
  if [[ -n $child ]] && pid_alive "$child"; then
    # shellcheck disable=SC2046
    kill -TERM $(descendants "$child") "$child" 2>/dev/null || true
  else
    exit 130
  fi
}
trap on_signal INT TERM

# --- environment record --------------------------------------------------------------------
build_busy=$(pgrep -c -x ninja 2>/dev/null || true)
"$PY" - "$results/env.json" "${argv[@]+"${argv[@]}"}" <<EOF
import json, os, re, subprocess, sys, time
sys.path.insert(0, "$QA_DIR")
import machine
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e: return str(e)
env = {
  "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
  "command": " ".join(["qa/bench.sh"] + sys.argv[2:]),
  **machine.identity(),   # kernel, cpus, cpu_model, mem_gib, machine_id
  "loadavg": os.getloadavg(),
  "ninja_processes_at_start": int("${build_busy:-0}" or 0),
  "ceph_build_finished": os.path.exists("$MIMSTORE_BUILD_OK"),
  "ceph_release": "${MIMSTORE_CEPH_RELEASE:-}", "ceph_build_dir": "$MIMSTORE_BUILD_DIR",
  "ceph_build_osd": sh("'$MIMSTORE_BUILD_DIR/bin/ceph-osd' --version"),
  # The build's defaults for HDD OSDs and BlueStore's write path (what a
  # release changed there shows in a diff of two runs' env.json).
  "ceph_build_hdd_defaults": dict(l.split(" = ", 1) for l in sh(
      "LD_LIBRARY_PATH='$MIMSTORE_BUILD_DIR/lib' '$MIMSTORE_BUILD_DIR/bin/ceph-conf' -c /dev/null -D").splitlines()
      if " = " in l and re.match(r"(.*_hdd|.*rotational.*|bluestore_(min_alloc|prefer_deferred|deferred|allocator|elastic|write_v2|onode_segment).*|osd_mclock_profile|osd_op_queue|osd_memory_target) = ", l)),
  "fio": sh("fio --version"), "pacific_ceph_osd": sh("ceph-osd --version"),
  "commit": sh("git -C '$QA_DIR/..' rev-parse --short HEAD"),
  "worktree_changes": sh("git -C '$QA_DIR/..' status --porcelain --untracked-files=no | wc -l"),
  "vm_dirty": {k: sh("sysctl -n vm." + k) for k in ("dirty_ratio", "dirty_background_ratio", "dirty_expire_centisecs", "dirty_writeback_centisecs")},
  "testbed": dict({"hdd": "$hdd", "hdd_size": "$TB_HDD_SIZE", "hdd_size_arg": "$hdd_size_arg", "hdd_data_fraction": round($osd_data / $hdd_bytes, 4), "nvme_size": "$TB_NVME_SIZE",
              "hdd_scheduler": "$TB_HDD_SCHED", "nvme_scheduler": "$TB_NVME_SCHED", "hdd_backing": "$TB_DIR", "nvme_backing": "$TB_SHM"},
              **({"hdd_preset": "$hdd_preset", "hdd_write_cache": "$hdd_wcache", "hdd_emulator": "$TB_EMU_BIN"}
                 if "$hdd" == "emu" else {"hdd_iops": $hdd_iops, "hdd_mb_s": $hdd_mbps})),
  "osds": $osds, "pool_size": $pool_size, "pg_num": $pg_num, "pg_log": $pg_log, "image_size": "$image_size",
  "runtime_s": $runtime, "warmup_s": $warmup, "hdd_model": "$hdd_model",
  "profiles": "${profiles[*]}".split(),
  "fs_client": "${fs_client_label:-}" or None,
  "osd_mem": "$osd_mem_label",
  "index_budget": "$index_budget_label",
}
import buildstamp
stamp = buildstamp.read("$MIMSTORE_BUILD_DIR")
matches, why = buildstamp.compare(stamp, buildstamp.checkout("$QA_DIR/..", buildstamp.series_of(stamp)))
env["build_from"] = {"stamp": stamp, "matches_checkout": matches, "detail": why}
import host_reclaim
hr = host_reclaim.show()
env["host_reclaim"] = {"policy": "$host_reclaim", "active": host_reclaim.active(hr),
                       "found": host_reclaim.summary(hr), "detail": hr}
json.dump(env, open(sys.argv[1], "w"), indent=1)
EOF
if [[ $host_reclaim == pause ]]; then
  # Stopped before any device or daemon exists; started again by cleanup.
  # (its record goes in the workdir, which a fresh /var/tmp does not have yet)
  mkdir -p "$workdir"
  msg=$("$PY" "$QA_DIR/host_reclaim.py" pause "$host_reclaim_file") ||
    die "the host's page-cache reclaim could not be paused ($msg): the run would not be what env.json says; run as root, or give --host-reclaim keep"
  log "host page-cache reclaim: $msg - paused until the end of the run"
fi
if ((build_busy > 0)); then
  warn "a build (ninja) is running: the CPU is shared, absolute figures are pessimistic"
fi
# (env.json's commit is this checkout's; the binaries are the build's:
# compared above, when env.json was written)
if [[ $(jq -r '.build_from.matches_checkout' "$results/env.json") == false ]]; then
  warn "the Ceph build is not this checkout's store: $(jq -r '.build_from.detail' "$results/env.json") (cmake/ceph-build.sh from this checkout makes it so)"
else
  log "build: $(jq -r '.build_from.detail' "$results/env.json")"
fi

# --- one workload ------------------------------------------------------------------------------
progress_filter() {   # fio's ETA lines (\r-separated) -> one line each 10 s
  # (a run of a few seconds, e.g. a prefill in fast mode, may print no ETA line)
  stdbuf -oL tr '\r' '\n' | { grep --line-buffered -E 'eta [0-9]' || true; } |
    awk -W interactive -v p="$1" 'NR % 10 == 0 {
        sub(/^Jobs: [0-9]+ \([^)]*\)[^:]*: /, ""); printf "[%s] %s %s\n", strftime("%H:%M:%S"), p, $0; fflush() }' >&2
}

fio_base() {
  echo --ioengine=rbd --clientname=admin --pool="$CLUSTER_POOL" --rbdname=bench \
       --direct=1 --invalidate=0 --randrepeat=0 --norandommap
}

prefill() {
  local dir=$1
  log "prefill: sequential 4 MiB writes of zeros over the whole ${image_size} image"
  # Zeros: every store writes them like any data (none of the profiles
  # compresses or skips zeros), and the emulator's thin backing files keep
  # no zero blocks, so an image of 64 GiB or more needs no disk space for
  # its prefill.
  # shellcheck disable=SC2046
  fio --name=prefill $(fio_base) --rw=write --bs=4m --iodepth=4 --size="$image_bytes" --zero_buffers \
      --output-format=json --output="$dir/prefill.json" --eta=always --eta-newline=1 \
      2>"$dir/prefill.stderr" | progress_filter "prefill" ||
    { tail -n 5 "$dir/prefill.stderr" >&2; die "prefill failed (see $dir/prefill.json, prefill.stderr)"; }
  jq -r '.jobs[0].write | "prefill: \(.io_bytes / 1048576 | floor) MiB at \(.bw_bytes / 1000000 * 10 | floor / 10) MB/s"' \
    "$dir/prefill.json" >&2 || true
}

perf_dump() {   # OUT: perf counters of every OSD, from its admin socket
  local out=$1 w name
  {
    printf '{"t": %s' "$(date +%s.%N)"
    for w in $CLUSTER_OSD_PIDS; do
      name=${w%%=*}
      printf ', "%s": ' "$name"
      timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" perf dump 2>/dev/null || printf 'null'
    done
    echo '}'
  } >"$out.tmp" && mv "$out.tmp" "$out"
}

mem_dump() {   # OUT: where each OSD's memory is: Ceph's mempools (PG log,
  # buffers, caches) and tcmalloc's heap stats (in use, free lists), from its
  # admin socket; RSS alone cannot tell a store's index from the PG log,
  # which grows with the ops done (osd_target_pg_log_entries_per_osd)
  local out=$1 w name
  {
    printf '{"t": %s' "$(date +%s.%N)"
    for w in $CLUSTER_OSD_PIDS; do
      name=${w%%=*}
      printf ', "%s": {"mempools": ' "$name"
      timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" dump_mempools 2>/dev/null || printf 'null'
      printf ', "heap": '
      timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" heap stats 2>&1 | jq -Rs . || printf 'null'
      # mimstore's own counts of what it holds (cached extents, sns in
      # flight, journal entries); other stores have no such command
      printf ', "mimstore": '
      timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" dump_mimstore_htmll 2>/dev/null |
        jq -c . 2>/dev/null || printf 'null'
      printf '}'
    done
    echo '}'
  } >"$out.tmp" && mv "$out.tmp" "$out"
}

heap_profile_start() {   # tcmalloc's heap profiler on in every OSD
  local w
  for w in $CLUSTER_OSD_PIDS; do
    timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/${w%%=*}.asok" heap start_profiler >/dev/null ||
      warn "heap start_profiler failed on ${w%%=*}"
  done
}

heap_profile_end() {   # DIR: dump what each OSD's allocations made since the
  # profiler's start still hold, by call site, then stop the profiler. The
  # profile lands in the OSD's log dir (Ceph names it <name>.profile.NNNN.heap).
  local dir=$1 w name f bin
  for w in $CLUSTER_OSD_PIDS; do
    name=${w%%=*}
    timeout 60 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" heap dump >/dev/null ||
      { warn "heap dump failed on $name"; continue; }
    timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" heap stop_profiler >/dev/null || true
    f=$(ls -t "$CLUSTER_DIR/out/$name".profile.*.heap 2>/dev/null | head -n 1)
    bin=$(readlink "/proc/${w#*=}/exe")
    if [[ -z $f ]]; then warn "no heap profile of $name in $CLUSTER_DIR/out"; continue; fi
    cp "$f" "$dir/heap-$name.heap"
    google-pprof --text --inuse_space "$bin" "$f" >"$dir/heap-$name.txt" 2>"$dir/heap-$name.stderr" ||
      warn "google-pprof failed for $name (see $dir/heap-$name.stderr)"
    rm -f "$CLUSTER_DIR/out/$name".profile.*.heap
  done
}

# settle: after the prefill, wait until the HDDs are quiet (the stores have
# written back what the prefill left in page cache, journals, merge caches),
# so that the first workload does not start in the middle of that drain.
# Quiet = at most SETTLE_IOPS write requests/s on every HDD for SETTLE_QUIET
# seconds in a row; at most SETTLE_MAX seconds.
settle() {
  local quiet=0 t0=$SECONDS prev=() cur d i busy
  local max=${SETTLE_MAX:-600} need=${SETTLE_QUIET:-5} lim=${SETTLE_IOPS:-5}
  for d in "${TB_HDD_DEVS[@]}"; do prev+=("$(awk '{print $5}' "/sys/block/$(basename "$d")/stat")"); done
  while ((quiet < need && SECONDS - t0 < max)); do
    sleep 1
    busy=0
    cur=()
    for i in "${!TB_HDD_DEVS[@]}"; do
      cur+=("$(awk '{print $5}' "/sys/block/$(basename "${TB_HDD_DEVS[$i]}")/stat")")
      ((cur[i] - prev[i] > lim)) && busy=1
    done
    prev=("${cur[@]}")
    if ((busy)); then quiet=0; else quiet=$((quiet + 1)); fi
  done
  if ((quiet >= need)); then
    log "settle: HDDs quiet after $((SECONDS - t0)) s"
  else
    warn "settle: HDDs still writing after ${max} s; starting anyway"
  fi
}

run_workload() {   # profile rw bs threads dist
  local p=$1 wrw=$2 bs=$3 t=$4 d=$5 name dir inst sampler_pid devs=() procs=() w rc
  name=$(wl_name "$wrw" "$bs" "$t" "$d")
  dir=$results/runs/$p/$name
  mkdir -p "$dir"
  step "$p / $name: ${warmup} s warm-up + ${runtime} s measured"
  jq -n --arg p "$p" --arg desc "$(profile_meta "$p" description)" --arg name "$name" \
        --arg rw "$wrw" --arg bs "$bs" --argjson t "$t" --arg d "$d" \
        --argjson runtime "$runtime" --argjson warmup "$warmup" --arg img "$image_size" \
        --argjson osds "$osds" --argjson ps "$pool_size" --argjson pg "$pg_num" \
        --slurpfile devs "$TB_DIR/devices.json" --arg osdpids "$CLUSTER_OSD_PIDS" \
        --argjson cmem "$(wl_fs "$wrw" && echo "$fs_client_bytes" || echo null)" \
        --arg rule "fixed: the first ${warmup} s of each workload (fio ramp_time) are excluded" \
    '{profile: $p, description: $desc, osds: $osds, pool_size: $ps, pg_num: $pg,
      workload: {name: $name, rw: $rw, bs: $bs, threads: $t, distribution: $d,
                 runtime: $runtime, warmup: $warmup, image_size: $img,
                 client_mem_bytes: $cmem},
      warmup_rule: $rule, devices: $devs[0], osd_pids: $osdpids}' >"$dir/meta.json"

  if wl_fs "$wrw"; then
    # A new XFS and fileset on the image, as set-up: fast mode, then settle.
    tb_hdd_fast on
    rbdfs_up "$CEPH_CONF" "$CLUSTER_POOL" bench
    "$PY" "$QA_DIR/fsworkload.py" prepare --dir "$RBDFS_MNT/fileset" --personality "$wrw" >&2 ||
      die "fsworkload prepare failed for $wrw"
    sync
    settle
    tb_hdd_fast off
    rbdfs_client_limit "$fs_client_bytes"   # after the fileset: only the run is a bounded client
  fi
  tb_hdd_assert_timed   # no measurement on an emulated disk in fast mode
  for w in "${TB_HDD_DEVS[@]}" "${TB_NVME_DEVS[@]}" "${TB_WAL_DEVS[@]}" "${TB_DB_DEVS[@]}"; do devs+=(--dev "$(basename "$w")"); done
  # each OSD's RSS and CPU, and its mimstore counters (analyze.py: what the
  # store did in the seconds at 0 IOPS)
  for w in $CLUSTER_OSD_PIDS; do procs+=(--proc "$w" --asok "${w%%=*}=$CLUSTER_DIR/asok/${w%%=*}.asok"); done
  inst=$(trace_start "$p-$name" "$dir/hdd.trace" "${TB_HDD_DEVS[@]}")
  trace_mark "$inst" start
  if ((heap_profile)); then heap_profile_start; fi
  "$PY" "$QA_DIR/sampler.py" --out "$dir/samples.jsonl" --marker "$inst/trace_marker" \
    "${devs[@]}" "${procs[@]}" &
  sampler_pid=$!
  _tb_rec pid "$sampler_pid" sampler

  # perf counters (and the emulated HDDs' counters) at the end of the warm-up
  # and at the end of the run
  ( sleep "$warmup"; tb_emu_stats "$dir/emu_stats_start.json"; perf_dump "$dir/perf_start.json"
    mem_dump "$dir/mem_start.json" ) &
  local perf_pid=$!
  local dopt=() ropt=(--rw="$wrw")
  case $wrw in
    randrw:*) ropt=(--rw=randrw --rwmixread="${wrw#randrw:}") ;;
    # verify_backlog: each batch of 32 writes is read back and checked right
    # after it completes; serialize_overlap keeps a rewrite of a block from
    # racing its own verify read. verify_backlog_batch=64: fio starts a
    # batch only when the last completed I/O was not a read, and with rbd's
    # completion order about a third of the writes went unverified; each store
    # verified a different share (0.58-0.70 reads per write); a batch
    # larger than the backlog drains what a skip left: 1.000 measured
    # (docs/benchmarking.md, "The end of a pass in `readback`").
    readback) ropt=(--rw=randwrite --verify=crc32c --verify_backlog=32 --verify_backlog_batch=64
                    --verify_fatal=1 --serialize_overlap=1) ;;
  esac
  if wl_reads "$wrw"; then
    # Reads start from a cold host page cache (FileStore-style stores read
    # through it, BlueStore through its own cache); "HDD rd/cr" in the
    # report shows how many reads still did not reach the disk.
    sync
    echo 3 >/proc/sys/vm/drop_caches
    log "page cache dropped before a workload with reads"
  fi
  case $d in
    -) ;;
    uniform) dopt=(--random_distribution=random) ;;
    *) dopt=(--random_distribution="$d") ;;
  esac
  rc=0
  # The completion-latency log has one line per I/O (no log_avg_msec):
  # analyze.py counts the per-second series from it, so the series adds up
  # to fio's total exactly (fio's averaged logs do not).
  if wl_fs "$wrw"; then
    rbdfs_client_exec "$PY" "$QA_DIR/fsworkload.py" run --dir "$RBDFS_MNT/fileset" --personality "$wrw" \
      --warmup "$warmup" --runtime "$runtime" --out "$dir/fsworkload.json" 2>"$dir/fsworkload.stderr" >&2 || rc=$?
  else
    # A cluster that stops completing I/O (a PG left laggy, an OSD wedged)
    # keeps fio waiting for ever: give up 10 min after the window's end.
    # shellcheck disable=SC2046
    (cd "$dir" && timeout --kill-after=60 $((warmup + runtime + 600)) \
      fio --name=bench $(fio_base) "${ropt[@]}" --bs="$bs" --iodepth="$t" --numjobs=1 \
        "${dopt[@]}" --time_based --ramp_time="$warmup" --runtime="$runtime" \
        --write_lat_log=fio --log_unix_epoch=1 --disable_lat=1 --disable_slat=1 \
        --output-format=json --output=fio.json --eta=always --eta-newline=1 2>fio.stderr) |
      progress_filter "$p/$name" || rc=$?
  fi
  trace_mark "$inst" end
  tb_emu_stats "$dir/emu_stats_end.json"
  kill -TERM "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true
  perf_dump "$dir/perf_end.json" || true
  mem_dump "$dir/mem_end.json" || true
  if ((heap_profile)); then heap_profile_end "$dir"; fi
  kill -TERM "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  trace_stop "$inst"
  if wl_fs "$wrw"; then
    tb_hdd_fast on      # the unmount's writeback is not measured
    rbdfs_down
    tb_hdd_fast off
  fi
  if ((rc == 124 || rc == 137)); then
    { timeout 20 ceph --conf "$CEPH_CONF" health detail
      timeout 20 ceph --conf "$CEPH_CONF" pg dump pgs_brief; } >"$dir/stalled.txt" 2>&1 || true
    die "the workload did not finish 10 min after its window for $p/$name: the cluster stopped completing I/O (health and PG states in $dir/stalled.txt; slow ops and laggy PGs are the usual signs; OSD log under $CLUSTER_DIR/out/)"
  fi
  if ((rc != 0)); then
    tail -n 5 "$dir"/fio.stderr "$dir"/fsworkload.stderr 2>/dev/null >&2
    die "the workload failed (rc $rc) for $p/$name; see $dir/ (fio.json, fio.stderr or fsworkload.json) and $CLUSTER_DIR/out/"
  fi
  "$PY" "$QA_DIR/analyze.py" --model "$hdd_model" "$dir" >&2 || die "analysis failed for $dir"
  gzip -f "$dir/hdd.trace" || true     # analyze.py and hddmodel.py read .gz too
  if [[ -f $dir/fio_clat.1.log ]]; then gzip -f "$dir/fio_clat.1.log" || true; fi
}

# --- restart: what an operator waits for after the run --------------------------------------------
# Every OSD in turn: stop it (SIGTERM or SIGKILL), time until its process is
# gone, start it again with the same command line, time until it is up and
# every PG of the cluster is active again. A store that writes its whole
# merge window back at umount, or replays it at mount, shows it here.
seconds_between() { echo "$2 - $1" | bc; }   # two `date +%s.%N` stamps
wait_in_sweep() {   # NAME: until NAME's sweep has at most $restart_in_sweep
  # of its frozen blocks left (see --restart-in-sweep). Returns 1 on timeout.
  local name=$1 t0=$SECONDS frozen peak=0
  while ((SECONDS - t0 < restart_timeout)); do
    frozen=$(timeout 20 ceph --admin-daemon "$CLUSTER_DIR/asok/$name.asok" dump_mimstore_htmll 2>/dev/null |
               jq -r '.frozen_blocks // empty' 2>/dev/null) || frozen=""
    [[ -n $frozen ]] || return 1   # not mimstore, or no answer
    if ((frozen == 0)); then
      peak=0                       # no sweep (or one just ended): wait for the next
    else
      ((frozen > peak)) && peak=$frozen
      if [[ $(echo "$frozen <= $peak * $restart_in_sweep" | bc) == 1 ]]; then
        log "restart: $name's sweep has $frozen of $peak frozen blocks left"
        return 0
      fi
    fi
    sleep 1
  done
  return 1
}

restart_check() {
  local dir=$1 w name pid cwd old up t0 t1 t2 t3 how out=()
  local -a cmd
  for w in $CLUSTER_OSD_PIDS; do
    name=${w%%=*}; pid=${w#*=}
    mapfile -d '' -t cmd <"/proc/$pid/cmdline" || die "cannot read the command line of $name (pid $pid)"
    cwd=$(readlink "/proc/$pid/cwd")
    old=$(cceph osd dump --format json | "$PY" "$QA_DIR/osdwait.py" upfrom "$name") ||
      die "cannot read the OSD map before restarting $name"
    if [[ -n $restart_in_sweep ]]; then
      wait_in_sweep "$name" ||
        warn "restart: no sweep of $name reached $restart_in_sweep left within $restart_timeout s; stopping anyway"
    fi
    log "restart ($restart): stopping $name (pid $pid, up since epoch $old)"
    how=exited
    t0=$(date +%s.%N)
    if [[ $restart == kill9 ]]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
    while proc_alive "$pid"; do
      if (($(date +%s) - ${t0%.*} >= restart_timeout)); then
        warn "$name did not exit within $restart_timeout s of SIGTERM; sending KILL"
        kill -KILL "$pid" 2>/dev/null || true; how=killed
        while proc_alive "$pid"; do sleep 0.5; done
        break
      fi
      sleep 0.2
    done
    t1=$(date +%s.%N)
    log "restart: $name gone after $(seconds_between "$t0" "$t1") s ($how); starting it again"
    (cd "$cwd" && "${cmd[@]}") >>"$CLUSTER_LOG" 2>&1 || die "$name did not start again (see $CLUSTER_LOG)"
    t2="" t3="" up=0
    while (($(date +%s) - ${t1%.*} < restart_timeout)); do
      if [[ -z $t2 ]]; then
        up=$(cceph osd dump --format json 2>/dev/null | "$PY" "$QA_DIR/osdwait.py" upfrom "$name") || up=0
        ((up > old)) && t2=$(date +%s.%N)
      fi
      if [[ -n $t2 ]] && cceph pg dump pgs --format json 2>/dev/null |
           "$PY" "$QA_DIR/osdwait.py" active "$up"; then
        t3=$(date +%s.%N)
        break
      fi
      sleep 1
    done
    [[ -n $t3 ]] || warn "$name: not every PG active within $restart_timeout s of its start"
    log "restart: $name up after ${t2:+$(seconds_between "$t1" "$t2")} s, every PG active after ${t3:+$(seconds_between "$t1" "$t3")} s"
    out+=("$name $restart $how $t0 $t1 ${t2:--} ${t3:--}")
  done
  _record_daemon_pids
  printf '%s\n' "${out[@]}" | "$PY" -c '
import json, sys
rows = []
for line in sys.stdin:
    name, sig, how, t0, t1, t2, t3 = line.split()
    f = lambda a, b: None if b == "-" else round(float(b) - float(a), 1)
    rows.append({"osd": name, "signal": sig, "stop": how, "stop_s": f(t0, t1),
                 "start_to_up_s": f(t1, t2), "start_to_active_s": f(t1, t3)})
json.dump({"timeout_s": int(sys.argv[1]), "osds": rows}, open(sys.argv[2], "w"), indent=1)
' "$restart_timeout" "$dir/restart.json"
}

# --- one profile (runs in a subshell: a failure ends this profile only) ----------------------------
run_profile() {
  local p=$1 why
  why=$(profile_check "$p") || { echo "$p: cannot run: $why" >>"$results/failures.txt"; die "profile $p cannot run: $why"; }
  # shellcheck disable=SC2034  # used by lib/testbed.sh
  TB_HDD_FS=$(profile_meta "$p" hdd); TB_HDD_FS=${TB_HDD_FS:-xfs}
  if [[ $(profile_meta "$p" wal) == yes ]]; then TB_WAL_SIZE=${TB_WAL_SIZE_BLUESTORE:-1G}; else TB_WAL_SIZE=0; fi
  # shellcheck disable=SC2034  # used by lib/testbed.sh
  if [[ $(profile_meta "$p" db) == nvme ]]; then TB_DB_SIZE=${TB_DB_SIZE_MIMSTORE:-4G}; else TB_DB_SIZE=0; fi
  tb_up "$osds"
  cluster_start "$p" "$osds" "$pool_size" "$pg_num"
  cluster_versions >"$results/logs/$p.versions.json" 2>>"$CLUSTER_LOG" || true
  timeout 60 rbd --conf "$CEPH_CONF" create --size "$((image_bytes >> 20))M" "$CLUSTER_POOL/bench" \
    2>>"$CLUSTER_LOG" || die "rbd create failed, see $CLUSTER_LOG"
  mkdir -p "$results/runs/$p"
  # The prefill and the drain after it are set-up: an emulated HDD serves
  # them in fast mode (no delays, not charged) and is timed again before the
  # first measurement (run_workload asserts it).
  tb_hdd_fast on
  prefill "$results/runs/$p"
  settle
  tb_hdd_fast off
  # What the prefill left in the host's page cache (charged to no OSD's
  # cgroup if it was written before the move) is not a real OSD's: every
  # profile starts its workloads with a cold cache.
  sync
  echo 3 >/proc/sys/vm/drop_caches
  log "page cache dropped after the prefill"
  local w a b c d
  for w in "${workloads[@]}"; do
    read -r a b c d <<<"$w"
    run_workload "$p" "$a" "$b" "$c" "$d"
  done
  if [[ -n $restart ]]; then
    restart_check "$results/runs/$p"
  fi
}

save_logs() {   # keep the cluster's and the HDD emulator's logs with the results (bounded)
  local p=$1 f
  if [[ -f $TB_EMU_LOG ]]; then
    mkdir -p "$results/logs/$p"
    tail -c 1000000 "$TB_EMU_LOG" >"$results/logs/$p/diskemu.log"
  fi
  [[ -d $workdir/cluster ]] || return 0
  mkdir -p "$results/logs/$p"
  cp -f "$workdir/cluster/ceph.conf" "$workdir/cluster/start.log" "$results/logs/$p/" 2>/dev/null || true
  for f in "$workdir"/cluster/out/*.log; do
    [[ -f $f ]] && tail -c 20000000 "$f" >"$results/logs/$p/$(basename "$f")"
  done
}

i=0
for p in "${profiles[@]}"; do
  i=$((i + 1))
  step "profile $p ($i/${#profiles[@]}): $(profile_meta "$p" description 2>/dev/null || true)"
  ( set -e; trap 'exit 130' INT TERM; run_profile "$p" ) &
  child=$!
  rc=0
  wait "$child" || rc=$?
  if ((interrupted)); then
    wait "$child" 2>/dev/null || true
    save_logs "$p"
    exit 130
  fi
  child=""
  if ((rc != 0)); then
    grep -q "^$p:" "$results/failures.txt" || echo "$p: failed (rc $rc); see the log above and $results/logs/$p/" >>"$results/failures.txt"
    warn "profile $p failed; continuing with the next one"
  fi
  save_logs "$p"
  if ((keep)) && ((i == ${#profiles[@]})); then
    break
  fi
  CLUSTER_DIR=$workdir/cluster
  tb_unthrottle
  rbdfs_down || true
  cluster_stop || true
  tb_down
done

step "report"
"$PY" "$QA_DIR/report.py" "$results" || warn "report generation failed"
log "results: $results"
if [[ -s $results/failures.txt ]]; then
  warn "some profiles did not run:"
  sed 's/^/  /' "$results/failures.txt" >&2
  exit 1
fi
