#!/usr/bin/python3
"""Checks of mimstore's option file (src/os/mimstore/options/mimstore.yaml.in)
that the Ceph build would otherwise find only an hour in: Ceph's y2c.py
turns it into C++ at build time, and a description with ": " in it, an
unknown type or level, or an option the store reads but the file lacks
breaks that build or the OSD's start. Ceph-free.

Run: /usr/bin/python3 -m unittest test_options   (from qa/)
"""

import os
import re
import unittest

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONS = os.path.join(REPO, "src/os/mimstore/options/mimstore.yaml.in")
STORE = os.path.join(REPO, "src/os/mimstore")

# What Ceph Reef's src/common/options/y2c.py reads from an option.
KEYS = {"name", "type", "level", "desc", "long_desc", "default", "daemon_default", "min", "max",
        "enum_values", "validator", "flags", "services", "tags", "see_also", "verbatim",
        "with_legacy", "fmt_desc", "note"}
TYPES = {"str", "uint", "int", "size", "bool", "float", "addr", "addrvec", "uuid", "millisecs",
         "secs"}
LEVELS = {"basic", "advanced", "dev"}
FLAGS = {"runtime", "no_mon_update", "startup", "cluster_create", "create", "minimal_conf"}


def load():
    with open(OPTIONS) as f:
        return yaml.safe_load(f)["options"]


def store_sources():
    """(file name, text) of every source file of the store."""
    for root, _, files in os.walk(STORE):
        for fn in files:
            if fn.endswith((".cc", ".h")):
                with open(os.path.join(root, fn)) as f:
                    yield fn, f.read()


def read_by_store():
    """Option names the store reads with get_val<T>("mimstore_...")."""
    names = set()
    for _, text in store_sources():
        names |= set(re.findall(r'get_val<[^>]+>\(\s*"(mimstore_[a-z0-9_]+)"', text))
    return names


def read_by_observer():
    """Store files that register a config observer (get_tracked_conf_keys)."""
    return {fn for fn, text in store_sources() if "get_tracked_conf_keys" in text}


class OptionFileTest(unittest.TestCase):
    def test_every_option_is_well_formed(self):
        seen = set()
        for o in load():
            name = o.get("name", "?")
            with self.subTest(option=name):
                self.assertTrue(name.startswith("mimstore_"))
                self.assertNotIn(name, seen, "defined twice")
                seen.add(name)
                self.assertLessEqual(set(o), KEYS)
                self.assertIn(o.get("type"), TYPES)
                self.assertIn(o.get("level"), LEVELS)
                self.assertIsInstance(o.get("desc"), str)
                self.assertIsInstance(o.get("long_desc", ""), str)
                if o["type"] != "str":        # a str's default is ""
                    self.assertIn("default", o)
                if o["type"] == "bool":
                    self.assertIsInstance(o["default"], bool)
                if o["type"] in ("uint", "int", "float"):
                    self.assertIsInstance(o["default"], (int, float))
                self.assertLessEqual(set(o.get("flags", [])), FLAGS)

    def test_see_also_names_options_of_this_file_or_ceph(self):
        names = {o["name"] for o in load()}
        for o in load():
            for other in o.get("see_also", []):
                if other.startswith("mimstore_"):
                    self.assertIn(other, names, "%s: see_also %s" % (o["name"], other))

    def test_the_store_reads_exactly_these_options(self):
        names = {o["name"] for o in load()}
        used = read_by_store()
        self.assertEqual(sorted(used - names), [], "read by the store, not in the file")
        self.assertEqual(sorted(names - used), [], "in the file, never read")

    def test_no_option_claims_a_runtime_change(self):
        # The store reads its options at mount and observes none (no config
        # observer): Ceph must refuse a change to a running OSD rather than
        # accept one the store ignores. Unflagged numeric and bool options
        # are runtime-changeable by Ceph's default (Option::
        # can_update_at_runtime), so each needs startup or create.
        for o in load():
            with self.subTest(option=o["name"]):
                flags = set(o.get("flags", []))
                self.assertNotIn("runtime", flags)
                self.assertTrue(flags & {"startup", "create"},
                                "flag it startup (read at mount) or create (fixed at mkfs)")
        self.assertEqual(read_by_observer(), set(), "an observer: drop the startup flag there")


if __name__ == "__main__":
    unittest.main()
