#!/usr/bin/python3
"""Tests for crash/without_fix_edit.py: a stale edit fails, and a without-fix
case counts as caught only when the tests it names failed."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash"))
import without_fix_edit as w  # noqa: E402

RUN_FAIL = """[==========] Running 2 tests from 1 test suite.
[ RUN      ] A.One
[       OK ] A.One (1 ms)
[ RUN      ] A.Two
x.cc:3: Failure
[  FAILED  ] A.Two (2 ms)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] A.Two
"""


class EditTest(unittest.TestCase):
    def test_one_match_applies(self):
        self.assertEqual("a Y c", w.apply_edit("a b c", "s = s.replace('b', 'Y')"))

    def test_chained_replaces_each_checked(self):
        edit = "s = s.replace('a', 'A').replace('zz', 'Z')"
        with self.assertRaisesRegex(w.EditError, "0 matches"):
            w.apply_edit("a b c", edit)

    def test_two_matches_refused(self):
        with self.assertRaisesRegex(w.EditError, "2 matches"):
            w.apply_edit("b b", "s = s.replace('b', 'c')")

    def test_no_change_refused(self):
        with self.assertRaisesRegex(w.EditError, "changed nothing"):
            w.apply_edit("b", "s = s.replace('b', 'b')")


class CheckFailedTest(unittest.TestCase):
    def test_named_test_failed(self):
        ok, why = w.named_tests_failed("*Two*", 1, RUN_FAIL)
        self.assertTrue(ok, why)

    def test_other_test_failed_is_not_a_catch(self):
        ok, why = w.named_tests_failed("*One*:*Two*", 1, RUN_FAIL)
        self.assertFalse(ok)
        self.assertIn("*One*", why)

    def test_passing_run_is_not_a_catch(self):
        self.assertFalse(w.named_tests_failed("*", 0, "")[0])

    def test_nonzero_exit_without_a_test_is_not_a_catch(self):
        # e.g. a filter that selects nothing, or a binary that did not start
        self.assertFalse(w.named_tests_failed("*Two*", 1, "error while loading")[0])

    def test_crash_counts_for_the_running_test(self):
        out = "[ RUN      ] A.One\n[       OK ] A.One (1 ms)\n[ RUN      ] A.Two\nAborted\n"
        self.assertTrue(w.named_tests_failed("A.Two", 134, out)[0])
        self.assertFalse(w.named_tests_failed("A.One", 134, out)[0])

    def test_parameterized_failure(self):
        # seen in CI: a TEST_P's FAILED line names its parameter after a comma
        out = ("[ RUN      ] Merge/S.T/on\n"
               "[  FAILED  ] Merge/S.T/on, where GetParam() = 4-byte object <01-00 00-00> (92 ms)\n"
               "[  FAILED  ] 1 test, listed below:\n")
        self.assertTrue(w.named_tests_failed("*S.T*", 1, out)[0])

    def test_negative_patterns_ignored(self):
        self.assertEqual(["*Two*"], w.positive_patterns("*Two*:-*One*"))


if __name__ == "__main__":
    unittest.main()
