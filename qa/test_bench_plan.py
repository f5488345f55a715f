#!/usr/bin/python3
"""Tests of bench.sh's plan (--dry-run: options checked, nothing started):
--hdd-size as a size or as a multiple of the data each OSD holds, and the
refusal of a disk too small for that data. Ceph-free."""

import os
import re
import subprocess
import tempfile
import unittest

import test_host_reclaim

QA = os.path.dirname(os.path.abspath(__file__))
HDD = re.compile(r"HDD: emulated \S+ \(qa/diskemu\), (\S+) thin, .*?, ([0-9.]+) % of it the image's data")


def plan(*args, env=None):
    p = subprocess.run([os.path.join(QA, "bench.sh"), "--dry-run"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout


class HddSize(unittest.TestCase):
    def hdd(self, *args):
        rc, out = plan(*args)
        self.assertEqual(rc, 0, out)
        m = HDD.search(out)
        self.assertIsNotNone(m, out)
        return m.group(1), float(m.group(2))

    def test_default_is_a_1t_disk(self):
        self.assertEqual(self.hdd(), ("1T", 0.2))        # 2 GiB image

    def test_size(self):
        self.assertEqual(self.hdd("--hdd-size", "16g", "--image-size", "4G"), ("16G", 25.0))

    def test_multiple_of_the_data_per_osd(self):
        self.assertEqual(self.hdd("--hdd-size", "2x", "--image-size", "8G"), ("16G", 50.0))
        # 3 OSDs, pool size 2: each holds 2/3 of the image; rounded up to a GiB
        self.assertEqual(self.hdd("--hdd-size", "2x", "--image-size", "8G", "--osds", "3",
                                  "--pool-size", "2"), ("11G", 48.5))

    def test_too_small_or_malformed_is_refused(self):
        for args, says in ((("--hdd-size", "2G"), "give 3G or more"),
                           (("--hdd-size", "1x"), "give 3G or more"),
                           (("--hdd-size", "0x"), "takes a size"),
                           (("--hdd-size", "big"), "takes a size")):
            with self.subTest(args=args):
                rc, out = plan(*args)
                self.assertNotEqual(rc, 0, out)
                self.assertIn(says, out)


class ProductionShape(unittest.TestCase):
    """The conservative defaults (docs/benchmarking.md, "Production shape"):
    each OSD's memory bounded, the merge-index budget scaled to the journal
    as a 16 TB OSD with a 1 % partition has it."""

    def line(self, key, *args):
        rc, out = plan(*args)
        self.assertEqual(rc, 0, out)
        m = re.search(r"^.*%s: (.*)$" % re.escape(key), out, re.M)
        self.assertIsNotNone(m, out)
        return m.group(1)

    def test_memory_bounded_by_default(self):
        self.assertTrue(self.line("OSD memory").startswith("2G per OSD (memory cgroup"))
        self.assertTrue(self.line("OSD memory", "--osd-mem", "0").startswith("unbounded"))

    def test_index_budget_scaled_to_the_journal(self):
        # 1 GiB x 64 MiB / 160 GB = 450,359 B = 439 KiB
        self.assertTrue(self.line("merge-index budget").startswith("scaled: 439 KiB for the 1G journal"))
        self.assertTrue(self.line("merge-index budget", "--nvme-size", "4G")
                        .startswith("scaled: 1759 KiB for the 4G journal"))
        # a small journal gets the store's floor, not less
        self.assertTrue(self.line("merge-index budget", "--nvme-size", "256M")
                        .startswith("scaled: 256 KiB"))

    def test_index_budget_default_and_size(self):
        self.assertIn("64 MiB", self.line("merge-index budget", "--index-budget", "default"))
        self.assertTrue(self.line("merge-index budget", "--index-budget", "1M").startswith("1024 KiB"))
        for bad, says in (("100K", "below the store's floor"), ("lots", "takes scaled, default or a size")):
            with self.subTest(bad=bad):
                rc, out = plan("--index-budget", bad)
                self.assertNotEqual(rc, 0, out)
                self.assertIn(says, out)


class HostReclaim(unittest.TestCase):
    """The plan says what the host reclaims and what the run does about it
    (a made-up sysfs: HOST_RECLAIM_SYSFS; --dry-run pauses nothing)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        test_host_reclaim.kdamond(self.tmp.name, 0, "on", [("pageout", 12)])
        self.env = {"HOST_RECLAIM_SYSFS": self.tmp.name}

    def test_paused_by_default(self):
        rc, out = plan(env=self.env)
        self.assertEqual(rc, 0, out)
        self.assertIn("host page-cache reclaim: DAMON pageout of page cache idle 60 s "
                      "(128 MiB/s at most) (paused for the run, if any)", out)

    def test_keep(self):
        rc, out = plan("--host-reclaim", "keep", env=self.env)
        self.assertEqual(rc, 0, out)
        self.assertIn("(kept: --host-reclaim keep)", out)

    def test_bad_value_is_refused(self):
        rc, out = plan("--host-reclaim", "off", env=self.env)
        self.assertNotEqual(rc, 0, out)
        self.assertIn("--host-reclaim takes pause", out)


if __name__ == "__main__":
    unittest.main()
