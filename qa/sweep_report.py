#!/usr/bin/python3
"""The working-set sweep's report: qa/sweep.sh's bench.sh runs side by side.

Usage: sweep_report.py SWEEP_DIR
Reads SWEEP_DIR/<IMG>-nvme<NVME>/rep<K>-<DIST>/results.json (qa/report.py;
rep<K> in sweeps before each distribution had its own run) and
SWEEP_DIR/sweep-plan.json. Writes SWEEP_DIR/sweep.md, sweep.json and
sweep_iops.png (IOPS against image size, one line per profile and panel
per workload; the bars span the repeats), and prints sweep.md.

A point is (image size, journal size, workload: bench.sh's name for it,
e.g. randwrite-4k-t8-uniform or randrw50-4k-t8-zipf1.2). Per profile it has one
IOPS figure per repeat; the table gives the median and the range. Ratios
(mimstore against each other profile) are taken within each repeat, from
one bench.sh run, and then given as median and range over the repeats. A
point whose image has no more 4 MiB objects than the merge cache has HTMLL
slots is labelled "fits one merge generation": every object of it has a
slot, so each flush can write back the whole image.

The subject (the profile the ratios are of) is the first profile of the
sweep's plan (`--profiles`), or "mimstore" without a plan. Its merge
cycles in the measured window are counted from the perf counters (flushes
completed, `mimstore.flush_lat` count): a point where a repeat has fewer
than MIN_FLUSH_CYCLES is labelled "fewer than 3 flush cycles in the
window", as its figure may be the part of a cycle where the journal
absorbs the writes, not the steady state.
"""

import glob
import json
import os
import re
import statistics
import sys

SUBJECT = "mimstore"
MIN_FLUSH_CYCLES = 3
FLUSH_COUNT = "mimstore.flush_lat.avgcount"
MERGED = "mimstore.merged"
ORDER = ["mimstore", "mimstore-nomerge", "bluestore-hybrid", "filestore-pacific"]
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_bytes(s):
    m = re.fullmatch(r"(\d+)([KMGT])", s)
    if not m:
        raise ValueError("bad size %r" % s)
    return int(m.group(1)) * UNITS[m.group(2)]


def prof_key(p, subject=SUBJECT):
    if p == subject:
        return (-1, p)
    return (ORDER.index(p) if p in ORDER else len(ORDER), p)


def ordered(profiles, subject):
    """Profiles in table order: the subject first, then ORDER, then by name."""
    return sorted(set(profiles), key=lambda p: prof_key(p, subject))


def subject_of(plan):
    """The profile the ratios are of: the plan's first profile."""
    profiles = [p for p in (plan.get("profiles") or "").split(",") if p]
    return profiles[0] if profiles else SUBJECT


def flush_cycles(run):
    """Merge flushes completed in the measured window (summed over OSDs);
    None without perf counters or for a store that does not merge."""
    perf = run.get("perf") or {}
    if not perf.get("available"):
        return None
    hl = perf.get("highlights", {}).values()
    counts = [h[FLUSH_COUNT] for h in hl if FLUSH_COUNT in h]
    if counts:
        return sum(counts)
    # (the deltas leave out counters that did not move: a store that merged
    # writes in the window and has no completed flush completed none)
    return 0 if any(h.get(MERGED, 0) > 0 for h in hl) else None


def load(sweep):
    """[(image, nvme, rep, results_json)] sorted by image size, journal, repeat."""
    out = []
    for path in glob.glob(os.path.join(sweep, "*-nvme*", "rep*", "results.json")):
        rep_dir = os.path.dirname(path)
        m = re.fullmatch(r"(\d+[KMGT])-nvme(\d+[KMGT])", os.path.basename(os.path.dirname(rep_dir)))
        # rep<K>-<DIST> (one run per distribution), or rep<K> (sweeps before that)
        r = re.fullmatch(r"rep(\d+)(-[a-z0-9.]+)?", os.path.basename(rep_dir))
        if not m or not r:
            continue
        with open(path) as f:
            out.append((m.group(1), m.group(2), int(r.group(1)), json.load(f)))
    out.sort(key=lambda x: (size_bytes(x[0]), -size_bytes(x[1]), x[2]))
    return out


def points(loaded):
    """{(image, nvme, workload): {"reps": {rep: {profile: iops}},
    "flushes": {rep: {profile: count}}, "series_sum": [..],
    "windows": {"60+180", ..}}}"""
    pts = {}
    for img, nvme, rep, res in loaded:
        for run in res.get("runs", []):
            key = (img, nvme, run["workload"].get("name") or run["workload"]["distribution"])
            pt = pts.setdefault(key, {"reps": {}, "flushes": {}, "series_sum": [], "windows": set(),
                                      "read_runs": []})
            w = run["workload"]
            if w.get("runtime") is not None:
                pt["windows"].add("%s+%s" % (w.get("warmup", "?"), w["runtime"]))
            pt["reps"].setdefault(rep, {})[run["profile"]] = run["client"]["iops_mean"]
            fc = flush_cycles(run)
            if fc is not None:
                pt["flushes"].setdefault(rep, {})[run["profile"]] = fc
            rr = run["client"].get("read_run")
            if rr:      # analyze.longest_read_run: fio's end-of-pass verify
                pt["read_runs"].append("%s rep %d: %d" % (run["profile"], rep, rr["reads"]))
            s = run["client"].get("series_sum_over_ops", run["client"].get("series_sum_over_writes"))
            if s is not None:
                pt["series_sum"].append(s)
    return pts


def summarise(pts, slots, subject=SUBJECT):
    """Median and range per profile, same-run ratios, the merge-generation
    label, the subject's flush cycles in the window."""
    rows = []
    for (img, nvme, wl), pt in sorted(pts.items(), key=lambda kv: (
            size_bytes(kv[0][0]), -size_bytes(kv[0][1]), kv[0][2])):
        profiles = ordered((p for r in pt["reps"].values() for p in r), subject)
        per = {}
        for p in profiles:
            xs = [r[p] for r in pt["reps"].values() if p in r]
            per[p] = {"n": len(xs), "median": statistics.median(xs), "min": min(xs), "max": max(xs)}
        ratios = {}
        for p in profiles:
            if p == subject:
                continue
            rs = [r[subject] / r[p] for r in pt["reps"].values()
                  if subject in r and p in r and r[p] > 0]
            if rs:
                ratios[p] = {"n": len(rs), "median": statistics.median(rs),
                             "min": min(rs), "max": max(rs)}
        objects = size_bytes(img) // (4 << 20)
        # a subject run without the count (no perf dump) is not known short
        fl = [f[subject] for f in pt["flushes"].values() if subject in f]
        rows.append({"image": img, "nvme": nvme, "workload": wl,
                     "image_objects": objects,
                     "fits_one_generation": slots is not None and objects <= slots,
                     "iops": per, "ratios": ratios, "subject": subject,
                     "subject_flush_cycles": fl,
                     # warm-up + measured seconds: the points of one sweep
                     # directory may come from commands with different windows
                     "window": ", ".join(sorted(pt["windows"])) or None,
                     "short_window": bool(fl) and min(fl) < MIN_FLUSH_CYCLES,
                     "read_runs": pt.get("read_runs", []),
                     "series_sum_min": min(pt["series_sum"]) if pt["series_sum"] else None,
                     "series_sum_max": max(pt["series_sum"]) if pt["series_sum"] else None})
    return rows


def fmt_range(d, f="%.0f"):
    if d["n"] == 1:
        return f % d["median"] + " (1 run)"
    return (f + " (" + f + "-" + f + ")") % (d["median"], d["min"], d["max"])


def markdown(rows, plan):
    subject = rows[0]["subject"] if rows else subject_of(plan)
    profiles = ordered((p for r in rows for p in r["iops"]), subject)
    others = [p for p in profiles if p != subject]
    lines = ["# Working-set sweep: qa/bench.sh at several image and journal sizes", ""]
    if plan:
        cmds = plan.get("commands") or [plan.get("command", "qa/sweep.sh")]
        if len(cmds) == 1:
            lines.append("- command: `%s`" % cmds[0])
        else:   # runs of several commands into one directory, the last last
            lines += ["- commands, in the order last run:"] + ["  - `%s`" % c for c in cmds]
        lines += ["- warm-up + measured seconds: each row's window column; %s repeat(s), each a "
                  "qa/bench.sh run with every profile (its own results.md has the details: "
                  "test bed, cluster, per-second figures)%s"
                  % (plan.get("repeat"),
                     "; bench.sh options: `%s`" % plan["bench_options"] if plan.get("bench_options") else ""),
                  "- merge cache: %s HTMLL slots, %s MiB; a point whose image has no more 4 MiB "
                  "objects than slots is marked *fits one merge generation*"
                  % (plan.get("htmll_slots"), (plan.get("cache_max_bytes") or 0) >> 20), ""]
    lines.append("IOPS: median (range over the repeats). Ratios: %s / other, "
                 "taken within each run, median (range). Flush cycles: merge flushes "
                 "%s completed in the measured window, per repeat; fewer than %d is "
                 "marked *fewer than %d flush cycles in the window* (not a steady-state "
                 "figure)." % (subject, subject, MIN_FLUSH_CYCLES, MIN_FLUSH_CYCLES))
    lines.append("")
    head = (["image", "journal", "workload", "window (s)"] + profiles + [subject + " / " + p for p in others]
            + ["flush cycles"])
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in rows:
        img = r["image"] + (" *fits one merge generation*" if r["fits_one_generation"] else "")
        wl = r["workload"] + (" *fewer than %d flush cycles in the window*" % MIN_FLUSH_CYCLES
                              if r["short_window"] else "")
        if r.get("read_runs"):
            wl += (" *reads in a row (fio's verify at the end of a pass; the others may not reach "
                   "one): %s*" % "; ".join(r["read_runs"]))
        cells = [img, r["nvme"], wl, r.get("window") or "-"]
        cells += [fmt_range(r["iops"][p]) if p in r["iops"] else "-" for p in profiles]
        cells += [fmt_range(r["ratios"][p], "%.2f") if p in r["ratios"] else "-" for p in others]
        cells.append(", ".join("%d" % f for f in r["subject_flush_cycles"]) or "-")
        lines.append("| " + " | ".join(cells) + " |")
    sums = [x for r in rows for x in (r["series_sum_min"], r["series_sum_max"]) if x is not None]
    if sums:
        lines += ["", "Per-second series sum over fio's total: %.3f-%.3f." % (min(sums), max(sums))]
    return "\n".join(lines) + "\n"


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    wls = sorted({r["workload"] for r in rows})
    subject = rows[0]["subject"]
    profiles = ordered((p for r in rows for p in r["iops"]), subject)
    fig, axes = plt.subplots(1, len(wls), figsize=(6 * len(wls), 4.5), squeeze=False)
    for ax, wl in zip(axes[0], wls):
        nvmes = sorted({r["nvme"] for r in rows if r["workload"] == wl},
                       key=size_bytes, reverse=True)
        for p in profiles:
            for j, nvme in enumerate(nvmes):
                pts = [r for r in rows if r["workload"] == wl and r["nvme"] == nvme
                       and p in r["iops"]]
                if not pts:
                    continue
                x = [size_bytes(r["image"]) / (1 << 30) for r in pts]
                y = [r["iops"][p]["median"] for r in pts]
                err = [[r["iops"][p]["median"] - r["iops"][p]["min"] for r in pts],
                       [r["iops"][p]["max"] - r["iops"][p]["median"] for r in pts]]
                ax.errorbar(x, y, yerr=err, marker="o" if j == 0 else "s",
                            linestyle="-" if j == 0 else ":", capsize=3,
                            color="C%d" % profiles.index(p),
                            label="%s, %s journal" % (p, nvme))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("RBD image (GiB)")
        ax.set_ylabel("IOPS (median; bars: range of repeats)")
        ax.set_title(wl)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    argv = argv if argv is not None else sys.argv[1:]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sweep = argv[0]
    plan = {}
    pp = os.path.join(sweep, "sweep-plan.json")
    if os.path.exists(pp):
        plan = json.load(open(pp))
    rows = summarise(points(load(sweep)), plan.get("htmll_slots"), subject_of(plan))
    md = markdown(rows, plan)
    with open(os.path.join(sweep, "sweep.md"), "w") as f:
        f.write(md)
    with open(os.path.join(sweep, "sweep.json"), "w") as f:
        json.dump({"plan": plan, "points": rows}, f, indent=1)
    if rows:
        plot(rows, os.path.join(sweep, "sweep_iops.png"))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
