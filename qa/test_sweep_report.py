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


def _run(profile, dist, iops, flushes=None, runtime=180):
    r = {"profile": profile,
         "workload": {"rw": "randwrite", "distribution": dist, "name": "randwrite-4k-t8-" + dist.replace(":", ""),
                      "warmup": 60, "runtime": runtime},
         "client": {"iops_mean": iops, "series_sum_over_ops": 1.0}}
    if flushes is not None:    # as analyze.perf_delta gives them
        r["perf"] = {"available": True, "highlights": {
            "osd.0": {"mimstore.flush_lat.avgcount": flushes, "mimstore.flush_bytes": 1}}}
    return r


class SweepReportTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        # two repeats at 2G (fits: 512 objects <= 4096 slots), one at 64G
        self._write("2G", "4G", 1, [_run("mimstore", "uniform", 2000),
                                    _run("bluestore-hybrid", "uniform", 200)])
        self._write("2G", "4G", 2, [_run("mimstore", "uniform", 1000),
                                    _run("bluestore-hybrid", "uniform", 250)])
        self._write("64G", "4G", 1, [_run("mimstore", "uniform", 300, runtime=1200),
                                     _run("bluestore-hybrid", "uniform", 300, runtime=1200)])
        json.dump({"htmll_slots": 4096, "cache_max_bytes": 512 << 20, "command": "x",
                   "repeat": 2, "runtime_s": 180, "warmup_s": 60},
                  open(os.path.join(self.d, "sweep-plan.json"), "w"))

    def _write(self, img, nvme, rep, runs, dist=""):
        d = os.path.join(self.d, "%s-nvme%s" % (img, nvme), "rep%d%s" % (rep, dist))
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
        # each row its own window: the points came from different commands
        self.assertIn("| 64G | 4G | randwrite-4k-t8-uniform | 60+1200 | 300 (1 run) |", md)
        self.assertIn("| 60+180 | 1500 (1000-2000) |", md)

    def test_one_row_per_workload(self):
        self._write("64G", "4G", 2, [_run("mimstore", "zipf:1.2", 900),
                                     dict(_run("mimstore", "uniform", 100),
                                          workload={"rw": "randrw:50", "distribution": "uniform",
                                                    "name": "randrw50-4k-t8-uniform"})])
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        self.assertEqual([(r["image"], r["workload"]) for r in rows],
                         [("2G", "randwrite-4k-t8-uniform"), ("64G", "randrw50-4k-t8-uniform"),
                          ("64G", "randwrite-4k-t8-uniform"), ("64G", "randwrite-4k-t8-zipf1.2")])

    def test_one_run_per_distribution(self):
        # sweep.sh's rep<K>-<DIST> runs: each distribution is its own
        # repeat of its own point, beside an older sweep's rep<K>
        self._write("64G", "4G", 1, [_run("mimstore", "zipf:1.2", 900),
                                     _run("bluestore-hybrid", "zipf:1.2", 300)], "-zipf1.2")
        self._write("64G", "4G", 2, [_run("mimstore", "zipf:1.2", 700),
                                     _run("bluestore-hybrid", "zipf:1.2", 350)], "-zipf1.2")
        self._write("64G", "4G", 2, [_run("mimstore", "uniform", 500),
                                     _run("bluestore-hybrid", "uniform", 250)], "-uniform")
        self._write("64G", "4G", 3, [], "-x_y")        # not a run directory: ignored
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        big = {r["workload"]: r for r in rows if r["image"] == "64G"}
        self.assertEqual(big["randwrite-4k-t8-zipf1.2"]["iops"]["mimstore"]["n"], 2)
        self.assertEqual(big["randwrite-4k-t8-zipf1.2"]["ratios"]["bluestore-hybrid"]["median"], 2.5)
        u = big["randwrite-4k-t8-uniform"]["ratios"]["bluestore-hybrid"]
        self.assertEqual((u["n"], u["min"], u["max"]), (2, 1.0, 2.0))

    def test_every_command_that_filled_the_directory_is_named(self):
        rows = sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096)
        md = sweep_report.markdown(rows, {"command": "b", "commands": ["a", "b"]})
        self.assertIn("  - `a`\n  - `b`", md)
        self.assertNotIn("- command: `", md)
        md = sweep_report.markdown(rows, {"command": "x"})      # plans before the list
        self.assertIn("- command: `x`", md)


class SubjectAndWindowTest(unittest.TestCase):
    """The ratios are of the plan's first profile; a point where a repeat of
    it completed fewer than three merge flushes is marked."""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.d)

    def _write(self, img, rep, runs):
        d = os.path.join(self.d, "%s-nvme4G" % img, "rep%d" % rep)
        os.makedirs(d)
        json.dump({"runs": runs}, open(os.path.join(d, "results.json"), "w"))

    def _rows(self, plan):
        return sweep_report.summarise(sweep_report.points(sweep_report.load(self.d)), 4096,
                                      sweep_report.subject_of(plan))

    def test_subject_is_the_plans_first_profile(self):
        self._write("64G", 1, [_run("mimstore-jdata-dbnvme", "uniform", 1000, flushes=3),
                               _run("mimstore", "uniform", 250, flushes=9),
                               _run("bluestore-hybrid", "uniform", 250)])
        plan = {"profiles": "mimstore-jdata-dbnvme,mimstore,bluestore-hybrid"}
        (row,) = self._rows(plan)
        self.assertEqual(row["subject"], "mimstore-jdata-dbnvme")
        self.assertEqual(row["ratios"]["bluestore-hybrid"]["median"], 4.0)
        self.assertEqual(row["ratios"]["mimstore"]["median"], 4.0)
        self.assertEqual(row["subject_flush_cycles"], [3])
        self.assertFalse(row["short_window"])
        md = sweep_report.markdown([row], plan)
        self.assertIn("mimstore-jdata-dbnvme / bluestore-hybrid", md)
        table = md[md.index("|---|"):]
        self.assertIn("| 3 |", table)
        self.assertNotIn("fewer than 3 flush cycles", table)
        # without a plan the subject stays "mimstore"
        self.assertEqual(self._rows({})[0]["subject"], "mimstore")

    def test_a_repeat_with_fewer_than_three_flushes_marks_the_point(self):
        self._write("64G", 1, [_run("mimstore", "uniform", 1700, flushes=1),
                               _run("bluestore-hybrid", "uniform", 280)])
        self._write("64G", 2, [_run("mimstore", "uniform", 1100, flushes=4),
                               _run("bluestore-hybrid", "uniform", 280)])
        (row,) = self._rows({})
        self.assertEqual(row["subject_flush_cycles"], [1, 4])
        self.assertTrue(row["short_window"])
        md = sweep_report.markdown([row], {})
        self.assertIn("randwrite-4k-t8-uniform *fewer than 3 flush cycles in the window*", md)
        self.assertIn("| 1, 4 |", md)

    def test_merging_without_a_completed_flush_is_zero_cycles(self):
        run = _run("mimstore", "uniform", 1700)
        run["perf"] = {"available": True, "highlights": {"osd.0": {"mimstore.merged": 5000}}}
        self._write("16G", 1, [run, _run("bluestore-hybrid", "uniform", 280)])
        (row,) = self._rows({})
        self.assertEqual(row["subject_flush_cycles"], [0])
        self.assertTrue(row["short_window"])
        # merging off: neither counter moves, nothing to count
        off = _run("mimstore", "uniform", 300)
        off["perf"] = {"available": True, "highlights": {"osd.0": {"mimstore.direct_nomerge": 9}}}
        self.assertIsNone(sweep_report.flush_cycles(off))

    def test_a_read_only_phase_marks_the_point(self):
        run = _run("mimstore", "uniform", 11000)
        run["client"]["read_run"] = {"reads": 137280, "from_s": 83.7, "to_s": 154.8}
        self._write("2G", 1, [run, _run("bluestore-hybrid", "uniform", 560)])
        self._write("2G", 2, [_run("mimstore", "uniform", 9000), _run("bluestore-hybrid", "uniform", 570)])
        (row,) = self._rows({})
        self.assertEqual(row["read_runs"], ["mimstore rep 1: 137280"])
        self.assertIn("randwrite-4k-t8-uniform *reads in a row (fio's verify at the end of a pass; "
                      "the others may not reach one): mimstore rep 1: 137280*",
                      sweep_report.markdown([row], {}))

    def test_no_perf_counters_is_not_called_short(self):
        self._write("2G", 1, [_run("mimstore", "uniform", 1700),
                              _run("bluestore-hybrid", "uniform", 280)])
        (row,) = self._rows({})
        self.assertEqual(row["subject_flush_cycles"], [])
        self.assertFalse(row["short_window"])
        self.assertIn("| - |", sweep_report.markdown([row], {}))


if __name__ == "__main__":
    unittest.main()
