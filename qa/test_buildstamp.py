#!/usr/bin/python3
"""Tests for buildstamp.py: a build stamp against checkouts in a made-up
git repository."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import buildstamp


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


class BuildStampTest(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp()
        self.build = tempfile.mkdtemp()
        git(self.repo, "init", "-q")
        for path, text in (("src/store.cc", "a\n"), ("cmake/patches/0001.patch", "p\n"),
                           ("docs/x.md", "d\n")):
            os.makedirs(os.path.join(self.repo, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(self.repo, path), "w") as f:
                f.write(text)
        git(self.repo, "add", ".")
        git(self.repo, "commit", "-q", "-m", "one")

    def tearDown(self):
        shutil.rmtree(self.repo)
        shutil.rmtree(self.build)

    def stamp_now(self):
        """What cmake/ceph-build.sh would write for the repo as it is."""
        with open(os.path.join(self.build, buildstamp.STAMP), "w") as f:
            json.dump(buildstamp.checkout(self.repo), f)

    def edit(self, path, text, commit=True):
        with open(os.path.join(self.repo, path), "w") as f:
            f.write(text)
        if commit:
            git(self.repo, "commit", "-q", "-am", "edit " + path)

    def verdict(self):
        return buildstamp.compare(buildstamp.read(self.build), buildstamp.checkout(self.repo))

    def test_no_stamp_cannot_be_told(self):
        self.assertEqual(None, self.verdict()[0])
        self.assertIn("no stamp", self.verdict()[1])

    def test_same_source_matches_across_commits_that_leave_it(self):
        self.stamp_now()
        self.assertTrue(self.verdict()[0])
        self.edit("docs/x.md", "d2\n")
        self.assertTrue(self.verdict()[0])

    def test_store_source_changed_since_the_build(self):
        self.stamp_now()
        self.edit("src/store.cc", "b\n")
        matches, why = self.verdict()
        self.assertIs(False, matches)
        self.assertIn("src/ differs", why)

    def test_patch_series_changed_since_the_build(self):
        self.stamp_now()
        self.edit("cmake/patches/0001.patch", "q\n")
        self.assertIn("cmake/patches differs", self.verdict()[1])

    def test_uncommitted_changes_on_either_side(self):
        self.edit("src/store.cc", "dirty\n", commit=False)
        self.stamp_now()
        matches, why = self.verdict()
        self.assertIs(False, matches)
        self.assertIn("uncommitted change", why)
        git(self.repo, "checkout", "-q", "--", "src/store.cc")
        self.stamp_now()
        self.edit("src/store.cc", "dirty\n", commit=False)
        self.assertIn("this checkout has 1 uncommitted", self.verdict()[1])

    def test_check_command_exits_1_on_a_mismatch(self):
        self.stamp_now()
        self.edit("src/store.cc", "b\n")
        self.assertEqual(1, buildstamp.main(["buildstamp.py", "check", self.build, self.repo]))


if __name__ == "__main__":
    unittest.main()
