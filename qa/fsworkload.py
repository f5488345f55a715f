#!/usr/bin/python3
"""FileBench-style filesystem workloads (Varmail, FileServer) as a small driver.

FileBench is not packaged for Debian; this driver runs the same flows of
operations ("flowops") of its two personalities that the MIM paper measured,
on a directory (qa/bench.sh: XFS on a loop device on an RBD image exposed
by rbd-fuse). docs/benchmarking.md maps each personality to FileBench's.

  fsworkload.py prepare --dir D --personality P [options]
      create the fileset: FILES files of FILE_SIZE bytes (non-zero data) in
      DIRS directories, of which PREALLOC % exist at the start
  fsworkload.py run --dir D --personality P --warmup S --runtime S --out J
      run THREADS threads of the personality's flow for warmup + runtime
      seconds; write J (JSON): flowops per second over the measured window
      (FileBench's "ops/s": every flowop counts), per-flowop counts and
      latencies, read and write flowops and bytes, the per-second series

Flows (FileBench 1.5 varmail.f / fileserver.f, one iteration per loop):
  varmail:    delete; create, append, fsync, close; open, read whole, append,
              fsync, close; open, read whole, close
  fileserver: create, write whole, close; open, append, close; open, read
              whole, close; delete; stat
A flowop that names a file picks one at random among the files that exist
(create: among those that do not) and are not in use by another thread, as
FileBench's filesets do. Appends are of a random size in 1..APPEND_SIZE;
whole-file reads and writes go in IO_SIZE pieces.
"""

import argparse
import json
import os
import random
import sys
import threading
import time

PERSONALITIES = {
    # FileBench defaults, with the MIM paper's fileset (12,000 files of 128 KiB;
    # Varmail in one directory, FileServer in 20)
    "varmail": {"files": 12000, "dirs": 1, "file_size": 128 << 10, "append_size": 16 << 10,
                "io_size": 1 << 20, "threads": 16, "prealloc": 80},
    "fileserver": {"files": 12000, "dirs": 20, "file_size": 128 << 10, "append_size": 16 << 10,
                   "io_size": 1 << 20, "threads": 50, "prealloc": 80},
}
READ_OPS = ("read",)
WRITE_OPS = ("append", "write")


def path_of(root, dirs, i):
    return os.path.join(root, "d%02d" % (i % dirs), "f%06d" % i)


class FileSet:
    """Which files exist and which are in use; one lock for both.

    Random choice in O(1): each state is a list plus a position map
    (swap-remove), so 12,000 files cost nothing per pick."""

    def __init__(self, files, existing, seed):
        self.lock = threading.Lock()
        self.rng = random.Random(seed)
        self.free = {True: [], False: []}       # exists -> [idx] not in use
        self.pos = {}
        for i in range(files):
            self._add(i, i in existing)

    def _add(self, i, exists):
        lst = self.free[exists]
        self.pos[i] = len(lst)
        lst.append(i)

    def _remove(self, i, exists):
        lst = self.free[exists]
        k = self.pos.pop(i)
        last = lst.pop()
        if last != i:
            lst[k] = last
            self.pos[last] = k

    def take(self, exists):
        """A file (not in use) that exists / does not; None if there is none."""
        with self.lock:
            lst = self.free[exists]
            if not lst:
                return None
            i = lst[self.rng.randrange(len(lst))]
            self._remove(i, exists)
            return i

    def give(self, i, exists):
        with self.lock:
            self._add(i, exists)


class Worker:
    """One FileBench thread. Not a Thread subclass: its flowop methods
    (_delete, _stat...) would override threading.Thread's internals."""

    def __init__(self, n, cfg, fs, root, stop, seed, loops=0):
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.loops = loops     # 0: until stopped
        self.cfg, self.fs, self.root, self.stop = cfg, fs, root, stop
        self.rng = random.Random(seed * 1000 + n)
        self.buf = bytes(self.rng.getrandbits(8) for _ in range(256)) * (cfg["io_size"] // 256)
        self.log = []          # (t_end, flowop, latency_s, bytes)
        self.error = None

    def timed(self, op, fn, *a):
        t0 = time.monotonic()
        n = fn(*a)
        t1 = time.monotonic()
        self.log.append((t1, op, t1 - t0, n or 0))
        return n

    # --- flowops ---------------------------------------------------------------------
    def _path(self, i):
        return path_of(self.root, self.cfg["dirs"], i)

    def _open(self, i, flags):
        return os.open(self._path(i), flags, 0o644)

    def _append(self, fd):
        n = self.rng.randint(1, self.cfg["append_size"])
        return os.write(fd, self.buf[:n])

    def _write_whole(self, fd):
        left, done = self.cfg["file_size"], 0
        while left > 0:
            n = os.write(fd, self.buf[:min(left, self.cfg["io_size"])])
            left -= n
            done += n
        return done

    def _read_whole(self, fd):
        done = 0
        while True:
            b = os.read(fd, self.cfg["io_size"])
            if not b:
                return done
            done += len(b)

    def _delete(self):
        i = self.fs.take(True)
        if i is None:
            return
        self.timed("delete", os.unlink, self._path(i))
        self.fs.give(i, False)

    def _stat(self):
        i = self.fs.take(True)
        if i is None:
            return
        self.timed("stat", lambda p: os.stat(p) and 0, self._path(i))
        self.fs.give(i, True)

    def _create_file(self, fill):
        """create [+ append, fsync | + write whole], close"""
        i = self.fs.take(False)
        if i is None:
            return
        fd = self.timed("create", self._open, i, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_APPEND)
        try:
            fill(fd)
        finally:
            self.timed("close", os.close, fd)
            self.fs.give(i, True)

    def _open_file(self, body):
        i = self.fs.take(True)
        if i is None:
            return
        fd = self.timed("open", self._open, i, os.O_RDWR | os.O_APPEND)
        try:
            body(fd)
        finally:
            self.timed("close", os.close, fd)
            self.fs.give(i, True)

    def varmail(self):
        self._delete()
        self._create_file(lambda fd: (self.timed("append", self._append, fd),
                                      self.timed("fsync", os.fsync, fd)))
        self._open_file(lambda fd: (self.timed("read", self._read_whole, fd),
                                    self.timed("append", self._append, fd),
                                    self.timed("fsync", os.fsync, fd)))
        self._open_file(lambda fd: self.timed("read", self._read_whole, fd))

    def fileserver(self):
        self._create_file(lambda fd: self.timed("write", self._write_whole, fd))
        self._open_file(lambda fd: self.timed("append", self._append, fd))
        self._open_file(lambda fd: self.timed("read", self._read_whole, fd))
        self._delete()
        self._stat()

    def loop(self):
        flow = getattr(self, self.cfg["personality"])
        try:
            k = 0
            while not self.stop.is_set() and (not self.loops or k < self.loops):
                flow()
                k += 1
        except OSError as e:
            self.error = "%s: %s" % (type(e).__name__, e)
            self.stop.set()


def config(a):
    cfg = dict(PERSONALITIES[a.personality])
    for k in cfg:
        v = getattr(a, k, None)
        if v is not None:
            cfg[k] = v
    cfg["personality"] = a.personality
    if cfg["files"] < 1 or cfg["dirs"] < 1 or cfg["threads"] < 1:
        sys.exit("fsworkload: --files, --dirs and --threads must be at least 1")
    if not 0 <= cfg["prealloc"] <= 100:
        sys.exit("fsworkload: --prealloc is a percentage (0..100)")
    if cfg["io_size"] < 256 or cfg["io_size"] % 256:
        sys.exit("fsworkload: --io-size must be a multiple of 256 bytes")
    cfg["append_size"] = min(cfg["append_size"], cfg["io_size"])
    return cfg


def prepare(a, cfg):
    if os.path.exists(a.dir) and os.listdir(a.dir):
        sys.exit("fsworkload: %s is not empty; prepare makes a new fileset in an empty directory" % a.dir)
    for d in range(cfg["dirs"]):
        os.makedirs(os.path.join(a.dir, "d%02d" % d), exist_ok=True)
    rng = random.Random(a.seed)
    n = cfg["files"] * cfg["prealloc"] // 100
    chosen = sorted(rng.sample(range(cfg["files"]), n))
    buf = bytes(rng.getrandbits(8) for _ in range(256)) * (cfg["io_size"] // 256)
    lock = threading.Lock()
    it = iter(chosen)

    def writer():
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                return
            fd = os.open(path_of(a.dir, cfg["dirs"], i), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            left = cfg["file_size"]
            while left > 0:
                left -= os.write(fd, buf[:min(left, cfg["io_size"])])
            os.close(fd)
    ts = [threading.Thread(target=writer) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    os.sync()
    print("fsworkload: %s fileset: %d of %d files of %d KiB in %d directories" % (
        cfg["personality"], n, cfg["files"], cfg["file_size"] >> 10, cfg["dirs"]))


def existing_files(root, cfg):
    have = set()
    for d in range(cfg["dirs"]):
        for name in os.listdir(os.path.join(root, "d%02d" % d)):
            if name.startswith("f"):
                have.add(int(name[1:]))
    return have


def percentile(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q / 100.0 * len(xs)))]


def _lat_summary(xs):
    """All flowops' latencies (ms), the shape analyze.py gives fio's."""
    if not xs:
        return {"mean": None, "p50": None, "p99": None, "p99_9": None, "max": None}
    return {"mean": 1000.0 * sum(xs) / len(xs), "p50": 1000.0 * percentile(xs, 50),
            "p99": 1000.0 * percentile(xs, 99), "p99_9": 1000.0 * percentile(xs, 99.9),
            "max": 1000.0 * max(xs)}


def summarise(logs, cfg, start, end):
    """Figures of the measured window [start, end) from the workers' logs."""
    seconds = max(1, int(round(end - start)))
    series = [0] * seconds
    ops, lat, nbytes = {}, {}, {"read": 0, "write": 0}
    for log in logs:
        for t, op, l, n in log:
            if not start <= t < end:
                continue
            series[min(int(t - start), seconds - 1)] += 1
            ops[op] = ops.get(op, 0) + 1
            lat.setdefault(op, []).append(l)
            if op in READ_OPS:
                nbytes["read"] += n
            elif op in WRITE_OPS:
                nbytes["write"] += n
    total = sum(ops.values())
    span = end - start
    return {
        "personality": cfg["personality"], "config": cfg,
        "window": {"start": start, "end": end, "seconds": span},
        "flowops": total, "flowops_per_s": total / span,
        "read_flowops_per_s": sum(ops.get(o, 0) for o in READ_OPS) / span,
        "write_flowops_per_s": sum(ops.get(o, 0) for o in WRITE_OPS) / span,
        "read_mb_s": nbytes["read"] / span / 1e6, "write_mb_s": nbytes["write"] / span / 1e6,
        "read_bytes": nbytes["read"], "write_bytes": nbytes["write"],
        "per_flowop": {op: {"count": ops[op], "per_s": ops[op] / span,
                            "lat_ms_mean": 1000.0 * sum(lat[op]) / len(lat[op]),
                            "lat_ms_p99": 1000.0 * percentile(lat[op], 99),
                            "lat_ms_max": 1000.0 * max(lat[op])} for op in sorted(ops)},
        "lat_ms_mean": (1000.0 * sum(sum(v) for v in lat.values()) / total) if total else None,
        "lat_ms": _lat_summary([x for v in lat.values() for x in v]),
        "series": series,
        "series_sum_over_flowops": (sum(series) / total) if total else None,
    }


def run(a, cfg):
    fs = FileSet(cfg["files"], existing_files(a.dir, cfg), a.seed)
    stop = threading.Event()
    ws = [Worker(n, cfg, fs, a.dir, stop, a.seed, a.loops) for n in range(cfg["threads"])]
    t0 = time.monotonic()
    wall0 = time.time()
    for w in ws:
        w.thread.start()
    deadline = t0 + a.warmup + a.runtime
    while (not stop.is_set() and time.monotonic() < deadline
           and not (a.loops and not any(w.thread.is_alive() for w in ws))):
        stop.wait(min(1.0, max(0.0, deadline - time.monotonic())))
        if a.progress:
            el = time.monotonic() - t0
            print("fsworkload: %.0f s of %d" % (el, a.warmup + a.runtime), file=sys.stderr, flush=True)
    stop.set()
    for w in ws:
        w.thread.join()
    errors = [w.error for w in ws if w.error]
    start = t0 + a.warmup
    end = min(deadline, time.monotonic())
    out = summarise([w.log for w in ws], cfg, start, end)
    # wall-clock window, to line up with the device samples and perf counters
    out["window"].update({"wall_start": wall0 + a.warmup, "wall_end": wall0 + (end - t0),
                          "warmup_s": a.warmup})
    out["errors"] = errors
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print("fsworkload: %s: %.0f flowops/s (%.0f reads/s, %.0f writes/s), mean %.2f ms%s" % (
        cfg["personality"], out["flowops_per_s"], out["read_flowops_per_s"],
        out["write_flowops_per_s"], out["lat_ms_mean"] or 0,
        "; ERRORS: " + "; ".join(errors) if errors else ""))
    return 1 if errors else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=["prepare", "run"])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--personality", required=True, choices=sorted(PERSONALITIES))
    ap.add_argument("--files", type=int)
    ap.add_argument("--dirs", type=int)
    ap.add_argument("--file-size", dest="file_size", type=int, help="bytes")
    ap.add_argument("--append-size", dest="append_size", type=int, help="bytes")
    ap.add_argument("--io-size", dest="io_size", type=int, help="bytes")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--prealloc", type=int, help="per cent of the files that exist at the start")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--runtime", type=int, default=90)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="fsworkload.json")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--loops", type=int, default=0,
                    help="each thread runs the flow this many times, then stops (tests; 0: until the time is up)")
    a = ap.parse_args(argv)
    cfg = config(a)
    if a.action == "prepare":
        prepare(a, cfg)
        return 0
    if a.runtime < 1 or a.warmup < 0:
        sys.exit("fsworkload: --runtime must be at least 1 s, --warmup at least 0")
    return run(a, cfg)


if __name__ == "__main__":
    sys.exit(main())
