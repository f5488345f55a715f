#!/usr/bin/python3
"""Combine the runs of one bench.sh invocation into results.md, results.json, plots.

Usage: report.py [--no-plots] RESULTS_DIR
Reads RESULTS_DIR/runs/<profile>/<workload>/run.json (qa/analyze.py),
RESULTS_DIR/env.json and RESULTS_DIR/failures.txt; a directory without runs/
(a committed result) is read from its results.json. Writes into RESULTS_DIR:
  results.md     the table, the same-run ratios, notes
  results.json   every figure of every run, the ratios, the environment
  *.png          IOPS and latency over time per workload, IOPS by size and
                 threads, NVMe busy and OSD memory, device activity over time
                 (not committed: qa/replot.py draws them again from the JSON)
and prints results.md.
"""

import glob
import json
import os
import sys

plt = None     # matplotlib.pyplot, imported by draw_plots() only when plotting

REFERENCE = "filestore-pacific"
OTHERS = ["bluestore-hybrid", "mimstore-nomerge"]
SUBJECT = "mimstore"
ORDER = ["mimstore", "mimstore-nomerge", "bluestore-hybrid", "filestore-pacific"]


def fmt(x, f="%.1f"):
    if x is None:
        return "-"
    return f % x


def load(results):
    """(runs, env, failures, restarts) of a results directory: from its runs/
    (a bench.sh run just finished), or else from its results.json (a
    committed result, whose runs/ is not kept)."""
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "runs", "*", "*", "run.json"))):
        with open(path) as f:
            runs.append(json.load(f))
    if not runs and os.path.exists(os.path.join(results, "results.json")):
        with open(os.path.join(results, "results.json")) as f:
            saved = json.load(f)
        return (saved.get("runs") or [], saved.get("environment") or {},
                saved.get("failures") or [], saved.get("restarts") or {})
    env = {}
    if os.path.exists(os.path.join(results, "env.json")):
        env = json.load(open(os.path.join(results, "env.json")))
    failures = []
    fp = os.path.join(results, "failures.txt")
    if os.path.exists(fp):
        failures = [l.strip() for l in open(fp) if l.strip()]
    return runs, env, failures, load_restarts(results)


def load_restarts(results):
    """bench.sh --restart: {profile: restart.json}."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "runs", "*", "restart.json"))):
        with open(path) as f:
            out[os.path.basename(os.path.dirname(path))] = json.load(f)
    return out


def restart_rows(restarts):
    rows = []
    for p in sorted(restarts, key=prof_key):
        d = restarts[p]
        for o in d.get("osds", []):
            never = "not within %s s" % d.get("timeout_s")
            rows.append([p, o["osd"], o["signal"],
                         fmt(o.get("stop_s")) + ("" if o.get("stop") == "exited" else " (then SIGKILL)"),
                         never if o.get("start_to_up_s") is None else fmt(o["start_to_up_s"]),
                         never if o.get("start_to_active_s") is None else fmt(o["start_to_active_s"])])
    return rows


def prof_key(p):
    return (ORDER.index(p) if p in ORDER else len(ORDER), p)


def wl_key(w):
    wl = w if isinstance(w, dict) else None
    if wl is None:
        return (w,)
    bs = wl["bs"].lower()
    if not bs[:1].isdigit():          # a filesystem workload: no block size
        return (True, wl["rw"], 0.0, wl["threads"], wl["distribution"])
    mult = {"k": 1, "m": 1024, "g": 1 << 20}.get(bs[-1], 1 / 1024)
    num = float(bs[:-1]) if bs[-1] in "kmg" else float(bs)
    return (wl["rw"] != "randwrite", "", num * mult, wl["threads"], wl["distribution"])


def zero_of_window(r):
    """'96/102': seconds at zero IOPS of the window's real length. fio's
    window runs past --runtime while outstanding writes drain, so a store
    that freezes at the end shows a window longer than asked for."""
    ps = r["client"]["per_second"]
    secs = len((r.get("series") or {}).get("iops") or []) or round(r.get("window", {}).get("seconds") or 0)
    return "%d/%d" % (ps.get("zero_seconds", 0), secs) if secs else "%d" % ps.get("zero_seconds", 0)


SERIES_SUM_TOLERANCE = 0.005


def series_sum(r):
    c = r["client"]
    return c.get("series_sum_over_ops", c.get("series_sum_over_writes"))


def has_reads(runs):
    return any(r["client"].get("reads") for r in runs)


def row(r, reads=False):
    """One table row; with reads, the read columns after the total IOPS
    (the latency columns are then the writes')."""
    c, h, m, n, mem = r["client"], r["hdd"], r["hdd_model"], r["nvme"], r["memory"]
    ps = c["per_second"]
    mp = m.get("per_client_write", {}) if m.get("available") else {}
    rd = c.get("read") or {}
    lat = ((c.get("write") or {}).get("lat_ms") or {}) if reads else c["lat_ms"]
    read_cols = [fmt(rd.get("iops_mean"), "%.0f"), fmt((rd.get("lat_ms") or {}).get("p50"), "%.2f"),
                 fmt((rd.get("lat_ms") or {}).get("p99"), "%.1f"),
                 fmt(h.get("per_client_read", {}).get("read_requests"), "%.2f")] if reads else []
    return [
        r["profile"],
        fmt(c["iops_mean"], "%.0f"),
    ] + read_cols + [
        fmt(c["bw_mb_s"], "%.1f"),
        fmt(lat.get("p50"), "%.2f"),
        fmt(lat.get("p99"), "%.1f"),
        fmt(lat.get("p99_9"), "%.1f"),
        zero_of_window(r),
        fmt(ps.get("cv"), "%.2f"),
        fmt(h["per_client_write"]["write_requests"], "%.3f"),
        fmt(mp.get("write_requests"), "%.3f"),
        fmt((h["per_client_write"]["write_bytes"] or 0) / 1024.0, "%.1f"),
        fmt(mp.get("modelled_ms"), "%.2f"),
        fmt(m.get("modelled_iops") if m.get("available") else None, "%.0f"),
        fmt(n["busy_pct_max"], "%.1f"),
        fmt(mem.get("total_rss_mb_max"), "%.0f"),
    ]


HEADER = ["profile", "IOPS", "MB/s", "p50 ms", "p99 ms", "p99.9 ms", "s at 0", "CV",
          "HDD wr/cw (stat)", "HDD wr/cw (trace)", "HDD KiB/cw", "model ms/cw",
          "model IOPS", "NVMe busy %", "OSD RSS MiB max"]
READ_HEADER = ["read IOPS", "read p50 ms", "read p99 ms", "HDD rd/cr"]


def header(reads=False):
    if not reads:
        return HEADER
    return HEADER[:2] + READ_HEADER + ["MB/s", "write p50 ms", "write p99 ms", "write p99.9 ms"] + HEADER[6:]


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


PERF_NOTE_KEYS = ("commitcycle", "journal_full", "flush", "merge", "checkpoint", "backoffs",
                  "cache_full", "wbthrottle")


def perf_note(r):
    """A few perf-counter deltas that show journal / flush cycles in the window."""
    p = r.get("perf") or {}
    if not p.get("available"):
        return ""
    tot = {}
    for d in p.get("highlights", {}).values():
        for k, v in d.items():
            leaf = k.split(".")
            if leaf[-1] in ("sum", "avgtime"):
                continue
            name = ".".join(leaf[:-1]) if leaf[-1] == "avgcount" else k
            if any(w in name.rsplit(".", 1)[-1] for w in PERF_NOTE_KEYS):
                tot[name] = tot.get(name, 0) + v
    if not tot:
        return ""
    items = sorted(tot.items())[:8]
    return "; perf counters in the window: " + ", ".join("%s %+g" % (k, v) for k, v in items)


def stall_note(r):
    """What the store did in the seconds at zero IOPS (analyze.stall_causes)."""
    st = r.get("stalls")
    if not st or not st.get("zero_seconds"):
        return ""
    parts = ["%s %d of %d s" % (k.replace("_", " "), v["zero"], v["all"])
             for k, v in sorted(st["spans"].items())]
    parts += ["%s moved in %d (%d)" % (k, v["zero"], v["all"])
              for k, v in sorted(st["events"].items())]
    ju = st.get("journal_used_mb_at_zero")
    if ju:
        parts.append("journal used %.0f-%.0f MB" % (ju["min"], ju["max"]))
    return "; in the %d s at 0 IOPS (in all %d s): %s" % (
        st["zero_seconds"], st["seconds"], ", ".join(parts))


def read_run_note(r):
    """A mixed run's long read-only phase (analyze.longest_read_run)."""
    rr = r["client"].get("read_run")
    if not rr:
        return ""
    return ("; **%d reads in a row, no write, from second %.0f to %.0f**: fio's verify at the end of "
            "a pass over the image (a store that does not finish a pass in the window has no such phase)"
            % (rr["reads"], rr["from_s"], rr["to_s"]))


def mem_note(r):
    """Where the OSDs' memory was at the end of the window (analyze.mem_snapshot)."""
    at = (r.get("memory") or {}).get("at_end")
    if not at:
        return ""
    parts = []
    for name, m in sorted(at.items()):
        pools = ", ".join("%s %.0f" % (k, v) for k, v in list(m["mempools_mb"].items())[:4])
        parts.append("%s heap in use %s MiB (mempools %s MiB: %s), tcmalloc free lists %s MiB" % (
            name, fmt(m["heap_mb"].get("in_use"), "%.0f"), fmt(m["mempools_total_mb"], "%.0f"),
            pools or "-", fmt(m["tcmalloc_free_mb"], "%.0f")))
        held = m.get("mimstore_held")
        if held:
            parts[-1] += ", holding %s cached extents, %s sns in flight, %s journal entries" % (
                fmt(held.get("extents"), "%d"), fmt(held.get("sns_held"), "%d"),
                fmt(held.get("journal_live_entries"), "%d"))
            db = [held.get(k) for k in ("db_block_cache_bytes", "db_memtable_bytes")]
            if None not in db:
                parts[-1] += ", RocksDB block cache %.0f MiB and memtables %.0f MiB" % (
                    db[0] / 1048576.0, db[1] / 1048576.0)
                rest = rss_less_filled(r, name, m, db)
                if rest is not None:
                    parts[-1] += ("; RSS at the end less the PG log and RocksDB's cache and "
                                  "memtables %.0f MiB" % rest)
    return "; memory at the end: " + "; ".join(parts)


def rss_less_filled(r, name, m, db):
    """The OSD's RSS at the end less what fills with the ops done up to a
    bound whatever the store (the PG log; RocksDB's block cache and
    memtables): what two mimstore profiles that did unequal work can be
    compared by before both are flat. None when a figure is missing."""
    end = (((r.get("memory") or {}).get("osd_rss_mb") or {}).get(name) or {}).get("end")
    pglog = (m.get("mempools_mb") or {}).get("osd_pglog")
    if end is None or pglog is None:
        return None
    return end - pglog - (db[0] + db[1]) / 1048576.0


def emu_note(r):
    """The emulated HDD's own view of the window (--hdd emu), for the per-run line."""
    e = r.get("hdd_emulator")
    if not e:
        return ""
    b = e["disks"][e["busiest_disk"]]
    note = "; emulated HDD %s busy %s%%, mean write %s ms, mean flush %s ms, cache-full waits %d" % (
        e["busiest_disk"], fmt(100.0 * b["utilisation"] if b["utilisation"] is not None else None, "%.0f"),
        fmt(b["write_latency_us_mean"] / 1000.0 if b["write_latency_us_mean"] is not None else None, "%.2f"),
        fmt(b["flush_latency_us_mean"] / 1000.0 if b["flush_latency_us_mean"] is not None else None, "%.2f"),
        b["cache_full_waits"])
    if e.get("fast_ops"):
        note += "; **%d requests in fast mode during the window: not a valid measurement**" % e["fast_ops"]
    return note


def pg_log_label(n):
    """The PG log length the harness pinned (bench.sh --pg-log); runs before
    the option kept Ceph's defaults, which let the log grow with the ops."""
    if n is None:
        return "PG log at Ceph's defaults (not pinned)"
    return "PG log pinned at %d entries per PG" % n if n else "PG log at Ceph's defaults"


def host_reclaim_line(env):
    """Whether the host took idle page cache away during the run
    (qa/host_reclaim.py). Runs before 2026-11-29 did not record it: they
    ran with whatever the machine did."""
    hr = env.get("host_reclaim")
    if hr is None:
        return ("- host page-cache reclaim: not recorded (the machine in use since 2026-11-28 "
                "runs a DAMON pageout of page cache idle about 60 s: docs/benchmarking.md)")
    if not hr.get("active"):
        return "- host page-cache reclaim: none found"
    if hr.get("policy") == "pause":
        return "- host page-cache reclaim: paused for the run (found: %s)" % hr.get("found")
    return ("- **host page-cache reclaim on: %s**: page-cache stores (mimstore, FileStore) read "
            "data idle that long from the disks; BlueStore's cache is exempt" % hr.get("found"))


def testbed_line(env):
    """How the devices were emulated; the HDD kind labels every figure."""
    tb = env.get("testbed", {})
    nvme = "NVMe = loop on tmpfs (%s per OSD, %s), no throttle" % (tb.get("nvme_size"), tb.get("nvme_scheduler"))
    if tb.get("hdd") == "emu":
        hdd = ("HDD = emulated %s drive (qa/diskemu: seek, rotation, command queueing; "
               "write cache %s), %s thin, XFS (raw for BlueStore) on a loop device with direct I/O, %s; "
               "set-up (mkfs, prefill, settle) in the emulator's fast mode, measurements timed" % (
                   tb.get("hdd_preset"), tb.get("hdd_write_cache"), tb.get("hdd_size"), tb.get("hdd_scheduler")))
    else:
        hdd = "HDD = XFS on a loop device (%s sparse, %s), blkio throttle %s IOPS and %s MB/s" % (
            tb.get("hdd_size"), tb.get("hdd_scheduler"), tb.get("hdd_iops"), tb.get("hdd_mb_s"))
    return "- test bed: %s; %s" % (hdd, nvme)


def ratio_subject(profiles):
    """The profile the ratios are of: mimstore, or in a run without it the
    first merging mimstore variant the command named (mimstore-jdata, ...)."""
    if SUBJECT in profiles:
        return SUBJECT
    for p in profiles:
        if p.startswith("mimstore") and not is_nomerge(p):
            return p
    return None


def is_nomerge(profile):
    """mimstore with merging off (mimstore-nomerge and its variants, e.g.
    mimstore-nomerge-dbnvme): the baseline of the memory bar."""
    return profile.startswith("mimstore-nomerge")


def compute_ratios(by_wl, subject=SUBJECT):
    out = {}
    for wl, runs in by_wl.items():
        rp = {r["profile"]: r for r in runs}
        if subject not in rp:
            continue
        s = rp[subject]
        nomerge = sorted(p for p in rp if is_nomerge(p) and p not in OTHERS)
        for other in [REFERENCE] + OTHERS + nomerge:
            if other not in rp or other == subject:
                continue
            o = rp[other]
            out.setdefault(wl, {})[other] = {
                "iops": ratio(s["client"]["iops_mean"], o["client"]["iops_mean"]),
                "p99_latency": ratio(s["client"]["lat_ms"]["p99"], o["client"]["lat_ms"]["p99"]),
                "p99_9_latency": ratio(s["client"]["lat_ms"]["p99_9"], o["client"]["lat_ms"]["p99_9"]),
                "hdd_write_requests_per_cw": ratio(s["hdd"]["per_client_write"]["write_requests"],
                                                   o["hdd"]["per_client_write"]["write_requests"]),
                "modelled_iops": ratio(s["hdd_model"].get("modelled_iops"),
                                       o["hdd_model"].get("modelled_iops")),
                "osd_rss_max": ratio(s["memory"].get("total_rss_mb_max"),
                                     o["memory"].get("total_rss_mb_max")),
            }
    return out


# --- plots ----------------------------------------------------------------------------

def _colors(profiles):
    cmap = {"mimstore": "tab:green", "mimstore-nomerge": "tab:olive",
            "bluestore-hybrid": "tab:blue", "filestore-pacific": "tab:red"}
    extra = iter(["tab:purple", "tab:brown", "tab:pink", "tab:gray", "tab:cyan"])
    return {p: cmap.get(p) or next(extra) for p in profiles}


def _save(fig, results, fn):
    """Lay out, write RESULTS/fn, free the figure; returns fn."""
    fig.tight_layout()
    fig.savefig(os.path.join(results, fn), dpi=110)
    plt.close(fig)
    return fn


def plot_time(by_wl, results, colors):
    files = []
    for wl, runs in by_wl.items():
        fig, ax = plt.subplots(figsize=(10, 4))
        for r in sorted(runs, key=lambda r: prof_key(r["profile"])):
            s = r["series"]["iops"]
            ax.plot(range(1, len(s) + 1), s, label="%s (CV %s, %d s at 0)" % (
                r["profile"], fmt(r["client"]["per_second"].get("cv"), "%.2f"),
                r["client"]["per_second"].get("zero_seconds", 0)),
                color=colors[r["profile"]], lw=1)
        ax.set_xlabel("seconds into the measured window (after %s s warm-up)" % runs[0]["window"]["warmup_s"])
        ax.set_ylabel("client IOPS, reads + writes (per second)")
        ax.set_title("IOPS over time: %s" % wl)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        files.append(_save(fig, results, "iops_time_%s.png" % wl))

        fig, ax = plt.subplots(figsize=(10, 4))
        for r in sorted(runs, key=lambda r: prof_key(r["profile"])):
            s = r["series"]["lat_ms"]
            xs = list(range(1, len(s) + 1))
            ys = [float("nan") if v is None else v for v in s]     # gaps stay gaps
            ax.plot(xs, ys, ".-", ms=3, lw=0.8, label="%s (p99 %s ms)" % (
                r["profile"], fmt(r["client"]["lat_ms"]["p99"], "%.1f")), color=colors[r["profile"]])
        ax.set_yscale("log")
        ax.set_xlabel("seconds into the measured window (no point: no I/O completed)")
        ax.set_ylabel("mean completion latency (ms)")
        ax.set_title("Latency over time: %s" % wl)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, which="both")
        files.append(_save(fig, results, "latency_time_%s.png" % wl))

        fig, axs = plt.subplots(3, 1, figsize=(10, 7), sharex=True)
        for r in sorted(runs, key=lambda r: prof_key(r["profile"])):
            se = r["series"]
            x = range(1, len(se["iops"]) + 1)
            axs[0].plot(x, se["hdd_write_req_s"], color=colors[r["profile"]], lw=0.8, label=r["profile"])
            axs[1].plot(x, [v if v is not None else float("nan") for v in se["nvme_busy_pct"]],
                        color=colors[r["profile"]], lw=0.8)
            axs[2].plot(x, [v if v is not None else float("nan") for v in se["osd_rss_mb"]],
                        color=colors[r["profile"]], lw=0.8)
        axs[0].set_ylabel("HDD write req/s")
        axs[1].set_ylabel("NVMe busy %")
        axs[2].set_ylabel("OSD RSS MiB")
        axs[2].set_xlabel("seconds into the measured window")
        axs[0].legend(fontsize=8)
        axs[0].set_title("Devices and memory over time: %s" % wl)
        for a in axs:
            a.grid(alpha=0.3)
        files.append(_save(fig, results, "devices_time_%s.png" % wl))
    return files


def _bars(ax, groups, profiles, value, colors, labels, title, ylabel=None, **tick_kw):
    """Grouped bars: a group per entry of groups, in it a bar per profile of
    height value(profile, group) (0 where that profile has no run)."""
    width = 0.8 / max(1, len(profiles))
    for j, p in enumerate(profiles):
        ax.bar([i + j * width for i in range(len(groups))], [value(p, g) for g in groups],
               width, label=p, color=colors[p])
    ax.set_xticks([i + width * (len(profiles) - 1) / 2 for i in range(len(groups))])
    ax.set_xticklabels(labels, **tick_kw)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")


def _run_of(runs, p, pred):
    """The run of profile p that pred accepts, or None."""
    m = [r for r in runs if r["profile"] == p and pred(r)]
    return m[0] if m else None


def plot_by_size_threads(runs, results, colors):
    rnd = [r for r in runs if r["workload"]["rw"] == "randwrite"]
    seq = [r for r in runs if r["workload"]["rw"] == "write"]
    files = []
    profiles = sorted({r["profile"] for r in runs}, key=prof_key)
    dists = sorted({r["workload"]["distribution"] for r in rnd})
    if rnd:
        fig, axs = plt.subplots(len(dists), 1, figsize=(11, 3.6 * len(dists)), squeeze=False)
        for ax, d in zip(axs[:, 0], dists):
            groups = sorted({(r["workload"]["bs"], r["workload"]["threads"]) for r in rnd
                             if r["workload"]["distribution"] == d},
                            key=lambda g: wl_key({"rw": "randwrite", "bs": g[0], "threads": g[1],
                                                  "distribution": d}))

            def iops(p, g, d=d):
                r = _run_of(rnd, p, lambda r: r["workload"]["distribution"] == d
                            and (r["workload"]["bs"], r["workload"]["threads"]) == g)
                return r["client"]["iops_mean"] if r else 0
            _bars(ax, groups, profiles, iops, colors, ["%s\n%d thr" % g for g in groups],
                  "Random writes by size and threads (%s)" % d, "IOPS")
        files.append(_save(fig, results, "iops_by_size_threads.png"))
    if seq:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        groups = sorted({r["workload"]["bs"] for r in seq},
                        key=lambda b: wl_key({"rw": "write", "bs": b, "threads": 0, "distribution": "-"}))

        def mbs(p, g):
            r = _run_of(seq, p, lambda r: r["workload"]["bs"] == g)
            return r["client"]["bw_mb_s"] if r else 0
        _bars(ax, groups, profiles, mbs, colors, groups, "Sequential writes", "MB/s")
        files.append(_save(fig, results, "seq_throughput.png"))
    return files


def plot_by_workload(by_wl, results, colors):
    """IOPS per workload, one bar per profile (the mixes and reads side by side)."""
    wls = list(by_wl)
    if len(wls) < 2:
        return []
    profiles = sorted({r["profile"] for rs in by_wl.values() for r in rs}, key=prof_key)
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(wls)), 4))

    def iops(p, wl):
        r = _run_of(by_wl[wl], p, lambda r: True)
        return r["client"]["iops_mean"] if r else 0
    _bars(ax, wls, profiles, iops, colors, wls, "IOPS by workload", "IOPS (reads + writes)",
          rotation=30, ha="right", fontsize=7)
    return [_save(fig, results, "iops_by_workload.png")]


def plot_nvme_memory(by_wl, results, colors):
    wls = list(by_wl)
    profiles = sorted({r["profile"] for rs in by_wl.values() for r in rs}, key=prof_key)
    fig, axs = plt.subplots(1, 2, figsize=(12, 4))

    def figure(get):
        def value(p, wl):
            r = _run_of(by_wl[wl], p, lambda r: True)
            return (get(r) or 0) if r else 0
        return value
    _bars(axs[0], wls, profiles, figure(lambda r: r["nvme"]["busy_pct_max"]), colors, wls,
          "NVMe busy % (io_ticks, busiest NVMe loop)", rotation=30, ha="right", fontsize=7)
    _bars(axs[1], wls, profiles, figure(lambda r: r["memory"].get("total_rss_mb_max")), colors, wls,
          "OSD RSS MiB (max, all OSDs)", rotation=30, ha="right", fontsize=7)
    return [_save(fig, results, "nvme_memory.png")]


def by_workload(runs):
    """{workload name: [runs]}, workloads and profiles in the report's order."""
    by_wl = {}
    for r in sorted(runs, key=lambda r: (wl_key(r["workload"]), prof_key(r["profile"]))):
        by_wl.setdefault(r["workload"]["name"], []).append(r)
    return by_wl


def draw_plots(runs, out):
    """Every plot of these runs into the directory out; returns the file names.
    Needs matplotlib (imported here, so the tables need none)."""
    global plt
    if not runs:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot
    plt = matplotlib.pyplot
    by_wl = by_workload(runs)
    colors = _colors(sorted({r["profile"] for r in runs}, key=prof_key))
    return (plot_time(by_wl, out, colors) + plot_by_size_threads(runs, out, colors)
            + plot_by_workload(by_wl, out, colors) + plot_nvme_memory(by_wl, out, colors))


def main(argv=None):
    argv = list(argv if argv is not None else sys.argv[1:])
    plots_wanted = "--no-plots" not in argv
    argv = [a for a in argv if a != "--no-plots"]
    if len(argv) != 1:
        print(__doc__)
        return 2
    results = argv[0]
    if not os.path.isdir(results):
        print("report.py: no such results directory: %s" % results, file=sys.stderr)
        return 2
    runs, env, failures, restarts = load(results)
    by_wl = by_workload(runs)
    named = env.get("profiles") or []
    subject = ratio_subject(named + sorted({r["profile"] for r in runs} - set(named), key=prof_key))
    ratios = compute_ratios(by_wl, subject)
    plots = draw_plots(runs, results) if plots_wanted else []

    md = ["# mimstore benchmark results", ""]
    if env:
        md += ["- date: %s" % env.get("date"),
               "- command: `%s`" % env.get("command"),
               "- commit: %s%s" % (env.get("commit", "not recorded"),
                                   " (with uncommitted changes)" if env.get("worktree_changes", "0") not in ("", "0") else ""),
               "- machine: %s CPUs, %s GiB RAM, kernel %s; load average at start %s" % (
                   env.get("cpus"), env.get("mem_gib"), env.get("kernel"),
                   " ".join("%.1f" % x for x in env.get("loadavg", []))),
               testbed_line(env),
               "- cluster: %s OSD(s), pool size %s, %s PGs, %s, image %s prefilled; fio rbd, one job, iodepth = threads" % (
                   env.get("osds"), env.get("pool_size"), env.get("pg_num"), pg_log_label(env.get("pg_log")),
                   env.get("image_size")),
               "- window: %s s warm-up excluded (fixed), %s s measured per workload" % (
                   env.get("warmup_s"), env.get("runtime_s")),
               "- HDD model (open-loop replay of the HDD trace, qa/hddmodel.py; not the emulated drive): %s"
               % env.get("hdd_model")]
        if env.get("osd_mem"):
            md.insert(-1, "- OSD memory: %s" % env["osd_mem"])
        if env.get("index_budget"):
            md.insert(-1, "- mimstore merge-index budget: %s" % env["index_budget"])
        md.insert(-1, host_reclaim_line(env))
        if env.get("fs_client"):
            md.insert(-1, "- filesystem workloads: %s" % env["fs_client"])
        if env.get("build_from", {}).get("matches_checkout") is False:
            md.append("- **the Ceph build is not this commit's store: %s**" % env["build_from"]["detail"])
        if env.get("ninja_processes_at_start"):
            md.append("- **a build was running during this run: the 2 CPUs were shared, "
                      "CPU-bound figures are pessimistic**")
        md.append("")
    md += ["cw = client write, cr = client read. IOPS: reads and writes together "
           "(in a mixed workload the read columns give the reads; p50/p99 are then the writes'). "
           "HDD rd/cr: HDD read requests per client read (below 1: served from a cache). "
           "Filesystem workloads (varmail, fileserver): IOPS = flowops/s (FileBench's ops/s), "
           "reads = whole-file reads, writes = appends and whole-file writes. HDD wr/cw: HDD write requests per client write, from "
           "/sys/block/*/stat deltas (stat) and from the tracefs request stream (trace). "
           "model ms/cw: modelled disk service time per client write of the busiest HDD; "
           "model IOPS = 1000 / model ms/cw, what real disks would sustain. "
           "s at 0: seconds of the window without a single completed write, over the "
           "window's length (fio's window runs past --runtime while outstanding writes drain). "
           "CV: coefficient of variation of per-second IOPS.", ""]
    for wl, rs in by_wl.items():
        rd = has_reads(rs)
        md += ["## %s" % wl, "", md_table(header(rd), [row(r, rd) for r in rs]), ""]
        for r in rs:
            ps = r["client"]["per_second"]
            zr, br = ps.get("zero_runs") or {}, ps.get("busy_runs") or {}
            if zr.get("count"):
                fr = "%d freezes of %s-%s s (median %s) between bursts of %s-%s s" % (
                    zr["count"], zr["min"], zr["max"], zr["median"], br.get("min") or 0, br.get("max") or 0)
            else:
                fr = "no second without a completed write"
            md.append("- %s: per-second IOPS %s..%s, 10 s moving average %s..%s; %s; "
                      "HDD flushes %s/cw; NVMe writes %s KiB/cw, %s B per client byte written, "
                      "%s per byte the OSDs were asked to write (%s passes over the journal/DB device); "
                      "OSD CPU %s%% = %s CPU-s per 1000 client ops, machine CPU busy %s%%%s%s%s%s%s" % (
                          r["profile"], fmt(ps.get("min"), "%.0f"), fmt(ps.get("max"), "%.0f"),
                          fmt(ps.get("ma10_min"), "%.0f"), fmt(ps.get("ma10_max"), "%.0f"), fr,
                          fmt(r["hdd"]["per_client_write"].get("flushes"), "%.3f"),
                          fmt((r["nvme"]["write_bytes_per_client_write"] or 0) / 1024.0, "%.1f"),
                          fmt(r["nvme"].get("write_bytes_per_client_byte"), "%.2f"),
                          fmt(r["nvme"].get("write_bytes_per_osd_byte"), "%.2f"),
                          fmt(r["nvme"].get("device_passes"), "%.2f"),
                          fmt(r["cpu"].get("osd_cpu_pct_total"), "%.0f"),
                          fmt(r["cpu"].get("osd_cpu_s_per_kop"), "%.2f"),
                          fmt(r["cpu"].get("system_busy_pct"), "%.0f"),
                          emu_note(r), perf_note(r), stall_note(r), read_run_note(r), mem_note(r)))
        md.append("")
    if ratios:
        md += ["## Ratios, %s to the others (same run)" % subject, "",
               "Above 1 is better for IOPS and modelled IOPS, below 1 is better for latency, "
               "HDD requests and memory.", ""]
        rows = []
        for wl, d in ratios.items():
            for other, v in d.items():
                rows.append([wl, "%s / %s" % (subject, other), fmt(v["iops"], "%.2f"),
                             fmt(v["modelled_iops"], "%.2f"), fmt(v["p99_latency"], "%.3f"),
                             fmt(v["p99_9_latency"], "%.3f"),
                             fmt(v["hdd_write_requests_per_cw"], "%.3f"), fmt(v["osd_rss_max"], "%.2f")])
        md += [md_table(["workload", "ratio", "IOPS", "model IOPS", "p99 lat", "p99.9 lat",
                         "HDD wr/cw", "OSD RSS"], rows), ""]
    sums = [(r["profile"], r["workload"]["name"], series_sum(r)) for r in runs]
    sums = [x for x in sums if x[2] is not None]
    if sums:
        vals = [x[2] for x in sums]
        line = "Per-second series sum over the client's total: %.4f-%.4f" % (min(vals), max(vals))
        off = ["%s/%s %.4f" % x for x in sums if abs(x[2] - 1.0) > SERIES_SUM_TOLERANCE]
        if off:
            line += ("; **outside 1 +- %g: %s** (the per-second figures of these runs do not add "
                     "up to the total)" % (SERIES_SUM_TOLERANCE, ", ".join(off)))
        md += [line + ".", ""]
    if restarts:
        md += ["## Restart after the run", "",
               "Each OSD stopped after the last workload (term: SIGTERM, the OSD's fast shutdown, "
               "which unmounts the store; kill9: a crash), then started again with the same command "
               "line. Seconds until the process was gone, until the OSD was up in the OSD map, and "
               "until every PG was active and reported since (bench.sh --restart).", "",
               md_table(["profile", "OSD", "signal", "stop s", "start to up s", "start to PGs active s"],
                        restart_rows(restarts)), ""]
    if failures:
        md += ["## Profiles that did not run", ""] + ["- %s" % f for f in failures] + [""]
    if plots:
        md += ["## Plots", ""] + ["- [%s](%s)" % (p, p) for p in plots] + [""]

    text = "\n".join(md)
    with open(os.path.join(results, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(results, "results.json"), "w") as f:
        json.dump({"environment": env, "runs": runs, "ratio_subject": subject, "ratios": ratios,
                   "restarts": restarts, "failures": failures, "plots": plots}, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
