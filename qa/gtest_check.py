#!/usr/bin/python3
"""What a gtest step of the test command really ran, checked.

  gtest_check.py select --binary BIN --step NAME=FILTER... [--exclude PATTERN=REASON...]
      Every test BIN lists (--gtest_list_tests) is selected by exactly one
      step's filter or matches an exclusion (with its reason). Fails on a
      test no step runs, a test two steps run, a step that selects nothing,
      and an exclusion that matches nothing (stale).
  gtest_check.py run --min N [--param NAME] [--allow-skip PATTERN=REASON...] -- CMD...
      Runs CMD (a gtest binary and its flags), passes its output through,
      and fails unless it exits 0, ran at least N tests, skipped none but
      those an --allow-skip names, and (with --param) every test it ran is
      an instantiation whose GetParam() is NAME.
  gtest_check.py param-index --binary BIN --suite SUITE --param NAME
      The instantiation index of the parameter named NAME in SUITE (how
      ceph_test_objectstore's filter finds mimstore's, whatever stores the
      build has).

Filters follow gtest: "POS1:POS2-NEG1:NEG2", '*' and '?' globs, a test is
selected when it matches a positive pattern (none: '*') and no negative one.
"""
import argparse
import fnmatch
import re
import subprocess
import sys


def parse_list(text):
    """--gtest_list_tests output -> [(full name, param or None)]."""
    out = []
    suite = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
            continue
        name, _, comment = line.strip().partition("#")
        m = re.search(r'GetParam\(\) = "?([^"]*)"?\s*$', comment)
        out.append((suite + name.strip(), m.group(1) if m else None))
    return out


def filter_matches(gtest_filter, name):
    pos, _, neg = gtest_filter.partition("-")
    pos_pats = [p for p in pos.split(":") if p] or ["*"]
    neg_pats = [p for p in neg.split(":") if p]
    return (any(fnmatch.fnmatchcase(name, p) for p in pos_pats) and
            not any(fnmatch.fnmatchcase(name, p) for p in neg_pats))


def check_selection(tests, steps, excludes):
    """tests: names; steps: {step: filter}; excludes: {pattern: reason}.
    Returns the problems, one line each."""
    problems = []
    used_steps = {s: 0 for s in steps}
    used_excl = {p: 0 for p in excludes}
    for t in tests:
        by = [s for s, f in steps.items() if filter_matches(f, t)]
        ex = [p for p in excludes if fnmatch.fnmatchcase(t, p)]
        for s in by:
            used_steps[s] += 1
        for p in ex:
            used_excl[p] += 1
        if ex and by:
            problems.append("%s: excluded (%s) but run by %s" % (t, ex[0], ", ".join(by)))
        elif not ex and not by:
            problems.append("%s: selected by no step and on no exclusion list" % t)
        elif len(by) > 1:
            problems.append("%s: run by %d steps (%s)" % (t, len(by), ", ".join(by)))
    for s, n in used_steps.items():
        if n == 0:
            problems.append("step %s: its filter %r selects no test" % (s, steps[s]))
    for p, n in used_excl.items():
        if n == 0:
            problems.append("exclusion %s (%s) matches no test: stale" % (p, excludes[p]))
    return problems


def parse_run(output):
    """gtest output -> (tests ran or None, [skipped names], skipped count
    from the summary)."""
    ran = None
    m = re.search(r"^\[==========\] (\d+) tests? from \d+ test suites? ran", output, re.M)
    if m:
        ran = int(m.group(1))
    skipped = sorted(set(re.findall(r"^\[  SKIPPED \] ([^\s.]+\.\S+) \(", output, re.M)) |
                     set(re.findall(r"^\[  SKIPPED \] ([^\s.]+\.\S+)$", output, re.M)))
    m = re.search(r"^\[  SKIPPED \] (\d+) tests?[,.]", output, re.M)
    count = int(m.group(1)) if m else 0
    return ran, skipped, count


def check_run(rc, output, minimum, allow_skip, params=None, want_param=None):
    problems = []
    ran, skipped, count = parse_run(output)
    if count > len(skipped):
        # --gtest_brief=1 prints the count but not the names
        problems.append("%d tests SKIPPED, %d of them named (run without --gtest_brief)"
                        % (count, len(skipped)))
    if rc != 0:
        problems.append("exit status %d" % rc)
    if ran is None:
        problems.append("no gtest summary: did the binary run?")
    elif ran < minimum:
        problems.append("%d tests ran, at least %d expected (a renamed suite or filter?)"
                        % (ran, minimum))
    for t in skipped:
        if not any(fnmatch.fnmatchcase(t, p) for p in allow_skip):
            problems.append("%s was SKIPPED (a skip is not a pass; allow it with its reason)" % t)
    if want_param is not None:
        wrong = sorted({p for p in (params or {}).values() if p != want_param})
        if not params:
            problems.append("no instantiation of %s selected" % want_param)
        elif wrong:
            problems.append("selected instantiations of %s, not only %s"
                            % (", ".join(wrong), want_param))
    return problems


def kv_list(items, what):
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k or not v:
            sys.exit("%s %r: want KEY=VALUE" % (what, it))
        out[k] = v
    return out


def list_tests(binary, extra=()):
    p = subprocess.run([binary, "--gtest_list_tests", *extra], capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit("%s --gtest_list_tests failed (%d): %s" % (binary, p.returncode,
                                                             p.stderr[-500:]))
    return parse_list(p.stdout)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("select")
    s.add_argument("--binary", required=True)
    s.add_argument("--step", action="append", required=True)
    s.add_argument("--exclude", action="append")
    r = sub.add_parser("run")
    r.add_argument("--min", type=int, required=True)
    r.add_argument("--param")
    r.add_argument("--allow-skip", action="append")
    r.add_argument("cmd", nargs=argparse.REMAINDER)
    i = sub.add_parser("param-index")
    i.add_argument("--binary", required=True)
    i.add_argument("--suite", required=True)
    i.add_argument("--param", required=True)
    a = ap.parse_args(argv[1:])

    if a.cmd == "select":
        tests = [t for t, _ in list_tests(a.binary)]
        problems = check_selection(tests, kv_list(a.step, "--step"),
                                   kv_list(a.exclude, "--exclude"))
        for p in problems:
            print("gtest selection: " + p)
        print("gtest selection: %d tests in %s, %d problems" % (len(tests), a.binary,
                                                                 len(problems)))
        return 1 if problems else 0
    if a.cmd == "param-index":
        found = set()
        for t, p in list_tests(a.binary):
            if p == a.param and t.split(".")[0].endswith(a.suite):
                found.add(t.rsplit("/", 1)[-1])
        if len(found) != 1:
            sys.exit("%s: %d instantiation indexes of %s in %s" % (a.binary, len(found),
                                                                  a.param, a.suite))
        print(found.pop())
        return 0
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        sys.exit("run: no command")
    params = None
    if a.param:
        flt = [x.split("=", 1)[1] for x in cmd if x.startswith("--gtest_filter=")]
        params = dict(list_tests(cmd[0], ["--gtest_filter=" + flt[-1]] if flt else []))
    allow = kv_list(a.allow_skip, "--allow-skip")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace")
    chunks = []
    for line in p.stdout:
        sys.stdout.write(line)
        chunks.append(line)
    rc = p.wait()
    problems = check_run(rc, "".join(chunks), a.min, list(allow), params, a.param)
    ran, skipped, _ = parse_run("".join(chunks))
    for t in skipped:
        for pat, why in allow.items():
            if fnmatch.fnmatchcase(t, pat):
                print("gtest check: %s skipped, allowed: %s" % (t, why))
    for x in problems:
        print("gtest check: FAIL: " + x)
    print("gtest check: %s tests ran, %d skipped%s" % (ran, len(skipped),
                                                      "" if problems else ", OK"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
