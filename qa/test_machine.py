#!/usr/bin/python3
"""Tests of machine.py: a result tree whose runs come from another machine
is named, fields a run did not record are not held against it."""

import json
import os
import subprocess
import tempfile
import unittest

import machine

QA = os.path.dirname(os.path.abspath(__file__))

HERE = {"machine_id": "m1", "kernel": "6.18.44-a", "cpu_model": "EPYC", "cpus": 2, "mem_gib": 23.5}


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def env(self, rel, **fields):
        d = os.path.join(self.tmp.name, rel)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "env.json"), "w") as f:
            json.dump(dict(fields, command="qa/bench.sh"), f)

    def test_same_machine_passes(self):
        self.env("p/rep1", **HERE)
        self.env("p/rep2", kernel="6.18.44-a", cpus=2)       # recorded before cpu_model
        self.assertEqual(machine.check(self.tmp.name, HERE), [])

    def test_other_machine_is_named(self):
        self.env("p/rep1", **HERE)
        self.env("p/rep2", kernel="6.18.44-b", cpus=2)
        self.env("p/rep3", **dict(HERE, cpu_model="Xeon", machine_id="m2"))
        got = machine.check(self.tmp.name, HERE)
        self.assertEqual(len(got), 2, got)
        self.assertIn("p/rep2/env.json: kernel was 6.18.44-b, here 6.18.44-a", got)
        self.assertIn("machine_id was m2, here m1; cpu_model was Xeon, here EPYC", got[1])

    def test_unreadable_env_is_named(self):
        os.makedirs(os.path.join(self.tmp.name, "r"))
        with open(os.path.join(self.tmp.name, "r", "env.json"), "w") as f:
            f.write("{")
        self.assertIn("unreadable", machine.check(self.tmp.name, HERE)[0])

    def test_host_reclaim_policy(self):
        self.env("p/rep1", **HERE)                                   # before the option: kept
        self.env("p/rep2", **dict(HERE, host_reclaim={"policy": "keep", "active": True}))
        self.assertEqual(machine.check(self.tmp.name, HERE), [])     # not asked: not compared
        self.assertEqual(machine.check(self.tmp.name, HERE, reclaim_policy="keep"), [])
        got = machine.check(self.tmp.name, HERE, reclaim_policy="pause")
        self.assertEqual(len(got), 2, got)
        self.assertIn("p/rep1/env.json: host_reclaim was keep, here pause", got)

    def test_sweep_refuses_a_directory_of_other_conditions(self):
        # Only refusals: a sweep that passes the check goes on to run.
        self.env("p/rep1", **HERE)
        for extra, says in (([], "host_reclaim was keep, here pause"),
                            (["--host-reclaim", "off"], "--host-reclaim takes pause or keep")):
            with self.subTest(extra=extra):
                p = subprocess.run([os.path.join(QA, "sweep.sh"), "--results", self.tmp.name, "--"] + extra,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(says, p.stdout)

    def test_identity_has_every_field(self):
        ident = machine.identity()
        self.assertEqual(set(ident), set(machine.FIELDS))
        self.assertTrue(ident["kernel"] and ident["cpus"])


if __name__ == "__main__":
    unittest.main()
