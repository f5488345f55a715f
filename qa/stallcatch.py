#!/usr/bin/python3
"""Catch an OSD in a second without a completed client write.

  qa/stallcatch.py --pid PID --asok ASOK --out PREFIX [--gdb N] [--max N]

Polls the OSD's `osd.op_w` counter through its admin socket every 0.3 s.
When it has not moved for --quiet seconds (1.2) after at least 1000 writes,
it saves `dump_ops_in_flight` (PREFIX.K.ops.json: where every client op
waits) and, for the first --gdb catches (default 0), a backtrace of every
thread (PREFIX.K.gdb.txt; gdb stops the OSD for seconds, which makes seconds
at zero of its own: never in a measurement that is reported). At most --max
catches (6), --gap seconds (20) apart. Start it once the workload runs: a
pause of the client (the harness's settle step) looks like a stall.

docs/results/20261125-64G-stalls-ab found with it why mimstore-jdata had
seconds at zero at 64 GiB (docs/store.md, "The seconds at zero").
"""

import argparse
import json
import os
import subprocess
import time

from sampler import admin_command, perf_section


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--asok", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gdb", type=int, default=0)
    ap.add_argument("--max", type=int, default=6)
    ap.add_argument("--quiet", type=float, default=1.2)
    ap.add_argument("--gap", type=float, default=20.0)
    a = ap.parse_args()
    last_v, last_change, catches, last_catch = None, time.time(), 0, 0.0
    while catches < a.max:
        try:
            os.kill(a.pid, 0)
        except OSError:
            break
        perf = perf_section(a.asok, "osd", 2.0)
        v = perf.get("op_w") if perf else None
        now = time.time()
        if v is not None and v != last_v:
            last_v, last_change = v, now
        elif (v is not None and v > 1000 and now - last_change >= a.quiet and
              now - last_catch > a.gap):
            catches += 1
            last_catch = now
            ops = admin_command(a.asok, {"prefix": "dump_ops_in_flight"}, 2.0)
            with open("%s.%d.ops.json" % (a.out, catches), "w") as f:
                json.dump({"t": now, "stalled_for": now - last_change, "ops": ops}, f, indent=1)
            if catches <= a.gdb:
                with open("%s.%d.gdb.txt" % (a.out, catches), "w") as f:
                    subprocess.run(["timeout", "90", "gdb", "-p", str(a.pid), "-batch", "-nx",
                                    "-ex", "set pagination off", "-ex", "thread apply all bt 14"],
                                   stdout=f, stderr=subprocess.STDOUT)
        time.sleep(0.3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
