"""fsdp_grad.py: what FSDP adds to a micro-step on one GPU: the gradient path's HBM work.

A stack of L Llama-3-8B-shaped MLP+attention-projection layers (bf16 parameters) is run
  plain (no FSDP), FSDP1 (FullyShardedDataParallel, one unit per layer) with MixedPrecision
  reduce_dtype fp32 and bf16, and FSDP2 (fully_shard) with reduce_dtype fp32 and bf16,
at micro-batch 1, 2, 4 x 2048 tokens, forward + backward (no optimizer step). World size 1
(one GPU; FSDP1 then runs NO_SHARD, whose post-backward hook still casts, divides and
accumulates; FSDP2 keeps its copy-in/out): the extra time over plain is the per-micro-step
framework work, reported per parameter as seconds and as equivalent HBM bytes at the
measured copy rate. The profiler splits kernel time into GEMM / elementwise. Not here:
multi-GPU overlap (needs 8 GPUs)."""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

from common import Recorder, cuda_time

H, FFN, L, SEQ = 4096, 14336, 4, 2048


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(H, H + 2 * 1024, bias=False)
        self.o = nn.Linear(H, H, bias=False)
        self.w13 = nn.Linear(H, 2 * FFN, bias=False)
        self.w2 = nn.Linear(FFN, H, bias=False)

    def forward(self, x):
        x = x + self.o(self.qkv(x)[..., :H])
        a, b = self.w13(x).chunk(2, dim=-1)
        return x + self.w2(torch.nn.functional.silu(a) * b)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(L))

    def forward(self, x):
        for l in self.layers:
            x = l(x)
        return x


def copy_rate():
    a = torch.empty(2**28, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t = cuda_time(torch, lambda: b.copy_(a), 20)
    return 2 * a.numel() / t  # bytes read + written per second


def build(kind, reduce_dtype):
    m = Stack().cuda()
    if kind == "plain":
        return m.to(torch.bfloat16)
    if kind == "fsdp1":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=reduce_dtype,
                            buffer_dtype=torch.bfloat16)
        return FSDP(m, auto_wrap_policy=ModuleWrapPolicy({Layer}), mixed_precision=mp,
                    device_id=torch.cuda.current_device(), use_orig_params=True)
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=reduce_dtype)
    for l in m.layers:
        fully_shard(l, mp_policy=mp)
    fully_shard(m, mp_policy=mp)
    return m


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    rate = copy_rate()
    n_params = sum(p.numel() for p in Stack().parameters())
    rec = Recorder("fsdp_grad", torch, layers=L, hidden=H, ffn=FFN, seq=SEQ, params=n_params,
                   copy_Bps=rate, world_size=1)
    base = {}
    for kind, rd in (("plain", None), ("fsdp1", torch.float32), ("fsdp1", torch.bfloat16),
                     ("fsdp2", torch.float32), ("fsdp2", torch.bfloat16)):
        try:
            torch.cuda.reset_peak_memory_stats()
            m = build(kind, rd)
            for mb in (1, 2, 4):
                x = torch.randn(mb, SEQ, H, device="cuda", dtype=torch.bfloat16)
                t = cuda_time(torch, lambda: m(x).float().mean().backward(), 8, warmup=3)
                if kind == "plain":
                    base[mb] = t
                extra = t - base.get(mb, t)
                rec.add(kind=kind, reduce_dtype=str(rd).replace("torch.", "") if rd else None,
                        micro_batch=mb, tokens=mb * SEQ, s_per_microstep=t, extra_s=extra,
                        extra_s_per_param=extra / n_params,
                        extra_bytes_per_param_at_copy_rate=extra * rate / n_params,
                        alloc_retries=torch.cuda.memory_stats().get("num_alloc_retries", 0),
                        peak_GiB=torch.cuda.max_memory_allocated() / 2**30)
            del m
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            rec.error("%s %s" % (kind, rd), e)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
