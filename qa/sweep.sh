#!/usr/bin/env bash
# qa/sweep.sh - the working-set sweep: qa/bench.sh at several image sizes
# (and journal sizes), every profile in each run, each point repeated.
#
#   qa/sweep.sh [--points IMG:NVME[,IMG:NVME...]] [--repeat N]
#               [--profiles a,b,c] [--distribution D] [--runtime S]
#               [--warmup S] [--results DIR] [--report-only]
#               [--stop-by HH:MM] [-- BENCH_OPTIONS...]
#
# Defaults: points 2G:4G,16G:4G,64G:4G,64G:1G (image size : journal and
# BlueStore block.db size per OSD), 2 repeats, profiles
# mimstore-jdata-dbnvme, mimstore-nomerge-dbnvme, bluestore-hybrid and
# filestore-pacific, uniform and zipf:1.2, 4 KiB random writes at 8
# threads, 60 s warm-up + 180 s measured, emulated 7,200 rpm HDD
# (bench.sh's defaults otherwise); --repeat N is 1..9; --results DIR
# defaults to /var/tmp/mimstore-bench/sweep ($BENCH_WORKDIR/sweep).
#
# Options after "--" go to every qa/bench.sh run as they are (e.g.
# "-- --rw randwrite,randrw:50 --osds 3 --pool-size 2"); the report keeps
# one row per point and workload. With a single point, the sweep is the
# way to repeat one bench.sh run and get the median and spread.
#
# Each (point, repeat, distribution) is one qa/bench.sh run with every
# profile, into RESULTS/<IMG>-nvme<NVME>/rep<K>-<DIST>: its ratios come
# from one run. Each distribution gets its own run, so its own cluster and
# prefill: run back to back on one cluster, zipf inherited the merge
# window (and its backlog) that uniform left. A run whose results.json
# exists is not run again, so a sweep interrupted (a session's end)
# resumes where it stopped. After each run, and with
# --report-only, qa/sweep_report.py writes RESULTS/sweep.md, sweep.json
# and the plots (IOPS against image size, one line per profile).
#
# --stop-by HH:MM: start a run only if it should end by then (the next
# HH:MM to come, so a stop past midnight works; its time
# estimated as below, with set-up, prefill at 300 MB/s and settling
# counted generously); the sweep then stops between runs, leaving no
# cluster up, and a later sweep with the same arguments resumes there.
# For a machine that has something else to do at a known time.
#
# Disk space: the prefill writes zeros, which the emulator's thin backing
# files do not store, so a 64 GiB image takes what the measured writes
# take. Time: per run about profiles x (prefill + workloads x (warm-up +
# measured + 10 s)); the default sweep is 16 runs. A window must hold at least three
# merge flushes of the first profile to be a steady-state figure (the
# report marks those that do not); at 64 GiB with a 4 GiB journal a
# cycle takes 4-5 min, so give that point --runtime 1200
# (docs/benchmarking.md).
set -euo pipefail
QA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$QA_DIR/lib/common.sh"

points=2G:4G,16G:4G,64G:4G,64G:1G
argv=("$@")
# mimstore as it is meant to run at scale (merge window in the journal,
# RocksDB on the NVMe, as BlueStore-hybrid's block.db), and merging off on
# the same devices: the four profiles then differ in the store, not in
# where their metadata lives (FileStore's omap stays on the HDD, as stock)
repeat=2 profiles=mimstore-jdata-dbnvme,mimstore-nomerge-dbnvme,bluestore-hybrid,filestore-pacific
dist=both runtime=180 warmup=60 results="" report_only=0 bench_extra=() stop_by=""
while (($#)); do
  case $1 in
    --points) points=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --profiles) profiles=$2; shift 2 ;;
    --distribution) dist=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --report-only) report_only=1; shift ;;
    --stop-by) stop_by=$2; shift 2 ;;
    --) shift; bench_extra=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument $1 (try --help)" ;;
  esac
done
[[ $repeat =~ ^[1-9]$ ]] || die "--repeat must be 1..9, not '$repeat'"
results=${results:-$BENCH_WORKDIR/sweep}
mkdir -p "$results"
IFS=, read -r -a plist <<<"$points"
for pt in "${plist[@]}"; do
  [[ $pt =~ ^[0-9]+[KMGT]:[0-9]+[KMGT]$ ]] ||
    die "--points: '$pt' is not IMAGE:NVME (e.g. 64G:4G)"
done
stop_at=""
if [[ -n $stop_by ]]; then
  [[ $stop_by =~ ^([01][0-9]|2[0-3]):[0-5][0-9]$ ]] || die "--stop-by takes HH:MM (24 h), not '$stop_by'"
  # the next HH:MM to come: at 22:00, 00:20 is tomorrow's, not a time past
  stop_at=$(date -d "$stop_by" +%s)
  if ((stop_at <= $(date +%s))); then stop_at=$((stop_at + 86400)); fi
fi
[[ $runtime =~ ^[1-9][0-9]*$ ]] || die "--runtime must be a number of seconds, not '$runtime'"
[[ $warmup =~ ^[0-9]+$ ]] || die "--warmup must be a number of seconds, not '$warmup'"
case $dist in
  both) dlist=(uniform zipf:1.2) ;;
  uniform|zipf:[0-9]*) dlist=("$dist") ;;
  *) die "--distribution must be uniform, zipf:THETA or both, not '$dist'" ;;
esac

# A sweep resumed in a later session may be on another machine; its
# medians would then mix two machines (qa/machine.py says why). Checked
# before anything is written there.
# The same for the host's page-cache reclaim, paused or kept (bench.sh
# --host-reclaim, its default unless the bench options say otherwise).
reclaim=$HOST_RECLAIM_DEFAULT
for ((i = 0; i < ${#bench_extra[@]}; i++)); do
  if [[ ${bench_extra[i]} == --host-reclaim ]]; then reclaim=${bench_extra[i + 1]:-}; fi
done
[[ $reclaim == pause || $reclaim == keep ]] || die "--host-reclaim takes pause or keep, not '$reclaim'"
if ((!report_only)) && [[ -d $results ]] && ! other=$("$QA_DIR/machine.py" check "$results" --host-reclaim "$reclaim"); then
  die "$results holds runs made on another machine than this one, or with the host's page-cache reclaim handled otherwise (--host-reclaim $reclaim):
$other
a median over repeats made under two conditions measures the conditions: give a new --results (the runs there make their own table), or the --host-reclaim its runs had"
fi

# What the sweep's labels need: the merge cache's geometry of this build.
# --report-only keeps the plan of the runs (its own defaults would claim a
# window the runs did not have); a run adds its command to the commands
# that filled the directory before it (a sweep resumed with another
# distribution or point), so the report names them all (the last is the
# latest; plans before the list have one `command`).
plan=$results/sweep-plan.json
conf() { "$MIMSTORE_BUILD_DIR/bin/ceph-conf" -c /dev/null --show-config-value "$1" 2>/dev/null || echo null; }
if ! ((report_only)) || [[ ! -s $plan ]]; then
  prev='[]'
  [[ -s $plan ]] && prev=$(jq -c '.commands // [.command] | map(select(. != null))' "$plan")
  jq -n --argjson slots "$(conf mimstore_htmll_slots)" --argjson max_slots "$(conf mimstore_htmll_max_slots)" \
        --argjson cache "$(conf mimstore_cache_max_bytes)" \
        --arg points "$points" --argjson repeat "$repeat" --arg profiles "$profiles" \
        --arg dist "$dist" --argjson runtime "$runtime" --argjson warmup "$warmup" \
        --arg cmd "qa/sweep.sh ${argv[*]}" --arg extra "${bench_extra[*]}" --argjson prev "$prev" \
    '{commands: (($prev | map(select(. != $cmd))) + [$cmd]),
      points: $points, repeat: $repeat, profiles: $profiles,
      distribution: $dist, runtime_s: $runtime, warmup_s: $warmup, bench_options: $extra,
      htmll_slots: $slots, htmll_max_slots: $max_slots, cache_max_bytes: $cache}' >"$plan.new"
  mv "$plan.new" "$plan"
fi

# Seconds one bench.sh run of image size $1, distribution $2 should take,
# generously: per profile 180 s of cluster set-up, settling and tear-down,
# the prefill at 300 MB/s, and per workload (bench.sh's own plan for these
# options) the warm-up, the measured window and 10 s, plus 60 s for each
# filesystem workload's new XFS and fileset. Once a repeat of the point
# has finished here, its wall time plus 10 % and a minute instead
# (qa/sweep_estimate.py: the formula overcounts set-up by ~50 %).
run_estimate() {
  local nprof img names nwl nfs took
  took=$("$QA_DIR/sweep_estimate.py" "$3" "$2" "$runtime" "$warmup") || took=""
  if [[ -n $took ]]; then
    echo $((took + took / 10 + 60))
    return
  fi
  IFS=, read -r -a nprof <<<"$profiles"
  img=$(to_bytes "$1")
  names=$("$QA_DIR/bench.sh" --dry-run --profiles "$profiles" --image-size "$1" --distribution "$2" \
            --runtime "$runtime" --warmup "$warmup" "${bench_extra[@]+"${bench_extra[@]}"}" 2>&1 |
          sed -n 's/^\[[0-9:]*\] workloads: *//p') || true
  [[ -n $names ]] || die "bench.sh --dry-run with these options printed no workloads (run it to see why)"
  nwl=$(wc -w <<<"$names")
  nfs=$(grep -owE 'varmail|fileserver' <<<"$names" | wc -l || true)
  echo $((${#nprof[@]} * (180 + img / 300000000 + nwl * (warmup + runtime + 10) + nfs * 60)))
}

if ((!report_only)); then
  require_root
  for pt in "${plist[@]}"; do
    img=${pt%%:*} nvme=${pt##*:}
    for ((r = 1; r <= repeat; r++)); do
      for d in "${dlist[@]}"; do
        out=$results/$img-nvme$nvme/rep$r-${d//:/}
        if [[ -s $out/results.json ]]; then
          log "sweep: $img image, $nvme journal, $d, repeat $r: done already ($out)"
          continue
        fi
        if [[ -n $stop_at ]]; then
          need=$(run_estimate "$img" "$d" "$results/$img-nvme$nvme")
          if (($(date +%s) + need > stop_at)); then
            log "sweep: stopping before $img image, $nvme journal, $d, repeat $r:" \
                "it needs about $((need / 60)) min, past --stop-by $stop_by"
            break 3
          fi
        fi
        step "sweep: $img image, $nvme journal, $d, repeat $r of $repeat"
        rm -rf "$out"
        # (a failed profile is in the run's failures.txt; the sweep goes on)
        TB_WAL_SIZE_BLUESTORE=${TB_WAL_SIZE_BLUESTORE:-1G} \
          "$QA_DIR/bench.sh" --profiles "$profiles" --image-size "$img" --nvme-size "$nvme" \
            --distribution "$d" --runtime "$runtime" --warmup "$warmup" --results "$out" \
            "${bench_extra[@]+"${bench_extra[@]}"}" ||
          warn "bench.sh failed for $img/$nvme $d repeat $r (see $out/failures.txt)"
        "$PY" "$QA_DIR/sweep_report.py" "$results" >/dev/null || warn "sweep report failed"
      done
    done
  done
fi
"$PY" "$QA_DIR/sweep_report.py" "$results"
