#!/usr/bin/python3
"""Per-second device and process sampler for the benchmark harness.

Every --interval seconds, appends one JSON line to --out:
  {"t": wall time,
   "stat": {"loop0": [17 fields of /sys/block/loop0/stat], ...},
   "rss_kb": {"osd.0": VmRSS kB, ...},
   "cpu_ticks": {"osd.0": utime+stime clock ticks, ...},
   "sys_cpu": [/proc/stat "cpu" line fields],
   "meminfo_kb": {"Dirty": kB, "Writeback": kB, "Cached": kB, "MemFree": kB},
   "perf": {"osd.0": {counter: value, or [avgcount, sum] for averages}, ...}}
("perf" with --asok only: the --logger section of each daemon's perf dump,
read straight from its admin socket, so that a second at zero IOPS can be
matched with what the store was doing; a daemon that does not answer within
--asok-timeout is left out of that second.)
and, when --marker is given, writes "MIMBENCH tick wall=<t>" into that
tracefs trace_marker so trace time can be mapped to wall time.
Stops on SIGTERM/SIGINT or after --duration seconds.
"""

import argparse
import json
import os
import signal
import socket
import struct
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


def admin_command(path, cmd, timeout):
    """A command to a Ceph daemon's admin socket (JSON and a NUL; the answer
    is a 4-byte big-endian length and JSON). None when it does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(json.dumps(cmd).encode() + b"\0")
            head = b""
            while len(head) < 4:
                chunk = s.recv(4 - len(head))
                if not chunk:
                    return None
                head += chunk
            (n,) = struct.unpack(">I", head)
            body = b""
            while len(body) < n:
                chunk = s.recv(min(65536, n - len(body)))
                if not chunk:
                    return None
                body += chunk
        return json.loads(body)
    except (OSError, ValueError):
        return None


def perf_section(path, logger, timeout):
    """The `logger` section of a Ceph daemon's `perf dump`, flattened:
    averages become [avgcount, sum]. None when the daemon does not answer
    or has no such section."""
    d = admin_command(path, {"prefix": "perf dump", "logger": logger}, timeout)
    sec = d.get(logger) if isinstance(d, dict) else None
    if not isinstance(sec, dict):
        return None
    out = {}
    for k, v in sec.items():
        if isinstance(v, dict):
            if "avgcount" in v and "sum" in v:
                out[k] = [v["avgcount"], v["sum"]]
        elif isinstance(v, (int, float)):
            out[k] = v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--duration", type=float, default=0, help="0 = until signalled")
    ap.add_argument("--dev", action="append", default=[], help="block device name (loop0)")
    ap.add_argument("--proc", action="append", default=[], help="NAME=PID to sample")
    ap.add_argument("--marker", help="tracefs trace_marker file")
    ap.add_argument("--asok", action="append", default=[],
                    help="NAME=PATH of a daemon admin socket whose perf counters to sample")
    ap.add_argument("--logger", default="mimstore", help="perf dump section (mimstore)")
    ap.add_argument("--asok-timeout", type=float, default=0.3)
    a = ap.parse_args()
    asoks = dict(x.partition("=")[::2] for x in a.asok)
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
            if asoks:
                perf = {}
                for n, path in asoks.items():
                    sec = perf_section(path, a.logger, a.asok_timeout)
                    if sec:
                        perf[n] = sec
                rec["perf"] = perf
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
