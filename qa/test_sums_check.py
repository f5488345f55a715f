#!/usr/bin/python3
"""Tests of sums_check.py: it flags runs whose per-second series does not
add up to the total, runs without a series, and empty trees; and issue 16's
committed runs pass it."""

import glob
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

import sums_check

QA = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(QA), "docs", "results")


def run(profile, key, value):
    client = {} if key is None else {key: value}
    return {"profile": profile, "workload": {"name": "w"}, "client": client}


class SumsCheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, rel, runs):
        p = os.path.join(self.tmp.name, rel, "results.json")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump({"runs": runs}, f)

    def check(self, *dirs):
        out = io.StringIO()
        with redirect_stdout(out):
            rc = sums_check.main(list(dirs))
        return rc, out.getvalue()

    def test_within_tolerance_passes(self):
        self.write("a/rep1", [run("m", "series_sum_over_ops", 1.004),
                              run("f", "series_sum_over_writes", 0.996)])
        rc, out = self.check(self.tmp.name)
        self.assertEqual(rc, 0, out)
        self.assertIn("2 runs, sums 0.9960-1.0040", out)

    def test_off_sum_missing_sum_and_empty_tree_fail(self):
        self.write("a/rep1", [run("m", "series_sum_over_ops", 1.0)])
        self.write("a/rep2", [run("m", "series_sum_over_ops", 0.97)])
        self.write("a/rep3", [run("b", None, None)])
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        rc, out = self.check(os.path.join(self.tmp.name, "a"), empty)
        self.assertEqual(rc, 1)
        self.assertIn("m/w sums to 0.9700", out)
        self.assertIn("b/w has no per-second sum", out)
        self.assertIn("empty: no results.json under it", out)
        self.assertIn("3 results files, 3 problems", out)

    def test_tolerance_option(self):
        self.write("a", [run("m", "series_sum_over_ops", 1.004)])
        self.assertEqual(self.check("--tolerance", "0.001", self.tmp.name)[0], 1)

    def test_issue16_committed_runs_pass(self):
        dirs = sorted(glob.glob(os.path.join(RESULTS, "*-i16-*")))
        self.assertTrue(dirs, "no issue-16 results under %s" % RESULTS)
        rc, out = self.check(*dirs)
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
