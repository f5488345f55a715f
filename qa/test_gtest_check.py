#!/usr/bin/python3
"""Tests for gtest_check.py: the selection check, the run check and the
parameter index, on made-up gtest output."""

import unittest

import gtest_check as g

LIST = '''MIMStoreJournal.
  BlockSizeIsTheJournalsOwn
MIMStoreJournalTools.
  MkjournalAfterCrashStartsAboveAppliedSns
  MkjournalRefusesUnreplayedJournal
MIMStoreOpsCrash.
  SplitDies
Merge/MIMStoreCrash.
  Loop/off  # GetParam() = 4-byte object <00-00 00-00>
ObjectStore/StoreTest.
  SimpleColTest/0  # GetParam() = "memstore"
  SimpleColTest/1  # GetParam() = "mimstore"
'''

RUN_OK = '''[==========] Running 3 tests from 1 test suite.
[==========] 3 tests from 1 test suite ran. (12 ms total)
[  PASSED  ] 3 tests.
'''

RUN_SKIP = '''[==========] 3 tests from 2 test suites ran. (12 ms total)
[  PASSED  ] 2 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] MIMStoreFaultEnv.FullDataFilesystem
'''


class ParseTest(unittest.TestCase):
    def test_names_and_params(self):
        tests = dict(g.parse_list(LIST))
        self.assertIn("MIMStoreJournalTools.MkjournalAfterCrashStartsAboveAppliedSns", tests)
        self.assertEqual("mimstore", tests["ObjectStore/StoreTest.SimpleColTest/1"])
        self.assertIsNone(tests["MIMStoreJournal.BlockSizeIsTheJournalsOwn"])


class FilterTest(unittest.TestCase):
    def test_gtest_semantics(self):
        self.assertTrue(g.filter_matches("*Crash*", "A.CrashX"))
        self.assertFalse(g.filter_matches("-*Crash*", "A.CrashX"))
        self.assertTrue(g.filter_matches("-*Crash*", "A.B"))
        self.assertTrue(g.filter_matches("A.*:B.*-*X", "B.Y"))
        self.assertFalse(g.filter_matches("A.*:B.*-*X", "B.X"))


class SelectionTest(unittest.TestCase):
    tests = [t for t, _ in g.parse_list(LIST)]

    def test_the_old_filters_drop_a_test(self):
        # run-tests.sh at f716d0e: "-*Crash*" and the ops and crash-loop
        # filters leave the sn-fence test out (issue 62 item 2)
        steps = {"main": "-*Crash*", "ops": "*OpsCrash*", "loop": "Merge/MIMStoreCrash.*"}
        problems = g.check_selection(self.tests, steps, {"ObjectStore/*": "other binary"})
        self.assertTrue(any("MkjournalAfterCrash" in p and "no step" in p for p in problems),
                        problems)

    def test_exactly_one_step_each(self):
        steps = {"main": "-*OpsCrash*:Merge/MIMStoreCrash.*:ObjectStore/*",
                 "ops": "*OpsCrash*", "loop": "Merge/MIMStoreCrash.*",
                 "os": "ObjectStore/*/1"}
        self.assertEqual([], g.check_selection(self.tests, steps, {"ObjectStore/*/0": "memstore"}))

    def test_overlap_and_empty_step_and_stale_exclusion(self):
        steps = {"all": "*", "ops": "*OpsCrash*", "none": "Nothing.*"}
        problems = g.check_selection(self.tests, steps, {"Gone.*": "removed"})
        self.assertTrue(any("run by 2 steps" in p for p in problems), problems)
        self.assertTrue(any("step none" in p for p in problems), problems)
        self.assertTrue(any("stale" in p for p in problems), problems)

    def test_excluded_and_run_is_a_problem(self):
        problems = g.check_selection(["A.B"], {"all": "*"}, {"A.*": "why"})
        self.assertTrue(any("excluded" in p for p in problems), problems)


class RunTest(unittest.TestCase):
    def test_ok(self):
        self.assertEqual([], g.check_run(0, RUN_OK, 3, []))

    def test_too_few(self):
        p = g.check_run(0, RUN_OK, 10, [])
        self.assertTrue(any("at least 10" in x for x in p), p)

    def test_zero_tests_is_not_a_pass(self):
        out = "[==========] 0 tests from 0 test suites ran. (0 ms total)\n[  PASSED  ] 0 tests.\n"
        self.assertTrue(g.check_run(0, out, 1, []))

    def test_no_summary(self):
        self.assertTrue(g.check_run(0, "Segmentation fault\n", 0, []))

    def test_skip_fails_unless_allowed(self):
        self.assertTrue(g.check_run(0, RUN_SKIP, 1, []))
        self.assertEqual([], g.check_run(0, RUN_SKIP, 1, ["*FullDataFilesystem"]))

    def test_brief_skip_without_names_fails(self):
        # --gtest_brief=1: the count, not the names (seen on mimcore_tests)
        out = ("[==========] 263 tests from 34 test suites ran. (7 ms total)\n"
               "[  PASSED  ] 262 tests.\n[  SKIPPED ] 1 test.\n")
        p = g.check_run(0, out, 1, ["*"])
        self.assertTrue(any("named" in x for x in p), p)

    def test_per_test_skip_line_counts(self):
        out = ("[ RUN      ] A.B\nx.cc:3: Skipped\n[  SKIPPED ] A.B (0 ms)\n"
               "[==========] 1 test from 1 test suite ran. (1 ms total)\n"
               "[  PASSED  ] 0 tests.\n[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] A.B\n")
        self.assertEqual(["A.B"], g.parse_run(out)[1])
        self.assertEqual([], g.check_run(0, out, 1, ["A.B"]))

    def test_exit_status(self):
        self.assertTrue(g.check_run(1, RUN_OK, 1, []))

    def test_param(self):
        self.assertEqual([], g.check_run(0, RUN_OK, 1, [], {"a/1": "mimstore"}, "mimstore"))
        self.assertTrue(g.check_run(0, RUN_OK, 1, [], {"a/0": "memstore"}, "mimstore"))
        self.assertTrue(g.check_run(0, RUN_OK, 1, [], {}, "mimstore"))


if __name__ == "__main__":
    unittest.main()
