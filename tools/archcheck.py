#!/usr/bin/env python3
"""archcheck.py — the import graph's two rules (docs/ARCHITECTURE.md): no circle, nothing points up.

A module is one .c file and the header of its name (model/analytic = analytic.c + analytic.h;
a header without a .c, like analytic_result.h or traces/schema.h, is a module of its own). Module
A depends on module B when A's .c calls a function that B's .c defines (non-static, found by its
definition `name(...) {`), or when A includes a header-only module B. Two .c files sharing one
header are two modules: if each calls the other, that is a circle. Including B's header only for
its types does not count: that is what a type header is for (layout_tensor.h includes layout.h
for lo_graph while layout.c calls lo_build_tensor); such include-only circles are listed as
notes. A circle is a strongly connected set of two or more modules. Pointing up
is any include or call into a higher floor (base 1, model 2, sim/calibrate/traces 3, predict 4,
cli and calibrate/bench 5; bench/ and tests/ are not checked). And the front door: cli/ neither
includes nor calls sim/ or the analytical engine (model/analytic*); it goes through predict/. Not here: anything the compiler
checks, or where a function should live.

Usage: tools/archcheck.py [FOLDER ...]   (default: every library folder). Prints each circle with
one path through it and the file and name behind each step, and each upward edge; exits 1 when
it finds any, 0 when the graph is clean.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["base", "model", "traces", "sim", "calibrate", "calibrate/bench", "predict", "cli"]
FLOOR = {"base": 1, "model": 2, "sim": 3, "calibrate": 3, "traces": 3, "predict": 4, "cli": 5,
         "calibrate/bench": 5}


def strip(text):
    """C source without comments, string and character literals (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(folders):
    for f in folders:
        d = os.path.join(ROOT, f)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(d, name)):
                yield os.path.join(f, name)


def stem(path):
    return os.path.splitext(path)[0]


def floor(mod):
    return FLOOR.get(os.path.dirname(mod))


DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^;{}()]*\))*\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def graph(folders):
    """(scope, modules, calls, includes): calls and includes map (a, b) to the first reason."""
    text = {p: strip(open(os.path.join(ROOT, p), encoding="utf-8").read()) for p in sources(FOLDERS)}
    raw = {p: open(os.path.join(ROOT, p), encoding="utf-8").read() for p in text}
    defs = {p: [m.group(1) for m in DEF.finditer(t)] for p, t in text.items() if p.endswith(".c")}
    mod = {p: stem(p) for p in text}
    has_c = {mod[p] for p in text if p.endswith(".c")}
    defined = {}
    for p, names in defs.items():
        for f in names:
            defined.setdefault(f, mod[p])
    calls, includes = {}, {}
    for p, t in text.items():
        a = mod[p]
        for inc in INC.findall(raw[p]):
            q = os.path.normpath(os.path.join(os.path.dirname(p), inc))
            if q in text and mod[q] != a:
                includes.setdefault((a, mod[q]), "%s includes %s" % (p, inc))
                if mod[q] not in has_c:
                    calls.setdefault((a, mod[q]), "%s includes %s" % (p, inc))
        if p.endswith(".c"):
            for name in CALL.findall(t):
                b = defined.get(name)
                if b and b != a:
                    calls.setdefault((a, b), "%s calls %s" % (p, name))
    scope = {mod[p] for p in sources(folders)}
    return scope, calls, includes


def circles(scope, edges):
    """Tarjan's strongly connected components of the graph restricted to scope."""
    succ = {}
    for a, b in edges:
        if a in scope and b in scope:
            succ.setdefault(a, []).append(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ.get(v, []):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(scope):
        if v not in index:
            visit(v)
    return out, succ


def one_path(comp, succ):
    """A cycle through comp's first module (breadth first inside comp)."""
    inside, start = set(comp), comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in succ.get(v, []):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in inside and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def report(label, scope, edges, skip=()):
    """Print each circle of edges (none inside skip); returns the circles."""
    comps, succ = circles(scope, edges)
    comps = [c for c in comps if not set(c) <= set(skip)]
    for comp in comps:
        path = one_path(comp, succ)
        print("%s: %s%s" % (label, " -> ".join(path),
                            "" if len(comp) == len(path) - 1 else " (of %s)" % ", ".join(comp)))
        for a, b in zip(path, path[1:]):
            print("    " + edges[(a, b)])
    return comps


def main():
    folders = sys.argv[1:] or FOLDERS
    for f in folders:
        if not os.path.isdir(os.path.join(ROOT, f)):
            sys.stderr.write("archcheck: %s: expected a folder under %s\n" % (f, ROOT))
            return 2
    scope, calls, includes = graph(folders)
    found = report("circle", scope, calls)
    bad = len(found)
    both = dict(includes)
    both.update(calls)
    report("note: include-only circle (types)", scope, both, [m for c in found for m in c])
    for (a, b), why in sorted(both.items()):
        fa, fb = floor(a), floor(b)
        if a in scope and fa and fb and fb > fa:
            bad += 1
            print("up: %s (floor %d) -> %s (floor %d): %s" % (a, fa, b, fb, why))
    for (a, b), why in sorted(both.items()):  # the commands reach the engines through predict/
        if a in scope and a.startswith("cli/") and (b.startswith("sim/") or b.startswith("model/analytic")):
            bad += 1
            print("past the front door: %s -> %s: %s (go through predict/)" % (a, b, why))
    n = len([e for e in calls if e[0] in scope])
    print("archcheck: %d modules, %d dependencies in %s: %s" %
          (len(scope), n, " ".join(folders), "%d problem(s)" % bad if bad else "no circle, nothing up"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
