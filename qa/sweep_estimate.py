#!/usr/bin/python3
"""sweep_estimate.py: how long a finished repeat of a sweep point took.

  sweep_estimate.py POINT_DIR DISTRIBUTION RUNTIME_S WARMUP_S

prints the longest wall time, in whole seconds, of the finished repeats
under POINT_DIR (rep*-DISTRIBUTION with results.json and no failed
profile) that ran with this window and warm-up, or nothing when there is
none.

Why: sweep.sh --stop-by starts a run only if it should end in time, and
its formula counts set-up and prefill generously (a 16 GiB random-write
repeat was estimated at 28 min and took 18, 2026-11-29), so the last
repeat of a point that would fit was left for the next session. A repeat
of the same point, on the same machine (sweep.sh refuses a directory
that mixes machines), is a better estimate than the formula.

A run's start is env.json's date (bench.sh writes it before the first
profile), its end the last measured window's end in results.json (the
profile's teardown after it is within sweep.sh's margin). Not
results.json's modification time: a repeat copied back from docs/results
(qa/plans/issue16.sh's seed) has the checkout's time, days after its
start, and the estimate asked for days."""

import datetime
import glob
import json
import os
import sys


def _started(env):
    try:
        return datetime.datetime.strptime(env["date"], "%Y-%m-%d %H:%M:%S %z").timestamp()
    except (KeyError, ValueError, TypeError):
        return None


def _ended(results):
    """The last measured window's end (epoch s) among the runs, or None."""
    ends = [r.get("window", {}).get("end") for r in results.get("runs", [])]
    ends = [e for e in ends if isinstance(e, (int, float))]
    return max(ends) if ends else None


def _failed(rep):
    try:
        with open(os.path.join(rep, "failures.txt")) as f:
            return bool(f.read().strip())
    except OSError:
        return False


def measured(point_dir, dist, runtime_s, warmup_s):
    """Longest wall time (s) of a finished repeat with this window, or None."""
    best = None
    for rep in sorted(glob.glob(os.path.join(point_dir, "rep*-" + dist.replace(":", "")))):
        res = os.path.join(rep, "results.json")
        try:
            with open(os.path.join(rep, "env.json")) as f:
                env = json.load(f)
            with open(res) as f:
                end = _ended(json.load(f))
        except (OSError, ValueError):
            continue
        if env.get("runtime_s") != runtime_s or env.get("warmup_s") != warmup_s:
            continue
        if _failed(rep):        # a profile that failed early ends the run early
            continue
        start = _started(env)
        if start is None or end is None or end <= start:
            continue
        best = max(best or 0, end - start)
    return None if best is None else int(best + 0.5)


def main(argv):
    if len(argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        runtime_s, warmup_s = int(argv[3]), int(argv[4])
    except ValueError:
        print("sweep_estimate.py: RUNTIME_S and WARMUP_S are whole seconds", file=sys.stderr)
        return 2
    got = measured(argv[1], argv[2], runtime_s, warmup_s)
    if got is not None:
        print(got)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
