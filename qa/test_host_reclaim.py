#!/usr/bin/python3
"""Tests of host_reclaim.py on a made-up sysfs tree (HOST_RECLAIM_SYSFS):
a running DAMON pageout scheme is found and described, other actions and
stopped kdamonds are not, and pause / resume turn exactly what was found
off and on again. Ceph-free; the real /sys is never written."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import host_reclaim


def put(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(value + "\n")


def kdamond(root, kid, state, schemes, aggr_us=5000000):
    k = os.path.join(root, "kernel/mm/damon/admin/kdamonds", str(kid))
    put(os.path.join(k, "state"), state)
    ctx = os.path.join(k, "contexts/0")
    put(os.path.join(ctx, "operations"), "paddr")
    put(os.path.join(ctx, "monitoring_attrs/intervals/aggr_us"), str(aggr_us))
    for i, (action, age_min) in enumerate(schemes):
        s = os.path.join(ctx, "schemes", str(i))
        put(os.path.join(s, "action"), action)
        put(os.path.join(s, "access_pattern/age/min"), str(age_min))
        put(os.path.join(s, "access_pattern/nr_accesses/max"), "1")
        put(os.path.join(s, "quotas/bytes"), str(128 << 20))
        put(os.path.join(s, "quotas/reset_interval_ms"), "1000")
        put(os.path.join(s, "ops_filters/0/type"), "anon")
        put(os.path.join(s, "ops_filters/0/allow"), "N")
        put(os.path.join(s, "ops_filters/0/matching"), "Y")
    return k


def state_of(k):
    with open(os.path.join(k, "state")) as f:
        return f.read().strip()


class HostReclaim(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.root = self.tmp.name
        self.statefile = os.path.join(self.root, "paused.json")

    def test_no_damon_is_nothing(self):
        st = host_reclaim.show(self.root)
        self.assertFalse(host_reclaim.active(st))
        self.assertEqual(host_reclaim.summary(st), "no proactive page-cache reclaim")

    def test_running_pageout_is_found_and_described(self):
        kdamond(self.root, 0, "on", [("pageout", 12), ("stat", 0)])
        kdamond(self.root, 1, "off", [("pageout", 1)])
        st = host_reclaim.show(self.root)
        self.assertTrue(host_reclaim.active(st))
        self.assertEqual([k["id"] for k in st["kdamonds"]], [0])
        (sc,) = st["kdamonds"][0]["schemes"]          # the stat scheme is not reclaim
        self.assertEqual((sc["action"], sc["cold_s"], sc["quota_mib_s"]), ("pageout", 60.0, 128.0))
        self.assertEqual(sc["filters"], [{"type": "anon", "allow": False, "matching": True}])
        self.assertEqual(host_reclaim.summary(st),
                         "DAMON pageout of page cache idle 60 s (128 MiB/s at most)")

    def test_only_other_actions_is_nothing(self):
        kdamond(self.root, 0, "on", [("lru_deprio", 12)])
        self.assertFalse(host_reclaim.active(host_reclaim.show(self.root)))

    def test_pause_then_resume_turns_back_on_what_ran(self):
        on = kdamond(self.root, 0, "on", [("pageout", 12)])
        off = kdamond(self.root, 1, "off", [("pageout", 12)])
        put(os.path.join(self.root, "module/damon_reclaim/parameters/enabled"), "Y")
        host_reclaim.pause(self.statefile, self.root)
        self.assertEqual((state_of(on), state_of(off)), ("off", "off"))
        with open(os.path.join(self.root, "module/damon_reclaim/parameters/enabled")) as f:
            self.assertEqual(f.read(), "N")
        self.assertFalse(host_reclaim.active(host_reclaim.show(self.root)))
        with open(self.statefile) as f:
            self.assertEqual([k["id"] for k in json.load(f)["kdamonds"]], [0])
        host_reclaim.resume(self.statefile, self.root)
        self.assertEqual((state_of(on), state_of(off)), ("on", "off"))   # 1 was never ours
        self.assertTrue(host_reclaim.show(self.root)["damon_reclaim"])
        self.assertFalse(os.path.exists(self.statefile))

    def test_pause_command_fails_when_it_cannot_stop_it(self):
        # a kdamond that does not stop: the command says so and fails
        kdamond(self.root, 0, "on", [("pageout", 12)])
        for name, value in (("ROOT", self.root), ("_write", lambda path, v: None)):
            self.addCleanup(setattr, host_reclaim, name, getattr(host_reclaim, name))
            setattr(host_reclaim, name, value)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            self.assertEqual(host_reclaim.main(["pause", self.statefile]), 1)
        self.assertIn("still running after the pause", out.getvalue())

    def test_resume_without_a_pause_does_nothing(self):
        k = kdamond(self.root, 0, "off", [("pageout", 12)])
        self.assertIsNone(host_reclaim.resume(self.statefile, self.root))
        self.assertEqual(state_of(k), "off")


if __name__ == "__main__":
    unittest.main()
