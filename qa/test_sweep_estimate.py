#!/usr/bin/python3
"""Tests of sweep_estimate.py: the wall time of a finished repeat is
taken only from repeats that match the window and did not fail."""

import json
import os
import subprocess
import tempfile
import unittest

import sweep_estimate

QA = os.path.dirname(os.path.abspath(__file__))
START = 1_800_000_000        # 2027-01-15 08:00:00 UTC


class Measured(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.point = self.tmp.name

    def rep(self, name, took, runtime=120, warmup=60, failures="", finished=True, date=None):
        d = os.path.join(self.point, name)
        os.makedirs(d)
        with open(os.path.join(d, "env.json"), "w") as f:
            json.dump({"date": date or "2027-01-15 09:00:00 +0100", "runtime_s": runtime,
                       "warmup_s": warmup}, f)
        with open(os.path.join(d, "failures.txt"), "w") as f:
            f.write(failures)
        if finished:
            res = os.path.join(d, "results.json")
            # two profiles; the later window's end is the repeat's end
            runs = [{"window": {"start": START + 10, "end": START + took / 2}},
                    {"window": {"start": START + took / 2, "end": START + took}}]
            with open(res, "w") as f:
                json.dump({"runs": runs}, f)
            # a copy (docs/results, a fresh checkout) has today's time
            os.utime(res, (START + 9 * 86400, START + 9 * 86400))

    def test_none_without_a_finished_repeat(self):
        self.rep("rep1-uniform", 0, finished=False)
        self.assertIsNone(sweep_estimate.measured(self.point, "uniform", 120, 60))

    def test_longest_matching_repeat(self):
        self.rep("rep1-uniform", 1090)
        self.rep("rep2-uniform", 1075)
        self.rep("rep3-zipf", 3000)                          # another distribution
        self.rep("rep4-uniform", 2000, runtime=600)          # another window
        self.rep("rep5-uniform", 1500, warmup=300)           # another warm-up
        self.assertEqual(sweep_estimate.measured(self.point, "uniform", 120, 60), 1090)
        self.assertEqual(sweep_estimate.measured(self.point, "uniform", 600, 60), 2000)

    def test_failed_repeat_is_not_an_estimate(self):
        self.rep("rep1-uniform", 300, failures="bluestore-hybrid: fio exited 1\n")
        self.assertIsNone(sweep_estimate.measured(self.point, "uniform", 120, 60))

    def test_distribution_with_colon(self):
        self.rep("rep1-zipf1.2", 700)
        self.assertEqual(sweep_estimate.measured(self.point, "zipf:1.2", 120, 60), 700)

    def test_unreadable_date_or_clock_gone_back_is_skipped(self):
        self.rep("rep1-uniform", 500, date="yesterday")
        self.rep("rep2-uniform", -10)
        self.assertIsNone(sweep_estimate.measured(self.point, "uniform", 120, 60))

    def test_repeat_without_measured_windows_is_skipped(self):
        self.rep("rep1-uniform", 800)
        with open(os.path.join(self.point, "rep1-uniform", "results.json"), "w") as f:
            json.dump({"runs": [{"window": {}}]}, f)
        self.assertIsNone(sweep_estimate.measured(self.point, "uniform", 120, 60))

    def test_command_line(self):
        self.rep("rep1-uniform", 950)
        run = lambda *a: subprocess.run([os.path.join(QA, "sweep_estimate.py"), *a],
                                        capture_output=True, text=True)
        got = run(self.point, "uniform", "120", "60")
        self.assertEqual((got.returncode, got.stdout), (0, "950\n"))
        got = run(self.point, "uniform", "180", "60")
        self.assertEqual((got.returncode, got.stdout), (0, ""))
        got = run(self.point, "uniform", "2m", "60")
        self.assertEqual(got.returncode, 2)
        self.assertIn("whole seconds", got.stderr)


if __name__ == "__main__":
    unittest.main()
