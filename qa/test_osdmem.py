#!/usr/bin/python3
"""Tests of bench.sh --osd-mem (qa/lib/cluster.sh: harness_osd_options,
_osd_mem_limit, and tb_down's removal of the cgroups). Two stand-in
processes take the OSDs' place: what is tested is the harness moving
processes into bounded memory cgroups, not Ceph.

Needs root and the cgroup-v1 memory controller, as qa/bench.sh --osd-mem
does: without them the test fails and says which is missing (a skipped test
is not a passed one)."""

import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

QA = os.path.dirname(os.path.abspath(__file__))
MEMCG = "/sys/fs/cgroup/memory"
MEM = 3 << 30

# One bash: the library's functions, then the steps; each step prints
# "key value" lines the test reads.
SCRIPT = r"""
set -euo pipefail
source "$QA/lib/common.sh"; source "$QA/lib/testbed.sh"; source "$QA/lib/cluster.sh"
tb_init "$WORK"
echo "tbid $TB_ID"
standin() {   # a process whose command line names the workdir, as the OSDs' do
  bash -c 'while :; do sleep 1; done' "$WORK/osd" </dev/null >/dev/null 2>&1 &
  _tb_rec pid $! "$1"
  echo $!
}
export CLUSTER_OSD_MEM=$MEM CLUSTER_PG_LOG=0
echo "options $(harness_osd_options)"
a=$(standin osd.0) b=$(standin osd.1)
CLUSTER_OSD_PIDS="osd.0=$a osd.1=$b"
_osd_mem_limit >&2
for i in 0 1; do
  echo "limit$i $(cat "$CLUSTER_MEMCG/mimstore-$TB_ID-osd.$i/memory.limit_in_bytes")"
  echo "procs$i $(xargs <"$CLUSTER_MEMCG/mimstore-$TB_ID-osd.$i/cgroup.procs")"
done
echo "pids $a $b"
echo "self $(grep -E '^[0-9]+:memory:' /proc/self/cgroup | cut -d: -f3)"
# a restarted osd.1: a new process, moved into the cgroup that is there
kill "$b"; while pid_alive "$b"; do sleep 0.1; done
c=$(standin osd.1)
CLUSTER_OSD_PIDS="osd.0=$a osd.1=$c"
_osd_mem_limit >&2
echo "restarted $c $(xargs <"$CLUSTER_MEMCG/mimstore-$TB_ID-osd.1/cgroup.procs")"
echo "recorded $(grep -c '^cgroup ' "$TB_STATE")"
tb_down >&2
for i in 0 1; do
  echo "after$i $([[ -d $CLUSTER_MEMCG/mimstore-$TB_ID-osd.$i ]] && echo present || echo gone)"
done
CLUSTER_OSD_MEM=0
echo "off $(harness_osd_options | wc -l) $(_osd_mem_limit | wc -l)"
"""


def need(cond, what):
    if not cond:
        raise AssertionError("cannot run: %s (qa/bench.sh --osd-mem needs it too)" % what)


class OsdMemory(unittest.TestCase):
    def setUp(self):
        need(os.geteuid() == 0, "not root")
        need(os.path.isdir(MEMCG), "no cgroup-v1 memory controller at %s" % MEMCG)
        self.work = tempfile.mkdtemp(prefix="mimstore-osdmem-test-")
        # the harness names them by the workdir (tb_init's TB_ID): a
        # benchmark's never collide with these
        tbid = hashlib.md5(self.work.encode()).hexdigest()[:8]
        self.cgroups = [os.path.join(MEMCG, "mimstore-%s-osd.%d" % (tbid, i)) for i in (0, 1)]

    def tearDown(self):
        # even if the script failed half way: its stand-ins, then the cgroups
        subprocess.run(["pkill", "-f", os.path.join(self.work, "osd")], capture_output=True)
        for cg in self.cgroups:
            for _ in range(50):
                try:
                    if os.path.isdir(cg):
                        os.rmdir(cg)
                    break
                except OSError:
                    subprocess.run(["sleep", "0.1"])
        shutil.rmtree(self.work, ignore_errors=True)

    def test_each_osd_is_bounded_and_the_bound_is_undone(self):
        env = dict(os.environ, QA=QA, WORK=self.work, MEM=str(MEM))
        p = subprocess.run(["bash", "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = dict(line.split(" ", 1) for line in p.stdout.splitlines())
        self.assertEqual(os.path.join(MEMCG, "mimstore-%s-osd.0" % got["tbid"]), self.cgroups[0])
        self.assertEqual(got["options"], "osd memory target = %d" % (MEM * 3 // 4))
        a, b = got["pids"].split()
        self.assertEqual(int(got["limit0"]), MEM)
        self.assertEqual(int(got["limit1"]), MEM)
        self.assertEqual(got["procs0"], a)         # each OSD in its own cgroup
        self.assertEqual(got["procs1"], b)
        self.assertNotIn("-osd.", got["self"])          # the harness stays outside
        c, procs = got["restarted"].split(" ", 1)
        self.assertEqual(procs, c)                 # the restarted one is moved too
        self.assertGreaterEqual(int(got["recorded"]), 2)
        self.assertEqual(got["after0"], "gone")    # tb_down removes them
        self.assertEqual(got["after1"], "gone")
        self.assertEqual(got["off"], "0 0")        # --osd-mem 0: no option, no cgroup


if __name__ == "__main__":
    unittest.main()
