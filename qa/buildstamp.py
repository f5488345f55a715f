#!/usr/bin/python3
"""buildstamp.py: which source the Ceph build's binaries came from, and
whether it is this checkout's.

  buildstamp.py check BUILD_DIR REPO
                          print what the build was made from; exit 1 when
                          its store source (src/, cmake/patches) differs
                          from REPO's, or either had uncommitted changes

Why: every checkout shares one build directory (qa/lib/common.sh), and
bench.sh records the commit of the checkout it runs from. A benchmark
chain run from a clone while the build is remade from another checkout
would record one commit and run another's store. cmake/ceph-build.sh
writes BUILD_DIR/mimstore-built-from.json after each build (the commit
and the git tree ids of src/ and cmake/patches: equal across commits
that change neither); builds before it have no stamp."""

import json
import os
import subprocess
import sys

STAMP = "mimstore-built-from.json"


def read(build_dir):
    """The stamp's fields, or None when the build has none."""
    try:
        with open(os.path.join(build_dir, STAMP)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _git(repo, *args):
    r = subprocess.run(["git", "-C", repo, *args], capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def checkout(repo, series="cmake/patches"):
    """The same fields for REPO as it is now; SERIES is the patch series
    the build applied (the stamp's "series": Reef's or Tentacle's)."""
    changes = _git(repo, "status", "--porcelain", "--untracked-files=no",
                   "--", "src", series)
    return {"commit": _git(repo, "rev-parse", "HEAD"),
            "src_tree": _git(repo, "rev-parse", "HEAD:src"),
            "patches_tree": _git(repo, "rev-parse", "HEAD:" + series),
            "worktree_changes": None if changes is None
            else len(changes.splitlines())}


def series_of(stamp):
    """The patch series a stamped build applied (Reef's before stamps named it)."""
    return (stamp or {}).get("series", "cmake/patches")


def compare(stamp, here):
    """(matches, why): matches is None when it cannot be told."""
    if stamp is None:
        return None, "the build has no stamp (built before cmake/ceph-build.sh wrote one)"
    if None in (here["src_tree"], here["patches_tree"]):
        return None, "this checkout's source tree could not be read (git)"
    if stamp.get("worktree_changes"):
        return False, ("built from %s with %s uncommitted change(s) to its store source"
                       % (stamp.get("commit", "?")[:12], stamp["worktree_changes"]))
    if here["worktree_changes"]:
        return False, ("this checkout has %d uncommitted change(s) to the store source, "
                       "the build has none" % here["worktree_changes"])
    for key in ("src_tree", "patches_tree"):
        if stamp.get(key) != here[key]:
            what = "src/" if key == "src_tree" else series_of(stamp)
            return False, ("built from %s, whose %s differs from this checkout's (%s)"
                           % (stamp.get("commit", "?")[:12], what, here["commit"][:12]))
    return True, "built from %s: the same store source" % stamp.get("commit", "?")[:12]


def main(argv):
    if len(argv) != 4 or argv[1] != "check":
        sys.exit(__doc__)
    stamp = read(argv[2])
    matches, why = compare(stamp, checkout(argv[3], series_of(stamp)))
    print(why)
    return 1 if matches is False else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
