#!/usr/bin/python3
"""machine.py: which machine a benchmark ran on, and whether a result
directory's runs all come from this one.

  machine.py id           this machine's identity (JSON), as bench.sh
                          records it in env.json
  machine.py check DIR [--host-reclaim POLICY]
                          exit 1, naming them, if runs under DIR (their
                          env.json) were made on another machine, or (with
                          the option) with the host's page-cache reclaim
                          handled otherwise than POLICY (pause or keep)

Why: a sweep resumes where it stopped, possibly in another session on
another machine, and its report takes medians over the repeats. Two
machines of this project's kind differed by 2.4x in mimstore's CPU-bound
random writes (811 and 1,925 IOPS at the replicated point, 2026-11-28),
so repeats from two machines make a spread that measures the machines.

The identity is the kernel release, CPU model and count, memory and
/etc/machine-id; runs recorded before a field existed are compared on the
fields they have (the kernel and CPU count are in every env.json).

The host's page-cache reclaim (qa/host_reclaim.py) is a condition of the
same kind: paused, a page-cache store keeps what it wrote back; kept, it
reads it again from the disk a minute later. Runs recorded before bench.sh
could pause it (no host_reclaim in env.json) ran with it kept."""

import json
import os
import platform
import sys

FIELDS = ("machine_id", "kernel", "cpu_model", "cpus", "mem_gib")


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _machine_id():
    try:
        with open("/etc/machine-id") as f:
            return f.read().strip() or None
    except OSError:
        return None


def identity():
    return {
        "machine_id": _machine_id(),
        "kernel": platform.release(),
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }


def differences(here, env):
    """Fields recorded in both that differ: [(field, then, now)]."""
    out = []
    for k in FIELDS:
        a, b = env.get(k), here.get(k)
        if a is not None and b is not None and a != b:
            out.append((k, a, b))
    return out


def run_reclaim_policy(env):
    """pause or keep: what the run did with the host's page-cache reclaim."""
    return (env.get("host_reclaim") or {}).get("policy", "keep")


def check(top, here=None, reclaim_policy=None):
    """Lines naming each run under top made on another machine (or, given
    reclaim_policy, with the host's page-cache reclaim handled otherwise)."""
    here = here or identity()
    lines = []
    for d, _, files in os.walk(top):
        if "env.json" not in files:
            continue
        path = os.path.join(d, "env.json")
        try:
            with open(path) as f:
                env = json.load(f)
        except (OSError, ValueError) as e:
            lines.append("%s: unreadable (%s)" % (path, e))
            continue
        diff = differences(here, env)
        if reclaim_policy and run_reclaim_policy(env) != reclaim_policy:
            diff.append(("host_reclaim", run_reclaim_policy(env), reclaim_policy))
        if diff:
            lines.append("%s: %s" % (os.path.relpath(path, top), "; ".join(
                "%s was %s, here %s" % x for x in diff)))
    return sorted(lines)


def main(argv):
    if argv[:1] == ["id"] and len(argv) == 1:
        json.dump(identity(), sys.stdout)
        print()
        return 0
    policy = None
    if len(argv) == 4 and argv[2] == "--host-reclaim" and argv[3] in ("pause", "keep"):
        argv, policy = argv[:2], argv[3]
    if argv[:1] == ["check"] and len(argv) == 2:
        lines = check(argv[1], reclaim_policy=policy)
        for line in lines:
            print(line)
        return 1 if lines else 0
    print(__doc__.split("\n\n")[0] + "\nusage: machine.py id | machine.py check DIR [--host-reclaim pause|keep]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
