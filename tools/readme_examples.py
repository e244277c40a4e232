#!/usr/bin/env python3
"""readme_examples.py — README.md's example outputs are what ./shardcast prints today (readme14).

Every fenced code block of README.md is one of three things, or the check fails:
  * an example: lines `$ ./shardcast ARGS` (a line ending in `\\` continues on the next), each
    followed by the output it shows. The command runs from the repository root with the built
    binary, without a shell, SHARDCAST_CONFIGS unset and LC_ALL=C; it must exit 0, and what it
    printed (stdout, then stderr) is compared with the lines shown;
  * a block whose output is shown without its command: `<!-- readme-check: command ./shardcast ARGS -->`
    as the last non-blank line before the opening fence;
  * not runnable (install steps, mpirun, the reader's own files): `<!-- readme-check: skip: WHY -->`
    there, with a reason.

How shown lines are compared. Exactly (trailing blanks aside), numbers included: the binary is
deterministic (seeded, no wall-clock in its tables), so any difference is drift, and a tolerance
would let small drifts pile up until the README lies again (15.493 -> 15.499 is what a reader
sees differ). What may be left out, and how:
  * a line that is only `...` elides any number of output lines, the excerpt goes on after them;
  * a line ending in ` ...` shows the beginning of an output line (prefix match);
  * the shown lines may start and end anywhere in the output (an excerpt), but between two `...`
    they are consecutive output lines: an output line the README neither shows nor elides is drift.
Shown lines are paired with output lines by an alignment on their shape (numbers masked, blanks
collapsed), so a changed number is reported on its own line, and a new or lost line as one.

Usage: tools/readme_examples.py [--readme README.md] [--bin ./shardcast] [--update | --show] [--self-test]
Prints each drift as `README.md:LINE: shown: ... / got: ...` and exits 1 when there is one (2 on
a malformed README). --update rewrites the drifted lines of README.md from the real output
(whole file, temporary + rename), keeping each excerpt's `...` lines and prefixes; the prose that
quotes those numbers is for a person to follow. --show prints every example's full output.
Not here: checking the prose around the blocks, or any code block of another file.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^\s*(```|~~~)")
MARK = re.compile(r"^\s*<!--\s*readme-check:\s*(\w+)\s*:?\s*(.*?)\s*-->\s*$")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
ELIDE = "..."
# alignment costs: a shown line paired with an output line of the same first word (a table row
# whose numbers or columns changed) or another line, a shown line paired with nothing, an output
# line paired with nothing. An unshown output line is cheap, so rows interleaved with new lines
# still pair up by name; a lost shown line costs most, so a drifted line is paired, not dropped.
SAME_NAME, OTHER, LOST, EXTRA = 0.25, 1.4, 1.5, 0.5
TIMEOUT_S = 120  # one command; the whole README runs in about 1 s on 2 shared cores (2026-11-28)


class Example:
    """A command and the output lines a block shows for it: shown = [(README line number, text)]."""

    def __init__(self, line, command):
        self.line, self.command, self.shown = line, command, []


def blocks(lines):
    """Fenced blocks as (marker line text or '', first content line number, content lines)."""
    out, i = [], 0
    while i < len(lines):
        if not FENCE.match(lines[i]):
            i += 1
            continue
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = lines[k] if k >= 0 and MARK.match(lines[k]) else ""
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        out.append((marker, i + 2, lines[i + 1:j]))
        i = j + 1
    return out


def block_examples(start, body, name):
    """The `$ ./shardcast` examples of one unmarked block, or a problem naming its first line."""
    examples, i = [], 0
    while i < len(body):
        text = body[i]
        if text.startswith("$ "):
            cmd, first = text[2:], start + i
            while cmd.rstrip().endswith("\\") and i + 1 < len(body):
                i += 1
                cmd = cmd.rstrip()[:-1] + " " + body[i].strip()
            if not cmd.startswith("./shardcast"):
                return [], ["%s:%d: `$ %s` is not ./shardcast: mark the block <!-- readme-check: skip: WHY -->"
                            % (name, first, cmd.split()[0] if cmd.split() else "")]
            examples.append(Example(first, " ".join(cmd.split())))
        elif not examples:
            return [], ["%s:%d: a code block that is neither a `$ ./shardcast` example nor marked "
                        "<!-- readme-check: skip: WHY --> or <!-- readme-check: command ./shardcast ... -->"
                        % (name, start + i)]
        else:
            examples[-1].shown.append((start + i, text))
        i += 1
    return examples, []


def parse(text, name):
    """(examples, problems): every block of the README classified as the module docstring says."""
    examples, problems = [], []
    for marker, start, body in blocks(text.split("\n")):
        if marker:
            kind, arg = MARK.match(marker).groups()
            if kind == "skip" and arg:
                continue
            if kind == "command" and arg.startswith("./shardcast"):
                ex = Example(start - 1, arg)
                ex.shown = [(start + k, t) for k, t in enumerate(body)]
                examples.append(ex)
                continue
            problems.append("%s:%d: readme-check marker not understood (skip: WHY, or command ./shardcast ...): %s"
                            % (name, start - 1, marker.strip()))
            continue
        got, bad = block_examples(start, body, name)
        examples += got
        problems += bad
    return examples, problems


def shape(text):
    """A line with its numbers masked and its blanks collapsed: what survives a changed number."""
    return " ".join(NUMBER.sub("#", text).split())


def is_prefix(shown):
    s = shown.rstrip()
    return s.endswith(" " + ELIDE) and s.strip() != ELIDE


def same_shape(shown, got):
    if is_prefix(shown):
        return shape(got).startswith(shape(shown.rstrip()[:-len(ELIDE)]))
    return shape(shown) == shape(got)


def same_text(shown, got):
    if is_prefix(shown):
        return got.rstrip().startswith(shown.rstrip()[:-len(ELIDE)].rstrip())
    return shown.rstrip() == got.rstrip()


def pair_cost(shown, got):
    if same_shape(shown, got):
        return 0.0
    a, b = shown.split(), got.split()
    return SAME_NAME if a and b and a[0] == b[0] else OTHER


def align(seg, out):
    """Semi-global alignment of the shown lines seg onto out (output lines before and after the
    excerpt are free; costs above). Returns [(i, j)]: i a seg index or None (an output line not shown), j an
    out index or None (a shown line the output lacks)."""
    n, m = len(seg), len(out)
    d = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        d[i][0] = i * LOST
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j - 1] + pair_cost(seg[i - 1], out[j - 1]),
                          d[i - 1][j] + LOST, d[i][j - 1] + EXTRA)
    j = min(range(m + 1), key=lambda k: (d[n][k], k))
    path, i = [], n
    while i > 0:
        if j > 0 and d[i][j] == d[i - 1][j - 1] + pair_cost(seg[i - 1], out[j - 1]):
            path.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + LOST:
            path.append((i - 1, None))
            i -= 1
        else:
            path.append((None, j - 1))
            j -= 1
    return path[::-1]


def truncated(shown, got):
    """got cut to as many words as the prefix line shown has before its `...`."""
    words = len(shown.rstrip()[:-len(ELIDE)].split())
    ends = [mt.end() for mt in re.finditer(r"\S+", got)]
    if len(ends) <= words:
        return got.rstrip()
    return got[:ends[words - 1]] + shown.rstrip()[len(shown.rstrip()[:-len(ELIDE)].rstrip()):]


def segments(shown):
    """The shown lines split at the `...` lines: [[(line, text)], ...] (empty runs dropped)."""
    out, cur = [], []
    for line, text in shown:
        if text.strip() == ELIDE:
            out.append(cur)
            cur = []
        else:
            cur.append((line, text))
    out.append(cur)
    return [s for s in out if s]


def compare(ex, out, name):
    """(drifts, edits): drift messages and {README line: replacement lines} for one example."""
    drifts, edits, lo = [], {}, 0
    for seg in segments(ex.shown):
        texts = [t for _, t in seg]
        path = align(texts, out[lo:])
        last = seg[0][0]
        for i, j in path:
            if i is not None:
                last, shown = seg[i]
            if i is not None and j is not None:
                got = out[lo + j]
                if not same_text(shown, got):
                    drifts.append("%s:%d: shown: %s\n%s    got: %s" % (name, last, shown.strip(), " " * len(name), got.strip()))
                    edits[last] = [truncated(shown, got) if is_prefix(shown) else got.rstrip()]
            elif i is not None:
                drifts.append("%s:%d: shown: %s\n%s    got: (no such line in the output)" % (name, last, shown.strip(), " " * len(name)))
                edits[last] = []
            else:
                drifts.append("%s:%d: the output has a line the README neither shows nor elides with `...` after this one: %s"
                              % (name, last, out[lo + j].strip()))
                edits.setdefault(-last, []).append(out[lo + j].rstrip())
        ends = [j for _, j in path if j is not None]
        lo += (max(ends) + 1) if ends else 0
    return drifts, edits


def run(ex, binary):
    """(exit status, output lines: stdout then stderr) of an example's command, from the repository root."""
    argv = shlex.split(ex.command)
    argv[0] = binary
    env = dict(os.environ, LC_ALL="C")
    env.pop("SHARDCAST_CONFIGS", None)
    try:
        p = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT_S, universal_newlines=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, ["readme-check: could not run: %s" % e]
    return p.returncode, (p.stdout + p.stderr).split("\n")


def apply_edits(lines, edits):
    """README lines (1-based numbers in edits) with drifted lines replaced, lost ones dropped and
    output lines the README lacked inserted after the line they follow (key -LINE)."""
    out = []
    for k, text in enumerate(lines, start=1):
        out += edits.get(k, [text])
        out += edits.get(-k, [])
    return out


def write_whole(path, text):
    fd, tmp = tempfile.mkstemp(prefix=".readme-check.", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check(text, name, runner):
    """(problems, drifts, edits, outputs) for README text; runner(example) -> (status, lines)."""
    examples, problems = parse(text, name)
    drifts, edits, outputs = [], {}, []
    for ex in examples:
        status, out = runner(ex)
        outputs.append((ex, status, out))
        if status != 0:
            drifts.append("%s:%d: `%s` exited %d: %s" % (name, ex.line, ex.command, status,
                                                          next((t for t in out if t.strip()), "")))
            continue
        d, e = compare(ex, out, name)
        drifts += d
        edits.update(e)
    return problems, drifts, edits, outputs


def self_test():
    """The comparison on a small README against a fake binary: each case fails if the rule breaks."""
    real = {"./shardcast a": ["head", "", "row1  1.000  x", "row2  2.000  y", "note z", "tail"],
            "./shardcast b": ["one", "two 3.5 three", "four"]}
    runner = lambda ex: (0, real[ex.command])  # noqa: E731
    cases = [  # (README, drift count expected, why)
        ("```\n$ ./shardcast a\nrow1  1.000  x\nrow2  2.000  y\n```\n", 0, "an exact excerpt"),
        ("```\n$ ./shardcast a\nrow1  1.000  x\nrow2  2.001  y\n```\n", 1, "one number drifted"),
        ("```\n$ ./shardcast a\nrow1  1.000  x\nnote z\n```\n", 1, "a line left out without `...`"),
        ("```\n$ ./shardcast a\nrow1  1.000  x\n...\nnote z\n```\n", 0, "a line elided with `...`"),
        ("```\n$ ./shardcast a\nrow1  1.000 ...\n```\n", 0, "a prefix line"),
        ("```\n$ ./shardcast a\nrow1  1.100 ...\n```\n", 1, "a prefix line with a drifted number"),
        ("```\n$ ./shardcast a\nrow1  1.000  x\nother  2.000  y\n```\n", 1, "a line the output lacks"),
        ("<!-- readme-check: command ./shardcast b -->\n```\ntwo 3.5 three\n```\n", 0, "a command marker"),
        ("```\n$ ./shardcast \\\n      b\nfour\n```\n", 0, "a command continued on the next line"),
    ]
    bad = 0
    for readme, want, why in cases:
        problems, drifts, edits, _ = check(readme, "R", runner)
        if problems or len(drifts) != want:
            print("readme-check self-test: %s: expected %d drift(s), got %s %s" % (why, want, drifts, problems))
            bad += 1
        fixed = "\n".join(apply_edits(readme.split("\n"), edits))
        if check(fixed, "R", runner)[1]:
            print("readme-check self-test: %s: --update does not converge: %r" % (why, fixed))
            bad += 1
    for readme, why in [("```sh\nmake demo\n```\n", "an unmarked block that is not an example"),
                        ("<!-- readme-check: skip -->\n```\nmake\n```\n", "a skip without a reason"),
                        ("```\n$ mpirun -np 2 ./shardcast a\n```\n", "a command that is not ./shardcast")]:
        if not check(readme, "R", runner)[0]:
            print("readme-check self-test: %s was not refused" % why)
            bad += 1
    if check("<!-- readme-check: skip: install steps -->\n```sh\nmake demo\n```\n", "R", runner)[0]:
        print("readme-check self-test: a skip with its reason was refused")
        bad += 1
    print("readme-check self-test: %s" % ("%d failure(s)" % bad if bad else "ok"))
    return 1 if bad else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    opts = {"--readme": "", "--bin": os.path.join(ROOT, "shardcast")}
    flags, i = set(), 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i] in ("--update", "--show"):
            flags.add(argv[i])
            i += 1
        else:
            sys.stderr.write("readme-check: unknown argument %s (usage: tools/readme_examples.py "
                             "[--readme FILE] [--bin FILE] [--update | --show] [--self-test])\n" % argv[i])
            return 2
    path = opts["--readme"] or os.path.join(ROOT, "README.md")
    name = opts["--readme"] or "README.md"
    again = "python3 tools/readme_examples.py --update" + (" --readme " + name if opts["--readme"] else "")
    with open(path) as f:
        text = f.read()
    binary = os.path.abspath(opts["--bin"])
    problems, drifts, edits, outputs = check(text, name, lambda ex: run(ex, binary))
    if "--show" in flags:
        for ex, status, out in outputs:
            print("%s:%d: $ %s   (exit %d)\n%s" % (name, ex.line, ex.command, status, "\n".join(out).rstrip()))
    for msg in problems + drifts:
        print(msg)
    if problems:
        return 2
    if "--update" in flags and edits:
        write_whole(path, "\n".join(apply_edits(text.split("\n"), edits)))
        print("readme-check: rewrote %d place(s) of %s from the real output; review `git diff %s` and the "
              "prose that quotes those numbers" % (len(edits), name, name))
        return 0
    if drifts:
        print("readme-check: %d example line(s) of %s differ from what ./shardcast prints. If the new output is "
              "right: %s (then review git diff %s and the prose quoting "
              "the numbers); --show prints every example's full output" % (len(drifts), name, again, name))
        return 1
    print("readme-check: %d examples of %s match ./shardcast" % (len(outputs), name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
