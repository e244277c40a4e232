"""attention.py: attention kernel throughput by backend, sequence length, head dim and mask.

The FlashAttention-2 paper's protocol (arXiv 2307.08691 §4.1): hidden 2048, batch x seqlen =
16k tokens (batch 1 beyond 16k), heads = 2048 / d; FLOPs fwd = 4 * s^2 * d * heads * batch
(halved when causal), bwd = 2.5 x fwd. Backends: PyTorch SDPA flash / cuDNN / memory-efficient
(math up to 4k), and the flash_attn / flash_attn_interface (FA3) packages where installed.
Each point runs back to back for ~0.25 s after warm-up. Not here: GEMMs (sustained_gemm.py)."""
import sys

import torch
import torch.nn.functional as F

from common import Recorder, timed_for

SEQS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
LONG = 65536  # beyond this only d 128 causal, flash and cuDNN (the long-context cases' kernels)


def backends():
    out = []
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        for name, b in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                        ("sdpa-cudnn", getattr(SDPBackend, "CUDNN_ATTENTION", None)),
                        ("sdpa-efficient", SDPBackend.EFFICIENT_ATTENTION),
                        ("sdpa-math", SDPBackend.MATH)):
            if b is not None:
                out.append((name, lambda q, k, v, c, b=b: _sdpa(sdpa_kernel, b, q, k, v, c)))
    except ImportError:
        pass
    try:
        from flash_attn import flash_attn_func  # FA2 package, (b, s, h, d) layout
        out.append(("flash-attn-pkg", lambda q, k, v, c: flash_attn_func(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=c)))
    except Exception:  # noqa: BLE001 - not installed
        pass
    try:
        from flash_attn_interface import flash_attn_func as fa3  # FA3 (Hopper)
        out.append(("fa3-pkg", lambda q, k, v, c: fa3(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=c)))
    except Exception:  # noqa: BLE001
        pass
    return out


def _sdpa(ctx, b, q, k, v, causal):
    with ctx(b):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def main():
    bk = backends()
    rec = Recorder("attention", torch, protocol="FA2 paper 4.1: hidden 2048, 16k tokens",
                   backends=[n for n, _ in bk])
    for d, causal in ((128, True), (64, True), (128, False)):
        heads = 2048 // d
        for s in SEQS:
            if (not causal and s > 16384) or (s > LONG and d != 128):
                continue
            batch = max(1, 16384 // s)
            try:
                q, k, v = (torch.randn(batch, heads, s, d, device="cuda", dtype=torch.bfloat16,
                                       requires_grad=True) for _ in range(3))
                go = torch.randn(batch, heads, s, d, device="cuda", dtype=torch.bfloat16)
            except Exception as e:  # noqa: BLE001
                rec.error("alloc s=%d d=%d" % (s, d), e)
                continue
            fwd_flop = 4.0 * s * s * d * heads * batch / (2.0 if causal else 1.0)
            for name, fn in bk:
                if (name == "sdpa-math" and s > 4096) or (s > LONG and name == "sdpa-efficient"):
                    continue
                try:
                    _, t_f = timed_for(torch, lambda: fn(q, k, v, causal), 0.25)

                    def fb():
                        o = fn(q, k, v, causal)
                        o.backward(go if o.shape == go.shape else go.transpose(1, 2))
                    _, t_fb = timed_for(torch, fb, 0.25)
                    t_b = max(t_fb - t_f, 1e-9)
                    rec.add(backend=name, d=d, causal=causal, seq=s, batch=batch, heads=heads,
                            fwd_s=t_f, bwd_s=t_b, fwd_tflops=fwd_flop / t_f / 1e12,
                            bwd_tflops=2.5 * fwd_flop / t_b / 1e12,
                            fwdbwd_tflops=3.5 * fwd_flop / t_fb / 1e12,
                            batch_x_heads=batch * heads)
                except Exception as e:  # noqa: BLE001 - backend refuses this shape
                    rec.error("%s s=%d d=%d causal=%s" % (name, s, d, causal), e)
                q.grad = k.grad = v.grad = None
            del q, k, v, go
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
