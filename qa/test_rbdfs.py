#!/usr/bin/python3
"""Tests of the filesystem workloads' client memory (qa/lib/rbdfs.sh:
rbdfs_client_limit, rbdfs_client_exec, _rbdfs_unlimit), on a loop device
with XFS on a sparse file, as the benchmark's is on rbd-fuse.

Needs root, loop devices, XFS and the cgroup-v1 memory controller, as
qa/bench.sh --rw varmail,fileserver does: without them the test fails and
says which is missing (a skipped test is not a passed one)."""

import os
import shutil
import subprocess
import tempfile
import unittest

QA = os.path.dirname(os.path.abspath(__file__))
LIMIT = 256 << 20
MEMCG = "/sys/fs/cgroup/memory"

# One bash: the library's functions, then the steps; each step prints
# "key value" lines the test reads.
SCRIPT = r"""
set -euo pipefail
source "$QA/lib/common.sh"; source "$QA/lib/testbed.sh"; source "$QA/lib/rbdfs.sh"
TB_STATE=$WORK/state TB_ID=$TBID
RBDFS_LOOP=$LOOP
bdi=/sys/block/$(basename "$LOOP")/bdi
rbdfs_client_limit "$LIMIT" >&2
echo "strict_limit $(cat "$bdi/strict_limit")"
echo "max_bytes $(cat "$bdi/max_bytes")"
echo "cgroup $RBDFS_CGROUP"
echo "cg_limit $(cat "$RBDFS_CGROUP/memory.limit_in_bytes")"
echo "recorded $(grep -c "^cgroup $RBDFS_CGROUP" "$TB_STATE")"
# the child's cgroup, then 3x the limit written through the page cache
rbdfs_client_exec sh -c 'echo "child_cgroup $(grep -E "^[0-9]+:memory:" /proc/self/cgroup | cut -d: -f3)"'
echo "outside_cgroup $(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3)"
rbdfs_client_exec dd if=/dev/zero of="$WORK/mnt/f" bs=1M count=$((3 * LIMIT >> 20)) status=none
echo "written $(stat -c %s "$WORK/mnt/f")"
echo "failcnt $(cat "$RBDFS_CGROUP/memory.failcnt")"
echo "oom_kill $(awk '$1 == "oom_kill" { print $2 }' "$RBDFS_CGROUP/memory.oom_control")"
umount "$WORK/mnt"
_rbdfs_unlimit
echo "after_strict_limit $(cat "$bdi/strict_limit")"
echo "after_max_ratio $(cat "$bdi/max_ratio")"
echo "after_cgroup $([[ -d $RBDFS_CGROUP ]] && echo present || echo gone)"
"""


def need(cond, what):
    if not cond:
        raise AssertionError("cannot run: %s (qa/bench.sh's filesystem workloads need it too)" % what)


class ClientMemory(unittest.TestCase):
    def setUp(self):
        need(os.geteuid() == 0, "not root")
        need(os.path.isdir(MEMCG), "no cgroup-v1 memory controller at %s" % MEMCG)
        # the harness names the client's cgroup by the workdir (TB_ID): a
        # benchmark's never collides with this one
        self.tbid = "t%d" % os.getpid()
        self.cgroup = os.path.join(MEMCG, "mimstore-%s-fsclient" % self.tbid)
        need(shutil.which("mkfs.xfs") and shutil.which("losetup"), "no mkfs.xfs or losetup")
        # tmpfs: the test writes ~1 GiB and must not load the disk under a benchmark
        self.work = tempfile.mkdtemp(prefix="mimstore-rbdfs-test-", dir="/dev/shm")
        img = os.path.join(self.work, "img")
        with open(img, "wb") as f:
            f.truncate(2 << 30)
        self.loop = subprocess.run(["losetup", "-f", "--show", img], check=True,
                                   capture_output=True, text=True).stdout.strip()
        subprocess.run(["mkfs.xfs", "-q", "-f", self.loop], check=True)
        os.mkdir(os.path.join(self.work, "mnt"))
        subprocess.run(["mount", self.loop, os.path.join(self.work, "mnt")], check=True)

    def tearDown(self):
        mnt = os.path.join(self.work, "mnt")
        subprocess.run(["umount", mnt], capture_output=True)
        bdi = "/sys/block/%s/bdi" % os.path.basename(self.loop)
        for f, v in (("strict_limit", "0"), ("max_ratio", "100")):   # even if the script failed
            try:
                with open(os.path.join(bdi, f), "w") as fh:
                    fh.write(v)
            except OSError:
                pass
        subprocess.run(["losetup", "-d", self.loop], capture_output=True)
        if os.path.isdir(self.cgroup):
            try:
                os.rmdir(self.cgroup)
            except OSError:
                pass
        shutil.rmtree(self.work, ignore_errors=True)

    def test_the_client_is_bounded_and_the_bound_is_undone(self):
        env = dict(os.environ, QA=QA, WORK=self.work, LOOP=self.loop, LIMIT=str(LIMIT), TBID=self.tbid)
        p = subprocess.run(["bash", "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = dict(line.split(" ", 1) for line in p.stdout.splitlines())
        self.assertEqual(got["strict_limit"], "1")
        # the kernel keeps the limit as a fraction of the host's dirty
        # threshold: max_bytes comes back rounded, within 1 %
        self.assertAlmostEqual(int(got["max_bytes"]), LIMIT // 5, delta=LIMIT // 500)
        self.assertEqual(int(got["cg_limit"]), LIMIT)
        self.assertEqual(got["recorded"], "1")    # tb_down removes it after a crash
        self.assertEqual(got["cgroup"], self.cgroup)
        self.assertEqual(got["child_cgroup"], "/" + os.path.basename(self.cgroup))
        self.assertNotEqual(got["outside_cgroup"], "/" + os.path.basename(self.cgroup))
        # 3x its memory written: the cgroup hit its limit, reclaimed, and the
        # writer finished without the OOM killer (the dirty limit leaves
        # clean pages to reclaim)
        self.assertEqual(int(got["written"]), 3 * LIMIT)
        self.assertGreater(int(got["failcnt"]), 0)
        self.assertEqual(got["oom_kill"], "0")
        self.assertEqual(got["after_strict_limit"], "0")
        self.assertEqual(got["after_max_ratio"], "100")
        self.assertEqual(got["after_cgroup"], "gone")


if __name__ == "__main__":
    unittest.main()
