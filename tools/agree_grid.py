#!/usr/bin/env python3
"""agree_grid.py [--quick] [--jobs N] [--csv FILE] [--top K] — run the whole engine-agreement grid
through the CLI (`shardcast predict --engine sim` against `--engine model`): every shipped
calibration on its cluster x every --framework (and DeepSpeed version) x the layouts that framework
runs (data-parallel, MiCS, HSDP, ZeRO++, offload, tensor incl. across nodes, AxoNN, Megatron 3D,
context parallel) x 2 models x 1/2/4 nodes, and print the largest step-time gaps per cluster and per
layout kind x framework. Measures the claim "both engines within 3 %"; it is not part of make check
(minutes of CPU) and changes nothing. Gap = |model - sim| / sim of step_s. Exits 1 when a gap > 3 %."""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "shardcast")

# (calibration file stem, cluster name or file, gpus per node, node counts)
CLUSTERS = [
    ("p3dn.24xlarge", "p3dn.24xlarge", 8, (1, 2, 4)),
    ("p3dn.24xlarge-2020", "p3dn.24xlarge", 8, (2, 4)),
    ("p4d.24xlarge", "p4d.24xlarge", 8, (1, 2, 4)),
    ("p4d.24xlarge-2021", "p4d.24xlarge", 8, (2, 4)),
    ("p4de.24xlarge", "p4de.24xlarge", 8, (2, 4)),
    ("p5.48xlarge", "p5.48xlarge", 8, (1, 2, 4)),
    ("dgx-h100", "dgx-h100", 8, (1, 2, 4)),
    ("dgx-a100", "dgx-a100", 8, (2, 4)),
    ("perlmutter-gpu", "perlmutter-gpu", 4, (2, 4)),
    ("dgx2-v100-ib", "validation/clusters/dgx2-v100-ib8.json", 16, (2, 4)),
    ("luwu-8x100g", "luwu-8x100g", 1, (2, 4, 8)),
    ("luwu-8x200g", "luwu-8x200g", 1, (2, 4, 8)),
]
FRAMEWORKS = ["ideal", "deepspeed", "deepspeed@0.3", "deepspeed@0.5", "deepspeed@0.10",
              "deepspeed@0.11", "fsdp", "fsdp2", "megatron"]
MODELS = ["gpt3-1.3b", "bert-10b"]
RUNS = {  # layout kinds each framework schedules (shardcast's own refusal lists them)
    "deepspeed": {"ddp", "zero1", "zero2", "zero3", "mics", "zeropp", "zero3-offload"},
    "fsdp": {"ddp", "zero3", "hsdp", "shard_grad_op", "hybrid_shard_zero2"},
    "fsdp2": {"ddp", "zero3", "hsdp", "shard_grad_op", "hybrid_shard_zero2", "raf"},
    "megatron": {"ddp", "zero1", "tp", "megatron"},
}


def layouts(g, nodes, luwu):
    """Layout strings for a node of g GPUs at this node count."""
    n = g * nodes
    out = ["ddp", "zero1", "zero2", "zero3", "shard_grad_op", "zeropp", "zeropp:qwz=1,qgz=1",
           "zero3-offload", "zero3-offload:param=cpu", "zero3-offload:opt=nvme", "zero3:cp=2"]
    for p in sorted({g // 2, g, 2 * g, 4 * g}):
        if 2 <= p <= n and n % p == 0:
            out += ["mics:p=%d" % p, "hsdp:p=%d" % p, "raf:p=%d" % p, "hybrid_shard_zero2:p=%d" % p]
            if p > g:
                out.append("mics:p=%d,hier=0" % p)
    if n % g == 0 and n > g:
        out += ["zeropp:hpz=%d" % g, "zeropp:hpz=%d,qwz=1,qgz=1" % g, "hsdp:p=%d,sync=boundary" % g]
    for t in (2, g, 2 * g):
        if t <= n and n % t == 0:
            out.append("tp:t=%d" % t)
    out += ["tp:t=%d,zero1=0" % g, "axonn:x=2,y=2,z=2"]
    if n >= 16:
        out += ["axonn:x=4,y=2,z=2", "axonn:x=2,y=2,z=1,d=%d" % (n // 4)]
    if nodes >= 2:
        out += ["megatron:t=%d,p=2" % g, "megatron:t=2,p=2,zero1=0", "megatron:t=4,p=2,vp=2",
                "megatron:t=2,p=2,sched=gpipe", "megatron:t=2,p=1,cp=2"]
    else:
        out += ["megatron:t=2,p=2", "megatron:t=2,p=2,vp=2"]
    if luwu:
        out.append("luwu")
    return out


def kind(layout):
    return layout.split(":")[0]


def runs(fw, layout):
    base = fw.split("@")[0]
    return base == "ideal" or kind(layout) in RUNS[base]


def predict(calib, cluster, fw, model, nodes, lays, engine):
    cmd = [BIN, "predict", "--cluster", cluster, "--calibration", "configs/calibrations/%s.json" % calib,
           "--nodes", str(nodes), "--model", model, "--micro-batch", "4", "--grad-accum", "2",
           "--framework", fw, "--ignore-memory", "--sim-limit-s", "120", "--engine", engine, "--json"]
    for l in lays:
        cmd += ["--layout", l]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    d = json.loads(p.stdout)
    return {r["layout"]: r["prediction"] for r in d["results"]}, None


def point(args):
    """Both engines on one (calibration, framework, model, nodes): all layouts in one call, or one
    by one when a layout is refused (the refused ones are listed, not compared)."""
    calib, cluster, fw, model, nodes, lays = args
    rows, refused = [], []
    s, err = predict(calib, cluster, fw, model, nodes, lays, "sim")
    a, _ = predict(calib, cluster, fw, model, nodes, lays, "model") if s else (None, None)
    if s is None or a is None:
        s, a = {}, {}
        for l in lays:
            s1, e1 = predict(calib, cluster, fw, model, nodes, [l], "sim")
            a1, e2 = predict(calib, cluster, fw, model, nodes, [l], "model") if s1 else (None, e1)
            if s1 and a1:
                s.update(s1)
                a.update(a1)
            else:
                refused.append((l, (e1 or e2 or [""])[0]))
    for l in lays:
        if l in s and l in a:
            ss, aa = s[l]["step_s"], a[l]["step_s"]
            rows.append((calib, fw, model, nodes, l, ss, aa, (aa - ss) / ss, s[l], a[l]))
    return rows, [(calib, fw, model, nodes, l, e) for l, e in refused]


def grid(quick, only):
    pts = []
    for calib, cluster, g, counts in CLUSTERS:
        if only and only not in calib:
            continue
        for fw in FRAMEWORKS:
            for model in MODELS[:1] if quick else MODELS:
                for nodes in counts:
                    lays = [l for l in layouts(g, nodes, calib.startswith("luwu")) if runs(fw, l)]
                    if lays:
                        pts.append((calib, cluster, fw, model, nodes, lays))
    return pts


def summary(rows, top):
    print("largest |model - sim| / sim of the step per calibration (gap > 3 %% marked *):")
    by = {}
    for r in rows:
        by.setdefault(r[0], []).append(r)
    for c in sorted(by):
        w = max(by[c], key=lambda r: abs(r[7]))
        print("  %-20s %5d pairs  max %5.2f %%%s  (%s %s %s@%d: sim %.4f s, model %.4f s)" % (
            c, len(by[c]), 100 * abs(w[7]), " *" if abs(w[7]) > 0.03 else "", w[1], w[2], w[4], w[3], w[5], w[6]))
    print("largest gap per layout kind x framework (over every calibration, model, node count):")
    kf = {}
    for r in rows:
        k = (kind(r[4]), r[1])
        if k not in kf or abs(r[7]) > abs(kf[k][7]):
            kf[k] = r
    for k in sorted(kf):
        w = kf[k]
        print("  %-20s %-15s max %5.2f %%%s  (%s %s %s@%d)" % (
            k[0], k[1], 100 * abs(w[7]), " *" if abs(w[7]) > 0.03 else "", w[0], w[2], w[4], w[3]))
    print("the %d largest gaps:" % top)
    for r in sorted(rows, key=lambda r: -abs(r[7]))[:top]:
        print("  %+6.2f %%  %-20s %-15s %-10s %d nodes  %-28s sim %.4f s  model %.4f s" % (
            100 * r[7], r[0], r[1], r[2], r[3], r[4], r[5], r[6]))


BREAKDOWN = ["step_s", "compute_s", "exposed_allgather_s", "exposed_reducescatter_s", "exposed_allreduce_s",
             "optimizer_s", "idle_s"]


def explain(rows):
    """Both engines' breakdowns of every pair over 3 %: where they price the step differently."""
    over = sorted([r for r in rows if abs(r[7]) > 0.03], key=lambda r: -abs(r[7]))
    if not over:
        return
    print("breakdowns of the pairs over 3 %% (s; sim / model): %s" % " ".join(b[:-2] for b in BREAKDOWN))
    for r in over:
        print("  %s %s %s@%d %s:" % (r[0], r[1], r[4], r[3], r[2]))
        for name, p in (("sim", r[8]), ("model", r[9])):
            print("    %-5s %s" % (name, " ".join("%9.4f" % p.get(b, 0.0) for b in BREAKDOWN)))


def write_csv(path, header, lines):
    """Writes header and lines to path whole or not at all: a unique temporary file beside it,
    fsync, rename (the project's rule for outputs; host_agree_grid.py writes through it too)."""
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(header + "\n")
            for line in lines:
                f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one model (gpt3-1.3b)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--csv", help="write every pair as CSV")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--only", help="calibrations whose name contains this")
    o = ap.parse_args()
    global BIN  # a private copy: a rebuild during the run does not mix two binaries
    tmpd = tempfile.mkdtemp(prefix="agree_grid.")
    BIN = shutil.copy2(BIN, os.path.join(tmpd, "shardcast"))
    os.symlink(os.path.join(ROOT, "configs"), os.path.join(tmpd, "configs"))  # it finds its configs beside it
    rows, refused = [], []
    with cf.ThreadPoolExecutor(max_workers=o.jobs) as ex:
        for r, f in ex.map(point, grid(o.quick, o.only)):
            rows += r
            refused += f
    shutil.rmtree(tmpd, ignore_errors=True)
    if o.csv:
        write_csv(o.csv, "calibration,framework,model,nodes,layout,sim_step_s,model_step_s,gap",
                  ("%s,%s,%s,%d,\"%s\",%.9g,%.9g,%.6f" % r[:8] for r in rows))
    summary(rows, o.top)
    explain(rows)
    kinds = {}
    for r in refused:
        kinds.setdefault(r[5], 0)
        kinds[r[5]] += 1
    print("%d pairs compared (%d exact to 1e-9, %d over 1 %%, %d over 3 %%); %d layout runs refused by the CLI "
          "(not compared):" % (len(rows), sum(abs(r[7]) <= 1e-9 for r in rows), sum(abs(r[7]) > 0.01 for r in rows),
                               sum(abs(r[7]) > 0.03 for r in rows), len(refused)))
    for e, n in sorted(kinds.items(), key=lambda x: -x[1])[:12]:
        print("  %4d x %s" % (n, e[:150]))
    if not rows:
        return 2
    return 1 if any(abs(r[7]) > 0.03 for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
