#!/usr/bin/env python3
"""funclen.py — no function over 120 lines outside tests/ (issue 26; docs/ARCHITECTURE.md).

A function is a brace block at file level whose opening brace follows a closing parenthesis; its
length runs from the line of its name to the line of its closing brace, both counted (what ctags
gives: `static int\\nname(...)` starts at `name`). Comments, string literals and preprocessor lines
are blanked first (tools/archcheck.py's strip), so a brace in a string or a macro does not count.
Every .c, .h and .cu file under the repository is measured except tests/, build*/ and dot folders.
Not here: anything about what a function does or where it should live (archcheck.py).

PENDING names functions another change still has to split: they are listed, not failed, and a
pending function that has come under the limit is listed so that its line can go.

Usage: tools/funclen.py [--limit N] [--self-test]. Prints each function over the limit as
`file:line: name: N lines (limit 120)`; exits 1 when one is not pending, 0 otherwise.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from archcheck import strip  # noqa: E402  (comments and literals blanked, newlines kept)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 120
# file:function still over the limit while another change splits it, with who splits it
# (empty: every function outside tests/ is within the limit)
PENDING = {
}
NAME = re.compile(r"([A-Za-z_]\w*)\s*$")


def blank_preprocessor(text):
    """text with every preprocessor line (and its continuations) emptied, newlines kept."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("#"):
            while lines[i].endswith("\\") and i + 1 < len(lines):
                lines[i] = ""
                i += 1
            lines[i] = ""
        i += 1
    return "\n".join(lines)


def matching(t, i, open_c, close_c, step):
    """Index of the bracket matching t[i], scanning by step (+1 forward, -1 back); -1 if none."""
    depth = 0
    while 0 <= i < len(t):
        if t[i] == open_c:
            depth += 1
        elif t[i] == close_c:
            depth -= 1
            if depth == 0:
                return i
        i += step
    return -1


def functions(text):
    """(name, first line, lines) of each function defined in C source text."""
    t = blank_preprocessor(strip(text))
    out, depth = [], 0
    for i, c in enumerate(t):
        if c == "}":
            depth -= 1
        if c != "{":
            continue
        depth += 1
        if depth != 1:
            continue
        j = len(t[:i].rstrip()) - 1
        if j < 0 or t[j] != ")":
            continue  # a struct, an initializer, an enum
        k = matching(t, j, ")", "(", -1)
        m = NAME.search(t[:k]) if k > 0 else None
        end = matching(t, i, "{", "}", 1)
        if not m or end < 0:
            continue
        first = t.count("\n", 0, m.start(1)) + 1
        out.append((m.group(1), first, t.count("\n", 0, end) + 1 - first + 1))
    return out


def sources(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and not x.startswith("build")
                         and not (rel == "." and x == "tests"))
        for f in sorted(files):
            if f.endswith((".c", ".h", ".cu")):
                yield os.path.normpath(os.path.join(rel, f))


def self_test():
    """The measure on made-up sources: a 121-line function is over, a 120-line one is not."""
    def body(n):  # a function of n lines: its name, the brace, n - 3 statements, the closing brace
        return "static int\nf(int a, int (*g)(int))\n{\n" + "    a++;\n" * (n - 3) + "}\n"
    cases = [(body(120), [("f", 2, 120)]), (body(121), [("f", 2, 121)]),
             ('struct s { int a; };\nstatic const char *x = "f() {";\n#define M(a) { a }\nint g(void) { return 0; }\n',
              [("g", 4, 1)]),
             ("int t[] = {1, 2};\nvoid h(void)\n{ /* } */ }\n", [("h", 2, 2)])]
    bad = 0
    for src, want in cases:
        got = functions(src)
        if got != want:
            bad += 1
            print("funclen self-test: expected %s, found %s" % (want, got))
    over = [f for f in functions(body(121)) + functions(body(120)) if f[2] > LIMIT]
    if len(over) != 1:
        bad += 1
        print("funclen self-test: a 121-line function is not over the limit")
    print("funclen self-test: %s" % ("%d failure(s)" % bad if bad else "ok"))
    return 1 if bad else 0


def main(argv):
    limit = LIMIT
    if "--self-test" in argv:
        return self_test()
    if len(argv) == 2 and argv[0] == "--limit" and argv[1].isdigit():
        limit = int(argv[1])
    elif argv:
        sys.stderr.write("funclen: expected [--limit N] or --self-test, found %s\n" % " ".join(argv))
        return 2
    bad, seen, n = 0, set(), 0
    for path in sources(ROOT):
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            fns = functions(fh.read())
        n += len(fns)
        for name, first, lines in fns:
            key = "%s:%s" % (path, name)
            if lines <= limit:
                continue
            seen.add(key)
            if key in PENDING:
                print("note: %s:%d: %s: %d lines (limit %d; pending: %s)" % (path, first, name, lines, limit,
                                                                           PENDING[key]))
            else:
                bad += 1
                print("%s:%d: %s: %d lines (limit %d): split it into named helpers" % (path, first, name, lines,
                                                                                      limit))
    for key in sorted(set(PENDING) - seen):
        print("note: %s is now within %d lines: remove it from PENDING in tools/funclen.py" % (key, limit))
    print("funclen: %d functions outside tests/: %s" % (n, "%d over %d lines" % (bad, limit) if bad else
                                                       "none over %d lines%s" % (limit, seen and " but the pending"
                                                                                 or "")))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
