#!/usr/bin/python3
"""Draw every plot of committed benchmark results again, from their JSON.

Usage: replot.py [--out DIR] TREE...
Walks each TREE (e.g. docs/results) for bench results (results.json,
qa/report.py) and sweeps (sweep.json, qa/sweep_report.py) and draws their
plots: next to the JSON by default, or under DIR at the same relative path
with --out. Plots are not committed (.gitignore): the JSON holds every
figure and per-second series they are drawn from, so this one command
gives them back. Prints one line per directory drawn; exits 1 if any
directory's JSON could not be drawn (named on stderr).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import report  # noqa: E402
import sweep_report  # noqa: E402


def targets(tree):
    """[(directory, kind)] under tree, kind "bench" or "sweep", sorted."""
    out = []
    for d, _, files in os.walk(tree):
        if "results.json" in files:
            out.append((d, "bench"))
        if "sweep.json" in files:
            out.append((d, "sweep"))
    return sorted(out)


def draw(d, kind, out):
    """Draw the plots of one directory into out; returns the file names."""
    os.makedirs(out, exist_ok=True)
    if kind == "sweep":
        with open(os.path.join(d, "sweep.json")) as f:
            rows = json.load(f).get("points") or []
        if not rows:
            return []
        for r in rows:  # sweeps before 2026-11-25 name no subject: mimstore then
            r.setdefault("subject", sweep_report.SUBJECT)
        sweep_report.plot(rows, os.path.join(out, "sweep_iops.png"))
        return ["sweep_iops.png"]
    runs = report.load(d)[0]
    return report.draw_plots(runs, out)


def main(argv=None):
    argv = list(argv if argv is not None else sys.argv[1:])
    out_root = None
    if argv[:1] == ["--out"] and len(argv) >= 2:
        out_root, argv = argv[1], argv[2:]
    if not argv or any(a.startswith("-") for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    failed = []
    for tree in argv:
        if not os.path.isdir(tree):
            print("replot.py: no such directory: %s" % tree, file=sys.stderr)
            return 2
        for d, kind in targets(tree):
            # the tree keeps its own name under DIR, so two trees do not collide
            base = os.path.dirname(os.path.abspath(tree))
            out = os.path.join(out_root, os.path.relpath(os.path.abspath(d), base)) if out_root else d
            try:
                files = draw(d, kind, out)
            except (KeyError, TypeError, ValueError, IndexError) as e:
                # an old result that lacks a figure a plot needs
                print("replot.py: %s: %s: %r" % (d, kind, e), file=sys.stderr)
                failed.append(d)
                continue
            print("%s: %d plot(s)" % (out, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
