#!/usr/bin/env python3
"""host_agree_grid.py [--jobs N] [--hook-us H] [--coll-us C] [--only CAL] [--csv FILE] — the engines'
agreement when the frameworks' host costs are large (issue 27, brief hostagree35): every framework
(DeepSpeed at each modelled version, FSDP, FSDP2, Megatron's distributed optimizer) x the sharded
layouts it runs x p5 / p4d / DGX-H100 x 1-16 nodes x grad-accum 1 and 4, with a calibration whose
`frameworks` object sets hook_us and collective_us for every framework (defaults 200 and 1000 us:
far above the shipped estimates, so that where each engine places the host work dominates the
step). Compares `predict --engine model` with `--engine sim` (step_s) and exits 1 when a pair
differs by more than --tol (default 1 %). --baseline runs every pair a second time with no host
costs and judges the host costs' own part of the gap, |gap| - |gap without them| (the engines'
other approximations, e.g. the interference bound, are not this tool's subject). Not part of make
check (minutes of CPU); changes nothing."""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

from agree_grid import write_csv  # tools/ is the script's own folder: sys.path[0]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "shardcast")
CLUSTERS = [("p5.48xlarge", 8), ("p4d.24xlarge", 8), ("dgx-h100", 8)]
NODES = (1, 2, 4, 8, 16)
FRAMEWORKS = {  # framework -> the sharded layouts it runs (agree_grid.py's RUNS, sharded only)
    "deepspeed": ("zero1", "zero2", "zero3", "mics", "zeropp", "zero3-offload"),
    "deepspeed@0.5": ("zero1", "zero2", "zero3", "mics", "zero3-offload"),
    "deepspeed@0.10": ("zero1", "zero2", "zero3", "mics", "zeropp", "zero3-offload"),
    "fsdp": ("zero3", "hsdp", "shard_grad_op", "hybrid_shard_zero2"),
    "fsdp2": ("zero3", "hsdp", "shard_grad_op", "hybrid_shard_zero2", "raf"),
    "megatron": ("zero1",),
}


def layouts(fw, g, nodes):
    n = g * nodes
    out = []
    for k in FRAMEWORKS[fw]:
        if k in ("mics", "hsdp", "hybrid_shard_zero2", "raf"):
            out += ["%s:p=%d" % (k, p) for p in sorted({g, 2 * g}) if p <= n and n % p == 0 and p < n]
            if k == "mics" and 2 * g < n:
                out.append("mics:p=%d,hier=0" % (2 * g))
        elif k == "zeropp":
            out += ["zeropp"] + (["zeropp:hpz=%d" % g] if n > g else [])
        else:
            out.append(k)
    return out


def calibration(tmpd, cal, hook_us, coll_us, src=None):
    with open(os.path.join(ROOT, "configs", "calibrations", (src or cal) + ".json")) as f:
        d = json.load(f)
    d["frameworks"] = {fw: {"hook_us": {"value": hook_us, "sd": 0}, "collective_us": {"value": coll_us, "sd": 0}}
                       for fw in ("deepspeed", "fsdp", "fsdp2", "megatron")}
    path = os.path.join(tmpd, cal + ".json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path


MODELS = ["gpt3-1.3b", "bert-10b"]


def predict(calpath, cluster, fw, model, nodes, ga, lays, engine):
    cmd = [BIN, "predict", "--cluster", cluster, "--calibration", calpath, "--nodes", str(nodes), "--model",
           model, "--micro-batch", "4", "--grad-accum", str(ga), "--framework", fw, "--ignore-memory",
           "--sim-limit-s", "300", "--engine", engine, "--json"]
    for l in lays:
        cmd += ["--layout", l]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return {r["layout"]: r["prediction"] for r in json.loads(p.stdout)["results"]}, None


def gap(calpath, cluster, fw, model, nodes, ga, l):
    s, e1 = predict(calpath, cluster, fw, model, nodes, ga, [l], "sim")
    a, e2 = predict(calpath, cluster, fw, model, nodes, ga, [l], "model") if s else (None, e1)
    return (s[l], a[l], None) if s and a else (None, None, e1 or e2)


def point(args):
    calpath, base, cluster, fw, model, nodes, ga, lays = args
    rows, refused = [], []
    for l in lays:
        s, a, err = gap(calpath, cluster, fw, model, nodes, ga, l)
        if s is None:
            refused.append((cluster, fw, model, nodes, ga, l, err))
            continue
        ss, aa = s["step_s"], a["step_s"]
        g0 = 0.0
        if base:
            s0, a0, err = gap(base, cluster, fw, model, nodes, ga, l)
            g0 = abs(a0["step_s"] - s0["step_s"]) / s0["step_s"] if s0 else 0.0
        rows.append((cluster, fw, model, nodes, ga, l, ss, aa, (aa - ss) / ss, s, a, g0))
    return rows, refused


BREAKDOWN = ["step_s", "compute_s", "exposed_allgather_s", "exposed_reducescatter_s", "exposed_allreduce_s",
             "optimizer_s", "idle_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--hook-us", type=float, default=200)
    ap.add_argument("--coll-us", type=float, default=1000)
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--only", help="calibrations whose name contains this")
    ap.add_argument("--fw", help="frameworks whose name contains this")
    ap.add_argument("--max-nodes", type=int, default=16)
    ap.add_argument("--model", help="one model of %s" % MODELS)
    ap.add_argument("--baseline", action="store_true", help="judge |gap| - |gap with no host costs|")
    ap.add_argument("--csv")
    ap.add_argument("--top", type=int, default=20)
    o = ap.parse_args()
    global BIN
    tmpd = tempfile.mkdtemp(prefix="host_agree.")
    BIN = shutil.copy2(BIN, os.path.join(tmpd, "shardcast"))
    os.symlink(os.path.join(ROOT, "configs"), os.path.join(tmpd, "configs"))
    pts = []
    for cal, g in CLUSTERS:
        if o.only and o.only not in cal:
            continue
        calpath = calibration(tmpd, cal, o.hook_us, o.coll_us)
        base = calibration(tmpd, cal + "-none", 0, 0, cal) if o.baseline else None
        for fw in FRAMEWORKS:
            if o.fw and o.fw not in fw:
                continue
            for nodes in NODES:
                if nodes > o.max_nodes:
                    continue
                for ga in (1, 4):
                    for model in MODELS:
                        if not o.model or o.model == model:
                            pts.append((calpath, base, cal, fw, model, nodes, ga, layouts(fw, g, nodes)))
    rows, refused = [], []
    with cf.ThreadPoolExecutor(max_workers=o.jobs) as ex:
        for r, f in ex.map(point, pts):
            rows += r
            refused += f
    shutil.rmtree(tmpd, ignore_errors=True)
    if o.csv:
        write_csv(o.csv, "cluster,framework,model,nodes,grad_accum,layout,sim_step_s,model_step_s,gap,gap_no_host",
                  ("%s,%s,%s,%d,%d,\"%s\",%.9g,%.9g,%.6f,%.6f" % (r[:9] + (r[11],)) for r in rows))
    def judged(r):
        return abs(r[8]) - r[11]

    print("hook_us %g, collective_us %g: the %d largest |model - sim| / sim of step_s%s:" % (
        o.hook_us, o.coll_us, o.top, " less the gap without host costs" if o.baseline else ""))
    for r in sorted(rows, key=lambda r: -judged(r))[:o.top]:
        print("  %+6.2f %%  %-13s %-15s %-9s %2d nodes ga %d  %-22s sim %.4f s  model %.4f s%s" % (
            100 * r[8], r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7],
            "  (without host costs %.2f %%)" % (100 * r[11]) if o.baseline else ""))
        for name, p in (("sim", r[9]), ("model", r[10])):
            print("      %-5s %s" % (name, " ".join("%9.4f" % p.get(b, 0.0) for b in BREAKDOWN)))
    print("%d pairs compared, %d over %g %%, max %.2f %%%s; %d runs refused by the CLI (not compared)" % (
        len(rows), sum(judged(r) > o.tol for r in rows), 100 * o.tol, 100 * max((judged(r) for r in rows), default=0),
        " (host costs' part)" if o.baseline else "", len(refused)))
    for r in refused[:10]:
        print("  refused: %s %s %s %d nodes ga %d %s: %s" % r)
    if not rows:
        return 2
    return 1 if any(judged(r) > o.tol for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
