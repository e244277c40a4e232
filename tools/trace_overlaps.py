#!/usr/bin/env python3
"""trace_overlaps.py TRACE.json... — count slices that a trace viewer would see overlapping
partly on one lane: per (pid, tid), slices sorted by ts, a slice whose ts + dur (added as doubles,
as Perfetto and speedscope do) passes the next slice's ts without containing it. Prints
"FILE: N partial overlaps of M slices" per file; exits 1 when any file has one."""
import json
import sys


def partial_overlaps(path):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    lanes = {}
    for e in ev:
        if e.get("ph") == "X":
            lanes.setdefault((e["pid"], e["tid"]), []).append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    bad = total = 0
    for spans in lanes.values():
        spans.sort()
        total += len(spans)
        open_ends = []  # ends of the slices enclosing the current one
        for ts, end in spans:
            while open_ends and open_ends[-1] <= ts:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                bad += 1  # starts inside a slice and ends after it: cannot nest
            open_ends.append(end)
    return bad, total


def main():
    worst = 0
    for p in sys.argv[1:]:
        bad, total = partial_overlaps(p)
        print("%s: %d partial overlaps of %d slices" % (p, bad, total))
        worst = max(worst, bad)
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
