#!/usr/bin/python3
"""Unit tests of qa/hddmodel.py (Ceph-free).

Run: /usr/bin/python3 -m pytest qa/test_hddmodel.py
 or: /usr/bin/python3 -m unittest discover -s qa -p 'test_hddmodel.py'
"""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hddmodel  # noqa: E402
from hddmodel import DiskSpec, HddModel, SeekCurve, PRESETS, SECTOR  # noqa: E402

SPEC = DiskSpec(name="t", rpm=7200, track_to_track_ms=1.0, average_seek_ms=10.0,
                full_stroke_ms=20.0, media_rate_mb_s=100.0, cylinders=90_000)
GIB = 1 << 30


class SeekCurveTest(unittest.TestCase):
    def setUp(self):
        self.c = SeekCurve(SPEC)

    def test_datasheet_points(self):
        self.assertAlmostEqual(self.c(1), 1.0, places=9)
        self.assertAlmostEqual(self.c(30_000), 10.0, places=9)
        self.assertAlmostEqual(self.c(90_000), 20.0, places=9)

    def test_zero_and_sub_cylinder(self):
        self.assertEqual(self.c(0), 0.0)
        self.assertAlmostEqual(self.c(0.25), 1.0)   # still a head move

    def test_monotonic_and_continuous(self):
        prev = 0.0
        for d in [1, 2, 10, 100, 1000, 10_000, 29_999, 30_000, 30_001, 60_000, 90_000]:
            t = self.c(d)
            self.assertGreaterEqual(t, prev)
            prev = t
        self.assertAlmostEqual(self.c(30_000 - 1e-6), self.c(30_000), places=4)

    def test_sqrt_shape_short_seeks(self):
        # a + b*sqrt(d): the increment from d=1 to d=4 is b*(2-1)
        b = self.c(4) - self.c(1)
        self.assertAlmostEqual(self.c(9) - self.c(4), b, places=9)

    def test_linear_long_seeks(self):
        self.assertAlmostEqual(self.c(60_000) - self.c(45_000),
                               self.c(75_000) - self.c(60_000), places=9)

    def test_beyond_full_stroke_clamped(self):
        self.assertAlmostEqual(self.c(10**9), 20.0)

    def test_symmetric(self):
        self.assertEqual(self.c(-500), self.c(500))

    def test_rejects_inconsistent_spec(self):
        bad = DiskSpec("b", 7200, 5.0, 4.0, 20.0, 100.0, 1000)
        with self.assertRaises(ValueError):
            SeekCurve(bad)

    def test_presets_fit(self):
        for spec in PRESETS.values():
            c = SeekCurve(spec)
            self.assertAlmostEqual(c(1), spec.track_to_track_ms, places=6)
            self.assertAlmostEqual(c(spec.cylinders / 3), spec.average_seek_ms, places=6)
            self.assertAlmostEqual(c(spec.cylinders), spec.full_stroke_ms, places=6)
            self.assertEqual(spec.rpm, 7200)
            self.assertTrue(spec.source)


class HddModelTest(unittest.TestCase):
    def test_half_revolution(self):
        m = HddModel(SPEC, GIB)
        self.assertAlmostEqual(m.half_rev_ms, 60000 / 7200 / 2)
        self.assertAlmostEqual(m.half_rev_ms, 4.1667, places=3)

    def test_sequential_costs_transfer_only(self):
        m = HddModel(SPEC, GIB)
        m.service(0, 8)                  # first: unknown head, full cost
        c = m.service(8, 8)
        self.assertTrue(c.sequential)
        self.assertEqual(c.seek_ms, 0.0)
        self.assertEqual(c.rotation_ms, 0.0)
        self.assertAlmostEqual(c.transfer_ms, 4096 / 100e3)   # 100 MB/s = 100e3 B/ms

    def test_first_request_charges_average_seek(self):
        m = HddModel(SPEC, GIB)
        c = m.service(12345, 8)
        self.assertAlmostEqual(c.seek_ms, SPEC.average_seek_ms)
        self.assertAlmostEqual(c.rotation_ms, m.half_rev_ms)

    def test_random_write_cost(self):
        m = HddModel(SPEC, GIB)
        sectors = GIB // SECTOR
        m.service(0, 8)
        c = m.service(sectors // 3, 8)       # a third of the stroke away
        self.assertAlmostEqual(c.seek_ms, 10.0, places=2)
        self.assertAlmostEqual(c.total_ms, 10.0 + 60000 / 7200 / 2 + 4096 / 100e3, places=2)

    def test_position_scales_to_stroke(self):
        # The same fraction of two differently sized devices costs the same.
        small, big = HddModel(SPEC, GIB), HddModel(SPEC, 1000 * GIB)
        small.service(0, 8)
        big.service(0, 8)
        cs = small.service(GIB // SECTOR // 2, 8)
        cb = big.service(1000 * GIB // SECTOR // 2, 8)
        self.assertAlmostEqual(cs.seek_ms, cb.seek_ms, places=3)

    def test_backwards_gap_is_not_sequential(self):
        m = HddModel(SPEC, GIB)
        m.service(1000, 8)
        c = m.service(992, 8)
        self.assertFalse(c.sequential)
        self.assertGreater(c.rotation_ms, 0)

    def test_near_miss_pays_rotation(self):
        m = HddModel(SPEC, GIB)
        m.service(0, 8)
        c = m.service(16, 8)                  # 4 KiB gap, same cylinder
        self.assertFalse(c.sequential)
        self.assertAlmostEqual(c.rotation_ms, m.half_rev_ms)
        self.assertAlmostEqual(c.seek_ms, 1.0)   # < 1 cylinder: track-to-track

    def test_flush_costs_nothing_and_keeps_head(self):
        m = HddModel(SPEC, GIB)
        m.service(0, 8)
        f = m.service(0, 0, "FF")
        self.assertEqual(f.total_ms, 0.0)
        c = m.service(8, 8)
        self.assertTrue(c.sequential)
        self.assertEqual(m.result.other_requests, 1)
        self.assertEqual(m.result.requests, 2)

    def test_merged_vs_scattered(self):
        """256 sequential 4 KiB writes cost far less than 256 scattered ones."""
        seq, rnd = HddModel(SPEC, GIB), HddModel(SPEC, GIB)
        for i in range(256):
            seq.service(i * 8, 8)
            rnd.service((i * 7919 * 4096) % (GIB // SECTOR - 8), 8)
        self.assertLess(seq.result.total_ms * 50, rnd.result.total_ms)
        self.assertEqual(seq.result.sequential, 255)
        self.assertEqual(seq.result.write_bytes, 256 * 4096)

    def test_reads_and_writes_counted(self):
        m = HddModel(SPEC, GIB)
        m.service(0, 8, "WS")
        m.service(8, 16, "R")
        m.service(100, 8, "FWFS")
        r = m.result
        self.assertEqual((r.write_requests, r.read_requests), (2, 1))
        self.assertEqual(r.write_bytes, 8192)
        self.assertEqual(r.read_bytes, 8192)


TRACE = """\
# tracer: nop
#
            bash-1234    [000] .....   100.000000: tracing_mark_write: MIMBENCH start wall=1700000000.000000
 kworker/u4:1-55      [001] d..1.   100.500000: block_rq_issue: 7,0 WS 4096 () 2048 + 8 be,0,4 [kworker/u4:1]
 kworker/u4:1-55      [001] d..1.   100.600000: block_rq_issue: 7,0 WS 4096 () 2056 + 8 be,0,4 [kworker/u4:1]
          <idle>-0    [001] d.h1.   100.601000: block_rq_complete: 7,0 WS () 2056 + 8 be,0,4 [0]
 kworker/u4:1-55      [001] d..1.   100.700000: block_rq_issue: 7,1 W 8192 () 999999 + 16 be,0,4 [kworker/u4:1]
 kworker/u4:1-55      [001] d..1.   100.800000: block_rq_issue: 7,0 FF 0 () 0 + 0 be,0,4 [kworker/u4:1]
 kworker/u4:1-55      [001] d..1.   100.900000: block_rq_issue: 259,3 WS 4096 () 0 + 8 be,0,4 [kworker/u4:1]
CPU:1 [LOST 12 EVENTS]
 kworker/u4:1-55      [001] d..1.   101.500000: block_rq_issue: 7,0 R 4096 () 500000 + 8 be,0,4 [kworker/u4:1]
            bash-1234    [000] .....   102.000000: tracing_mark_write: MIMBENCH end wall=1700000002.000000
"""


class TraceTest(unittest.TestCase):
    def test_parse(self):
        tr = hddmodel.parse_trace(TRACE.splitlines())
        self.assertEqual(len(tr.issues), 6)
        self.assertEqual(len(tr.completes), 1)
        self.assertEqual(tr.lost_lines, 12)
        self.assertEqual(len(tr.marks), 2)
        self.assertAlmostEqual(tr.wall_offset(), 1700000000.0 - 100.0)
        r = tr.issues[0]
        self.assertEqual((r.dev, r.rwbs, r.sector, r.nr_sectors), ("7,0", "WS", 2048, 8))
        self.assertAlmostEqual(r.ts, 100.5)

    def test_replay_filters_devices(self):
        res = hddmodel.replay_trace(TRACE.splitlines(), {"7,0": GIB, "7,1": GIB}, SPEC)
        d0, d1 = res["devices"]["7,0"], res["devices"]["7,1"]
        self.assertEqual(d0["write_requests"], 2)
        self.assertEqual(d0["read_requests"], 1)
        self.assertEqual(d0["other_requests"], 1)
        self.assertEqual(d0["sequential"], 1)
        self.assertEqual(d1["write_requests"], 1)
        self.assertEqual(res["total"]["write_requests"], 3)    # 259,3 ignored
        self.assertEqual(res["lost_events"], 12)

    def test_window(self):
        # Window [wall .55, wall 1.0] = trace [100.55, 101.0]: only the second
        # 7,0 write (sequential) and the 7,1 write are charged, but the first
        # write still positioned the head.
        res = hddmodel.replay_trace(TRACE.splitlines(), {"7,0": GIB, "7,1": GIB}, SPEC,
                                    wall_from=1700000000.55, wall_to=1700000001.0)
        d0 = res["devices"]["7,0"]
        self.assertEqual(d0["write_requests"], 1)
        self.assertEqual(d0["sequential"], 1)
        self.assertAlmostEqual(d0["total_ms"], 4096 / 100e3)
        self.assertEqual(res["busiest_device"], "7,1")

    def test_window_needs_markers(self):
        lines = [l for l in TRACE.splitlines() if "MIMBENCH" not in l]
        with self.assertRaises(ValueError):
            hddmodel.replay_trace(lines, {"7,0": GIB}, SPEC, wall_from=1.0)

    def test_gzip_trace(self):
        import gzip
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".trace.gz", delete=False) as f:
            name = f.name
        try:
            with gzip.open(name, "wt") as g:
                g.write(TRACE)
            with hddmodel.open_text(name) as f:
                res = hddmodel.replay_trace(f, {"7,0": GIB}, SPEC)
            self.assertEqual(res["devices"]["7,0"]["write_requests"], 2)
        finally:
            os.unlink(name)

    def test_cli(self):
        import io
        import json
        import tempfile
        from contextlib import redirect_stdout
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(TRACE)
        try:
            out = io.StringIO()
            with redirect_stdout(out):
                hddmodel.main([f.name, "--dev", "7,0:%d" % GIB, "--client-writes", "2"])
            res = json.loads(out.getvalue())
            self.assertEqual(res["per_client_write"]["hdd_write_requests"], 1.0)
            self.assertTrue(math.isfinite(res["per_client_write"]["modelled_ms"]))
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
