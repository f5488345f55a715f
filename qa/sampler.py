#!/usr/bin/python3
"""Per-second device and process sampler for the benchmark harness.

Every --interval seconds, appends one JSON line to --out:
  {"t": wall time,
   "stat": {"loop0": [17 fields of /sys/block/loop0/stat], ...},
   "rss_kb": {"osd.0": VmRSS kB, ...},
   "cpu_ticks": {"osd.0": utime+stime clock ticks, ...},
   "sys_cpu": [/proc/stat "cpu" line fields],
   "meminfo_kb": {"Dirty": kB, "Writeback": kB, "Cached": kB, "MemFree": kB}}
and, when --marker is given, writes "MIMBENCH tick wall=<t>" into that
tracefs trace_marker so trace time can be mapped to wall time.
Stops on SIGTERM/SIGINT or after --duration seconds.
"""

import argparse
import json
import os
import signal
import time

stop = False


def _stop(*_):
    global stop
    stop = True


def read_stat(dev):
    try:
        with open("/sys/block/%s/stat" % dev) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return None


def read_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def read_cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
        fields = s[s.rindex(")") + 2:].split()
        return int(fields[11]) + int(fields[12])     # utime, stime
    except (OSError, ValueError, IndexError):
        return None


def read_meminfo(keys=("Dirty", "Writeback", "Cached", "MemFree")):
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in keys:
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def read_sys_cpu():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                return [int(x) for x in line.split()[1:]]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--duration", type=float, default=0, help="0 = until signalled")
    ap.add_argument("--dev", action="append", default=[], help="block device name (loop0)")
    ap.add_argument("--proc", action="append", default=[], help="NAME=PID to sample")
    ap.add_argument("--marker", help="tracefs trace_marker file")
    a = ap.parse_args()
    procs = {}
    for p in a.proc:
        name, _, pid = p.partition("=")
        procs[name] = int(pid)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    t0 = time.time()
    nxt = t0
    with open(a.out, "a", buffering=1) as out:
        while not stop:
            now = time.time()
            rec = {
                "t": now,
                "stat": {d: read_stat(d) for d in a.dev},
                "rss_kb": {n: read_rss_kb(p) for n, p in procs.items()},
                "cpu_ticks": {n: read_cpu_ticks(p) for n, p in procs.items()},
                "sys_cpu": read_sys_cpu(),
                "meminfo_kb": read_meminfo(),
            }
            out.write(json.dumps(rec) + "\n")
            if a.marker:
                try:
                    with open(a.marker, "w") as m:
                        m.write("MIMBENCH tick wall=%.6f\n" % now)
                except OSError:
                    pass
            if a.duration and now - t0 >= a.duration:
                break
            nxt += a.interval
            delay = nxt - time.time()
            if delay > 0:
                time.sleep(delay)
            else:
                nxt = time.time()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
