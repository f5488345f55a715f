#!/usr/bin/python3
"""Analyse one benchmark run (one profile, one workload) into run.json.

Input: a run directory written by qa/bench.sh:
  meta.json        profile, workload, warm-up, devices (testbed devices.json), osds
  fio.json         fio --output-format=json (stats exclude fio's ramp_time = warm-up)
  fio_clat.1.log   one line per completed I/O: wall-clock ms
                   (log_unix_epoch=1), completion latency (ns), direction
                   (0 read, 1 write); the per-second IOPS and latency series
                   are counted from it (reads and writes together), so they
                   add up to fio's total exactly. (Runs made before this log
                   was per-I/O have fio_iops.1.log, averaged per second with
                   log_avg_msec=1000: read with per_second(), approximate.)
  samples.jsonl    qa/sampler.py: /sys/block stat, OSD RSS and CPU, each second;
                   the OSDs' mimstore perf counters (stall_causes)
  hdd.trace        tracefs block_rq_issue/complete of the HDD loops, with
                   MIMBENCH wall-clock markers
  emu_stats_start.json, emu_stats_end.json
                   with --hdd emu: the emulated HDDs' counters (qa/diskemu
                   "stats all") at the end of the warm-up and at the end
  mem_end.json     each OSD's mempools and tcmalloc heap stats at the end
                   (bench.sh mem_dump): where the RSS is (mem_snapshot)
Output: run.json with every figure (see docs/benchmarking.md) and a one-line
summary on stdout.

The measured window is fio's: it ends at fio's timestamp_ms and lasts
job_runtime ms; the warm-up (ramp_time) before it is excluded everywhere:
client stats, device deltas, the trace replay, memory.
"""

import argparse
import gzip
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hddmodel  # noqa: E402

STAT_FIELDS = ["read_ios", "read_merges", "read_sectors", "read_ticks",
               "write_ios", "write_merges", "write_sectors", "write_ticks",
               "in_flight", "io_ticks", "time_in_queue",
               "discard_ios", "discard_merges", "discard_sectors", "discard_ticks",
               "flush_ios", "flush_ticks"]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def load_fio_log(path, ddirs=(1,), keep_ddir=False):
    """[(t_ms, value)] for the given directions of a fio log (0 read, 1 write);
    [(t_ms, value, ddir)] with keep_ddir."""
    out = []
    if not os.path.exists(path):
        if not os.path.exists(path + ".gz"):
            return out
        path += ".gz"      # bench.sh compresses it after the analysis
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 3:
                continue
            try:
                t, v, ddir = int(parts[0]), float(parts[1]), int(parts[2])
            except ValueError:
                continue
            if ddir in ddirs:
                out.append((t, v, ddir) if keep_ddir else (t, v))
    return out


# A readback batch is 32 reads; a random mix's runs of reads are short.
READ_RUN_FLAG = 1000


def longest_read_run(ios, start_s):
    """The longest run of reads in a row among a mixed workload's I/Os
    [(t_ms, v, ddir)] in completion order, when it is READ_RUN_FLAG or
    longer: {"reads", "from_s", "to_s"} (window seconds), else None.

    At the end of each pass over the image, fio verifies every write its
    verify backlog left unverified: a read-back run that finishes a pass in
    its window (at 2 GiB, 137,280 reads in a row; only the fastest store
    gets there) has a read-only phase of old data the others do not."""
    best, run, first = None, 0, None
    for t_ms, _, ddir in ios:
        if ddir == 0:
            if run == 0:
                first = t_ms
            run += 1
            if run >= READ_RUN_FLAG and (best is None or run > best["reads"]):
                best = {"reads": run, "from_s": round(first / 1000.0 - start_s, 1),
                        "to_s": round(t_ms / 1000.0 - start_s, 1)}
        else:
            run = 0
    return best


def per_second_from_ios(ios, start_s, seconds):
    """Per-second IOPS and mean latency from a per-I/O log [(t_ms, v)] (or
    [(t_ms, v, ddir)]: the direction is ignored).

    Second k of the window is [start+k, start+k+1). fio's window start is
    estimated (timestamp_ms - job_runtime) to within some milliseconds, so a
    completion just outside the window is counted in its first or last
    second: every logged write is in the series. Seconds without a
    completion have 0 IOPS and no latency (None).
    """
    counts = [0] * seconds
    sums = [0.0] * seconds
    for io in ios:   # (indexing: a starred unpack allocates per I/O)
        t_ms, v = io[0], io[1]
        k = int(math.floor(t_ms / 1000.0 - start_s))
        k = min(max(k, 0), seconds - 1)
        counts[k] += 1
        sums[k] += v
    lat = [sums[k] / counts[k] if counts[k] else None for k in range(seconds)]
    return [float(c) for c in counts], lat


def per_second(samples, start_s, seconds, fill):
    """Legacy (averaged logs): put log_avg_msec=1000 samples [(t_ms, v)] (a
    third field, the direction, is ignored) into 1 s slots.

    Approximate: fio's sample is a mean of rates over sub-windows that had
    completions, stamped when the next sample is due, so the series adds up
    to fio's total only to within a few per cent.

    fio writes an averaged sample at the end of each window that had
    completions, so the sample for second k (covering (start+k, start+k+1])
    is stamped about start+k+1. Seconds with no completion have no sample:
    they get `fill` (0 for IOPS: those are the freezes).
    """
    slots = [None] * seconds
    for sample in samples:
        t_ms, v = sample[0], sample[1]
        k = int(round(t_ms / 1000.0 - start_s)) - 1
        if k < 0 or k > seconds:
            continue
        k = min(k, seconds - 1)
        if slots[k] is not None:          # jitter: two samples in one slot
            if k + 1 < seconds and slots[k + 1] is None:
                k += 1
            else:
                slots[k] = (slots[k] + v) / 2.0
                continue
        slots[k] = v
    return [fill if s is None else s for s in slots]


def series_stats(xs):
    n = len(xs)
    if n == 0:
        return {}
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / n
    std = math.sqrt(var)
    ma = [sum(xs[i:i + 10]) / 10.0 for i in range(0, max(0, n - 9))]
    return {
        "seconds": n,
        "mean": mean,
        "std": std,
        "cv": (std / mean) if mean > 0 else None,
        "min": min(xs),
        "max": max(xs),
        "zero_seconds": sum(1 for x in xs if x == 0),
        "ma10_min": min(ma) if ma else None,
        "ma10_max": max(ma) if ma else None,
        "longest_zero_run": max(_runs(xs, True), default=0),
        # FileStore's signature: bursts of activity separated by freezes
        "zero_runs": _run_summary(_runs(xs, True)),
        "busy_runs": _run_summary(_runs(xs, False)),
    }


def _runs(xs, zero):
    """Lengths of maximal runs of seconds at zero (zero=True) or above zero."""
    out, cur = [], 0
    for x in xs:
        if (x == 0) == zero:
            cur += 1
        elif cur:
            out.append(cur)
            cur = 0
    if cur:
        out.append(cur)
    return out


def _run_summary(runs):
    if not runs:
        return {"count": 0, "min": None, "median": None, "max": None}
    r = sorted(runs)
    return {"count": len(r), "min": r[0], "median": r[len(r) // 2], "max": r[-1]}


def load_samples(path):
    recs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    return recs


def interp(recs, t, getter):
    """Linear interpolation of a cumulative counter at wall time t."""
    pts = [(r["t"], getter(r)) for r in recs]
    pts = [(a, b) for a, b in pts if b is not None]
    if not pts:
        return None
    if t <= pts[0][0]:
        return pts[0][1]
    for (t0, v0), (t1, v1) in zip(pts, pts[1:]):
        if t0 <= t <= t1:
            return v0 + (v1 - v0) * ((t - t0) / (t1 - t0) if t1 > t0 else 0)
    return pts[-1][1]


def _stat_field(dev, i):
    def get(r):
        s = r["stat"].get(dev)
        return s[i] if s and len(s) > i else None
    return get


def stat_delta(recs, dev, start, end):
    """Deltas of every /sys/block/DEV/stat field over [start, end]."""
    out = {}
    for i, name in enumerate(STAT_FIELDS):
        a = interp(recs, start, _stat_field(dev, i))
        b = interp(recs, end, _stat_field(dev, i))
        out[name] = (b - a) if (a is not None and b is not None) else None
    return out


HIGHLIGHT = ("commitcycle", "journal_full", "journal_wr", "journal_wr_bytes", "op_w",
             "op_w_latency", "flush", "merge", "checkpoint", "committing", "writeback",
             "deferred_write_ops", "kv_sync_lat", "throttle", "backoff", "cache_full",
             "wbthrottle")


# tcmalloc's "heap stats" lines (MALLOC: [+=] bytes (MiB) what), by name
HEAP_FIELDS = {"Bytes in use by application": "in_use",
               "Bytes in page heap freelist": "page_heap_free",
               "Bytes in central cache freelist": "central_free",
               "Bytes in transfer cache freelist": "transfer_free",
               "Bytes in thread cache freelists": "thread_free",
               "Bytes in malloc metadata": "metadata",
               "Bytes released to OS (aka unmapped)": "released"}
TCMALLOC_FREE = ("page_heap_free", "central_free", "transfer_free", "thread_free")
MIB = 1048576.0


def parse_heap_stats(text):
    """{field: bytes} of a tcmalloc heap stats text (HEAP_FIELDS names)."""
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line.startswith("MALLOC:"):
            continue
        rest = line[len("MALLOC:"):].lstrip(" +=")
        num, _, tail = rest.partition(" ")
        what = tail.split(")", 1)[-1].strip()
        if num.isdigit() and what in HEAP_FIELDS:
            out[HEAP_FIELDS[what]] = int(num)
    return out


# What mimstore holds in memory per cached write or sn in flight
# (dump_mimstore_htmll), to set beside the heap figures.
MIMSTORE_HELD = ("extents", "bytes", "sns_held", "sns_window", "journal_live_entries",
                 "checkpoint_pending", "parts_waiting_for_sync",
                 "db_block_cache_bytes", "db_memtable_bytes")


def mem_snapshot(path, min_pool_mb=1.0):
    """Where each OSD's memory was at one moment (bench.sh mem_dump), in MiB:
    tcmalloc's heap (in use; held in its free lists, which RSS counts but
    the program does not use) and Ceph's mempools (osd_pglog grows with the
    ops done up to osd_target_pg_log_entries_per_osd, whatever the store).
    None without the file."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        d = json.load(f)
    out = {}
    for name, v in sorted(d.items()):
        if not isinstance(v, dict):
            continue
        heap = parse_heap_stats(v.get("heap"))
        pools = ((v.get("mempools") or {}).get("mempool") or {}).get("by_pool") or {}
        pool_mb = {k: p.get("bytes", 0) / MIB for k, p in pools.items()}
        out[name] = {
            "heap_mb": {k: b / MIB for k, b in heap.items()},
            "tcmalloc_free_mb": (sum(heap.get(k, 0) for k in TCMALLOC_FREE) / MIB) if heap else None,
            "mempools_total_mb": sum(pool_mb.values()) if pools else None,
            "mempools_mb": {k: v for k, v in sorted(pool_mb.items(), key=lambda kv: -kv[1])
                            if v >= min_pool_mb},
        }
        held = v.get("mimstore") or {}
        if isinstance(held, dict) and held.get("htmll"):
            held = held["htmll"]
        counts = {k: held[k] for k in MIMSTORE_HELD if isinstance(held.get(k), (int, float))}
        if counts:
            out[name]["mimstore_held"] = counts
    return out


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + "." + k if prefix else k
        if isinstance(v, dict):
            out.update(_flatten(v, key))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = v
    return out


def _counter_name(key):
    """filestore.op_w_latency.avgcount -> op_w_latency; osd.op_w -> op_w"""
    parts = key.split(".")
    if len(parts) > 1 and parts[-1] in ("avgcount", "sum", "avgtime"):
        return parts[-2]
    return parts[-1]


def perf_delta(start_path, end_path):
    """Deltas of the OSDs' perf counters (ceph daemon osd.N perf dump) over
    the window: {"osd.0": {"filestore.commitcycle": 12, ...}}, nonzero only,
    plus "highlights" with the counters that tell journal/flush cycles."""
    if not (os.path.exists(start_path) and os.path.exists(end_path)):
        return {"available": False}
    try:
        a, b = json.load(open(start_path)), json.load(open(end_path))
    except ValueError:
        return {"available": False}
    out = {"available": True, "seconds": b.get("t", 0) - a.get("t", 0), "osds": {}, "highlights": {}}
    for osd in sorted(k for k in b if k.startswith("osd.")):
        fa, fb = _flatten(a.get(osd) or {}), _flatten(b.get(osd) or {})
        # avgtime is a ratio, not a counter: no delta
        d = {k: fb[k] - fa.get(k, 0) for k in fb
             if not k.endswith(".avgtime") and fb[k] - fa.get(k, 0) != 0}
        out["osds"][osd] = d
        out["highlights"][osd] = {k: v for k, v in d.items()
                                  if any(h in _counter_name(k) for h in HIGHLIGHT)}
    return out


def _per_osd_byte(nvme_bytes, perf):
    """NVMe bytes per byte the OSDs were asked to write (client writes on the
    primaries, replica writes on the others): the stores' own journal write
    amplification. NVMe bytes per client byte also holds what happens above
    the stores: the pool's replication, and for the filesystem workloads the
    client filesystem (its log and metadata, files deleted before write
    back), which can make it fall below 1."""
    if not perf.get("available"):
        return {"osd_write_bytes": None, "write_bytes_per_osd_byte": None}
    got = sum(d.get("osd.op_w_in_bytes", 0) + d.get("osd.subop_w_in_bytes", 0)
              for d in perf["osds"].values())
    return {"osd_write_bytes": got,
            "write_bytes_per_osd_byte": (nvme_bytes / got) if got else None}


def hdd_backend(devices):
    """What stood in for the HDDs: devices.json's hdd_backend; runs made
    before the emulator existed had the throttle only."""
    if devices.get("hdd_backend"):
        return devices["hdd_backend"]
    return dict({"kind": "throttle"}, **(devices.get("throttle") or {}))


def _dig(d, path):
    for k in path:
        d = d[k]
    return d


def _emu_disk_delta(s, e):
    """One emulated disk between snapshots s and e."""
    secs = e["uptime_s"] - s["uptime_s"]

    def d(*path):
        return _dig(e, path) - _dig(s, path)

    def mean_us(op):    # the snapshots hold means; the window's mean from the sums
        n = d(op, "count")
        tot = e[op]["count"] * e[op]["avg_latency_us"] - s[op]["count"] * s[op]["avg_latency_us"]
        return tot / n if n > 0 else None
    return {
        "seconds": secs,
        "writes": d("writes", "count"), "write_bytes": d("writes", "bytes"),
        "reads": d("reads", "count"), "flushes": d("flushes", "count"),
        "write_latency_us_mean": mean_us("writes"),
        "flush_latency_us_mean": mean_us("flushes"),
        "busy_ms": d("busy_ms"),
        "utilisation": d("busy_ms") / (secs * 1000.0) if secs > 0 else None,
        "seeks": d("seeks"), "sequential": d("sequential"),
        "seek_ms": d("seek_ms"), "rotation_ms": d("rotation_ms"), "transfer_ms": d("transfer_ms"),
        "cache_full_waits": d("cache", "full_waits"), "destages": d("cache", "destages"),
        # must be 0: fast mode (not charged) is for set-up only
        "fast_ops": d("fast_ops"),
        "fast_at_end": e.get("fast"),
    }


def emu_delta(start_path, end_path):
    """The emulated HDDs' own figures between two "stats all" snapshots (the
    measured window), per disk and for the busiest one; None without both."""
    try:
        a = {x["disk"]: x for x in json.load(open(start_path))}
        b = {x["disk"]: x for x in json.load(open(end_path))}
        disks = {name: _emu_disk_delta(a[name], b[name]) for name in sorted(b) if name in a}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not disks:
        return None
    busiest = max(disks, key=lambda k: disks[k]["busy_ms"])
    return {"disks": disks, "busiest_disk": busiest,
            "busiest_utilisation": disks[busiest]["utilisation"],
            "fast_ops": sum(x["fast_ops"] for x in disks.values())}


def _direction(d, job_runtime_s=None):
    """Client figures of one direction of fio's job (None: no I/O that way).

    fio gives a direction that only verify reads used (readback) no runtime,
    so no rate: the rate is then taken over the job's runtime."""
    if not d or not int(d.get("total_ios", 0)):
        return None
    iops, bw = d["iops"], d["bw_bytes"]
    if not d.get("runtime") and job_runtime_s:
        iops = int(d["total_ios"]) / job_runtime_s
        bw = d.get("io_bytes", 0) / job_runtime_s
    clat = d.get("clat_ns", {})
    pct = clat.get("percentile", {})

    def p(q):
        v = pct.get(q)
        return v / 1e6 if v is not None else None
    return {
        "ops": int(d["total_ios"]),
        "iops_mean": iops,
        "bw_mb_s": bw / 1e6,
        "bytes": d.get("io_bytes", 0),
        "lat_ms": {"mean": clat.get("mean", 0) / 1e6, "p50": p("50.000000"),
                   "p99": p("99.000000"), "p99_9": p("99.900000"),
                   "max": clat.get("max", 0) / 1e6},
    }


def _client_fio(rundir):
    """Client figures of a fio run: (client, start, end, iops series, latency series).

    Per direction from fio's totals; "ops", "iops_mean", the series and the
    costs per operation count reads and writes together. "lat_ms" is the
    writes' (the reads' in a workload without writes)."""
    fio = json.load(open(os.path.join(rundir, "fio.json")))
    job = fio["jobs"][0]
    end = fio["timestamp_ms"] / 1000.0
    start = end - job["job_runtime"] / 1000.0
    seconds = int(round(end - start))
    wr = _direction(job.get("write"), end - start)
    rd = _direction(job.get("read"), end - start)
    writes = wr["ops"] if wr else 0
    reads = rd["ops"] if rd else 0
    ops = writes + reads
    main_dir = wr or rd or _direction({"total_ios": 1, "iops": 0.0, "bw_bytes": 0})

    # One copy of the per-I/O log (millions of tuples in a long run): the
    # direction is kept for the read-run search, ignored by the series.
    clat_log = load_fio_log(os.path.join(rundir, "fio_clat.1.log"), ddirs=(0, 1), keep_ddir=True)
    if os.path.exists(os.path.join(rundir, "fio_iops.1.log")):     # legacy averaged logs
        iops_series = per_second(load_fio_log(os.path.join(rundir, "fio_iops.1.log")), start, seconds, 0.0)
        lat_series = per_second(clat_log, start, seconds, None)
    else:
        iops_series, lat_series = per_second_from_ios(clat_log, start, seconds)
    lat_series = [None if v is None else v / 1e6 for v in lat_series]
    client = {
        "ops": ops,
        "writes": writes,
        "reads": reads,
        "write_bytes": wr["bytes"] if wr else 0,
        "iops_mean": (wr["iops_mean"] if wr else 0.0) + (rd["iops_mean"] if rd else 0.0),
        "bw_mb_s": (wr["bw_mb_s"] if wr else 0.0) + (rd["bw_mb_s"] if rd else 0.0),
        "lat_ms": main_dir["lat_ms"],
        "write": wr,
        "read": rd,
        "per_second": series_stats(iops_series),
        # sanity: the per-second series should add up to the I/Os fio counted
        "series_sum_over_ops": (sum(iops_series) / ops) if ops else None,
        "errors": job.get("error", 0),
        "read_run": longest_read_run(clat_log, start) if reads and writes else None,
    }
    return client, start, end, iops_series, lat_series


def _client_fs(rundir):
    """Client figures of a filesystem workload (qa/fsworkload.py): an "op" is
    a flowop (FileBench's ops/s); writes are the appends and whole-file
    writes, reads the whole-file reads. Same shape as _client_fio's."""
    fs = json.load(open(os.path.join(rundir, "fsworkload.json")))
    w = fs["window"]
    span = w["wall_end"] - w["wall_start"]
    pf = fs["per_flowop"]

    def count(ops):
        return sum(pf[o]["count"] for o in ops if o in pf)
    writes, reads = count(("append", "write")), count(("read",))
    series = [float(x) for x in fs["series"]]
    client = {
        "ops": fs["flowops"],
        "writes": writes,
        "reads": reads,
        "write_bytes": fs["write_bytes"],
        "iops_mean": fs["flowops_per_s"],
        "bw_mb_s": fs["read_mb_s"] + fs["write_mb_s"],
        "lat_ms": fs["lat_ms"],
        "write": {"ops": writes, "iops_mean": writes / span, "bw_mb_s": fs["write_mb_s"],
                  "bytes": fs["write_bytes"], "lat_ms": {}} if writes else None,
        "read": {"ops": reads, "iops_mean": reads / span, "bw_mb_s": fs["read_mb_s"],
                 "bytes": fs["read_bytes"], "lat_ms": {}} if reads else None,
        "per_flowop": pf,
        "per_second": series_stats(series),
        "series_sum_over_ops": fs["series_sum_over_flowops"],
        "errors": len(fs.get("errors") or []),
    }
    return client, w["wall_start"], w["wall_end"], series, [None] * len(series)


# Store events (cumulative counters of the per-second perf samples) that can
# hold client writes back; stall_causes() counts the seconds each moved in.
STALL_EVENTS = ("journal_full_waits", "cache_full_waits", "throttle_waits", "wbthrottle_waits",
                "flush_window_waits", "pace_waits", "backoffs", "syncs")
# Averages whose sum grows by the duration of each finished event: the
# seconds an event of these covered are known once it ends.
STALL_SPANS = {"in_sync": "sync_lat", "in_flush": "flush_lat"}


def stall_causes(recs, start, iops_series):
    """What the store did in the seconds without a completed client op.

    From the per-second perf samples (qa/sampler.py --asok; all OSDs summed):
    per event counter, in how many zero seconds and in how many seconds of the
    window it moved; per span (a sync, a full flush), how many of each were
    covered by one; the journal's used bytes at the end of zero seconds.
    None when the run has no perf samples."""
    pts = [(r["t"], r["perf"]) for r in recs if r.get("perf")]
    if len(pts) < 2:
        return None

    seconds = len(iops_series)

    def at_boundaries(key):
        """The counter (all OSDs summed) at start + 0, 1, ..., seconds."""
        recs_k = [{"t": t, "v": sum(d[key] for d in perf.values() if key in d)
                   if any(key in d for d in perf.values()) else None} for t, perf in pts]
        return [interp(recs_k, start + k, lambda r: r["v"]) for k in range(seconds + 1)]

    zero = [k for k, v in enumerate(iops_series) if v == 0]
    out = {"zero_seconds": len(zero), "seconds": seconds, "events": {}, "spans": {}}
    for ev in STALL_EVENTS:
        v = at_boundaries(ev)
        moved = [v[k] is not None and v[k + 1] is not None and v[k + 1] - v[k] > 0
                 for k in range(seconds)]
        if any(moved):
            out["events"][ev] = {"zero": sum(1 for k in zero if moved[k]), "all": sum(moved)}
    for name, key in STALL_SPANS.items():
        covered = [False] * seconds
        for (t0, p0), (t1, p1) in zip(pts, pts[1:]):
            for osd in set(p0) & set(p1):      # spans of one OSD (never summed)
                a, b = p0[osd].get(key), p1[osd].get(key)
                if not (isinstance(a, list) and isinstance(b, list)) or b[0] <= a[0]:
                    continue
                # the events that ended in (t0, t1] covered up to their
                # summed duration before t1 (two in one second: overstated)
                lo, hi = t1 - (b[1] - a[1]), t1
                for k in range(max(0, int(lo - start)), min(seconds, int(hi - start) + 1)):
                    if start + k + 1 > lo and start + k < hi:
                        covered[k] = True
        out["spans"][name] = {"zero": sum(1 for k in zero if covered[k]), "all": sum(covered)}
    at_end = at_boundaries("journal_used_bytes")
    used = [at_end[k + 1] for k in zero]
    used = sorted(u for u in used if u is not None)
    out["journal_used_mb_at_zero"] = ({"min": used[0] / 1e6, "median": used[len(used) // 2] / 1e6,
                                       "max": used[-1] / 1e6} if used else None)
    return out


def analyse(rundir, model_name=hddmodel.DEFAULT_PRESET):
    meta = json.load(open(os.path.join(rundir, "meta.json")))
    devices = meta["devices"]
    if os.path.exists(os.path.join(rundir, "fsworkload.json")):
        client, start, end, iops_series, lat_series = _client_fs(rundir)
    else:
        client, start, end, iops_series, lat_series = _client_fio(rundir)
    runtime_s = end - start
    seconds = len(iops_series)
    writes, reads, ops = client["writes"], client["reads"], client["ops"]

    # --- devices from /sys/block -----------------------------------------------------
    recs = load_samples(os.path.join(rundir, "samples.jsonl"))
    win = [r for r in recs if start - 1.5 <= r["t"] <= end + 1.5]
    hdd = {"per_device": {}, "write_requests": 0, "write_bytes": 0,
           "read_requests": 0, "read_bytes": 0, "flushes": 0}
    for d in devices["hdd"]:
        dd = stat_delta(win, d["name"], start, end)
        hdd["per_device"][d["name"]] = dd
        hdd["write_requests"] += dd["write_ios"] or 0
        hdd["write_bytes"] += (dd["write_sectors"] or 0) * 512
        hdd["read_requests"] += dd["read_ios"] or 0
        hdd["read_bytes"] += (dd["read_sectors"] or 0) * 512
        hdd["flushes"] += dd["flush_ios"] or 0
    per_cw = (lambda x: x / writes) if writes else (lambda x: None)
    hdd["per_client_write"] = {
        "write_requests": per_cw(hdd["write_requests"]),
        "write_bytes": per_cw(hdd["write_bytes"]),
        "read_requests": per_cw(hdd["read_requests"]),
        "flushes": per_cw(hdd["flushes"]),
    }
    # reads served by the HDDs, not by a cache (page cache, BlueStore's)
    per_cr = (lambda x: x / reads) if reads else (lambda x: None)
    hdd["per_client_read"] = {"read_requests": per_cr(hdd["read_requests"]),
                              "read_bytes": per_cr(hdd["read_bytes"])}
    hdd["hdd_write_iops"] = hdd["write_requests"] / runtime_s / max(1, len(devices["hdd"]))

    nvme = {"busy_pct": {}, "write_bytes": 0}
    for d in devices["nvme"]:
        dd = stat_delta(win, d["name"], start, end)
        if dd["io_ticks"] is not None:
            nvme["busy_pct"][d["name"]] = 100.0 * dd["io_ticks"] / (runtime_s * 1000.0)
        nvme["write_bytes"] += (dd["write_sectors"] or 0) * 512
    nvme_bytes = sum(d["bytes"] for d in devices["nvme"] if d.get("role") not in ("wal", "db"))
    # how many times the journal / BlueStore DB devices were written over, on average
    # (NVMe bytes written count every NVMe device: block.wal and mimstore's DB too)
    nvme["device_passes"] = (nvme["write_bytes"] / nvme_bytes) if nvme_bytes else None
    busy = list(nvme["busy_pct"].values())
    nvme["busy_pct_mean"] = sum(busy) / len(busy) if busy else None
    nvme["busy_pct_max"] = max(busy) if busy else None
    nvme["write_bytes_per_client_write"] = per_cw(nvme["write_bytes"])
    # journal (and DB/WAL) write amplification: device bytes per client byte
    wbytes = client["write_bytes"]
    nvme["write_bytes_per_client_byte"] = (nvme["write_bytes"] / wbytes) if wbytes else None

    # --- trace replay through the HDD model ---------------------------------------------
    trace_path = os.path.join(rundir, "hdd.trace")
    if not os.path.exists(trace_path) and os.path.exists(trace_path + ".gz"):
        trace_path += ".gz"         # bench.sh compresses it after the analysis
    model = {"available": False}
    if os.path.exists(trace_path):
        dev_bytes = {d["majmin"].replace(":", ","): d["bytes"] for d in devices["hdd"]}
        try:
            with hddmodel.open_text(trace_path) as f:
                res = hddmodel.replay_trace(f, dev_bytes, hddmodel.PRESETS[model_name], start, end)
            tot = res["total"]
            model = {
                "available": True,
                "model": model_name,
                "spec": res["spec"],
                "lost_events": res["lost_events"],
                "markers": res["markers"],
                "write_requests": tot["write_requests"],
                "write_bytes": tot["write_bytes"],
                "read_requests": tot["read_requests"],
                "sequential_fraction": (tot["sequential"] / tot["requests"]) if tot["requests"] else None,
                "busy_ms_total": tot["total_ms"],
                "busiest_device": res["busiest_device"],
                "busy_ms_busiest": res["busiest_ms"],
                "seek_ms": tot["seek_ms"], "rotation_ms": tot["rotation_ms"],
                "transfer_ms": tot["transfer_ms"],
                "per_device": res["devices"],
                "per_client_write": {
                    "write_requests": per_cw(tot["write_requests"]),
                    "write_bytes": per_cw(tot["write_bytes"]),
                    # disks work in parallel: the busiest one limits the cluster
                    "modelled_ms": per_cw(res["busiest_ms"]),
                    "modelled_ms_all_disks": per_cw(tot["total_ms"]),
                },
                # client writes/s the modelled disks could sustain
                "modelled_iops": (1000.0 * writes / res["busiest_ms"]) if res["busiest_ms"] else None,
                # share of the window the busiest modelled disk would be busy
                "modelled_utilisation": res["busiest_ms"] / (runtime_s * 1000.0),
            }
        except ValueError as e:
            model = {"available": False, "error": str(e)}

    # --- processes ------------------------------------------------------------------------
    mem = {"osd_rss_mb": {}}
    cpu = {"osd_cpu_pct": {}}
    inwin = [r for r in recs if start <= r["t"] <= end]
    for name in sorted({k for r in inwin for k in r.get("rss_kb", {})}):
        v = [r["rss_kb"][name] / 1024.0 for r in inwin if r["rss_kb"].get(name) is not None]
        if v:
            mem["osd_rss_mb"][name] = {"mean": sum(v) / len(v), "max": max(v), "end": v[-1]}
        a = interp(win, start, lambda r, n=name: r["cpu_ticks"].get(n))
        b = interp(win, end, lambda r, n=name: r["cpu_ticks"].get(n))
        if a is not None and b is not None:
            cpu["osd_cpu_pct"][name] = 100.0 * (b - a) / CLK_TCK / runtime_s
            cpu.setdefault("osd_cpu_s", 0.0)
            cpu["osd_cpu_s"] += (b - a) / CLK_TCK
    mem["total_rss_mb_mean"] = sum(x["mean"] for x in mem["osd_rss_mb"].values()) or None
    mem["at_end"] = mem_snapshot(os.path.join(rundir, "mem_end.json"))
    mem["total_rss_mb_max"] = sum(x["max"] for x in mem["osd_rss_mb"].values()) or None
    cpu["osd_cpu_pct_total"] = sum(cpu["osd_cpu_pct"].values()) or None
    # OSD CPU seconds (all OSDs) per 1000 client operations
    cpu["osd_cpu_s_per_kop"] = (cpu["osd_cpu_s"] / (ops / 1000.0)) if ops and "osd_cpu_s" in cpu else None
    sa = [r for r in win if r.get("sys_cpu")]
    if len(sa) >= 2:
        a, b = sa[0]["sys_cpu"], sa[-1]["sys_cpu"]
        tot = sum(b) - sum(a)
        idle = (b[3] + b[4]) - (a[3] + a[4])
        cpu["system_busy_pct"] = 100.0 * (tot - idle) / tot if tot else None
        cpu["ncpu"] = os.cpu_count()

    # --- per-second device / memory series for plots ----------------------------------------
    sec_nvme, sec_hdd_w, sec_rss = [], [], []
    for k in range(seconds):
        t0, t1 = start + k, start + k + 1
        nb = []
        for d in devices["nvme"]:
            a = interp(win, t0, _stat_field(d["name"], 9))
            b = interp(win, t1, _stat_field(d["name"], 9))
            if a is not None and b is not None:
                nb.append((b - a) / 10.0)          # ms busy per 1000 ms -> %
        sec_nvme.append(max(nb) if nb else None)
        hw = 0.0
        for d in devices["hdd"]:
            a = interp(win, t0, _stat_field(d["name"], 4))
            b = interp(win, t1, _stat_field(d["name"], 4))
            if a is not None and b is not None:
                hw += b - a
        sec_hdd_w.append(hw)
        rs = interp(win, t1, lambda r: sum(v for v in r["rss_kb"].values() if v) / 1024.0
                    if r.get("rss_kb") else None)
        sec_rss.append(rs)

    perf = perf_delta(os.path.join(rundir, "perf_start.json"), os.path.join(rundir, "perf_end.json"))
    nvme.update(_per_osd_byte(nvme["write_bytes"], perf))
    stalls = stall_causes(win, start, iops_series)

    out = {
        "profile": meta["profile"],
        "description": meta.get("description", ""),
        "workload": meta["workload"],
        "osds": meta["osds"],
        "pool_size": meta["pool_size"],
        "window": {"start": start, "end": end, "seconds": runtime_s,
                   "warmup_s": meta["workload"]["warmup"],
                   "warmup_rule": meta.get("warmup_rule", "")},
        "hdd_backend": hdd_backend(devices),
        "client": client,
        "hdd": hdd,
        "hdd_emulator": emu_delta(os.path.join(rundir, "emu_stats_start.json"),
                                  os.path.join(rundir, "emu_stats_end.json")),
        "hdd_model": model,
        "nvme": nvme,
        "memory": mem,
        "cpu": cpu,
        "perf": perf,
        "stalls": stalls,
        "series": {"iops": iops_series, "lat_ms": lat_series, "nvme_busy_pct": sec_nvme,
                   "hdd_write_req_s": sec_hdd_w, "osd_rss_mb": sec_rss},
    }
    return out


def summary_line(r):
    c, h, m = r["client"], r["hdd"], r["hdd_model"]
    ps = c["per_second"]

    def f(x, fmt="%.1f"):
        return "-" if x is None else fmt % x
    return ("%s %s: %.0f IOPS, p99 %s ms, p99.9 %s ms, %d s at 0 IOPS, CV %s; "
            "HDD %s wr/cw (trace %s), %s KiB/cw, model %s ms/cw = %s IOPS; NVMe busy %s%%"
            % (r["profile"], r["workload"]["name"], c["iops_mean"],
               f(c["lat_ms"]["p99"]), f(c["lat_ms"]["p99_9"]), ps.get("zero_seconds", 0),
               f(ps.get("cv"), "%.2f"),
               f(h["per_client_write"]["write_requests"], "%.2f"),
               f(m.get("per_client_write", {}).get("write_requests"), "%.2f"),
               f((h["per_client_write"]["write_bytes"] or 0) / 1024.0, "%.1f"),
               f(m.get("per_client_write", {}).get("modelled_ms"), "%.2f"),
               f(m.get("modelled_iops"), "%.0f"),
               f(r["nvme"]["busy_pct_max"])))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rundir")
    ap.add_argument("--model", default=hddmodel.DEFAULT_PRESET, choices=sorted(hddmodel.PRESETS))
    a = ap.parse_args(argv)
    r = analyse(a.rundir, a.model)
    with open(os.path.join(a.rundir, "run.json"), "w") as f:
        json.dump(r, f, indent=1)
    print(summary_line(r))


if __name__ == "__main__":
    main()
