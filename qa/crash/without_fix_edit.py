"""The two checks of qa/crash/without-fix.sh.

  without_fix_edit.py SRC DST EDIT
      Apply EDIT (python acting on `s`, the text of SRC) and write DST. Every
      s.replace(old, new) must find `old` exactly once: a case whose text
      moved fails instead of leaving the fix in.
  without_fix_edit.py --check-failed FILTER RC OUT
      Whether the gtest run (exit status RC, output file OUT) failed the
      tests FILTER names: every positive pattern matches a test that failed
      or was running when the binary died.
"""
import fnmatch
import re
import sys


class EditError(Exception):
    pass


class Source(str):
    """A str whose replace() insists on exactly one match."""

    def replace(self, old, new, count=-1):
        n = str.count(self, old)
        if n != 1:
            raise EditError("%d matches (want exactly 1) for %r" % (n, old[:80]))
        return Source(str.replace(self, old, new))


def apply_edit(text, edit):
    env = {"s": Source(text)}
    exec(edit, {}, env)
    out = env["s"]
    if str(out) == text:
        raise EditError("the edit changed nothing")
    return str(out)


def positive_patterns(gtest_filter):
    pos = gtest_filter.split("-", 1)[0]
    return [p for p in pos.split(":") if p]


def failed_tests(output):
    """Tests that failed, and the one running when the output ends (a
    crash: started, never finished)."""
    # "[  FAILED  ] Name (5 ms)", and for a parameterized test
    # "[  FAILED  ] Name, where GetParam() = ... (5 ms)"
    failed = set(re.findall(r"^\[  FAILED  \] ([^\s,]+\.[^\s,]+)", output, re.M))
    running = None
    for m in re.finditer(r"^\[ (RUN     |      OK|  FAILED) \] ([^\s,]+)", output, re.M):
        running = m.group(2) if m.group(1).strip() == "RUN" else None
    if running:
        failed.add(running)
    return failed


def named_tests_failed(gtest_filter, rc, output):
    """(ok, reason)."""
    if rc == 0:
        return False, "the run passed"
    failed = failed_tests(output)
    if not failed:
        return False, "exit status %d but no test failed (did any run?)" % rc
    missing = [p for p in positive_patterns(gtest_filter)
               if not any(fnmatch.fnmatchcase(t, p) for t in failed)]
    if missing:
        return False, "no failed test matches %s (failed: %s)" % (
            ", ".join(missing), ", ".join(sorted(failed)))
    return True, "failed: " + ", ".join(sorted(failed))


def main(argv):
    if len(argv) == 5 and argv[1] == "--check-failed":
        with open(argv[4], errors="replace") as f:
            ok, why = named_tests_failed(argv[2], int(argv[3]), f.read())
        print("without-fix: " + why)
        return 0 if ok else 1
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst, edit = argv[1:]
    with open(src) as f:
        text = f.read()
    try:
        out = apply_edit(text, edit)
    except EditError as e:
        print("without-fix: %s: %s" % (src, e), file=sys.stderr)
        return 1
    with open(dst, "w") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
