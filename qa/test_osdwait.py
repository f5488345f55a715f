#!/usr/bin/env python3
"""Tests of qa/osdwait.py (what bench.sh --restart waits for)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import osdwait  # noqa: E402


class OsdWait(unittest.TestCase):
    def test_upfrom(self):
        dump = {"osds": [{"osd": 0, "up": 1, "up_from": 41}, {"osd": 1, "up": 0, "up_from": 7}]}
        self.assertEqual(41, osdwait.upfrom(dump, "osd.0"))
        self.assertEqual(0, osdwait.upfrom(dump, "osd.1"))   # down
        self.assertEqual(0, osdwait.upfrom(dump, "osd.2"))   # unknown

    def test_active_needs_every_pg_reported_since_the_epoch(self):
        pgs = [{"pgid": "1.0", "state": "active+clean", "reported_epoch": 50},
               {"pgid": "1.1", "state": "active+clean", "reported_epoch": 42}]
        self.assertTrue(osdwait.all_active_since({"pg_stats": pgs}, 42))
        # one PG still shows what it was before the restart
        self.assertFalse(osdwait.all_active_since({"pg_stats": pgs}, 43))
        pgs[1] = {"pgid": "1.1", "state": "peering", "reported_epoch": 60}
        self.assertFalse(osdwait.all_active_since(pgs, 42))
        pgs[1]["state"] = "stale+active+clean"   # its primary has not reported
        self.assertFalse(osdwait.all_active_since(pgs, 42))
        pgs[1]["state"] = "active+clean"
        self.assertTrue(osdwait.all_active_since(pgs, 42))
        self.assertFalse(osdwait.all_active_since({"pg_stats": []}, 0))  # nothing yet

    def test_inactive_states(self):
        pg = {"state": "activating+undersized", "reported_epoch": 9}
        self.assertFalse(osdwait.all_active_since([pg], 1))


if __name__ == "__main__":
    unittest.main()
