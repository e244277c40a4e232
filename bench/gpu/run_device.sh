#!/bin/sh
# run_device.sh — every GPU measurement of this project in one pass, for a lent GPU machine
# (bench/gpu/README.md). Runs from the repository root; writes into $OUT (default out/gpu).
# Needs: ./shardcast-bench-gpu (built beforehand, see README.md), nvidia-smi, python3 with
# PyTorch. Each part has its own time limit and writes its JSON as it goes, so a part that
# fails or runs out of time leaves the others' results whole. Changes no GPU setting.
set -u
OUT=${OUT:-out/gpu}; export OUT; mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

log "environment"
{ nvidia-smi; nvidia-smi -q -d POWER,CLOCK,PERFORMANCE; uname -a; nvcc --version 2>/dev/null | tail -2
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$OUT/env.txt" 2>&1

# NCCL for the harness: the toolkit's, else the one PyTorch ships
if [ -z "$(ldconfig -p 2>/dev/null | grep libnccl.so.2)" ] && [ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]; then
    d=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
    [ -n "$d" ] || d=$(dirname "$(find / -name 'libnccl.so.2' 2>/dev/null | head -1)" 2>/dev/null)
    [ -n "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -z "$(find /usr/local/cuda/lib64 -name 'libcublas.so.13' 2>/dev/null | head -1)" ]; then
    d=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null)
    [ -n "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
ldd ./shardcast-bench-gpu > "$OUT/harness-ldd.txt" 2>&1

log "harness (shardcast-bench-gpu, one rank)"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
timeout "${HARNESS_S:-100}" ./shardcast-bench-gpu --skip collectives --gemm-max 8192 \
    --gemm-model configs/models/llama3-8b.json --membw-max 4G --step zero3 \
    --layers 4 --hidden 4096 --seq 2048 --steps 5 \
    --note "lent ${gpu:-GPU} machine, one GPU, one rank (no collectives measured: world of 1)" \
    -o "$OUT/harness-measurements.json" > "$OUT/harness.log" 2>&1
log "harness exit $?"

cd "$HERE" || exit 1
# PARTS overrides which parts run and each one's limit in seconds (name:limit ...)
for part in ${PARTS:-sustained_gemm:60 attention:110 fetch_loop:40 fsdp_grad:80 eager_block:150 ub_chunks:120}; do
    name=${part%%:*}; lim=${part##*:}
    log "$name (limit ${lim}s)"
    timeout "$lim" python3 "$name.py" > "$OUT/$name.log" 2>&1
    log "$name exit $?"
done
log "done"
