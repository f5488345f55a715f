"""The store's shape, checked (issue 13's bars): no file in src/os/mimstore
over 900 lines, no function over 120, no #include cycle between the
store's units, and the journal's units include nothing of the store.

Functions are found by brace matching on the source with comments and
string literals blanked out: a `{` whose header ends in `)` (with
qualifiers, a trailing return type or a constructor's initializer list)
opens a function unless it belongs to if/for/while/switch/catch. Lambdas
inside a function count towards it.
"""
import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = os.path.join(HERE, "..", "src", "os", "mimstore")

MAX_FILE_LINES = 900
MAX_FUNCTION_LINES = 120
# The journal proper, its writer and its device: they must not know the
# store (the store uses them, not the other way round).
JOURNAL_UNITS = ("MIMJournal", "JournalWriter", "JournalDevice")
STORE_HEADERS = ("MIMStore.h",)


def sources(root=STORE):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".cc", ".h")):
                yield os.path.join(d, f)


def blank_comments_and_strings(text):
    """The text with comments and string/char literals replaced by spaces,
    newlines kept (so line numbers stay right)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(c)  # a digit separator (1'000)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNC_HEADER = re.compile(
    r"\)\s*(const|override|final|noexcept|mutable|\s)*"
    r"(->[^{;]*)?(:[^;{}]*)?$")
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\(")


def functions(path):
    """(first line, lines, header) of each outermost function body."""
    with open(path, encoding="utf-8") as f:
        text = blank_comments_and_strings(f.read())
    lines = text.split("\n")
    found = []
    stack = []  # (line index, is a function)
    for li, line in enumerate(lines):
        for ci, c in enumerate(line):
            if c == "{":
                header = " ".join(lines[max(0, li - 6):li] + [line[:ci]])
                header = header.strip()
                # brace initializers (v{x}) in a constructor's list are
                # not blocks: count them as calls
                header = re.sub(r"(\w)\s*\{[^{}]*\}", r"\1()", header)
                # the header after the last ; { or } is this brace's own
                own = re.split(r"[;{}]", header)[-1].strip()
                m = FUNC_HEADER.search(own)
                brace_init = bool(m and m.group(3) and re.search(r"\w$", own))
                is_fn = (bool(m) and not brace_init and
                         not CONTROL.search(own.split("(")[0] + "(")
                         and not any(f for _, f in stack))
                stack.append((li, is_fn))
            elif c == "}" and stack:
                start, is_fn = stack.pop()
                if is_fn:
                    own = " ".join(lines[max(0, start - 2):start + 1])
                    found.append((start + 1, li - start + 1,
                                  " ".join(own.split())[-70:]))
    return found


def includes(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r'^#include "([^"]+)"', text, re.M)


# Private headers that are part of another unit (included by it alone).
PRIVATE_PARTS = {"core/htmll_records": "core/htmll"}


def unit_of(path):
    """A store unit: a file's name without its extension (Foo.h and Foo.cc
    are one unit); core/ files are units named core/<name>."""
    rel = os.path.relpath(path, STORE)
    base = os.path.splitext(rel)[0]
    return PRIVATE_PARTS.get(base, base)


class StoreShape(unittest.TestCase):

    def test_no_file_over_the_limit(self):
        long_files = []
        for p in sources():
            with open(p, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_FILE_LINES:
                long_files.append("%s: %d lines" % (os.path.relpath(p, STORE), n))
        self.assertEqual(long_files, [], "split these files")

    def test_no_function_over_the_limit(self):
        long_fns = []
        for p in sources():
            for start, n, header in functions(p):
                if n > MAX_FUNCTION_LINES:
                    long_fns.append("%s:%d: %d lines: %s" % (
                        os.path.relpath(p, STORE), start, n, header))
        self.assertEqual(long_fns, [], "split these functions")

    def test_no_include_cycle_between_units(self):
        graph = {}
        for p in sources():
            u = unit_of(p)
            for inc in includes(p):
                target = PRIVATE_PARTS.get(os.path.splitext(inc)[0],
                                           os.path.splitext(inc)[0])
                if target != u and os.path.exists(os.path.join(STORE, inc)):
                    graph.setdefault(u, set()).add(target)
        # a cycle is a strongly connected set of more than one unit
        cycles = []
        index, low, on, stack, counter = {}, {}, set(), [], [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in graph.get(v, ()):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))

        for v in sorted(graph):
            if v not in index:
                visit(v)
        self.assertEqual(cycles, [], "units that include each other")

    def test_the_journal_does_not_include_the_store(self):
        bad = []
        for p in sources():
            name = os.path.basename(p)
            if os.path.splitext(name)[0] in JOURNAL_UNITS:
                for inc in includes(p):
                    if inc in STORE_HEADERS:
                        bad.append("%s includes %s" % (name, inc))
        self.assertEqual(bad, [])


class Scanner(unittest.TestCase):
    """The scanner itself, so that a pass above means something."""

    def write(self, text):
        import tempfile
        f = tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_counts_a_function_with_its_lambdas_and_blocks(self):
        body = "\n".join(["  x();"] * 10)
        p = self.write(
            "int A::f(int a) const\n{\n  auto l = [&](int b) {\n"
            + body + "\n  };\n  if (a) {\n    y(\"}\");\n  }\n"
            "  // } a brace in a comment\n}\n")
        fns = functions(p)
        self.assertEqual(len(fns), 1)
        self.assertEqual(fns[0][0], 2)
        self.assertEqual(fns[0][1], 18)  # from its { to its }

    def test_ignores_classes_namespaces_and_control_blocks(self):
        p = self.write(
            "namespace x {\nstruct S {\n  int v = 0;\n};\n"
            "void g()\n{\n  for (;;) {\n  }\n}\n}\n")
        fns = functions(p)
        self.assertEqual([(s, n) for s, n, _ in fns], [(6, 4)])

    def test_a_constructor_with_an_initializer_list(self):
        p = self.write("A::A(int x)\n  : v(x), w{x}\n{\n  z();\n}\n")
        self.assertEqual([(s, n) for s, n, _ in functions(p)], [(3, 3)])

    def test_finds_a_function_over_the_limit(self):
        body = "\n".join(["  x();"] * (MAX_FUNCTION_LINES + 1))
        p = self.write("void big()\n{\n" + body + "\n}\n")
        (start, n, _), = functions(p)
        self.assertGreater(n, MAX_FUNCTION_LINES)


if __name__ == "__main__":
    unittest.main()


class CountersDocumented(unittest.TestCase):
    """Every perf counter the store defines has its row in docs/metrics.md,
    and the doc names no counter the store does not have."""

    def test_every_counter_has_a_row(self):
        with open(os.path.join(STORE, "MIMPerf.cc")) as f:
            code = f.read()
        defined = set(re.findall(r'b\.add_\w+\(\s*l_mimstore_\w+,\s*"(\w+)"', code))
        self.assertGreater(len(defined), 40)
        with open(os.path.join(HERE, "..", "docs", "metrics.md")) as f:
            rows = set(re.findall(r"^\| `(\w+)` \|", f.read(), re.M))
        self.assertEqual(set(), defined - rows, "counters without a row in docs/metrics.md")
        self.assertEqual(set(), rows - defined, "rows in docs/metrics.md for no counter")


class BuildLists(unittest.TestCase):
    """What the build reads lists exactly what is there: every store .cc in
    sources.cmake, every patch of a series in its series file, once."""

    REPO = os.path.join(HERE, "..")

    def test_sources_cmake_lists_every_store_source(self):
        with open(os.path.join(STORE, "sources.cmake")) as f:
            listed = re.findall(r"^\s*mimstore/(\w+\.cc)\s*$", f.read(), re.M)
        present = sorted(f for f in os.listdir(STORE) if f.endswith(".cc"))
        self.assertEqual(len(listed), len(set(listed)), "listed twice")
        self.assertEqual(present, sorted(listed))

    def test_each_series_lists_its_patches_once(self):
        for d in ("patches", "patches-tentacle"):
            pdir = os.path.join(self.REPO, "cmake", d)
            with open(os.path.join(pdir, "series")) as f:
                listed = [l.strip() for l in f
                          if l.strip() and not l.startswith("#")]
            present = sorted(f for f in os.listdir(pdir) if f.endswith(".patch"))
            self.assertEqual(len(listed), len(set(listed)), d)
            self.assertEqual(present, sorted(listed), d)
            for p in listed:
                with open(os.path.join(pdir, p)) as f:
                    text = f.read()
                self.assertTrue(text.startswith("From: mimstore\nSubject: "), p)
                self.assertIn("\n---\n", text, p)
