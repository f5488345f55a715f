#!/usr/bin/python3
"""Unit tests of qa/fsworkload.py: the flows on a scratch directory, a fixed
number of loops per thread (no timing), and the window summary.

Run: /usr/bin/python3 -m unittest test_fsworkload
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fsworkload  # noqa: E402

SMALL = ["--files", "40", "--file-size", "8192", "--append-size", "1024", "--io-size", "4096",
         "--threads", "4"]


class FlowTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(dir="/var/tmp")
        self.fs = os.path.join(self.d, "fs")

    def tearDown(self):
        shutil.rmtree(self.d)

    def files(self):
        out = {}
        for root, _, names in os.walk(self.fs):
            for n in names:
                out[os.path.join(root, n)] = os.path.getsize(os.path.join(root, n))
        return out

    def _run(self, personality, extra=()):
        args = ["--dir", self.fs, "--personality", personality] + SMALL + list(extra)
        self.assertEqual(fsworkload.main(["prepare"] + args), 0)
        before = self.files()
        out = os.path.join(self.d, "out.json")
        rc = fsworkload.main(["run", "--loops", "5", "--warmup", "0", "--runtime", "600",
                              "--out", out] + args)
        self.assertEqual(rc, 0)
        return before, self.files(), json.load(open(out))

    def test_prepare_makes_the_fileset(self):
        fsworkload.main(["prepare", "--dir", self.fs, "--personality", "fileserver"] + SMALL +
                        ["--dirs", "4"])
        f = self.files()
        self.assertEqual(len(f), 32)                   # 80 % of 40
        self.assertEqual(set(f.values()), {8192})
        self.assertEqual(len(os.listdir(self.fs)), 4)
        with self.assertRaises(SystemExit):            # never over an existing fileset
            fsworkload.main(["prepare", "--dir", self.fs, "--personality", "fileserver"] + SMALL)

    def test_varmail(self):
        before, after, r = self._run("varmail")
        ops = {k: v["count"] for k, v in r["per_flowop"].items()}
        # 4 threads x 5 loops = 20 iterations, each: 1 delete, 1 create,
        # 2 opens, 3 closes, 2 appends, 2 fsyncs, 2 whole-file reads
        self.assertEqual(ops, {"delete": 20, "create": 20, "open": 40, "close": 60,
                               "append": 40, "fsync": 40, "read": 40})
        self.assertEqual(r["flowops"], 260)
        self.assertEqual(len(after), len(before))      # one delete, one create per loop
        self.assertAlmostEqual(r["series_sum_over_flowops"], 1.0)
        self.assertGreater(r["read_bytes"], 0)
        self.assertEqual(r["errors"], [])

    def test_fileserver(self):
        before, after, r = self._run("fileserver", ["--dirs", "3"])
        ops = {k: v["count"] for k, v in r["per_flowop"].items()}
        self.assertEqual(ops, {"create": 20, "write": 20, "open": 40, "close": 60, "append": 20,
                               "read": 20, "delete": 20, "stat": 20})
        self.assertEqual(len(after), len(before))
        # whole-file writes are FILE_SIZE each; appends 1..APPEND_SIZE
        self.assertGreaterEqual(r["write_bytes"], 20 * 8192 + 20)
        self.assertLessEqual(r["write_bytes"], 20 * 8192 + 20 * 1024)


class SummaryTest(unittest.TestCase):
    def test_window_and_series(self):
        cfg = dict(fsworkload.PERSONALITIES["varmail"], personality="varmail")
        logs = [[(9.5, "fsync", 0.010, 0), (10.2, "append", 0.001, 100), (11.9, "read", 0.002, 5000),
                 (12.99, "fsync", 0.030, 0), (13.0, "close", 0.0, 0)],
                [(10.0, "create", 0.004, 0)]]
        r = fsworkload.summarise(logs, cfg, 10.0, 13.0)
        self.assertEqual(r["flowops"], 4)              # 9.5 and 13.0 are outside
        self.assertEqual(r["series"], [2, 1, 1])
        self.assertEqual(r["per_flowop"]["fsync"]["count"], 1)
        self.assertAlmostEqual(r["per_flowop"]["fsync"]["lat_ms_mean"], 30.0)
        self.assertEqual((r["read_bytes"], r["write_bytes"]), (5000, 100))
        self.assertAlmostEqual(r["flowops_per_s"], 4 / 3.0)
        self.assertAlmostEqual(r["lat_ms"]["max"], 30.0)
        self.assertAlmostEqual(r["lat_ms"]["p50"], 4.0)     # of 1, 2, 4, 30 ms


if __name__ == "__main__":
    unittest.main()
