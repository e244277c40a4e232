"""eager_block.py: one transformer block, eager against torch.compile, with the profiler.

Two blocks at 8192 tokens (batch 2 x 4096), bf16 parameters:
  llama: torchtitan-style Llama-3-8B block (h 4096, 32 heads, 8 KV heads, SwiGLU 14336) with RMSNorm
         upcast to fp32, RoPE through complex fp32, repeat_kv materialised, SDPA, and the fp32
         cross-entropy over a 128256 vocabulary (pytorch/torchtitan@9dec370 models/llama, norms.py,
         train.py as cited in docs: written from that description, not copied);
  gpt:   GPT-style block (h 4096, 32 heads, GELU 16384) with bf16 LayerNorm, fused QKV, SDPA.
For each: fwd+bwd time eager and compiled, and the eager profile's kernel time by class (GEMM,
attention, element-wise/other) with the top kernels. Not here: FSDP (fsdp_grad.py)."""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Recorder, cuda_time

B, S = 2, 4096


class RMSNorm(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.w = nn.Parameter(torch.ones(h))

    def forward(self, x):  # fp32 upcast as the eager Llama code does
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * self.w


def rope(x, freqs):  # complex fp32 RoPE
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2).type_as(x)


class Llama(nn.Module):
    def __init__(self, h=4096, nh=32, nkv=8, ffn=14336, vocab=128256):
        super().__init__()
        self.nh, self.nkv, self.hd = nh, nkv, h // nh
        self.n1, self.n2, self.nf = RMSNorm(h), RMSNorm(h), RMSNorm(h)
        self.wq = nn.Linear(h, h, bias=False)
        self.wk = nn.Linear(h, nkv * self.hd, bias=False)
        self.wv = nn.Linear(h, nkv * self.hd, bias=False)
        self.wo = nn.Linear(h, h, bias=False)
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)
        self.out = nn.Linear(h, vocab, bias=False)
        t = torch.arange(S, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("freqs", torch.polar(torch.ones(S, self.hd // 2),
                                                  torch.outer(t, inv)), persistent=False)

    def forward(self, x, y):
        b, s, h = x.shape
        a = self.n1(x)
        q = self.wq(a).view(b, s, self.nh, self.hd)
        k = self.wk(a).view(b, s, self.nkv, self.hd)
        v = self.wv(a).view(b, s, self.nkv, self.hd)
        f = self.freqs[:s].view(1, s, 1, -1)
        q, k = rope(q, f), rope(k, f)
        rep = self.nh // self.nkv  # repeat_kv, materialised
        k = k[:, :, :, None, :].expand(b, s, self.nkv, rep, self.hd).reshape(b, s, self.nh, self.hd)
        v = v[:, :, :, None, :].expand(b, s, self.nkv, rep, self.hd).reshape(b, s, self.nh, self.hd)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        x = x + self.wo(o.transpose(1, 2).contiguous().view(b, s, h))
        m = self.n2(x)
        x = x + self.w2(F.silu(self.w1(m)) * self.w3(m))
        logits = self.out(self.nf(x)).float()  # fp32 logits for the loss
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))


class GPT(nn.Module):
    def __init__(self, h=4096, nh=32, ffn=16384):
        super().__init__()
        self.nh, self.hd = nh, h // nh
        self.n1, self.n2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.o = nn.Linear(h, h)
        self.fc1 = nn.Linear(h, ffn)
        self.fc2 = nn.Linear(ffn, h)

    def forward(self, x, y):
        b, s, h = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, s, 3, self.nh, self.hd).unbind(2)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        x = x + self.o(o.transpose(1, 2).reshape(b, s, h))
        x = x + self.fc2(F.gelu(self.fc1(self.n2(x))))
        return x.float().pow(2).mean()


def classify(name):
    n = name.lower()
    if any(t in n for t in ("flash", "fmha", "attention", "cudnn", "sdpa")):
        return "attention"
    if any(t in n for t in ("gemm", "sm90_xmma", "sm80_xmma", "cutlass", "nvjet", "cublas", "ampere_")):
        return "gemm"
    return "elementwise"


def profile(model, x, y):
    from torch.profiler import ProfilerActivity, profile as prof
    step = lambda: model(x, y).backward()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    with prof(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    by, kernels = {}, []
    for e in p.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0)
        if t <= 0 or getattr(e, "device_type", None) is not None and "CUDA" not in str(e.device_type):
            continue
        c = classify(e.key)
        by[c] = by.get(c, 0.0) + t / 3e6
        kernels.append({"kernel": e.key[:120], "class": c, "s_per_step": t / 3e6, "calls": e.count // 3})
    kernels.sort(key=lambda r: -r["s_per_step"])
    return by, kernels[:40]


def main():
    rec = Recorder("eager_block", torch, batch=B, seq=S, dtype="bf16 parameters")
    torch.manual_seed(0)
    for name, cls in (("llama", Llama), ("gpt", GPT)):
        try:
            model = cls().cuda().to(torch.bfloat16)
            if name == "llama":
                model.freqs = model.freqs.cuda()
            x = torch.randn(B, S, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            y = torch.randint(0, 128256, (B, S), device="cuda")
            eager = cuda_time(torch, lambda: model(x, y).backward(), 10, warmup=3)
            by, top = profile(model, x, y)
            rec.add(block=name, mode="eager", s_fwdbwd=eager, kernel_s_by_class=by, top_kernels=top)
            t0 = time.time()
            cm = torch.compile(model)
            cm(x, y).backward()
            torch.cuda.synchronize()
            ct = time.time() - t0
            comp = cuda_time(torch, lambda: cm(x, y).backward(), 10, warmup=3)
            byc, topc = profile(cm, x, y)
            rec.add(block=name, mode="compiled", s_fwdbwd=comp, compile_s=ct,
                    gain=eager / comp - 1.0, kernel_s_by_class=byc, top_kernels=topc[:20])
            del model, cm, x, y
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            rec.error(name, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
