#!/usr/bin/python3
"""host_reclaim.py: does this host take page cache away behind a benchmark?

  host_reclaim.py show             JSON: the proactive reclaim running here
  host_reclaim.py summary          the same in one line
  host_reclaim.py pause STATEFILE  stop it, recording in STATEFILE what ran
  host_reclaim.py resume STATEFILE start again what STATEFILE records

Why: this project's machines are VMs whose DAMON (mm/damon) runs a
"pageout" scheme over physical memory: any page-cache page not mapped and
not touched for a minute (12 aggregations of 5 s) is reclaimed, up to
128 MiB/s, with gigabytes free. A FileStore-style store reads its objects
through the page cache; written-back data that a real OSD host keeps in
RAM is read again from the disk here a minute later (measured in the
read-back point: OSD reads of blocks the write back had written 7-130 s
before, at 0.1-1.2 s each behind the write back). BlueStore's cache is
anonymous memory, which the scheme leaves alone: the two kinds of store
are not on equal terms while it runs. qa/bench.sh records it in env.json
and, with --host-reclaim pause, stops it for the run.

Reads the DAMON sysfs interface (/sys/kernel/mm/damon/admin) and the
DAMON_RECLAIM module's parameters. ROOT (the environment variable
HOST_RECLAIM_SYSFS, default /sys) is for the tests."""

import json
import os
import sys

ROOT = os.environ.get("HOST_RECLAIM_SYSFS", "/sys")
# Schemes whose action takes pages out of memory; the others (stat,
# lru_prio, lru_deprio, migrate_*, ...) leave the page cache where it is.
RECLAIMING = ("pageout",)


def _read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _int(path):
    v = _read(path)
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _dirs(path):
    """The numbered subdirectories of path, in order."""
    try:
        names = [n for n in os.listdir(path) if n.isdigit()]
    except OSError:
        return []
    return [os.path.join(path, n) for n in sorted(names, key=int)]


def _filters(scheme):
    out = []
    # "filters" before Linux 6.14; "core_filters" and "ops_filters" since
    for kind in ("filters", "core_filters", "ops_filters"):
        for f in _dirs(os.path.join(scheme, kind)):
            out.append({"type": _read(os.path.join(f, "type")),
                        "allow": _read(os.path.join(f, "allow")) == "Y",
                        "matching": _read(os.path.join(f, "matching")) == "Y"})
    return out


def _scheme(ctx, path):
    aggr_us = _int(os.path.join(ctx, "monitoring_attrs", "intervals", "aggr_us"))
    age_min = _int(os.path.join(path, "access_pattern", "age", "min"))
    quota = _int(os.path.join(path, "quotas", "bytes"))
    reset_ms = _int(os.path.join(path, "quotas", "reset_interval_ms"))
    return {
        "action": _read(os.path.join(path, "action")),
        # age counts aggregation intervals
        "cold_s": (age_min * aggr_us / 1e6 if age_min is not None and aggr_us else None),
        "max_accesses": _int(os.path.join(path, "access_pattern", "nr_accesses", "max")),
        "quota_mib_s": (round(quota / 2**20 * 1000 / reset_ms, 1)
                        if quota and reset_ms else None),
        "filters": _filters(path),
    }


def _kdamonds(root):
    return os.path.join(root, "kernel", "mm", "damon", "admin", "kdamonds")


def _kdamond_state(root, kid):
    return os.path.join(_kdamonds(root), str(kid), "state")


def _damon_reclaim_enabled(root):
    return os.path.join(root, "module", "damon_reclaim", "parameters", "enabled")


def show(root=None):
    """The kdamonds that are on, each with its reclaiming schemes, and
    whether DAMON_RECLAIM is enabled."""
    root = root or ROOT
    out = {"kdamonds": [], "damon_reclaim": None}
    for k in _dirs(_kdamonds(root)):
        if _read(os.path.join(k, "state")) != "on":
            continue
        schemes = []
        for ctx in _dirs(os.path.join(k, "contexts")):
            for s in _dirs(os.path.join(ctx, "schemes")):
                sc = _scheme(ctx, s)
                if sc["action"] in RECLAIMING:
                    sc["operations"] = _read(os.path.join(ctx, "operations"))
                    schemes.append(sc)
        if schemes:
            out["kdamonds"].append({"id": int(os.path.basename(k)), "schemes": schemes})
    enabled = _read(_damon_reclaim_enabled(root))
    if enabled is not None:
        out["damon_reclaim"] = enabled == "Y"
    return out


def active(state):
    return bool(state["kdamonds"]) or bool(state["damon_reclaim"])


def summary(state):
    """One line for a log or a report."""
    if not active(state):
        return "no proactive page-cache reclaim"
    parts = []
    for k in state["kdamonds"]:
        for s in k["schemes"]:
            parts.append("DAMON %s of page cache idle %s s (%s MiB/s at most)" % (
                s["action"], "%g" % s["cold_s"] if s["cold_s"] is not None else "?",
                "%g" % s["quota_mib_s"] if s["quota_mib_s"] is not None else "no limit"))
    if state["damon_reclaim"]:
        parts.append("DAMON_RECLAIM enabled")
    return "; ".join(parts)


def _write(path, value):
    with open(path, "w") as f:
        f.write(value)


def pause(statefile, root=None):
    """Turn off what show() finds, after recording it in statefile (so a
    pause that fails half way can still be undone)."""
    root = root or ROOT
    state = show(root)
    with open(statefile, "w") as f:
        json.dump(state, f)
    for k in state["kdamonds"]:
        _write(_kdamond_state(root, k["id"]), "off")
    if state["damon_reclaim"]:
        _write(_damon_reclaim_enabled(root), "N")
    return state


def resume(statefile, root=None):
    """Turn on again what pause() turned off; a missing statefile is a
    pause that never ran."""
    root = root or ROOT
    try:
        with open(statefile) as f:
            state = json.load(f)
    except FileNotFoundError:
        return None
    for k in state["kdamonds"]:
        # DAMON's sysfs keeps a stopped kdamond's parameters: "on" starts
        # it again as it was.
        _write(_kdamond_state(root, k["id"]), "on")
    if state["damon_reclaim"]:
        _write(_damon_reclaim_enabled(root), "Y")
    os.unlink(statefile)
    return state


def main(argv):
    if argv == ["show"]:
        st = show()
        print(json.dumps(dict(st, summary=summary(st))))
        return 0
    if argv == ["summary"]:
        print(summary(show()))
        return 0
    if len(argv) == 2 and argv[0] == "pause":
        try:
            st = pause(argv[1])
        except OSError as e:
            print("cannot pause it: %s" % e)
            return 1
        left = show()
        if active(left):
            print("still running after the pause: %s" % summary(left))
            return 1
        print(summary(st))
        return 0
    if len(argv) == 2 and argv[0] == "resume":
        st = resume(argv[1])
        print("nothing was paused" if st is None else "resumed: " + summary(st))
        return 0
    print(__doc__.split("\n\n")[0] +
          "\nusage: host_reclaim.py show | summary | pause STATEFILE | resume STATEFILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
