"""common.py: timing and output helpers shared by the GPU measurement scripts in bench/gpu/.

Each script writes one JSON document (schema "shardcast-gpu-measurement/1") atomically to
$OUT/<name>.json, re-written after every measured point so a time-out keeps what was measured.
Not here: what is measured (one script per measurement, see README.md beside this file)."""
import json
import os
import platform
import sys
import time


def out_dir():
    d = os.environ.get("OUT") or os.path.join(os.getcwd(), "out", "gpu")
    os.makedirs(d, exist_ok=True)
    return d


def env_info(torch):
    info = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": platform.python_version(), "torch": torch.__version__,
            "cuda": getattr(torch.version, "cuda", None), "hostname": platform.node()}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(gpu=p.name, sms=p.multi_processor_count,
                    memory_GiB=round(p.total_memory / 2**30, 2))
        try:
            info["cudnn"] = torch.backends.cudnn.version()
        except Exception:  # noqa: BLE001 - informational only
            pass
        try:
            info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception:  # noqa: BLE001
            pass
    return info


class Recorder:
    """Collects rows and rewrites $OUT/<name>.json (tmp + fsync + rename) after each one."""

    def __init__(self, name, torch, **meta):
        self.path = os.path.join(out_dir(), name + ".json")
        self.doc = {"schema": "shardcast-gpu-measurement/1", "measurement": name,
                    "env": env_info(torch), "meta": meta, "rows": [], "errors": []}
        self.flush()

    def add(self, **row):
        self.doc["rows"].append(row)
        print(json.dumps(row), flush=True)
        self.flush()

    def error(self, what, exc):
        self.doc["errors"].append({"what": what, "error": repr(exc)[:400]})
        print("ERROR", what, repr(exc)[:400], file=sys.stderr, flush=True)
        self.flush()

    def flush(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def cuda_time(torch, fn, iters, warmup=3):
    """Mean seconds per call of fn over iters calls, timed with CUDA events after warmup."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / 1e3 / iters


def timed_for(torch, fn, seconds, min_iters=5):
    """Run fn back to back for about `seconds` (sustained load); return (iters, mean s/call).
    The iteration count is sized from a short probe, then timed as one CUDA-event span."""
    probe = cuda_time(torch, fn, 3, warmup=2)
    n = max(min_iters, int(seconds / max(probe, 1e-6)))
    return n, cuda_time(torch, fn, n, warmup=0)
