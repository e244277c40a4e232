#!/usr/bin/env python3
"""memscale.py — peak address space (VmPeak) and resident set (VmHWM) of one simulator run of
mics:p=8 on N nodes of a p4d cluster without the 512-node cap, for bench/RESULTS.md.
usage: bench/memscale.py ./shardcast 1024 4096 16384   (run from the repository root)"""
import os, subprocess, sys, time

binary, nodes = sys.argv[1], [int(x) for x in sys.argv[2:]] or [1024, 4096, 16384]
cluster = "/tmp/memscale-p4d.json"
with open("configs/clusters/p4d.24xlarge.json") as f:
    open(cluster, "w").write(f.read().replace('"max_nodes": 512', '"max_nodes": 65536'))
for n in nodes:
    t0 = time.time()
    p = subprocess.Popen([binary, "predict", "--cluster", cluster, "--calibration", "p4d.24xlarge", "--model",
                          "gpt3-13b", "--nodes", str(n), "--layout", "mics:p=8"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    peak = hwm = 0
    while p.poll() is None:
        try:
            for line in open("/proc/%d/status" % p.pid):
                if line.startswith("VmPeak:"):
                    peak = max(peak, int(line.split()[1]))
                elif line.startswith("VmHWM:"):
                    hwm = max(hwm, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.02)
    out = p.stdout.read().decode()
    row = [l for l in out.splitlines() if l.startswith("mics:p=8")]
    print("%6d nodes %7d GPUs  VmPeak %8.1f MiB  VmHWM %7.1f MiB  %6.1f s  exit %d  %s" %
          (n, 8 * n, peak / 1024, hwm / 1024, time.time() - t0, p.returncode, (row[0][:40] if row else out.strip()[-80:])))
