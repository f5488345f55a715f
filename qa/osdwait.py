#!/usr/bin/env python3
"""qa/osdwait.py - what bench.sh --restart waits for, from the ceph CLI's JSON.

  osdwait.py upfrom osd.N < `ceph osd dump --format json`
      prints the epoch osd.N came up in, or 0 when it is down
  osdwait.py active EPOCH < `ceph pg dump pgs --format json`
      exits 0 when every PG is active, not stale, and was reported at EPOCH or later
      (before that the manager may still show the states from before the
      restart)
"""
import json
import sys


def upfrom(dump, name):
    n = int(name.split(".")[1])
    for o in dump.get("osds", []):
        if o.get("osd") == n:
            return o.get("up_from", 0) if o.get("up") else 0
    return 0


def pgs_of(dump):
    # Reef: {"pg_ready": ..., "pg_stats": [...]}; older: a bare list
    if isinstance(dump, list):
        return dump
    return dump.get("pg_stats") or dump.get("pg_map", {}).get("pg_stats") or []


def reported_epoch(pg):
    e = pg.get("reported_epoch", 0)
    return int(str(e).split(":")[0]) if e not in ("", None) else 0


def all_active_since(dump, epoch):
    pgs = pgs_of(dump)
    def ok(pg):
        st = pg.get("state", "").split("+")
        return "active" in st and "stale" not in st and reported_epoch(pg) >= epoch
    return bool(pgs) and all(ok(pg) for pg in pgs)


def main(argv):
    if len(argv) != 2 or argv[0] not in ("upfrom", "active"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        dump = json.load(sys.stdin)
    except ValueError:
        return 1
    if argv[0] == "upfrom":
        print(upfrom(dump, argv[1]))
        return 0
    return 0 if all_active_since(dump, int(argv[1])) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
