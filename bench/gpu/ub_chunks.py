"""ub_chunks.py: one GEMM against the chunks Transformer Engine's userbuffers split it into
(Megatron --tp-comm-overlap), on one GPU, at a GPT-3 175B block's tensor-parallel shapes (t = 4,
h 12288, f 49152) and Llama-3 70B's (t = 4, h 8192, f 28672 x 2), at 2048 / 4096 / 8192 tokens.

Issue 27 (tok35, docs/COMPUTE.md "The 2,048-token residual"): shardcast times every GEMM of a
block whole, while TE runs qkv/fc1 fprop and proj/fc2 dgrad as t chunks of M / t (ring_exchange)
and proj/fc2 fprop as 4 chunks of M / 4 (pipeline), on up to 3 compute streams
(NVIDIA/TransformerEngine pytorch/module/base.py initialize_ub defaults; comm_gemm_overlap.h
split_overlap_ag / split_overlap_rs). Timed serially the model's kernels put the chunking at
+10.5 % of a GPT-3 block's GEMM time at 2048 tokens and +3.6 % at 4096; how much of that the
three streams hide is what this measures. No communication is run (one GPU): the GEMMs alone.
Not here: the collectives, SM sharing with the communication kernels (calibrated elsewhere).

Per shape and M: whole GEMM; chunks serial on one stream; chunks round-robin over 3 streams
(as TE); each after >= 0.5 s of the same loop (sustained clock), randn operands, bf16."""
import sys
import time

from common import Recorder, cuda_time

SHAPES = {  # (name, N, K, chunks, how) per TE method; M = tokens
    "gpt3-175b-t4": [("qkv_fprop", 3 * 12288 // 4, 12288, 4, "ring_exchange"),
                     ("proj_fprop", 12288, 12288 // 4, 4, "pipeline"),
                     ("fc1_fprop", 49152 // 4, 12288, 4, "ring_exchange"),
                     ("fc2_fprop", 12288, 49152 // 4, 4, "pipeline"),
                     ("proj_dgrad", 12288 // 4, 12288, 4, "ring_exchange"),
                     ("fc2_dgrad", 49152 // 4, 12288, 4, "ring_exchange")],
    "llama3-70b-t4": [("qkv_fprop", (8192 + 2 * 1024) // 4, 8192, 4, "ring_exchange"),
                      ("proj_fprop", 8192, 8192 // 4, 4, "pipeline"),
                      ("fc1_fprop", 2 * 28672 // 4, 8192, 4, "ring_exchange"),
                      ("fc2_fprop", 8192, 28672 // 4, 4, "pipeline")],
}


def sustained(torch, fn, warm_s=0.5, iters=20):
    t0 = time.time()
    while time.time() - t0 < warm_s:
        fn()
    torch.cuda.synchronize()
    return cuda_time(torch, fn, iters, warmup=0)


def main():
    import torch
    rec = Recorder("ub_chunks", torch, dtype="bf16", data="randn", streams=3,
                   note="GEMMs only (no communication); chunks along M as TE userbuffers")
    dev = "cuda"
    streams = [torch.cuda.Stream() for _ in range(3)]
    for model, rows in SHAPES.items():
        for M in (2048, 4096, 8192):
            for gemm, N, K, ch, how in rows:
                try:
                    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
                    b = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
                    out = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
                    m = M // ch
                    parts = [(a[i * m:(i + 1) * m], out[i * m:(i + 1) * m]) for i in range(ch)]

                    def whole():
                        torch.matmul(a, b, out=out)

                    def serial():
                        for x, y in parts:
                            torch.matmul(x, b, out=y)

                    def multi():
                        cur = torch.cuda.current_stream()
                        for s in streams:
                            s.wait_stream(cur)
                        for i, (x, y) in enumerate(parts):
                            with torch.cuda.stream(streams[i % 3]):
                                torch.matmul(x, b, out=y)
                        for s in streams:
                            cur.wait_stream(s)

                    flop = 2.0 * M * N * K
                    t = {k: sustained(torch, f) for k, f in (("whole", whole), ("serial", serial),
                                                             ("streams3", multi))}
                    rec.add(model=model, gemm=gemm, method=how, m=M, n=N, k=K, chunks=ch,
                            **{k + "_s": v for k, v in t.items()},
                            **{k + "_tflops": flop / v / 1e12 for k, v in t.items()},
                            streams3_over_whole=t["streams3"] / t["whole"],
                            serial_over_whole=t["serial"] / t["whole"])
                except Exception as exc:  # noqa: BLE001 - keep the other points
                    rec.error(f"{model} {gemm} M={M}", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
