#!/usr/bin/python3
"""Unit tests of qa/report.py on synthetic runs analysed by qa/analyze.py.

Run: /usr/bin/python3 -m unittest test_report   (tables only: --no-plots,
so it needs no matplotlib; the plots are drawn by every qa/bench.sh run)
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analyze  # noqa: E402
import replot  # noqa: E402
import report  # noqa: E402
import test_analyze  # noqa: E402


def _analysed(fixture_cls, profile, workload):
    """run.json of one of test_analyze's synthetic runs, as another profile/workload."""
    fx = fixture_cls()
    fx.setUp()
    try:
        meta_path = os.path.join(fx.d, "meta.json")
        meta = json.load(open(meta_path))
        meta["profile"] = profile
        meta["workload"].update(workload)
        json.dump(meta, open(meta_path, "w"))
        return analyze.analyse(fx.d)
    finally:
        fx.tearDown()


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        write = {"name": "randwrite-4k-t8-uniform", "rw": "randwrite"}
        mixed = {"name": "randrw50-4k-t8-uniform", "rw": "randrw:50"}
        runs = [(test_analyze.AnalyseRunTest, "mimstore", write),
                (test_analyze.AnalyseRunTest, "filestore-pacific", write),
                (test_analyze.AnalyseMixedRunTest, "mimstore", mixed),
                (test_analyze.AnalyseMixedRunTest, "filestore-pacific", mixed),
                (test_analyze.AnalyseFsRunTest, "mimstore", {"name": "varmail", "rw": "varmail",
                                                             "bs": "-", "threads": 16,
                                                             "distribution": "-"})]
        for cls, prof, wl in runs:
            r = _analysed(cls, prof, wl)
            out = os.path.join(self.d, "runs", prof, wl["name"])
            os.makedirs(out)
            json.dump(r, open(os.path.join(out, "run.json"), "w"))

    def tearDown(self):
        shutil.rmtree(self.d)

    def _report_after(self, change):
        """results.md after change(run) edits mimstore's write run.json."""
        path = os.path.join(self.d, "runs", "mimstore", "randwrite-4k-t8-uniform", "run.json")
        r = json.load(open(path))
        change(r)
        json.dump(r, open(path, "w"))
        with contextlib.redirect_stdout(io.StringIO()):
            report.main(["--no-plots", self.d])
        return open(os.path.join(self.d, "results.md")).read()

    def test_series_sum_outside_tolerance_is_flagged(self):
        md = self._report_after(lambda r: r["client"].update(series_sum_over_ops=0.97))
        self.assertIn("**outside 1 +- 0.005: mimstore/randwrite-4k-t8-uniform 0.9700**", md)

    def test_stall_note(self):
        stalls = {"zero_seconds": 3, "seconds": 60,
                  "events": {"journal_full_waits": {"zero": 2, "all": 2}},
                  "spans": {"in_sync": {"zero": 3, "all": 9}, "in_flush": {"zero": 1, "all": 40}},
                  "journal_used_mb_at_zero": {"min": 3000.0, "median": 3100.0, "max": 3200.0}}
        md = self._report_after(lambda r: r.update(stalls=stalls))
        self.assertIn("in the 3 s at 0 IOPS (in all 60 s): in flush 1 of 40 s, in sync 3 of 9 s, "
                      "journal_full_waits moved in 2 (2), journal used 3000-3200 MB", md)
        # a run without perf samples says nothing of them
        self.assertEqual(1, md.count("s at 0 IOPS (in all"))

    def test_read_run_note(self):
        md = self._report_after(lambda r: r["client"].update(
            read_run={"reads": 137280, "from_s": 83.7, "to_s": 154.8}))
        self.assertIn("**137280 reads in a row, no write, from second 84 to 155**: fio's verify", md)
        md = self._report_after(lambda r: r["client"].update(read_run=None))
        self.assertNotIn("reads in a row", md)

    def test_mem_note(self):
        at_end = {"osd.0": {"heap_mb": {"in_use": 300.0}, "tcmalloc_free_mb": 64.0,
                            "mempools_total_mb": 110.0,
                            "mempools_mb": {"osd_pglog": 90.0, "buffer_anon": 20.0}}}
        md = self._report_after(lambda r: r["memory"].update(at_end=at_end))
        self.assertIn("memory at the end: osd.0 heap in use 300 MiB (mempools 110 MiB: "
                      "osd_pglog 90, buffer_anon 20), tcmalloc free lists 64 MiB", md)
        self.assertEqual(1, md.count("memory at the end"))
        at_end["osd.0"]["mimstore_held"] = {"extents": 240000, "sns_held": 300000,
                                            "journal_live_entries": 300500}
        md = self._report_after(lambda r: r["memory"].update(at_end=at_end))
        self.assertIn("tcmalloc free lists 64 MiB, holding 240000 cached extents, "
                      "300000 sns in flight, 300500 journal entries", md)
        at_end["osd.0"]["mimstore_held"].update(db_block_cache_bytes=64 << 20,
                                                db_memtable_bytes=12 << 20)
        md = self._report_after(lambda r: r["memory"].update(at_end=at_end))
        self.assertIn("300500 journal entries, RocksDB block cache 64 MiB and memtables 12 MiB", md)
        # RSS at the end 400: less osd_pglog 90, the cache 64 and the memtables 12
        md = self._report_after(lambda r: (r["memory"].update(at_end=at_end),
                                           r["memory"].update(osd_rss_mb={"osd.0": {"end": 400.0}})))
        self.assertIn("RSS at the end less the PG log and RocksDB's cache and memtables 234 MiB", md)

    def test_pg_log_line_says_whether_the_log_was_pinned(self):
        self.assertEqual("PG log pinned at 1000 entries per PG", report.pg_log_label(1000))
        self.assertEqual("PG log at Ceph's defaults", report.pg_log_label(0))
        self.assertIn("not pinned", report.pg_log_label(None))

    def test_host_reclaim_line(self):
        found = "DAMON pageout of page cache idle 60 s (128 MiB/s at most)"
        self.assertIn("not recorded", report.host_reclaim_line({}))
        self.assertIn("none found", report.host_reclaim_line(
            {"host_reclaim": {"policy": "pause", "active": False, "found": "no proactive page-cache reclaim"}}))
        self.assertIn("paused for the run (found: %s)" % found, report.host_reclaim_line(
            {"host_reclaim": {"policy": "pause", "active": True, "found": found}}))
        kept = report.host_reclaim_line({"host_reclaim": {"policy": "keep", "active": True, "found": found}})
        self.assertIn("**host page-cache reclaim on: %s**" % found, kept)
        self.assertIn("BlueStore's cache is exempt", kept)

    def test_build_of_another_store_source_is_said(self):
        detail = "built from 0123456789ab, whose src/ differs from this checkout's (ba9876543210)"
        env = {"build_from": {"stamp": {}, "matches_checkout": False, "detail": detail}}
        json.dump(env, open(os.path.join(self.d, "env.json"), "w"))
        self.assertIn("**the Ceph build is not this commit's store: %s**" % detail,
                      self._report_after(lambda r: None))
        env["build_from"]["matches_checkout"] = True
        json.dump(env, open(os.path.join(self.d, "env.json"), "w"))
        self.assertNotIn("not this commit's store", self._report_after(lambda r: None))

    def test_ratios_include_a_nomerge_variant(self):
        def run(profile, iops, rss):
            return {"profile": profile,
                    "client": {"iops_mean": iops, "lat_ms": {"p99": 1.0, "p99_9": 2.0}},
                    "hdd": {"per_client_write": {"write_requests": 1.0}},
                    "hdd_model": {}, "memory": {"total_rss_mb_max": rss}}
        by_wl = {"w": [run("mimstore-jdata-dbnvme", 900.0, 440.0),
                       run("mimstore-nomerge-dbnvme", 300.0, 400.0),
                       run("bluestore-hybrid", 300.0, 1500.0)]}
        r = report.compute_ratios(by_wl, "mimstore-jdata-dbnvme")["w"]
        self.assertEqual(["bluestore-hybrid", "mimstore-nomerge-dbnvme"], sorted(r))
        self.assertAlmostEqual(1.1, r["mimstore-nomerge-dbnvme"]["osd_rss_max"])
        self.assertAlmostEqual(3.0, r["mimstore-nomerge-dbnvme"]["iops"])

    def test_ratios_of_a_mimstore_variant_when_mimstore_is_absent(self):
        self.assertEqual(report.ratio_subject(["mimstore-nomerge", "mimstore", "mimstore-jdata"]), "mimstore")
        self.assertEqual(report.ratio_subject(["mimstore-nomerge", "mimstore-jdata", "mimstore-fixed"]),
                         "mimstore-jdata")
        self.assertIsNone(report.ratio_subject(["bluestore-hybrid", "mimstore-nomerge"]))
        self.assertEqual(report.ratio_subject(["mimstore-nomerge-dbnvme", "mimstore-jdata-dbnvme"]),
                         "mimstore-jdata-dbnvme")
        # the fixture run as mimstore-jdata: its ratios are mimstore-jdata's
        src = os.path.join(self.d, "runs", "mimstore")
        os.rename(src, os.path.join(self.d, "runs", "mimstore-jdata"))
        for dirpath, _, files in os.walk(os.path.join(self.d, "runs", "mimstore-jdata")):
            for fn in files:
                if fn == "run.json":
                    path = os.path.join(dirpath, fn)
                    r = json.load(open(path))
                    r["profile"] = "mimstore-jdata"
                    json.dump(r, open(path, "w"))
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(report.main(["--no-plots", self.d]), 0)
        md = open(os.path.join(self.d, "results.md")).read()
        self.assertIn("## Ratios, mimstore-jdata to the others (same run)", md)
        self.assertIn("mimstore-jdata / filestore-pacific", md)
        res = json.load(open(os.path.join(self.d, "results.json")))
        self.assertEqual(res["ratio_subject"], "mimstore-jdata")

    def test_restart_table(self):
        json.dump({"timeout_s": 1800, "osds": [
            {"osd": "osd.0", "signal": "term", "stop": "exited", "stop_s": 212.4,
             "start_to_up_s": 6.1, "start_to_active_s": 9.0}]},
            open(os.path.join(self.d, "runs", "mimstore", "restart.json"), "w"))
        json.dump({"timeout_s": 1800, "osds": [
            {"osd": "osd.0", "signal": "term", "stop": "killed", "stop_s": 1800.2,
             "start_to_up_s": None, "start_to_active_s": None}]},
            open(os.path.join(self.d, "runs", "filestore-pacific", "restart.json"), "w"))
        md = self._report_after(lambda r: None)
        self.assertIn("## Restart after the run", md)
        self.assertIn("| mimstore | osd.0 | term | 212.4 | 6.1 | 9.0 |", md)
        self.assertIn("| filestore-pacific | osd.0 | term | 1800.2 (then SIGKILL) | not within 1800 s | "
                      "not within 1800 s |", md)
        res = json.load(open(os.path.join(self.d, "results.json")))
        self.assertEqual(212.4, res["restarts"]["mimstore"]["osds"][0]["stop_s"])

    def test_no_restart_table_without_restarts(self):
        self.assertNotIn("Restart after the run", self._report_after(lambda r: None))

    def _tables(self):
        md = open(os.path.join(self.d, "results.md")).read()
        tables = {}
        for sec in md.split("\n## ")[1:]:
            title, _, body = sec.partition("\n")
            head = [l for l in body.splitlines() if l.startswith("| profile")]
            if head:
                tables[title] = head[0]
        return md, tables

    def test_read_columns_only_where_there_are_reads(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(report.main(["--no-plots", self.d]), 0)
        md, tables = self._tables()
        self.assertNotIn("read IOPS", tables["randwrite-4k-t8-uniform"])
        self.assertIn("read IOPS", tables["randrw50-4k-t8-uniform"])
        self.assertIn("write p99 ms", tables["randrw50-4k-t8-uniform"])
        # the mixed row: total 95 IOPS, 25 reads/s, half of the reads from the HDD
        row = [l for l in md.splitlines() if l.startswith("| mimstore | 95 |")]
        self.assertEqual(len(row), 1, md)
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        self.assertEqual(cells[2:6], ["25", "7.00", "80.0", "0.50"])
        self.assertIn("CPU-s per 1000 client ops", md)
        self.assertIn("| mimstore | 130 | 20 |", md)    # varmail: flowops/s, then reads/s
        self.assertEqual(list(tables)[-1], "varmail")   # after the block workloads
        self.assertIn("Per-second series sum over the client's total: 1.0000-1.0000.", md)
        res = json.load(open(os.path.join(self.d, "results.json")))
        self.assertAlmostEqual(res["ratios"]["randrw50-4k-t8-uniform"]["filestore-pacific"]["iops"], 1.0)
        self.assertEqual(res["plots"], [])

    def test_a_committed_result_reports_again_from_its_json(self):
        # committed results keep results.json, not runs/: the report (and
        # qa/replot.py's plots) must come back from it alone
        with contextlib.redirect_stdout(io.StringIO()):
            report.main(["--no-plots", self.d])
        first = open(os.path.join(self.d, "results.md")).read()
        shutil.rmtree(os.path.join(self.d, "runs"))
        os.remove(os.path.join(self.d, "results.md"))
        runs, _, _, _ = report.load(self.d)
        self.assertEqual(len(runs), 5)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(report.main(["--no-plots", self.d]), 0)
        self.assertEqual(open(os.path.join(self.d, "results.md")).read(), first)

    def test_replot_finds_bench_results_and_sweeps(self):
        with contextlib.redirect_stdout(io.StringIO()):
            report.main(["--no-plots", self.d])
        sweep = os.path.join(self.d, "sweep")
        os.makedirs(os.path.join(sweep, "2G-nvme1G", "rep1-uniform"))
        json.dump({"points": []}, open(os.path.join(sweep, "sweep.json"), "w"))
        shutil.copy(os.path.join(self.d, "results.json"),
                    os.path.join(sweep, "2G-nvme1G", "rep1-uniform"))
        found = [(os.path.relpath(d, self.d), k) for d, k in replot.targets(self.d)]
        self.assertEqual(found, [(".", "bench"), ("sweep", "sweep"),
                                 (os.path.join("sweep", "2G-nvme1G", "rep1-uniform"), "bench")])



class CommittedResultsTest(unittest.TestCase):
    """docs/results keeps the JSON, not the plots drawn from it (qa/replot.py)."""

    def test_no_committed_plot_that_the_json_can_draw(self):
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        out = subprocess.run(["git", "-C", repo, "ls-files", "docs/results"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, "needs a git checkout: %s" % out.stderr)
        files = set(out.stdout.split())
        self.assertTrue(any(f.endswith("results.json") for f in files), "no results listed")
        drawable = sorted(f for f in files if f.endswith(".png") and (
            os.path.join(os.path.dirname(f), "results.json") in files
            or os.path.join(os.path.dirname(f), "sweep.json") in files))
        self.assertEqual(drawable, [], "plots that qa/replot.py draws from the JSON beside them")


if __name__ == "__main__":
    unittest.main()
