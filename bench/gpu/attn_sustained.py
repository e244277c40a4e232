"""attn_sustained.py: attention fwd+bwd under sustained load, with the SM clock and power logged.

docs/COMPUTE.md "attention's clock on Hopper at long sequence": the long-context cases imply an
attention rate ~1.16-1.20x the model's (FA3 at short-run rates x the dense-GEMM clock_ratio), as
if attention kept close to its burst clock under the 700 W cap. attention.py's points are 0.25-s
runs with no clock log; this runs each point for ~10 s back to back and logs nvidia-smi every
100 ms, after a 5-s 8192^3 bf16 GEMM reference in the same run (the dense clock to compare with).
Shape: Llama-3.1-8B's attention (d 128, causal, batch 1, heads not grouped), 32 heads at s 32k and
8 at 128k (each call well under a second); backends SDPA cuDNN (Hopper wgmma kernels, FA3-class) and SDPA flash (FA2 kernels).
Rates count causal as half and bwd as 2.5 x fwd (attention.py's convention).
Not here: short-run kernel tables (attention.py), GEMM K dependence (sustained_gemm.py)."""
import sys
import time

import torch
import torch.nn.functional as F

from common import Recorder, timed_for
from sustained_gemm import gemm_fn, print_phases, smi_start, smi_stop

SPAN_S = 2.0   # one timed span; five per point
SPANS = 5


def sdpa_fb(backend, s, heads=32, d=128):
    from torch.nn.attention import sdpa_kernel
    q, k, v = (torch.randn(1, heads, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    go = torch.randn(1, heads, s, d, device="cuda", dtype=torch.bfloat16)

    def fb():
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(go)
    flop = 3.5 * 4.0 * s * s * d * heads / 2.0
    return fb, flop


def main():
    from torch.nn.attention import SDPBackend
    rec = Recorder("attn_sustained", torch, spans=SPANS, span_s=SPAN_S,
                   note="clock/power from nvidia-smi -lms 100; power limit as found, not changed")
    smi, smi_path, _ = smi_start("attn_sustained")
    phases = []
    try:
        time.sleep(1.0)
        f = gemm_fn(8192, 8192, 8192)
        for i in range(3):
            t0 = time.time()
            n, sec = timed_for(torch, f, SPAN_S)
            t1 = time.time()
            rec.add(kind="gemm-8192", span=i, iters=n, s_per_call=sec,
                    tflops=2.0 * 8192 ** 3 / sec / 1e12, wall=[t0, t1])
            phases.append(("gemm-8192/%d" % i, t0, t1))
        del f
        backends = [("sdpa-cudnn", getattr(SDPBackend, "CUDNN_ATTENTION", None)),
                    ("sdpa-flash", SDPBackend.FLASH_ATTENTION)]
        for name, b in backends:
            if b is None:
                continue
            for s in (32768, 131072):
                try:
                    fb, flop = sdpa_fb(b, s, heads=32 if s <= 32768 else 8)
                    for i in range(SPANS):
                        t0 = time.time()
                        n, sec = timed_for(torch, fb, SPAN_S, min_iters=2)
                        t1 = time.time()
                        rec.add(kind="attention", backend=name, seq=s, heads=32 if s <= 32768 else 8, d=128, causal=True,
                                span=i, iters=n, s_per_call=sec, tflops=flop / sec / 1e12,
                                wall=[t0, t1])
                        phases.append(("%s/%d/%d" % (name, s, i), t0, t1))
                    del fb
                    torch.cuda.empty_cache()
                except Exception as e:  # noqa: BLE001 - keep the other points
                    rec.error("%s s=%d" % (name, s), e)
    except Exception as e:  # noqa: BLE001
        rec.error("run", e)
    finally:
        print_phases(smi_stop(rec, smi, smi_path, phases), reasons=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
