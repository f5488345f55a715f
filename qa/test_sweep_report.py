#!/usr/bin/python3
"""Unit tests of qa/sweep_report.py (synthetic sweep directories)."""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import sweep_report  # noqa: E402


def _run(profile, dist, iops):
    return {"profile": profile,
            "workload": {"rw": "randwrite", "distribution": dist, "name": "randwrite-4k-t8-" + dist.replace(":", "")},
            "client": {"iops_mean": iops, "series_sum_over_ops": 1.0}}


class SweepReportTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        # two repeats at 2G (fits: 512 objects <= 4096 slots), one at 64G
        self._write("2G", "4G", 1, [_run("mimstore", "uniform", 2000),
                                    _run("bluestore-hybrid", "uniform", 200)])
        self._write("2G", "4G", 2, [_run("mimstore", "uniform", 1000),
                                    _run("bluestore-hybrid", "uniform", 250)])
        self._write("64G", "4G", 1, [_run("mimstore", "uniform", 300),
                                     _run("bluestore-hybrid", "uniform", 300)])
        json.dump({"htmll_slots": 4096, "cache_max_bytes": 512 << 20, "command": "x",
                   "repeat": 2, "runtime_s": 180, "warmup_s": 60},
                  open(os.path.join(self.d, "sweep-plan.json"), "w"))

    def _write(self, img, nvme, rep, runs):
        d = os.path.join(self.d, "%s-nvme%s" % (img, nvme), "rep%d" % rep)
        os.makedirs(d)
        json.dump({"runs": runs}, open(os.path.join(d, "results.json"), "w"))

    def tearDown(self):
        shutil.rmtree(self.d)

    def test_median_range_and_same_run_ratios(self):
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        self.assertEqual([r["image"] for r in rows], ["2G", "64G"])
        small, big = rows
        self.assertTrue(small["fits_one_generation"])
        self.assertFalse(big["fits_one_generation"])
        m = small["iops"]["mimstore"]
        self.assertEqual((m["n"], m["median"], m["min"], m["max"]), (2, 1500, 1000, 2000))
        # ratios within each run: 2000/200 = 10 and 1000/250 = 4, not 1500/225
        r = small["ratios"]["bluestore-hybrid"]
        self.assertEqual((r["min"], r["max"], r["median"]), (4.0, 10.0, 7.0))
        self.assertEqual(big["ratios"]["bluestore-hybrid"]["median"], 1.0)

    def test_table(self):
        # (the plot needs matplotlib, which the Ceph-free tier does not
        # install; real sweeps draw it)
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        md = sweep_report.markdown(rows, {"command": "x", "htmll_slots": 4096})
        self.assertIn("2G *fits one merge generation*", md)
        self.assertIn("1500 (1000-2000)", md)
        self.assertIn("7.00 (4.00-10.00)", md)
        self.assertIn("| 64G | 4G | randwrite-4k-t8-uniform | 300 (1 run) |", md)

    def test_one_row_per_workload(self):
        self._write("64G", "4G", 2, [_run("mimstore", "zipf:1.2", 900),
                                     dict(_run("mimstore", "uniform", 100),
                                          workload={"rw": "randrw:50", "distribution": "uniform",
                                                    "name": "randrw50-4k-t8-uniform"})])
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        self.assertEqual([(r["image"], r["workload"]) for r in rows],
                         [("2G", "randwrite-4k-t8-uniform"), ("64G", "randrw50-4k-t8-uniform"),
                          ("64G", "randwrite-4k-t8-uniform"), ("64G", "randwrite-4k-t8-zipf1.2")])


if __name__ == "__main__":
    unittest.main()
