#!/usr/bin/python3
"""HDD service-time model: replay a block request stream on a modelled disk.

The test bed's "HDD" is a loop device under a blkio throttle. The throttle
caps requests per second and bytes per second, but it does not care where a
request lands: a 4 KiB write at the far end of the disk costs the same as
the next 4 KiB of a sequential stream. A real disk does care, and merging
(mimstore's point) pays off mostly through position. So the harness records
the HDD request stream (tracefs block_rq_issue) and replays it here, offline,
through a disk model built from datasheet numbers:

    service(req) = transfer                               if req.start == prev.end
                 = seek(distance) + rotation + transfer   otherwise

  * seek(d), d in cylinders, after Ruemmler & Wilkes, "An introduction to
    disk drive modeling", IEEE Computer 27(3), 1994: a + b*sqrt(d) for short
    seeks (the arm accelerates and decelerates), c + e*d for long ones (it
    coasts). Fitted through three datasheet points: (1, track-to-track),
    (D/3, average) and (D, full stroke), D = number of cylinders, with the
    boundary at D/3 (datasheet average seeks are close to a seek over a third
    of the stroke). Both pieces meet at (D/3, average).
  * rotation: half a revolution on average (60000 / rpm / 2 ms; 4.17 ms at
    7200 rpm), charged to every non-sequential request.
  * transfer: bytes / media rate.
  * positions: the modelled disk's stroke spans the whole device being
    replayed (sector s sits at cylinder s / device_sectors * D), so an
    emulated disk of any size maps onto the full stroke, as mkfs.xfs would
    spread its allocation groups over a real disk. Zoned recording is ignored.
  * requests without data (flushes) cost nothing and do not move the head;
    the model disk has no write cache and no command queueing, it serves
    requests one at a time in issue order.

The result is a service demand: the sum of service times of all requests,
the time a real disk would have been busy. Divided by the number of client
writes it gives modelled HDD milliseconds per client write, and
1000 / that = the client write IOPS one such disk could sustain.

Usable as a module (HddModel, parse_trace, replay_trace) and as a CLI:
    hddmodel.py TRACE --dev 7,0:1073741824 [--dev ...] [--from T --to T]
Pure python, no Ceph, no numpy.
"""

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, asdict, field

SECTOR = 512


@dataclass(frozen=True)
class DiskSpec:
    """Datasheet figures of a disk (times in ms, rate in MB/s, 1 MB = 1e6 B)."""
    name: str
    rpm: float
    track_to_track_ms: float
    average_seek_ms: float
    full_stroke_ms: float
    media_rate_mb_s: float
    cylinders: int
    source: str = ""


# Write seek figures, since the benchmarks are write workloads.
PRESETS = {
    # Single source for all three seek points and the spindle speed:
    # Hitachi Travelstar 7K320 SATA OEM Specification, section 4.4.2:
    # Table 5 average seek 12 ms (read/write typical), Table 6 full stroke
    # write 22.0 ms typical, Table 7 single track write 1.1 ms typical,
    # Table 8 7200 rpm, 8.3 ms per revolution, 4.2 ms average latency.
    "hitachi-7k320": DiskSpec(
        name="hitachi-7k320", rpm=7200, track_to_track_ms=1.1,
        average_seek_ms=12.0, full_stroke_ms=22.0, media_rate_mb_s=150.0,
        cylinders=100_000,
        source="Hitachi Travelstar 7K320 SATA OEM spec, sec. 4.4.2, tables 5-8 "
               "(write: single track 1.1 ms, average 12 ms, full stroke 22 ms; 7200 rpm)"),
    # A 3.5" desktop disk: Hitachi Deskstar 7K1000.C specification, section
    # 4.5.2.1 Table 9, 2-disk model average seek write 9.5 ms typical. The
    # pages available to us did not show its single-track and full-stroke
    # rows: single track is taken as Hitachi's 7200 rpm 1.1 ms (above), full
    # stroke estimated as 2 x average (the 7K320 ratio is 1.83, IBM's 7200 rpm
    # Ultrastar DDRS 15.8 ms full stroke write). Estimated, hence not default.
    "deskstar-7k1000c": DiskSpec(
        name="deskstar-7k1000c", rpm=7200, track_to_track_ms=1.1,
        average_seek_ms=9.5, full_stroke_ms=19.0, media_rate_mb_s=150.0,
        cylinders=100_000,
        source="Hitachi Deskstar 7K1000.C spec sec. 4.5.2.1 table 9 (average "
               "write 9.5 ms); single track 1.1 ms and full stroke 19 ms estimated"),
}
DEFAULT_PRESET = "hitachi-7k320"


class SeekCurve:
    """Ruemmler-Wilkes seek time (ms) as a function of distance in cylinders.

    d == 0          -> 0
    1 <= d < D/3    -> a + b*sqrt(d), through (1, t2t) and (D/3, avg)
    D/3 <= d <= D   -> c + e*d,       through (D/3, avg) and (D, full)
    0 < d < 1       -> the track-to-track time (a head move is still needed)
    """

    def __init__(self, spec: DiskSpec):
        D = float(spec.cylinders)
        if not (0 < spec.track_to_track_ms <= spec.average_seek_ms <= spec.full_stroke_ms):
            raise ValueError("need 0 < track-to-track <= average <= full stroke")
        if D < 4:
            raise ValueError("need at least 4 cylinders")
        self.D = D
        self.boundary = D / 3.0
        self.b = (spec.average_seek_ms - spec.track_to_track_ms) / (math.sqrt(self.boundary) - 1.0)
        self.a = spec.track_to_track_ms - self.b
        self.e = (spec.full_stroke_ms - spec.average_seek_ms) / (D - self.boundary)
        self.c = spec.average_seek_ms - self.e * self.boundary

    def __call__(self, d: float) -> float:
        d = abs(d)
        if d == 0:
            return 0.0
        if d < 1.0:
            d = 1.0
        if d < self.boundary:
            return self.a + self.b * math.sqrt(d)
        return self.c + self.e * min(d, self.D)


@dataclass
class ModelResult:
    requests: int = 0            # data requests replayed
    write_requests: int = 0
    read_requests: int = 0
    other_requests: int = 0      # requests without data (flush, ...)
    sequential: int = 0          # data requests starting where the previous ended
    write_bytes: int = 0
    read_bytes: int = 0
    seek_ms: float = 0.0
    rotation_ms: float = 0.0
    transfer_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.seek_ms + self.rotation_ms + self.transfer_ms

    def add(self, other: "ModelResult") -> "ModelResult":
        for k in ("requests", "write_requests", "read_requests", "other_requests",
                  "sequential", "write_bytes", "read_bytes", "seek_ms",
                  "rotation_ms", "transfer_ms"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["total_ms"] = self.total_ms
        return d


@dataclass(frozen=True)
class Charge:
    """The modelled cost of one request."""
    kind: str            # "W", "R" or "-" (no data: flush and the like)
    nbytes: int
    sequential: bool
    seek_ms: float
    rotation_ms: float
    transfer_ms: float

    @property
    def total_ms(self) -> float:
        return self.seek_ms + self.rotation_ms + self.transfer_ms


def _account(r: ModelResult, c: Charge) -> None:
    if c.kind == "-":
        r.other_requests += 1
        return
    r.requests += 1
    if c.kind == "W":
        r.write_requests += 1
        r.write_bytes += c.nbytes
    elif c.kind == "R":
        r.read_requests += 1
        r.read_bytes += c.nbytes
    r.sequential += int(c.sequential)
    r.seek_ms += c.seek_ms
    r.rotation_ms += c.rotation_ms
    r.transfer_ms += c.transfer_ms


class HddModel:
    """One disk arm. Feed it requests in issue order with service()."""

    def __init__(self, spec: DiskSpec, device_bytes: int):
        if device_bytes <= 0:
            raise ValueError("device_bytes must be positive")
        self.spec = spec
        self.seek = SeekCurve(spec)
        self.device_sectors = device_bytes // SECTOR
        self.cyl_per_sector = spec.cylinders / float(self.device_sectors)
        self.half_rev_ms = 60000.0 / spec.rpm / 2.0
        self.bytes_per_ms = spec.media_rate_mb_s * 1e6 / 1000.0
        self.head = None         # sector just after the last request; None = unknown
        self.result = ModelResult()

    def service(self, sector: int, nr_sectors: int, rwbs: str = "W") -> Charge:
        """Serve one request, move the head, accumulate into self.result."""
        if nr_sectors <= 0:
            c = Charge("-", 0, False, 0.0, 0.0, 0.0)
        else:
            kind = "W" if "W" in rwbs else ("R" if "R" in rwbs else "-")
            nbytes = nr_sectors * SECTOR
            xfer = nbytes / self.bytes_per_ms
            if self.head is not None and sector == self.head:
                c = Charge(kind, nbytes, True, 0.0, 0.0, xfer)
            else:
                # Unknown head position (first request): charge an average seek.
                seek = (self.spec.average_seek_ms if self.head is None
                        else self.seek((sector - self.head) * self.cyl_per_sector))
                c = Charge(kind, nbytes, False, seek, self.half_rev_ms, xfer)
            if kind == "-":      # e.g. a discard: data-less for the arm's purposes
                c = Charge("-", 0, False, 0.0, 0.0, 0.0)
            else:
                self.head = sector + nr_sectors
        _account(self.result, c)
        return c


# --- tracefs text -------------------------------------------------------------

# "<comm>-<pid> [cpu] <flags> <ts>: <event>: <payload>"; only the part from the
# timestamp on is relied upon, so options like irq-info do not matter.
_LINE = re.compile(r"\s(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s?(?P<rest>.*)$")
# block_rq_issue:    "7,0 WS 4096 () 123456 + 8 be,0,4 [comm]"
# block_rq_complete: "7,0 WS () 123456 + 8 be,0,4 [0]"
_RQ = re.compile(r"^(?P<maj>\d+),(?P<min>\d+) (?P<rwbs>\S+) (?:\d+ )?\((?P<cmd>[^)]*)\) "
                 r"(?P<sector>\d+) \+ (?P<nr>\d+)")
_MARK = re.compile(r"MIMBENCH (?P<tag>\S+) wall=(?P<wall>\d+(?:\.\d+)?)")


@dataclass
class Request:
    ts: float
    dev: str          # "major,minor"
    rwbs: str
    sector: int
    nr_sectors: int


@dataclass
class Trace:
    issues: list = field(default_factory=list)       # Request, block_rq_issue
    completes: list = field(default_factory=list)    # Request, block_rq_complete
    marks: list = field(default_factory=list)        # (trace ts, tag, wall time)
    lost_lines: int = 0                              # "LOST n EVENTS" etc.

    def wall_offset(self):
        """wall = trace_ts + offset, from the MIMBENCH markers (None if none)."""
        if not self.marks:
            return None
        return sum(w - t for t, _, w in self.marks) / len(self.marks)


def parse_trace(lines) -> Trace:
    tr = Trace()
    for line in lines:
        if "LOST" in line and "EVENTS" in line:
            m = re.search(r"LOST (\d+) EVENTS", line)
            tr.lost_lines += int(m.group(1)) if m else 1
            continue
        m = _LINE.search(line)
        if not m:
            continue
        ev, rest, ts = m.group("event"), m.group("rest"), float(m.group("ts"))
        if ev in ("block_rq_issue", "block_rq_complete"):
            q = _RQ.match(rest)
            if not q:
                continue
            req = Request(ts, "%s,%s" % (q.group("maj"), q.group("min")), q.group("rwbs"),
                          int(q.group("sector")), int(q.group("nr")))
            (tr.issues if ev == "block_rq_issue" else tr.completes).append(req)
        elif ev in ("tracing_mark_write", "print"):
            k = _MARK.search(rest)
            if k:
                tr.marks.append((ts, k.group("tag"), float(k.group("wall"))))
    return tr


def replay(requests, dev_bytes: dict, spec: DiskSpec, t_from=None, t_to=None) -> dict:
    """Replay requests (trace-clock timestamps) on one modelled disk per device.

    dev_bytes maps "major,minor" to the device size in bytes; requests to
    other devices are ignored. Requests before t_from still position the
    head but are not charged. Returns {dev: ModelResult}.
    """
    models = {d: HddModel(spec, b) for d, b in dev_bytes.items()}
    charged = {d: ModelResult() for d in dev_bytes}
    for rq in sorted(requests, key=lambda r: r.ts):
        m = models.get(rq.dev)
        if m is None or (t_to is not None and rq.ts > t_to):
            continue
        c = m.service(rq.sector, rq.nr_sectors, rq.rwbs)
        if t_from is None or rq.ts >= t_from:
            _account(charged[rq.dev], c)
    return charged


def open_text(path):
    """Open a trace file, plain or gzip-compressed (.gz), for reading text."""
    if path.endswith(".gz"):
        import gzip
        return gzip.open(path, "rt", errors="replace")
    return open(path, errors="replace")


def replay_trace(lines, dev_bytes: dict, spec: DiskSpec = None,
                 wall_from=None, wall_to=None) -> dict:
    """Parse tracefs text and replay the issued requests within a wall-clock window.

    Returns a dict with per-device results, the sum and the busiest device.
    """
    spec = spec or PRESETS[DEFAULT_PRESET]
    tr = parse_trace(lines)
    off = tr.wall_offset()
    t_from = t_to = None
    if wall_from is not None or wall_to is not None:
        if off is None:
            raise ValueError("trace has no MIMBENCH wall-clock markers; cannot window it")
        t_from = None if wall_from is None else wall_from - off
        t_to = None if wall_to is None else wall_to - off
    per_dev = replay(tr.issues, dev_bytes, spec, t_from, t_to)
    total = ModelResult()
    for r in per_dev.values():
        total.add(r)
    busiest = max(per_dev.items(), key=lambda kv: kv[1].total_ms)[0] if per_dev else None
    return {
        "spec": asdict(spec),
        "devices": {d: r.to_dict() for d, r in per_dev.items()},
        "total": total.to_dict(),
        "busiest_device": busiest,
        "busiest_ms": per_dev[busiest].total_ms if busiest else 0.0,
        "lost_events": tr.lost_lines,
        "markers": len(tr.marks),
        "wall_offset": off,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", help="tracefs text (trace_pipe capture), plain or .gz")
    ap.add_argument("--dev", action="append", required=True,
                    help="MAJ,MIN:BYTES of a device to model (repeatable)")
    ap.add_argument("--model", default=DEFAULT_PRESET, choices=sorted(PRESETS))
    ap.add_argument("--from", dest="t_from", type=float, help="window start, wall clock (s)")
    ap.add_argument("--to", dest="t_to", type=float, help="window end, wall clock (s)")
    ap.add_argument("--client-writes", type=int, help="divide by this many client writes")
    a = ap.parse_args(argv)
    devs = {}
    for d in a.dev:
        k, _, v = d.partition(":")
        devs[k] = int(v)
    with open_text(a.trace) as f:
        res = replay_trace(f, devs, PRESETS[a.model], a.t_from, a.t_to)
    if a.client_writes:
        n = a.client_writes
        res["per_client_write"] = {
            "hdd_write_requests": res["total"]["write_requests"] / n,
            "hdd_write_bytes": res["total"]["write_bytes"] / n,
            "modelled_ms": res["busiest_ms"] / n,
            "modelled_iops": (1000.0 * n / res["busiest_ms"]) if res["busiest_ms"] else None,
        }
    json.dump(res, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
