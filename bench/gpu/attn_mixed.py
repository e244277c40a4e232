"""attn_mixed.py: does attention keep its own (higher) sustained clock when it alternates with GEMMs?

attn_sustained.py found attention alone at the 700 W cap running near its short-run rate (SM clock
1680 MHz for cuDNN, 1950 for FA2 against 1470 for a dense GEMM). In a training step the two
alternate every few milliseconds, and the board's power controller may settle one clock for the
mix. Here: a block-like loop at 32k tokens (batch 1) of Llama-3.1-8B's four linear GEMMs x 3
(forward, dgrad, wgrad shapes as forward) then one causal attention fwd+bwd (32 heads, d 128),
each segment bracketed by CUDA events, ~8 s per backend after the segments ran alone for ~4 s
each. Reported: each segment's mean time alone and in the mix (the mix's last 6 s), and the SM
clock per phase from nvidia-smi every 100 ms.
Not here: attention's short-run tables (attention.py), its clock alone (attn_sustained.py)."""
import sys
import time

import torch
import torch.nn.functional as F

from common import Recorder
from sustained_gemm import print_phases, smi_start, smi_stop

T, H, FFN, HEADS, D = 32768, 4096, 14336, 32, 128


def make_gemms():
    shapes = ((T, H + 2 * 1024, H), (T, H, H), (T, 2 * FFN, H), (T, H, FFN))
    ops = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ops.append((lambda a=a, b=b, c=c: torch.mm(a, b, out=c), 2.0 * m * n * k))
    flop = 3 * sum(f for _, f in ops)

    def run():
        for _ in range(3):
            for fn, _ in ops:
                fn()
    return run, flop


def make_attn(backend):
    from torch.nn.attention import sdpa_kernel
    q, k, v = (torch.randn(1, HEADS, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    go = torch.randn(1, HEADS, T, D, device="cuda", dtype=torch.bfloat16)

    def run():
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(go)
        q.grad = k.grad = v.grad = None
    return run, 3.5 * 4.0 * T * T * D * HEADS / 2.0


def loop(segs, seconds, skip_s):
    """Run the segments in turn for `seconds`; mean ms per segment over iterations after skip_s."""
    ev = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        row = []
        for fn in segs:
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            row.append((a, b))
        ev.append((time.time() - t0, row))
        if len(ev) % 8 == 0:
            torch.cuda.synchronize()  # keep the queue short so wall time tracks the GPU
    torch.cuda.synchronize()
    kept = [r for t, r in ev if t >= skip_s] or [r for _, r in ev]
    return [sum(r[i][0].elapsed_time(r[i][1]) for r in kept) / len(kept) for i in range(len(segs))], len(kept)


def main():
    from torch.nn.attention import SDPBackend
    rec = Recorder("attn_mixed", torch, tokens=T, heads=HEADS, d=D,
                   note="segments timed with CUDA events; clock from nvidia-smi -lms 100")
    smi, smi_path, _ = smi_start("attn_mixed")
    phases = []
    try:
        time.sleep(0.5)
        g, gflop = make_gemms()
        for name, b in (("sdpa-cudnn", getattr(SDPBackend, "CUDNN_ATTENTION", None)),
                        ("sdpa-flash", SDPBackend.FLASH_ATTENTION)):
            if b is None:
                continue
            try:
                a, aflop = make_attn(b)
                for what, segs, sec in (("gemm-alone", [g], 4.0), ("attn-alone", [a], 4.0),
                                        ("mixed", [g, a], 8.0)):
                    t0 = time.time()
                    ms, n = loop(segs, sec, sec - (6.0 if sec > 6 else 2.0))
                    t1 = time.time()
                    phases.append(("%s/%s" % (name, what), t0, t1))
                    row = dict(backend=name, phase=what, iters=n, wall=[t0, t1])
                    if what != "attn-alone":
                        row.update(gemm_ms=ms[0], gemm_tflops=gflop / ms[0] / 1e9)
                    if what != "gemm-alone":
                        row.update(attn_ms=ms[-1], attn_tflops=aflop / ms[-1] / 1e9)
                    rec.add(**row)
                del a
                torch.cuda.empty_cache()
            except Exception as e:  # noqa: BLE001 - keep the other backend
                rec.error(name, e)
    except Exception as e:  # noqa: BLE001
        rec.error("run", e)
    finally:
        print_phases(smi_stop(rec, smi, smi_path, phases), reasons=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
