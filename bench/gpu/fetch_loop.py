"""fetch_loop.py: the host cost of one ZeRO-3 parameter fetch, as DeepSpeed's eras made it.

N sub-modules each own a parameter shard; a forward pre-hook fetches it before the module
runs (an all-gather over a world of one GPU: the collective's launch path without its wire
time). Variants, per fetch:
  async     all_gather_into_tensor into a preallocated buffer, no sync (DeepSpeed >= 0.6 style);
  sync      torch.cuda.synchronize() before and after the gather (<= 0.5.4: each fetch after a
            device sync, and waits for in-flight gathers);
  sync+norm the above plus torch.zeros for the output, a list-output all_gather and
            param.norm().item() (the per-fetch debug-string norm of <= 0.5.4, a device-to-host
            sync: deepspeedai/DeepSpeed@bc7778ea stage3.py L452-457, partition_parameters.py L850).
Sizes: 1 Ki elements (host-bound) and 4 Mi elements (a 8 MB bf16 sub-module shard). The module
itself is an identity, so what is timed is hook + fetch. Reported: wall microseconds per fetch
(host clock over the whole loop, synchronised at its end) and the no-hook baseline."""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from common import Recorder

N = 256


class Sub(nn.Module):
    def __init__(self, numel):
        super().__init__()
        self.shard = torch.randn(numel, device="cuda", dtype=torch.bfloat16)
        self.full = torch.empty(numel, device="cuda", dtype=torch.bfloat16)

    def forward(self, x):
        return x


def fetch_async(m):
    dist.all_gather_into_tensor(m.full, m.shard)


def fetch_sync(m):
    torch.cuda.synchronize()
    dist.all_gather_into_tensor(m.full, m.shard)
    torch.cuda.synchronize()


def fetch_sync_norm(m):
    torch.cuda.synchronize()
    out = [torch.zeros_like(m.shard)]
    dist.all_gather(out, m.shard)
    m.full.copy_(out[0])
    _ = "norm %f" % m.full.norm().item()
    torch.cuda.synchronize()


def run(mods, x, reps=5):
    best = None
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for m in mods:
            m(x)
        torch.cuda.synchronize()
        t = (time.perf_counter() - t0) / len(mods)
        best = t if best is None else min(best, t)
    return best


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29534")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    rec = Recorder("fetch_loop", torch, submodules=N, world_size=1,
                   note="best of 5 loops; wall time per fetch incl. the Python forward pre-hook")
    x = torch.zeros(1, device="cuda")
    for numel in (1024, 4 * 2**20):
        mods = [Sub(numel) for _ in range(N)]
        base = run(mods, x)
        rec.add(variant="no-hook", numel=numel, us_per_fetch=base * 1e6)
        for name, fn in (("async", fetch_async), ("sync", fetch_sync), ("sync+norm", fetch_sync_norm)):
            try:
                hs = [m.register_forward_pre_hook(lambda mod, inp, fn=fn: fn(mod)) for m in mods]
                t = run(mods, x)
                for h in hs:
                    h.remove()
                rec.add(variant=name, numel=numel, us_per_fetch=t * 1e6,
                        us_over_no_hook=(t - base) * 1e6)
            except Exception as e:  # noqa: BLE001
                rec.error(name, e)
        del mods
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
