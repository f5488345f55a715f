#!/usr/bin/env python3
"""The calibration table of the emulated drives against their datasheets.

    qa/diskemu/calibrate.py [--replay BUILD/diskemu-replay] [--requests N]

Runs the drive model (diskemu-replay, virtual clock, closed loop: N
requests of 4 KiB at random 4 KiB-aligned offsets over the whole stroke of
a 64 GiB disk, the same seeded offsets for every row) for each datasheet
figure, with the default scheduler (fw) and the bracket (ideal sptf,
clook), and prints a markdown table: measured, datasheet, deviation.
Deterministic: the same build prints the same table. The FUSE daemon adds
its own turnaround on top (validate.sh measures that).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

# Datasheet figures, random 4 KiB at QD16, write cache disabled (IOPS).
DATASHEETS = [
    ("exos-x24", "Seagate Exos X24 datasheet DS2080", 168, 550),
    ("exos-m30", "Seagate Exos M 30TB datasheet DS2045", 170, 350),
]


def trace(path, op, n, seed=17, span=64 << 30):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            f.write("0,%s,%d,4096\n" % (op, rng.randrange(span // 4096) * 4096))


def iops(replay, model, path, depth, sched, n):
    out = subprocess.run(
        [replay, "--size", "64G", "--model", model, "--mode", "closed",
         "--depth", str(depth), "--sched", sched, path],
        check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    return j["requests"] / (j["makespan_ms"] / 1000.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replay", default="/var/tmp/diskemu-build/diskemu-replay")
    ap.add_argument("--requests", type=int, default=20000)
    a = ap.parse_args()
    if not os.access(a.replay, os.X_OK):
        sys.exit("calibrate: no %s (build qa/diskemu first)" % a.replay)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        paths = {op: os.path.join(d, op + ".csv") for op in "RW"}
        for op, p in paths.items():
            trace(p, op, a.requests)
        for model, source, rd, wr in DATASHEETS:
            for op, want in (("R", rd), ("W", wr)):
                got = {s: iops(a.replay, model, paths[op], 16, s, a.requests)
                       for s in ("fw", "sptf", "clook")}
                qd1 = iops(a.replay, model, paths[op], 1, "fw", a.requests)
                qd32 = iops(a.replay, model, paths[op], 32, "fw", a.requests)
                rows.append((model, "read" if op == "R" else "write", got,
                             want, qd1, qd32, source))
    print("| drive | 4 KiB random, QD16, WCD | fw (default) | datasheet | "
          "deviation | bracket: sptf / clook | fw at QD1 / QD32 | source |")
    print("|---|---|---:|---:|---:|---|---|---|")
    for model, op, got, want, qd1, qd32, source in rows:
        print("| %s | %s | %.0f | %d | %+.0f%% | %.0f / %.0f | %.0f / %.0f | %s |" % (
            model, op, got["fw"], want, 100.0 * (got["fw"] / want - 1),
            got["sptf"], got["clook"], qd1, qd32, source))


if __name__ == "__main__":
    main()
