#!/bin/sh
# sim_identical.sh — `predict --engine sim --json` on a fixed set of command lines (clusters,
# layouts, jitter, stragglers, symmetric and full runs), one output file per line, so that two
# binaries' outputs can be compared byte for byte (`cmp` / `diff -r`): a performance change of
# the simulator must leave every one of them unchanged, event counters included.
# Usage: bench/sim_identical.sh ./shardcast OUTDIR   (run from the repository root; ~30 s)
# Not a test of correctness: it only says whether two binaries agree.
set -u
BIN=${1:?usage: sim_identical.sh BIN OUTDIR}
OUT=${2:?usage: sim_identical.sh BIN OUTDIR}
mkdir -p "$OUT"
DIR=$(cd "$(dirname "$BIN")" && pwd)
n=0
run() {
    n=$((n + 1))
    "$BIN" predict --engine sim --json "$@" >"$OUT/$n.raw" 2>"$OUT/$n.err"
    echo "$n rc=$? $*" >>"$OUT/index.txt"
    # the configs are found beside the binary: its directory is not part of the result
    sed "s|$DIR/|BINDIR/|g" "$OUT/$n.raw" >"$OUT/$n.json" && rm -f "$OUT/$n.raw"
}
: >"$OUT/index.txt"
M="--model gpt3-1.3b"
run --cluster p4d.24xlarge --nodes 8 $M --layout zero3
run --cluster p4d.24xlarge --nodes 8 $M --layout zero3 --symmetry off
run --cluster p4d.24xlarge --nodes 16 $M --layout zero2 --symmetry off
run --cluster p4d.24xlarge --nodes 8 $M --layout ddp --symmetry off
run --cluster p4d.24xlarge --nodes 16 $M --layout mics:p=8 --symmetry off
run --cluster p4d.24xlarge --nodes 8 $M --layout hsdp:p=8 --symmetry off
run --cluster p4d.24xlarge --nodes 8 $M --layout zeropp:hpz=8 --symmetry off
run --cluster p4d.24xlarge --nodes 8 --model gpt3-13b --layout tp:t=8 --symmetry off
run --cluster p4d.24xlarge --nodes 8 --model gpt-axonn-10b --layout axonn:x=2,y=2,z=2 --symmetry off
run --cluster p4d.24xlarge --nodes 4 $M --layout zero3-offload --symmetry off
run --cluster p4d.24xlarge --nodes 8 --model gpt3-13b --layout megatron:t=2,p=2 --grad-accum 8
run --cluster p4d.24xlarge --nodes 8 $M --layout zero3 --jitter 0.05 --seed 7
run --cluster p4d.24xlarge --nodes 8 $M --layout zero3 --straggler 3:1.5
run --cluster p5.48xlarge --nodes 8 $M --layout zero3 --symmetry off
run --cluster p5.48xlarge --nodes 8 --model gpt3-13b --layout tp:t=8 --symmetry off --grad-accum 2
run --cluster p3dn.24xlarge --nodes 8 $M --layout zero3 --symmetry off
run --cluster p3dn.24xlarge --nodes 8 $M --layout mics:p=8 --jitter 0.02
run --cluster dgx-a100 --nodes 16 $M --layout zero3 --symmetry off
run --cluster dgx-h100 --nodes 8 $M --layout zero2 --grad-accum 4 --symmetry off
run --cluster luwu-8x100g --nodes 4 $M --layout luwu
run --cluster perlmutter-gpu --nodes 8 $M --layout zero3 --symmetry off
run --cluster p4de.24xlarge --nodes 32 $M --layout zero3
run --cluster p4d.24xlarge --nodes 64 --model gpt-100b --layout zero3 --symmetry off
echo "$n command lines, outputs in $OUT"
