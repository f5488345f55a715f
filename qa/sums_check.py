#!/usr/bin/python3
"""sums_check.py [--tolerance T] DIR...: the per-second series check over
committed results.

Every run's per-second series (client IOPS, or flowops for the filesystem
workloads) must add up to fio's (or the driver's) own count: a sum off by
more than T (0.005) means seconds were lost or counted twice in the
binning, and every per-second figure of that run (CV, seconds at zero,
the plots) is suspect. report.py flags it per run; this walks whole result
trees (sweeps hold one results.json per point and repeat) so a set of runs
can be checked at once, as issue 16's "every committed run" asks.

Prints one line per results.json (runs, lowest and highest sum) and one per
run outside the tolerance or without a sum; exits 1 if there is any."""

import argparse
import json
import os
import sys

from report import SERIES_SUM_TOLERANCE, series_sum


def results_files(top):
    if os.path.isfile(top):
        return [top]
    found = []
    for d, _, files in os.walk(top):
        if "results.json" in files:
            found.append(os.path.join(d, "results.json"))
    return sorted(found)


def check_file(path, tol):
    """(line, problems) for one results.json."""
    with open(path) as f:
        runs = json.load(f).get("runs", [])
    sums, problems = [], []
    for r in runs:
        name = "%s/%s" % (r.get("profile"), (r.get("workload") or {}).get("name"))
        s = series_sum(r)
        if s is None:
            problems.append("%s: %s has no per-second sum" % (path, name))
            continue
        sums.append(s)
        if abs(s - 1.0) > tol:
            problems.append("%s: %s sums to %.4f" % (path, name, s))
    if not runs:
        problems.append("%s: no runs" % path)
    line = "%s: %d runs, sums %s" % (
        path, len(runs), "%.4f-%.4f" % (min(sums), max(sums)) if sums else "none")
    return line, problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tolerance", type=float, default=SERIES_SUM_TOLERANCE)
    ap.add_argument("dirs", nargs="+", help="result directories or results.json files")
    a = ap.parse_args(argv)
    problems, n = [], 0
    for top in a.dirs:
        files = results_files(top)
        if not files:
            problems.append("%s: no results.json under it" % top)
        for path in files:
            line, p = check_file(path, a.tolerance)
            print(line)
            problems += p
            n += 1
    for p in problems:
        print("OUT: " + p)
    print("%d results files, %d problems (tolerance %.3f)" % (n, len(problems), a.tolerance))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
