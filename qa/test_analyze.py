#!/usr/bin/python3
"""Unit tests of qa/analyze.py (Ceph-free, synthetic run directories).

Run: /usr/bin/python3 -m pytest qa/test_analyze.py
"""

import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analyze  # noqa: E402

T0 = 1_700_000_000.0          # window start (wall clock, s)


class PerSecondTest(unittest.TestCase):
    def test_missing_seconds_become_zero(self):
        # fio's averaged log has no line for seconds without completions.
        samples = [(int((T0 + k) * 1000) + 3, 100.0) for k in (1, 2, 3, 8, 9, 10)]
        s = analyze.per_second(samples, T0, 10, 0.0)
        self.assertEqual(s, [100, 100, 100, 0, 0, 0, 0, 100, 100, 100])

    def test_jitter_goes_to_the_free_neighbour(self):
        samples = [(int((T0 + 1) * 1000), 10.0), (int((T0 + 1.45) * 1000), 20.0)]
        s = analyze.per_second(samples, T0, 3, 0.0)
        self.assertEqual(s, [10.0, 20.0, 0.0])

    def test_outside_window_ignored(self):
        samples = [(int((T0 - 5) * 1000), 7.0), (int((T0 + 50) * 1000), 7.0)]
        self.assertEqual(analyze.per_second(samples, T0, 3, 0.0), [0.0, 0.0, 0.0])

    def test_latency_fill_none(self):
        s = analyze.per_second([(int((T0 + 2) * 1000), 5e6)], T0, 3, None)
        self.assertEqual(s, [None, 5e6, None])


class PerSecondFromIosTest(unittest.TestCase):
    def test_counts_every_write(self):
        # 3 writes in second 0, none in 1, 2 in 2; one 5 ms before the
        # estimated start and one just past the end are kept.
        ios = [(int((T0 - 0.005) * 1000), 1e6), (int((T0 + 0.2) * 1000), 3e6),
               (int((T0 + 0.9) * 1000), 2e6), (int((T0 + 2.1) * 1000), 4e6),
               (int((T0 + 3.004) * 1000), 6e6)]
        iops, lat = analyze.per_second_from_ios(ios, T0, 3)
        self.assertEqual(iops, [3.0, 0.0, 2.0])
        self.assertEqual(sum(iops), len(ios))
        self.assertEqual(lat, [2e6, None, 5e6])
        # the log as _client_fio keeps it, with the direction: same series
        self.assertEqual(analyze.per_second_from_ios([io + (i % 2,) for i, io in enumerate(ios)], T0, 3),
                         (iops, lat))

    def test_boundary_goes_to_the_later_second(self):
        iops, _ = analyze.per_second_from_ios([(int((T0 + 1) * 1000), 1.0)], T0, 3)
        self.assertEqual(iops, [0.0, 1.0, 0.0])


class StatsTest(unittest.TestCase):
    def test_flat(self):
        st = analyze.series_stats([200.0] * 20)
        self.assertAlmostEqual(st["cv"], 0.0)
        self.assertEqual(st["zero_seconds"], 0)
        self.assertEqual(st["ma10_min"], 200.0)

    def test_bursty(self):
        xs = [3000.0] * 2 + [0.0] * 13 + [3000.0] * 2 + [0.0] * 13   # FileStore-like
        st = analyze.series_stats(xs)
        self.assertEqual(st["zero_seconds"], 26)
        self.assertEqual(st["longest_zero_run"], 13)
        self.assertEqual(st["zero_runs"], {"count": 2, "min": 13, "median": 13, "max": 13})
        self.assertEqual(st["busy_runs"]["max"], 2)
        self.assertAlmostEqual(st["mean"], 400.0)
        self.assertGreater(st["cv"], 2.5)

    def test_interp(self):
        recs = [{"t": 10.0, "v": 0}, {"t": 11.0, "v": 100}, {"t": 12.0, "v": 300}]
        g = lambda r: r["v"]  # noqa: E731
        self.assertAlmostEqual(analyze.interp(recs, 10.5, g), 50)
        self.assertAlmostEqual(analyze.interp(recs, 11.75, g), 250)
        self.assertEqual(analyze.interp(recs, 5, g), 0)
        self.assertEqual(analyze.interp(recs, 50, g), 300)


class StallCausesTest(unittest.TestCase):
    """What the store did in the seconds at zero IOPS (sampler --asok)."""

    @staticmethod
    def recs(fn):
        # one sample at each second boundary, T0-1 .. T0+10; two OSDs
        return [{"t": T0 + k, "perf": {"osd.0": fn(k), "osd.1": fn(k)}} for k in range(-1, 11)]

    def test_events_spans_and_journal(self):
        def perf(k):
            return {
                "journal_full_waits": 1 if k >= 3 else 0,          # moved in second 2
                "pace_waits": 10 * k,                              # moved every second
                "syncs": 1 if k >= 6 else 0,
                "sync_lat": [1, 3.2] if k >= 6 else [0, 0.0],      # ended in second 5, lasted 3.2 s
                "flush_lat": [0, 0.0],
                "journal_used_bytes": 5e8,
            }
        iops = [100, 100, 0, 0, 0, 100, 100, 0, 100, 100]          # zero: 2, 3, 4, 7
        st = analyze.stall_causes(self.recs(perf), T0, iops)
        self.assertEqual(st["zero_seconds"], 4)
        self.assertEqual(st["seconds"], 10)
        self.assertEqual(st["events"]["journal_full_waits"], {"zero": 1, "all": 1})
        self.assertEqual(st["events"]["pace_waits"], {"zero": 4, "all": 10})
        self.assertEqual(st["events"]["syncs"], {"zero": 0, "all": 1})
        self.assertNotIn("backoffs", st["events"])                 # never moved
        # the sync covered 2.8 .. 6.0: seconds 2, 3, 4, 5
        self.assertEqual(st["spans"]["in_sync"], {"zero": 3, "all": 4})
        self.assertEqual(st["spans"]["in_flush"], {"zero": 0, "all": 0})
        self.assertAlmostEqual(st["journal_used_mb_at_zero"]["median"], 1000.0)  # both OSDs

    def test_no_perf_samples(self):
        self.assertIsNone(analyze.stall_causes([{"t": T0}, {"t": T0 + 1}], T0, [0]))


class PerfTest(unittest.TestCase):
    def test_delta_and_highlights(self):
        d = tempfile.mkdtemp()
        try:
            a = {"t": 100.0, "osd.0": {"filestore": {"commitcycle": 10, "journal_full": 0,
                                                     "op_queue_ops": 5,
                                                     "commitcycle_latency": {"avgcount": 10, "sum": 1.0}},
                                       "osd": {"op_w": 1000}}}
            b = {"t": 160.0, "osd.0": {"filestore": {"commitcycle": 22, "journal_full": 0,
                                                     "op_queue_ops": 5,
                                                     "commitcycle_latency": {"avgcount": 22, "sum": 3.5}},
                                       "osd": {"op_w": 13000}}}
            json.dump(a, open(os.path.join(d, "s.json"), "w"))
            json.dump(b, open(os.path.join(d, "e.json"), "w"))
            r = analyze.perf_delta(os.path.join(d, "s.json"), os.path.join(d, "e.json"))
            self.assertTrue(r["available"])
            self.assertEqual(r["seconds"], 60.0)
            o = r["osds"]["osd.0"]
            self.assertEqual(o["filestore.commitcycle"], 12)
            self.assertNotIn("filestore.journal_full", o)          # unchanged: left out
            h = r["highlights"]["osd.0"]
            self.assertEqual(h["osd.op_w"], 12000)
            self.assertEqual(h["filestore.commitcycle_latency.avgcount"], 12)
            self.assertNotIn("filestore.op_queue_ops", h)
            self.assertFalse(analyze.perf_delta("/nonexistent", "/nonexistent")["available"])
        finally:
            shutil.rmtree(d)


def _stat(wios, wsec, ticks):
    s = [0] * 17
    s[4], s[6], s[9] = wios, wsec, ticks
    return s


def _emu_stats(uptime, writes, lat_us, busy_ms, fast_ops, fast=False):
    """A qa/diskemu "stats all" answer for one disk, the fields analyze.py reads."""
    op = {"count": writes, "bytes": 4096 * writes, "avg_latency_us": lat_us, "max_latency_us": lat_us}
    none = {"count": 0, "bytes": 0, "avg_latency_us": 0.0, "max_latency_us": 0.0}
    return [{"disk": "hdd0", "model": "hdd7200", "writes": op, "reads": none, "flushes": none,
             "busy_ms": busy_ms, "seeks": writes, "sequential": 0, "seek_ms": 0.0,
             "rotation_ms": 0.0, "transfer_ms": 0.0,
             "cache": {"full_waits": 0, "destages": 0}, "fast_ops": fast_ops,
             "uptime_s": uptime, "fast": fast}]


class EmuDeltaTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.d)

    def _write(self, name, obj):
        path = os.path.join(self.d, name)
        json.dump(obj, open(path, "w"))
        return path

    def test_window_figures(self):
        # 100 writes at 2 ms before the window, 300 more at 6 ms in 10 s of it
        a = self._write("a.json", _emu_stats(100.0, 100, 2000.0, 400.0, 50))
        b = self._write("b.json", _emu_stats(110.0, 400, 5000.0, 5400.0, 50))
        e = analyze.emu_delta(a, b)
        disk = e["disks"]["hdd0"]
        self.assertEqual(disk["writes"], 300)
        self.assertAlmostEqual(disk["write_latency_us_mean"], 6000.0)
        self.assertAlmostEqual(disk["utilisation"], 0.5)
        self.assertEqual(e["busiest_disk"], "hdd0")
        self.assertEqual(e["fast_ops"], 0)      # the prefill's fast requests are before the window

    def test_missing_snapshot(self):
        a = self._write("a.json", _emu_stats(100.0, 100, 2000.0, 400.0, 0))
        self.assertIsNone(analyze.emu_delta(a, os.path.join(self.d, "none.json")))

    def test_backend_of_old_runs_is_the_throttle(self):
        self.assertEqual(analyze.hdd_backend({"throttle": {"write_iops": 200}}),
                         {"kind": "throttle", "write_iops": 200})
        self.assertEqual(analyze.hdd_backend({"hdd_backend": {"kind": "emu"}, "throttle": None})["kind"], "emu")


HEAP_TEXT = """osd.0 tcmalloc heap stats:------------------------------------------------
MALLOC:      314572800 (  300.0 MiB) Bytes in use by application
MALLOC: +     52428800 (   50.0 MiB) Bytes in page heap freelist
MALLOC: +     10485760 (   10.0 MiB) Bytes in central cache freelist
MALLOC: +      1048576 (    1.0 MiB) Bytes in transfer cache freelist
MALLOC: +      3145728 (    3.0 MiB) Bytes in thread cache freelists
MALLOC: +      2097152 (    2.0 MiB) Bytes in malloc metadata
MALLOC:   ------------
MALLOC: =    383778816 (  366.0 MiB) Actual memory used (physical + swap)
MALLOC: +     20971520 (   20.0 MiB) Bytes released to OS (aka unmapped)
MALLOC:   ------------
Call ReleaseFreeMemory() to release freelist memory to the OS (via madvise()).
"""


class MemSnapshotTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.d)

    def test_heap_and_mempools(self):
        path = os.path.join(self.d, "mem_end.json")
        pools = {"osd_pglog": {"items": 1000, "bytes": 94371840},
                 "buffer_anon": {"items": 10, "bytes": 20971520},
                 "osdmap": {"items": 5, "bytes": 1024}}
        json.dump({"t": T0, "osd.0": {"mempools": {"mempool": {"by_pool": pools}},
                                      "heap": HEAP_TEXT}}, open(path, "w"))
        m = analyze.mem_snapshot(path)["osd.0"]
        self.assertAlmostEqual(m["heap_mb"]["in_use"], 300.0)
        self.assertAlmostEqual(m["heap_mb"]["released"], 20.0)
        self.assertAlmostEqual(m["tcmalloc_free_mb"], 64.0)   # 50 + 10 + 1 + 3, not metadata
        self.assertAlmostEqual(m["mempools_total_mb"], 110.0, places=2)
        # largest first; pools under 1 MiB left out of the list, not the total
        self.assertEqual(list(m["mempools_mb"]), ["osd_pglog", "buffer_anon"])
        self.assertAlmostEqual(m["mempools_mb"]["osd_pglog"], 90.0)

    def test_mimstore_counts(self):
        path = os.path.join(self.d, "mem_end.json")
        held = {"htmll": {"extents": 240000, "sns_held": 300000, "sns_window": 301000,
                          "journal_live_entries": 300500, "merge": True}}
        json.dump({"t": T0, "osd.0": {"mempools": None, "heap": HEAP_TEXT, "mimstore": held},
                   "osd.1": {"mempools": None, "heap": HEAP_TEXT, "mimstore": None}},
                  open(path, "w"))
        m = analyze.mem_snapshot(path)
        self.assertEqual({"extents": 240000, "sns_held": 300000, "sns_window": 301000,
                          "journal_live_entries": 300500}, m["osd.0"]["mimstore_held"])
        self.assertNotIn("mimstore_held", m["osd.1"])   # another store: no counts

    def test_admin_socket_failure_and_no_file(self):
        path = os.path.join(self.d, "mem_end.json")
        json.dump({"t": T0, "osd.0": {"mempools": None, "heap": "error: connection refused\n"}},
                  open(path, "w"))
        m = analyze.mem_snapshot(path)["osd.0"]
        self.assertIsNone(m["tcmalloc_free_mb"])
        self.assertIsNone(m["mempools_total_mb"])
        self.assertIsNone(analyze.mem_snapshot(os.path.join(self.d, "none.json")))


class AnalyseRunTest(unittest.TestCase):
    """A 10 s synthetic run: 100 client writes/s except a 3 s freeze."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        runtime = 10
        end_ms = int((T0 + runtime) * 1000)
        fio = {"timestamp_ms": end_ms, "jobs": [{
            "job_runtime": runtime * 1000, "error": 0,
            "write": {"total_ios": 700, "iops": 70.0, "bw_bytes": 70 * 4096,
                      "clat_ns": {"mean": 5e6, "max": 3e9,
                                  "percentile": {"50.000000": 1e6, "99.000000": 2e9,
                                                 "99.900000": 3e9}}}}]}
        json.dump(fio, open(os.path.join(self.d, "fio.json"), "w"))
        with open(os.path.join(self.d, "fio_clat.1.log"), "w") as f:
            for k in (0, 1, 2, 3, 7, 8, 9):        # seconds with writes
                for i in range(100):
                    f.write("%d, 2000000, 1, 4096, 0\n" % int((T0 + k) * 1000 + i * 9 + 2))
        devices = {
            "hdd": [{"osd": 0, "dev": "/dev/loop0", "name": "loop0", "majmin": "7:0",
                     "bytes": 1 << 30, "mount": "/x", "scheduler": "mq-deadline"}],
            "nvme": [{"osd": 0, "dev": "/dev/loop1", "name": "loop1", "majmin": "7:1",
                      "bytes": 1 << 30, "role": "journal/db"}],
            "throttle": {}}
        meta = {"profile": "filestore-pacific", "osds": 1, "pool_size": 1,
                "workload": {"name": "randwrite-4k-t8-uniform", "rw": "randwrite", "bs": "4k",
                             "threads": 8, "distribution": "uniform", "runtime": runtime,
                             "warmup": 5, "image_size": "2G"},
                "warmup_rule": "fixed", "devices": devices}
        json.dump(meta, open(os.path.join(self.d, "meta.json"), "w"))
        with open(os.path.join(self.d, "samples.jsonl"), "w") as f:
            for k in range(-2, runtime + 3):
                t = T0 + k
                f.write(json.dumps({
                    "t": t,
                    "stat": {"loop0": _stat(70 * (k + 2), 8 * 70 * (k + 2), 0),
                             "loop1": _stat(0, 0, 250 * (k + 2))},   # 25 % busy
                    "rss_kb": {"osd.0": 102400 + 1024 * max(k, 0)},
                    "cpu_ticks": {"osd.0": 10 * (k + 2)},
                    "sys_cpu": [100 * (k + 2), 0, 0, 100 * (k + 2), 0, 0, 0, 0]}) + "\n")
        # trace: 700 scattered 4 KiB writes inside the window, markers for the clock
        with open(os.path.join(self.d, "hdd.trace"), "w") as f:
            f.write("  bash-1 [000] ..... 50.000000: tracing_mark_write: MIMBENCH start wall=%.6f\n" % (T0 - 50 + 50))
            for i in range(700):
                ts = 50.0 + 0.001 + i * (runtime - 0.01) / 700
                f.write(" kw-2 [001] ..... %.6f: block_rq_issue: 7,0 WS 4096 () %d + 8 be,0,4 [kw]\n"
                        % (ts, (i * 104729 * 8) % ((1 << 30) // 512 - 8)))
            f.write("  bash-1 [000] ..... 60.000000: tracing_mark_write: MIMBENCH end wall=%.6f\n" % (T0 + 10))

    def tearDown(self):
        shutil.rmtree(self.d)

    def test_analyse(self):
        r = analyze.analyse(self.d)
        c = r["client"]
        self.assertEqual(c["writes"], 700)
        self.assertEqual(c["per_second"]["zero_seconds"], 3)
        self.assertEqual(r["series"]["iops"], [100, 100, 100, 100, 0, 0, 0, 100, 100, 100])
        self.assertAlmostEqual(c["series_sum_over_ops"], 1.0)
        self.assertEqual(c["reads"], 0)
        self.assertIsNone(c["read"])
        self.assertEqual(c["write"]["ops"], 700)
        # 100 CPU ticks in the 10 s window for 700 writes
        self.assertAlmostEqual(r["cpu"]["osd_cpu_s_per_kop"], 100.0 / analyze.CLK_TCK / 0.7)
        self.assertIsNone(r["nvme"]["write_bytes_per_client_byte"])   # fio.json without io_bytes
        self.assertIsNone(r["nvme"]["write_bytes_per_osd_byte"])      # no perf dumps
        self.assertAlmostEqual(c["lat_ms"]["p99_9"], 3000.0)
        self.assertAlmostEqual(r["hdd"]["per_client_write"]["write_requests"], 1.0)
        self.assertAlmostEqual(r["hdd"]["per_client_write"]["write_bytes"], 4096.0)
        self.assertAlmostEqual(r["nvme"]["busy_pct_max"], 25.0)
        m = r["hdd_model"]
        self.assertTrue(m["available"])
        self.assertEqual(m["write_requests"], 700)
        # scattered 4 KiB writes: seek + half a revolution each, 7K320 class
        self.assertGreater(m["per_client_write"]["modelled_ms"], 6.0)
        self.assertLess(m["per_client_write"]["modelled_ms"], 20.0)
        self.assertAlmostEqual(r["memory"]["osd_rss_mb"]["osd.0"]["max"], 110.0)
        self.assertIn("filestore-pacific", analyze.summary_line(r))
        self.assertEqual(r["hdd_backend"]["kind"], "throttle")
        self.assertIsNone(r["hdd_emulator"])


class AnalyseMixedRunTest(AnalyseRunTest):
    """The same run with reads: 50 reads/s in seconds 0-4, none in the freeze
    they do not fill; the reads count in the series and the per-op costs."""

    def setUp(self):
        super().setUp()
        fio = json.load(open(os.path.join(self.d, "fio.json")))
        fio["jobs"][0]["read"] = {"total_ios": 250, "iops": 25.0, "bw_bytes": 25 * 4096,
                                  "io_bytes": 250 * 4096,
                                  "clat_ns": {"mean": 8e6, "max": 9e7,
                                              "percentile": {"50.000000": 7e6, "99.000000": 8e7,
                                                             "99.900000": 9e7}}}
        fio["jobs"][0]["write"]["io_bytes"] = 700 * 4096
        json.dump(fio, open(os.path.join(self.d, "fio.json"), "w"))
        with open(os.path.join(self.d, "fio_clat.1.log"), "a") as f:
            for k in range(5):
                for i in range(50):
                    f.write("%d, 8000000, 0, 4096, 0\n" % int((T0 + k) * 1000 + i * 19 + 5))
        # 125 HDD reads in the window (1 per 2 client reads: half from a cache)
        samples = [json.loads(l) for l in open(os.path.join(self.d, "samples.jsonl"))]
        for rec in samples:
            rec["stat"]["loop0"][0] = int(12.5 * (rec["t"] - T0 + 2))
            rec["stat"]["loop1"][6] = int(2 * 8 * 70 * (rec["t"] - T0 + 2))   # 2 B per client byte
        with open(os.path.join(self.d, "samples.jsonl"), "w") as f:
            for rec in samples:
                f.write(json.dumps(rec) + "\n")
        # pool size 2: the primary takes the client's bytes, a replica the same again
        perf = lambda t, n: {"t": t, "osd.0": {"osd": {"op_w_in_bytes": n}},
                             "osd.1": {"osd": {"subop_w_in_bytes": n}}}
        json.dump(perf(T0, 10 ** 6), open(os.path.join(self.d, "perf_start.json"), "w"))
        json.dump(perf(T0 + 10, 10 ** 6 + 700 * 4096),
                  open(os.path.join(self.d, "perf_end.json"), "w"))

    def test_analyse(self):
        r = analyze.analyse(self.d)
        c = r["client"]
        self.assertEqual((c["ops"], c["writes"], c["reads"]), (950, 700, 250))
        self.assertAlmostEqual(c["iops_mean"], 95.0)
        self.assertEqual(r["series"]["iops"], [150, 150, 150, 150, 50, 0, 0, 100, 100, 100])
        self.assertAlmostEqual(c["series_sum_over_ops"], 1.0)
        self.assertIsNone(c["read_run"])                             # 250 reads in a row: a mix
        self.assertAlmostEqual(c["read"]["lat_ms"]["p99"], 80.0)
        self.assertAlmostEqual(c["lat_ms"]["p99"], 2000.0)          # the writes'
        self.assertAlmostEqual(r["hdd"]["per_client_read"]["read_requests"], 0.5)
        self.assertAlmostEqual(r["nvme"]["write_bytes_per_client_byte"], 2.0)
        self.assertEqual(r["nvme"]["osd_write_bytes"], 2 * 700 * 4096)
        self.assertAlmostEqual(r["nvme"]["write_bytes_per_osd_byte"], 1.0)
        self.assertAlmostEqual(r["cpu"]["osd_cpu_s_per_kop"], 100.0 / analyze.CLK_TCK / 0.95)


class ReadRunTest(unittest.TestCase):
    """fio's end-of-pass verify: a long run of reads with no write."""

    def ios(self, pattern, start_ms=100000):
        out, t = [], start_ms
        for ddir, n in pattern:
            for _ in range(n):
                out.append((t, 1e6, ddir))
                t += 1
        return out

    def test_long_run_is_found_and_placed(self):
        ios = self.ios([(1, 32), (0, 32)] * 10 + [(1, 5), (0, 2500), (1, 32), (0, 1200)])
        got = analyze.longest_read_run(ios, 100.0)
        self.assertEqual(got["reads"], 2500)
        self.assertAlmostEqual(got["from_s"], 0.6, places=1)     # after 645 I/Os of 1 ms
        self.assertAlmostEqual(got["to_s"], 3.1, places=1)

    def test_batches_and_short_runs_are_not(self):
        ios = self.ios([(1, 32), (0, 32)] * 50 + [(1, 1), (0, analyze.READ_RUN_FLAG - 1)])
        self.assertIsNone(analyze.longest_read_run(ios, 100.0))


class VerifyReadsTest(unittest.TestCase):
    def test_rate_over_the_job_runtime(self):
        # fio's readback: verify reads have a count but no runtime, no rate
        d = {"total_ios": 300, "iops": 0, "bw_bytes": 0, "runtime": 0, "io_bytes": 300 * 4096,
             "clat_ns": {"mean": 1e6, "max": 2e6, "percentile": {}}}
        r = analyze._direction(d, 10.0)
        self.assertAlmostEqual(r["iops_mean"], 30.0)
        self.assertAlmostEqual(r["bw_mb_s"], 30 * 4096 / 1e6)
        d.update({"runtime": 10000, "iops": 29.5})     # a timed direction keeps fio's rate
        self.assertAlmostEqual(analyze._direction(d, 10.0)["iops_mean"], 29.5)


class AnalyseFsRunTest(AnalyseRunTest):
    """The same window, driven by qa/fsworkload.py instead of fio."""

    def setUp(self):
        super().setUp()
        os.remove(os.path.join(self.d, "fio.json"))
        os.remove(os.path.join(self.d, "fio_clat.1.log"))
        lat = {"mean": 3.0, "p50": 1.0, "p99": 40.0, "p99_9": 90.0, "max": 120.0}
        fs = {"personality": "varmail", "flowops": 1300, "flowops_per_s": 130.0,
              "window": {"wall_start": T0, "wall_end": T0 + 10, "seconds": 10.0, "warmup_s": 5},
              "per_flowop": {"append": {"count": 200}, "fsync": {"count": 200},
                             "read": {"count": 200}, "open": {"count": 200},
                             "close": {"count": 300}, "create": {"count": 100},
                             "delete": {"count": 100}},
              "read_mb_s": 2.0, "write_mb_s": 0.8, "read_bytes": 20_000_000, "write_bytes": 1_638_400,
              "lat_ms": lat, "series": [130] * 10, "series_sum_over_flowops": 1.0, "errors": []}
        json.dump(fs, open(os.path.join(self.d, "fsworkload.json"), "w"))
        meta = json.load(open(os.path.join(self.d, "meta.json")))
        meta["workload"].update({"name": "varmail", "rw": "varmail", "bs": "-", "threads": 16})
        json.dump(meta, open(os.path.join(self.d, "meta.json"), "w"))

    def test_analyse(self):
        r = analyze.analyse(self.d)
        c = r["client"]
        self.assertEqual((c["ops"], c["writes"], c["reads"]), (1300, 200, 200))
        self.assertAlmostEqual(c["iops_mean"], 130.0)
        self.assertEqual(c["lat_ms"]["p99"], 40.0)
        self.assertEqual(r["series"]["iops"], [130.0] * 10)
        self.assertEqual(c["per_second"]["zero_seconds"], 0)
        # 700 HDD write requests in the window for 200 client writes
        self.assertAlmostEqual(r["hdd"]["per_client_write"]["write_requests"], 3.5)
        self.assertAlmostEqual(r["cpu"]["osd_cpu_s_per_kop"], 100.0 / analyze.CLK_TCK / 1.3)
        self.assertIn("varmail", analyze.summary_line(r))


if __name__ == "__main__":
    unittest.main()
