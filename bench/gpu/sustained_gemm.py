"""sustained_gemm.py: GEMM throughput under sustained load, with the SM clock and power logged.

Measures (a) a K sweep at M = N = 8192 (K 768..16384: shardcast's `gemm_k0` K-dependence),
(b) the forward / data-gradient / weight-gradient GEMMs of a Llama-3-8B layer at 8192 tokens,
each for ~0.8 s back to back with randn data, and (c) 8192^3 for 15 s: the clock, power and
throughput of the first 0.5 s against the last 10 s give the sustained `clock_ratio`.
nvidia-smi is polled every 100 ms for the whole run. The power limit is read, never changed.
Not here: attention (attention.py), element-wise work (eager_block.py)."""
import datetime as dt
import os
import subprocess
import sys
import time

import torch

from common import Recorder, out_dir, timed_for

FIELDS_BASE = "timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks.mem"


def smi_fields():
    for reason in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
        q = FIELDS_BASE + "," + reason
        r = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, check=False)
        if r.returncode == 0:
            return q
    return FIELDS_BASE


def parse_smi(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = [x.strip() for x in line.split(",")]
            if len(p) < 7:
                continue
            try:
                # nvidia-smi prints local time; a naive datetime's timestamp() reads it as local too
                t = dt.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                rows.append({"t": t, "sm_MHz": float(p[1]), "max_MHz": float(p[2]),
                             "power_W": float(p[3]), "limit_W": float(p[4]), "temp_C": float(p[5]),
                             "reasons": p[7] if len(p) > 7 else ""})
            except ValueError:
                continue
    return rows


def phase_stats(smi, t0, t1):
    sel = [r for r in smi if t0 <= r["t"] <= t1]
    if not sel:
        return None
    sm = sorted(r["sm_MHz"] for r in sel)
    pw = sorted(r["power_W"] for r in sel)
    return {"samples": len(sel), "sm_MHz_median": sm[len(sm) // 2], "sm_MHz_min": sm[0],
            "sm_MHz_max": sm[-1], "max_MHz": sel[0]["max_MHz"], "power_W_median": pw[len(pw) // 2],
            "limit_W": sel[0]["limit_W"], "temp_C_last": sel[-1]["temp_C"],
            "reasons": sorted({r["reasons"] for r in sel})}


def smi_start(name):
    """nvidia-smi polled every 100 ms into $OUT/<name>_smi.csv: (process, path, query fields)."""
    path = os.path.join(out_dir(), name + "_smi.csv")
    q = smi_fields()
    proc = subprocess.Popen(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits",
                             "-lms", "100", "-f", path])
    return proc, path, q


def smi_stop(rec, proc, path, phases):
    """Stop the poller; each (name, t0, t1) phase's clock and power into rec.doc["phases"]
    (flushed). An unreadable log is recorded as an error, not raised; returns the phases or None."""
    time.sleep(0.3)
    proc.terminate()
    proc.wait()
    try:
        rows = parse_smi(path)
        rec.doc["phases"] = {name: phase_stats(rows, a, b) for name, a, b in phases}
        rec.flush()
        return rec.doc["phases"]
    except Exception as e:  # noqa: BLE001 - keep what was measured
        rec.error("smi-parse", e)
        return None


def print_phases(ph, reasons):
    """One line per phase: median SM clock, median power (and the throttle reasons)."""
    for k, v in (ph or {}).items():
        if v:
            print(k, v["sm_MHz_median"], "MHz", v["power_W_median"], "W", *([v["reasons"]] if reasons else []),
                  flush=True)


def gemm_fn(m, n, k, zeros=False):
    mk = torch.zeros if zeros else torch.randn
    a = mk(m, k, device="cuda", dtype=torch.bfloat16)
    b = mk(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.mm(a, b, out=c)


def main():
    rec = Recorder("sustained_gemm", torch, dtype="bf16", data="randn unless noted",
                   note="clock/power from nvidia-smi -lms 100; power limit as found, not changed")
    smi, smi_path, q = smi_start("sustained_gemm")
    rec.doc["meta"]["smi_fields"] = q
    phases = []
    try:
        time.sleep(1.0)  # idle clock before load
        phases.append(("idle", time.time() - 1.0, time.time()))
        # (c) sustained 8192^3: first 0.5 s (burst) then 10+ s (sustained)
        f = gemm_fn(8192, 8192, 8192)
        flop = 2.0 * 8192 ** 3
        t0 = time.time()
        n, s = timed_for(torch, f, 0.5)
        t1 = time.time()
        rec.add(kind="burst", m=8192, n=8192, k=8192, iters=n, s_per_gemm=s, tflops=flop / s / 1e12,
                wall=[t0, t1])
        phases.append(("burst", t0, t1))
        for i in range(3):  # three 5-s spans: the clock settles as the board warms
            t0 = time.time()
            n, s = timed_for(torch, f, 5.0)
            t1 = time.time()
            rec.add(kind="sustained", span=i, m=8192, n=8192, k=8192, iters=n, s_per_gemm=s,
                    tflops=flop / s / 1e12, wall=[t0, t1])
            phases.append(("sustained%d" % i, t0, t1))
        fz = gemm_fn(8192, 8192, 8192, zeros=True)
        n, s = timed_for(torch, fz, 1.0)
        rec.add(kind="zeros", m=8192, n=8192, k=8192, iters=n, s_per_gemm=s, tflops=flop / s / 1e12)
        del f, fz
        # (a) K sweep at M = N = 8192, sustained (the board is warm now)
        for k in (768, 1024, 2048, 4096, 8192, 16384):
            n, s = timed_for(torch, gemm_fn(8192, 8192, k), 0.8)
            rec.add(kind="k-sweep", m=8192, n=8192, k=k, iters=n, s_per_gemm=s,
                    tflops=2.0 * 8192 * 8192 * k / s / 1e12)
        # (b) Llama-3-8B layer GEMMs at T = 8192 tokens: h 4096, q/o 4096, k/v 1024, ffn 14336
        T, h = 8192, 4096
        for name, out in (("qkv", 4096 + 2 * 1024), ("o", 4096), ("gate_up", 2 * 14336),
                          ("down_in", 14336)):
            k_in = h if name != "down_in" else 14336
            n_out = out if name != "down_in" else h
            for role, (m, nn, kk) in (("fwd", (T, n_out, k_in)), ("dgrad", (T, k_in, n_out)),
                                      ("wgrad", (k_in, n_out, T))):
                n, s = timed_for(torch, gemm_fn(m, nn, kk), 0.6)
                rec.add(kind="llama3-8b", gemm=name, role=role, m=m, n=nn, k=kk, iters=n,
                        s_per_gemm=s, tflops=2.0 * m * nn * kk / s / 1e12)
    except Exception as e:  # noqa: BLE001 - keep what was measured
        rec.error("gemm", e)
    finally:
        ph = smi_stop(rec, smi, smi_path, phases)
    if ph is not None:
        print("phases", ph, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
