#!/usr/bin/env bash
# mimstore: build the MIM core microbenchmarks (Release) in their own build
# directory and run them; print a compact table.
#
#   qa/microbench.sh [benchmark regex]
#
# Environment:
#   MIN_TIME    --benchmark_min_time in seconds (default 0.5)
#   REPS        --benchmark_repetitions (default 1; >1 prints the median)
#   JOBS        ninja -j (default 1: this tree is often built next to Ceph)
#   BUILD_DIR   default ${TMPDIR:-/tmp}/mimcore-microbench
#   MIMCORE_BENCH_SLOW=1  also run the sorted list at window 100000 (minutes)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-${TMPDIR:-/tmp}/mimcore-microbench}
filter=${1:-.}
min_time=${MIN_TIME:-0.5}
reps=${REPS:-1}

cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMIMSTORE_TSAN=OFF -DMIMSTORE_ASAN=OFF >/dev/null
ninja -C "$build" -j"${JOBS:-1}" mimcore_bench >/dev/null

json="$build/microbench.json"
args=(--benchmark_filter="$filter" --benchmark_min_time="$min_time"
      --benchmark_format=json --benchmark_out="$json" --benchmark_out_format=json)
if [ "$reps" -gt 1 ]; then
  args+=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true)
fi
echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cpus, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $build/mimcore_bench ${args[*]}"
"$build/mimcore_bench" "${args[@]}" >/dev/null

python3 - "$json" <<'EOF'
import json, sys

doc = json.load(open(sys.argv[1]))
rows = []
for b in doc["benchmarks"]:
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    name = b.get("run_name", b["name"])
    cols = []
    if "items_per_second" in b:
        cols.append("%9.3f M items/s" % (b["items_per_second"] / 1e6))
    if "bytes_per_second" in b:
        cols.append("%9.1f MB/s" % (b["bytes_per_second"] / 1e6))
    for k in ("merged_pct", "objects_per_s", "extents_per_s", "runs_per_obj",
              "extents_per_obj"):
        if k in b:
            v = b[k]
            cols.append("%s=%s" % (k, ("%.0f" % v) if v >= 100 else ("%.2f" % v)))
    if b.get("label"):
        cols.append("(" + b["label"] + ")")
    rows.append((name, "  ".join(cols)))
w = max(len(n) for n, _ in rows) if rows else 0
for n, c in rows:
    print("%-*s  %s" % (w, n, c))
EOF
