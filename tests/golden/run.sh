#!/bin/sh
# run.sh — CLI golden tests: run the real binary on the shipped configs, compare a few exact
# fields and the exit status and first line of every error class. Usage: run.sh ./shardcast
# Prints "N passed, N failed" and exits non-zero on any failure.
set -u
BIN=${1:-./shardcast}
case "$BIN" in /*) ;; *) BIN="$(pwd)/$BIN" ;; esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

# expect NAME STATUS PATTERN -- command...: exit status must be STATUS and the combined
# output must contain the fixed string PATTERN.
expect() {
    name=$1 want=$2 pat=$3
    shift 4
    "$@" >"$TMP/out" 2>&1
    got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL $name: exit $got, expected $want"; sed 's/^/    /' "$TMP/out" | head -5
        fail=$((fail + 1)); return
    fi
    if [ -n "$pat" ] && ! grep -qF -- "$pat" "$TMP/out"; then
        echo "FAIL $name: output lacks: $pat"; sed 's/^/    /' "$TMP/out" | head -5
        fail=$((fail + 1)); return
    fi
    pass=$((pass + 1))
}

# errors must be exactly one line on stderr
one_line_err() {
    name=$1; shift
    "$@" >/dev/null 2>"$TMP/err"
    n=$(wc -l <"$TMP/err")
    if [ "$n" != 1 ]; then echo "FAIL $name: $n stderr lines, expected 1"; cat "$TMP/err"; fail=$((fail + 1)); else pass=$((pass + 1)); fi
}

# ---- tool-level --------------------------------------------------------------------------
expect version 0 "shardcast 0." -- "$BIN" --version
expect help 0 "usage: shardcast <command>" -- "$BIN" --help
expect no-args 2 "usage:" -- "$BIN"
expect unknown-command 2 "unknown command 'frobnicate' (try 'shardcast --help')" -- "$BIN" frobnicate
expect unknown-option 2 "unknown option '--bogus'" -- "$BIN" memory --bogus
one_line_err unknown-option-one-line "$BIN" memory --bogus
expect missing-value 2 "needs a value" -- "$BIN" memory --cluster
expect cmd-help 0 "usage: shardcast memory" -- "$BIN" memory --help

# ---- describe: parameter counts a user can check ------------------------------------------
expect describe-175b 0 "total parameters      174.604 B   (published 175.000 B, -0.23%)" -- "$BIN" describe --model gpt3-175b
expect describe-gpt2 0 "total parameters      1.558 B" -- "$BIN" describe --model gpt2-1.5b
# GPT-3 block: 12h^2 + 13h = 12*12288^2 + 13*12288 = 1812099072 parameters
expect describe-block 0 "1812099072" -- "$BIN" describe --model gpt3-175b
expect describe-json 0 '"params": 174604259328' -- "$BIN" describe --model gpt3-175b --json

# ---- memory ------------------------------------------------------------------------------
# ZeRO-3 on 128 GPUs: 16 B x 174.604e9 / 128 = 20.33 GiB of states (2.54 + 2.54 + 15.24)
expect memory-zero3 0 "zero3                      2.54     2.54    15.24" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 16 --model gpt3-175b --layout zero3
expect memory-oom 0 "OOM: short by" -- "$BIN" memory --cluster p4d.24xlarge --nodes 16 --model gpt3-175b --layout ddp
expect memory-mics-p 0 "MiCS: smallest partition group that fits is p = 64" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 16 --model gpt-100b
expect memory-scenario 0 "zeropp:hpz=8" -- "$BIN" memory --scenario memory-p4d-gpt3-175b
expect memory-json 0 '"fits": true' -- "$BIN" memory --cluster p4d.24xlarge --nodes 16 --model gpt-100b --layout zero3 --json
expect memory-ds-config 0 "mics:p=8,hier=0" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 4 --model gpt3-13b --ds-config tests/fixtures/ds_mics.json
expect memory-other-dir 0 "zero3" -- sh -c "cd / && '$BIN' memory --cluster p4d.24xlarge --nodes 2 --model gpt2-1.5b --layout zero3"

# ---- bad input: one line, exit 2, names the file/option, path, expected and found ----------
cat >"$TMP/typo.json" <<'J'
{"name":"x","source":"test","gpu":{"name":"g","arch":"ampere","peak_tflops":312,"memory_GiB":40,"hbm_bandwidth_GBps":1555},
 "node":{"gpus":8,"fabric":{"kind":"nvswitch","link_bandwidth_GBps":25,"links_per_gpu":12},"pcie_bandwidth_GBps":31.5,
 "nics":4,"nic_bandwith_Gbps":100},"network":{"topology":"fat-tree","switch_latency_us":1,"nodes_per_leaf":16},"price_usd_per_hour":1}
J
sed 's/"nic_bandwith_Gbps":100/"nic_bandwidth_Gbps":"fast"/' "$TMP/typo.json" >"$TMP/fast.json"
sed 's/"nic_bandwith_Gbps":100/"nic_bandwidth_Gbps":-4/' "$TMP/typo.json" >"$TMP/neg.json"
printf '{"name": "x",\n "source": ' >"$TMP/broken.json"
expect bad-key 2 "$TMP/typo.json: \$.node.nic_bandwith_Gbps: unknown key" -- \
    "$BIN" memory --cluster "$TMP/typo.json" --nodes 2 --model gpt2-1.5b
expect bad-type 2 "$TMP/fast.json: \$.node.nic_bandwidth_Gbps: expected a positive number, got \"fast\"" -- \
    "$BIN" memory --cluster "$TMP/fast.json" --nodes 2 --model gpt2-1.5b
expect bad-negative 2 "\$.node.nic_bandwidth_Gbps: expected a positive number, got -4" -- \
    "$BIN" memory --cluster "$TMP/neg.json" --nodes 2 --model gpt2-1.5b
expect bad-json 2 "$TMP/broken.json: invalid JSON at line 2" -- "$BIN" memory --cluster "$TMP/broken.json" --nodes 2 --model gpt2-1.5b
one_line_err bad-json-one-line "$BIN" memory --cluster "$TMP/broken.json" --nodes 2 --model gpt2-1.5b
expect missing-file 2 "nosuch.json: cannot read clusters file" -- "$BIN" memory --cluster nosuch.json --nodes 2 --model gpt2-1.5b
expect unknown-name 2 "no-such-cluster: no such file, and no shipped clusters of that name" -- \
    "$BIN" memory --cluster no-such-cluster --nodes 2 --model gpt2-1.5b
sed 's/"heads": *[0-9]*/"heads": 7/' configs/models/gpt2-1.5b.json >"$TMP/heads.json"
expect bad-heads 2 "\$.heads: expected a divisor of hidden (1600), got 7" -- "$BIN" describe --model "$TMP/heads.json"
expect bad-layout 2 "layout: expected one of ddp" -- "$BIN" memory --cluster p4d.24xlarge --nodes 2 --model gpt2-1.5b --layout zero4
expect bad-layout-p 2 "mics:p=3: expected a group size that divides or is a multiple of 8 GPUs per node, got 3" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 3 --model gpt2-1.5b --layout mics:p=3
expect bad-p-divide 2 "expected a group size dividing the 16 GPUs" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 2 --model gpt2-1.5b --layout mics:p=32
expect bad-nodes 2 "--nodes: expected an integer from 1 to 1000000, got \"0\"" -- \
    "$BIN" memory --cluster p4d.24xlarge --nodes 0 --model gpt2-1.5b
expect bad-nodes-max 2 "--nodes: expected at most 1 nodes of h100-workstation, got 2" -- \
    "$BIN" memory --cluster h100-workstation --nodes 2 --model gpt2-1.5b
expect missing-cluster 2 "--cluster: required" -- "$BIN" memory --nodes 2 --model gpt2-1.5b

# ---- predict and sweep ---------------------------------------------------------------------
expect predict-two 0 "speed-up" -- "$BIN" predict --cluster p4d.24xlarge --nodes 16 --model gpt-100b --layout zero3 --layout mics:p=64
expect predict-oom 0 "mics:p=8             OOM: needs" -- "$BIN" predict --cluster p4d.24xlarge --nodes 16 --model gpt-100b --layout zero3 --layout mics:p=8
expect predict-json 0 '"speedup_vs_first": 1.0' -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --json
expect predict-weak 0 "weak eff" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2,4 --model gpt3-1.3b --layout zero3
expect predict-bad-engine 2 "--engine: expected model or sim, got \"warp\"" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --engine warp
expect predict-no-layout 2 "--layout: required" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b
expect sweep-stdout 0 "cluster,model,engine,nodes,gpus,layout,micro_batch" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model gpt3-1.3b --layout zero3
expect sweep-file 0 "3 rows" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1..4 --model gpt3-1.3b --layout zero3 -o "$TMP/s.csv"
if [ "$(wc -l <"$TMP/s.csv")" = 4 ] && [ ! -e "$TMP/s.csv.tmp" ]; then pass=$((pass + 1)); else echo "FAIL sweep-file-rows"; fail=$((fail + 1)); fi
expect sweep-bad-p 2 "expected a group size dividing the 8 GPUs" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model gpt3-1.3b --layout mics:p=16 -o "$TMP/bad.csv"
if [ ! -e "$TMP/bad.csv" ] && [ ! -e "$TMP/bad.csv.tmp" ]; then pass=$((pass + 1)); else echo "FAIL sweep-bad-leaves-file"; fail=$((fail + 1)); fi
expect predict-sim-default 0 "engine: simulator" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3
expect predict-model 0 "engine: analytical model" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --engine model
expect predict-straggler 0 "slowest rank 3" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout mics:p=8 --straggler 3:1.5
expect predict-bad-straggler 2 "--straggler: expected RANK:FACTOR with FACTOR >= 1, got \"3\"" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --straggler 3
expect predict-straggler-range 2 "--straggler: expected a rank below 16, got 99" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --straggler 99:2
expect predict-jitter-model 2 "--jitter: expected --engine sim" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --engine model --jitter 0.1
expect predict-trace 0 "trace: $TMP/t.json" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout zero3 --trace "$TMP/t.json"
if grep -q '"cat":"flow"' "$TMP/t.json" && [ ! -e "$TMP/t.json.tmp" ]; then pass=$((pass + 1)); else echo "FAIL trace-content"; fail=$((fail + 1)); fi
expect predict-trace-two 2 "--trace: expected the simulator with one layout and one node count" -- "$BIN" predict --cluster p4d.24xlarge --nodes 2,4 --model gpt3-1.3b --layout zero3 --trace "$TMP/t2.json"
# ---- offloaded optimizers (issue 9): the LuWu scenario, 8 workers x 1 A100 80GB, 100 Gb/s ----------
# luwu keeps no shard on the GPU: 0 params/grads/optim; the node holds 16 B x 174.604e9 = 2601.8 GiB
expect predict-luwu 0 "offloaded states: 2601.8 GiB on the in-network optimizer node" -- \
    "$BIN" predict --scenario luwu-175b-100g --layout luwu --engine model
# zero3-offload's host: 16 B x 174.604e9 / 8 GPUs x 1 per node = 325.2 GiB
expect predict-zero3-offload 0 "offloaded states: 325.2 GiB host memory per node" -- \
    "$BIN" predict --scenario luwu-175b-100g --layout zero3-offload
# the same scenario's zero3 (16 B x 174.6e9 / 8 = 325 GiB of states) cannot fit 80 GiB
expect predict-luwu-zero3-oom 0 "zero3                OOM: needs 343.1 GiB per GPU" -- \
    "$BIN" predict --scenario luwu-175b-100g --engine model
expect memory-luwu 0 "in-network optimizer node: 2601.81 GiB" -- "$BIN" memory --scenario luwu-175b-100g --layout luwu
expect luwu-no-node 2 "expected a cluster with an in_network_optimizer" -- \
    "$BIN" predict --cluster p4d.24xlarge --nodes 2 --model gpt3-1.3b --layout luwu
expect interference-bad 2 "--interference: expected on or off, got \"maybe\"" -- \
    "$BIN" predict --scenario luwu-175b-100g --interference maybe
expect plan-luwu 0 "luwu" -- "$BIN" plan --scenario luwu-175b-100g
expect plan-basic 0 "recommended: " -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-13b --nodes 16 --grad-accum 4
# gpt3-175b on one p4d node: the closest is zero3-offload, 2 B x 174.6e9 / 8 = 40.65 GiB of parameter shard
# + activations 5.73 + buffers 10.13 + reserve 2 = 58.5 GiB, 18.5 over 40 GiB (before issue 9: zero3, 343.1)
expect plan-none-fits 0 "no layout fits: the closest, zero3-offload on 1 nodes (micro-batch 1), needs 58.5 GiB per GPU, short by 18.5 GiB" -- \
    "$BIN" plan --cluster p4d.24xlarge --model gpt3-175b --nodes 1
expect plan-json 0 '"recommended": true' -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-13b --nodes 2..8 --json
expect plan-bad-objective 2 "--objective: expected throughput or cost, got \"speed\"" -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-13b --nodes 2 --objective speed
expect plan-budget 0 "no candidate" -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-13b --nodes 2 --budget-usd-per-hour 10

# ---- plot: PNGs through gnuplot; bad input leaves no file ---------------------------------
# png_size FILE: "W H" from the IHDR chunk (bytes 16..23, big-endian), "" if not a PNG
png_size() {
    [ -s "$1" ] || return 0
    set -- $(od -An -tu1 -N24 "$1")
    [ "$1 $2 $3 $4" = "137 80 78 71" ] || return 0
    echo "$(( (${17} << 24) + (${18} << 16) + (${19} << 8) + ${20} )) $(( (${21} << 24) + (${22} << 16) + (${23} << 8) + ${24} ))"
}
# expect_png NAME FILE W H: FILE is a PNG of W x H pixels and no FILE.tmp is left
expect_png() {
    got=$(png_size "$2")
    if [ "$got" = "$3 $4" ] && [ ! -e "$2.tmp" ]; then pass=$((pass + 1)); else echo "FAIL $1: PNG size '$got', expected '$3 $4'"; fail=$((fail + 1)); fi
}
# expect_no_file NAME FILE: neither FILE nor FILE.tmp exists
expect_no_file() {
    if [ ! -e "$2" ] && [ ! -e "$2.tmp" ]; then pass=$((pass + 1)); else echo "FAIL $1: $2 left behind"; fail=$((fail + 1)); fi
}
mkdir -p "$TMP/plot-tmp"
"$BIN" sweep --cluster p4d.24xlarge --nodes 1..4 --model gpt3-1.3b --layout zero3 --layout mics:p=8 --engine model -o "$TMP/p.csv" 2>/dev/null
"$BIN" sweep --cluster p4d.24xlarge --nodes 16 --model gpt3-175b --layout ddp --layout zero3 --engine model -o "$TMP/oom.csv" 2>/dev/null
expect plot-help 0 "usage: shardcast plot" -- "$BIN" plot --help
expect plot-unknown-kind 2 "--kind: expected scaling, efficiency, memory, breakdown or timeline, got \"pie\"" -- \
    "$BIN" plot "$TMP/p.csv" --kind pie --out "$TMP/pie.png"
expect_no_file plot-unknown-kind-no-file "$TMP/pie.png"
printf 'layout,gpus,samples_per_s,model_tflops_per_gpu\nzero3,8,4.5,90\nzero3,16,fast,88\n' >"$TMP/bad.csv"
expect plot-bad-number 2 "$TMP/bad.csv: line 3, column samples_per_s: expected a number, got \"fast\"" -- \
    "$BIN" plot "$TMP/bad.csv" --kind scaling --out "$TMP/bad.png"
one_line_err plot-bad-number-one-line "$BIN" plot "$TMP/bad.csv" --kind scaling --out "$TMP/bad.png"
expect_no_file plot-bad-number-no-file "$TMP/bad.png"
expect plot-missing-column 2 "line 1: expected a column \"compute_s\" in the header" -- \
    "$BIN" plot "$TMP/bad.csv" --kind breakdown --out "$TMP/bad.png"
expect_no_file plot-missing-column-no-file "$TMP/bad.png"
expect plot-missing-file 2 "$TMP/nosuch.csv: cannot read: No such file or directory" -- \
    "$BIN" plot "$TMP/nosuch.csv" --kind scaling --out "$TMP/bad.png"
expect_no_file plot-missing-file-no-file "$TMP/bad.png"
expect plot-ranks-not-timeline 2 "--ranks: expected only with --kind timeline" -- \
    "$BIN" plot "$TMP/p.csv" --kind scaling --out "$TMP/bad.png" --ranks 2
expect plot-bad-size 2 "--size: expected WIDTHxHEIGHT in pixels" -- "$BIN" plot "$TMP/p.csv" --kind scaling --out "$TMP/bad.png" --size 800
printf '{"traceEvents":[{"ph":"X","cat":"compute","name":"forward","pid":0,"tid":0,"ts":"soon","dur":5}]}\n' >"$TMP/bad-trace.json"
expect plot-bad-trace 2 "$TMP/bad-trace.json: \$.traceEvents[0].ts: expected a non-negative number" -- \
    "$BIN" plot --kind timeline "$TMP/bad-trace.json" --out "$TMP/bad.png"
expect_no_file plot-bad-trace-no-file "$TMP/bad.png"
# without gnuplot on PATH: one line naming the package, exit 1, no file
expect plot-no-gnuplot 1 "gnuplot-nox" -- env PATH=/nonexistent "$BIN" plot "$TMP/p.csv" --kind scaling --out "$TMP/nogp.png"
expect_no_file plot-no-gnuplot-no-file "$TMP/nogp.png"
if command -v gnuplot >/dev/null 2>&1; then
    for kind in scaling efficiency memory breakdown; do
        expect "plot-$kind" 0 "plot: $kind 1000x600" -- env TMPDIR="$TMP/plot-tmp" "$BIN" plot "$TMP/p.csv" --kind "$kind" --out "$TMP/$kind.png"
        expect_png "plot-$kind-png" "$TMP/$kind.png" 1000 600
    done
    expect plot-memory-oom 0 "" -- "$BIN" plot "$TMP/oom.csv" --kind memory --out "$TMP/oom.png" --size 640x480 --title "GPT-3 175B"
    expect_png plot-memory-oom-png "$TMP/oom.png" 640 480
    expect plot-timeline 0 "plot: timeline 800x500" -- \
        env TMPDIR="$TMP/plot-tmp" "$BIN" plot --kind timeline "$TMP/t.json" --out "$TMP/timeline.png" --ranks 2 --size 800x500
    expect_png plot-timeline-png "$TMP/timeline.png" 800 500
    if [ -z "$(ls -A "$TMP/plot-tmp")" ]; then pass=$((pass + 1)); else echo "FAIL plot-temp-files-removed"; ls "$TMP/plot-tmp"; fail=$((fail + 1)); fi
else
    echo "SKIP plot-scaling/efficiency/memory/breakdown/timeline PNGs: gnuplot not on PATH (apt-get install gnuplot-nox)"
fi

# ---- calibration harness: shardcast-bench (MPI + BLAS) and `shardcast calibrate run` ------------
BENCH="$(dirname "$BIN")/shardcast-bench"
BENCH_GPU="$(dirname "$BIN")/shardcast-bench-gpu"
expect calibrate-no-sub 2 "shardcast calibrate: expected a subcommand: run or fit" -- "$BIN" calibrate
expect calibrate-help 0 "usage: shardcast calibrate run" -- "$BIN" calibrate --help
expect calibrate-bad-sub 2 "unknown subcommand 'frob'" -- "$BIN" calibrate frob
# calibrate fit takes overlap_slowdown from interference entries: the fixture's NCCL factors are
# 0.125, 0.25, 0.375 (one more left out for coverage 0.5, a memcpy one not used): median 0.25,
# sd 0.125 / sqrt(3) = 0.0722 (tests/test_fit.c derives them)
expect calibrate-fit-interference 0 "overlap slowdown (interference)            0.25 ± 0.0722" -- \
    "$BIN" calibrate fit tests/fixtures/meas_interference.json --cluster p4d.24xlarge --base p4d.24xlarge -o "$TMP/ci.json"
if grep -q '"source": "measured by shardcast-bench: GEMM alone vs with concurrent nccl-allreduce, 3 entries' "$TMP/ci.json"; then
    pass=$((pass + 1)); else echo "FAIL calibrate-fit-interference-source: $TMP/ci.json"; fail=$((fail + 1)); fi
sed 's/"concurrent": "memcpy-d2d"/"concurrent": "nccl-broadcast"/' tests/fixtures/meas_interference.json >"$TMP/bad_interf.json"
expect calibrate-fit-interference-bad 2 "bad_interf.json: \$.interference[4].concurrent: expected one of \"nccl-allreduce\"" -- \
    "$BIN" calibrate fit "$TMP/bad_interf.json" --cluster p4d.24xlarge --base p4d.24xlarge -o "$TMP/ci2.json"
# meas_ok NAME FILE LAYOUT: schema, collectives all checked with 0 wrong elements, a step of
# LAYOUT, and no FILE.tmp left behind
meas_ok() {
    f=$2
    n_err=$(grep -c '"errors":' "$f" 2>/dev/null)
    n_ok=$(grep -c '"errors": 0,\{0,1\}$' "$f" 2>/dev/null)
    if grep -q '"schema": "shardcast-measurements/1"' "$f" && grep -q '"kind": "all-reduce"' "$f" &&
        [ "$n_err" -gt 0 ] && [ "$n_err" = "$n_ok" ] && grep -q "\"layout\": \"$3\"" "$f" &&
        grep -q '"step_s":' "$f" && [ ! -e "$f.tmp" ]; then
        pass=$((pass + 1))
    else
        echo "FAIL $1: $f lacks the schema, a collective, errors 0 ($n_ok of $n_err) or a $3 step"; fail=$((fail + 1))
    fi
}
if [ -x "$BENCH" ]; then
    expect bench-help 0 "usage: mpirun -np N shardcast-bench" -- "$BENCH" --help
    expect bench-bad-option 2 "shardcast-bench: unknown option '--bogus'" -- "$BENCH" --bogus
    one_line_err bench-bad-option-one-line "$BENCH" --bogus
    expect bench-bad-step 2 "--step: expected zero3 or mics:p=P[,hier=0], at most 8 of them, got \"ddp\"" -- "$BENCH" --step zero3,ddp
    expect bench-bad-size 2 "--max: expected a size in bytes such as 1M or 1G, got \"lots\"" -- "$BENCH" --max lots
    expect bench-skip-interference 0 "" -- "$BENCH" --skip interference --interference-bytes 64M --dry-run
    expect bench-bad-skip 2 "--skip: expected a list of collectives, gemm, membw, interference, got \"frob\"" -- "$BENCH" --skip frob
    expect bench-bad-model 2 "--gemm-model: no-such-model: no such file" -- "$BENCH" --gemm-model no-such-model
    expect calibrate-run-no-mpirun 1 "mpirun not found on PATH" -- env PATH=/nonexistent "$BIN" calibrate run -np 2
    if command -v mpirun >/dev/null 2>&1; then
        expect bench-mpirun 0 "wrote $TMP/m.json" -- mpirun --allow-run-as-root --oversubscribe -np 2 "$BENCH" \
            --min 1024 --max 65536 --iters 3 --warmup 1 --step zero3 --layers 2 --hidden 128 --seq 64 -o "$TMP/m.json"
        meas_ok bench-json "$TMP/m.json" zero3
        expect calibrate-run 0 "wrote $TMP/m2.json" -- "$BIN" calibrate run --backend cpu -np 2 --min 1024 --max 65536 \
            --iters 3 --warmup 1 --skip gemm,membw --step zero3,mics:p=1 --layers 2 --hidden 128 --seq 64 \
            --trace "$TMP/bt.json" -o "$TMP/m2.json"
        meas_ok calibrate-run-json "$TMP/m2.json" "mics:p=1"
        if grep -q '"name":"bwd RS L0"' "$TMP/bt.json" && grep -q '"name":"AR grads"' "$TMP/bt.mics-p-1.json"; then
            pass=$((pass + 1)); else echo "FAIL calibrate-run-trace: no RS/AR spans in $TMP/bt*.json"; fail=$((fail + 1)); fi
        expect calibrate-run-bad-option 2 "unknown option '--bogus'" -- "$BIN" calibrate run -np 2 --bogus
        expect bench-bad-p 2 "--step: mics:p=3: expected a partition size dividing the 2 ranks, got 3" -- \
            mpirun --allow-run-as-root --oversubscribe -np 2 "$BENCH" --skip collectives,gemm,membw --step mics:p=3 -o "$TMP/m3.json"
    else
        echo "SKIP shardcast-bench under mpirun, calibrate run: mpirun not on PATH (apt-get install openmpi-bin)"
    fi
else
    echo "SKIP shardcast-bench: not built (needs mpicc and OpenBLAS: make deps; make)"
fi
if [ -x "$BENCH_GPU" ] && [ ! -e /dev/nvidia0 ]; then
    expect bench-gpu-no-device 1 "shardcast-bench-gpu: no CUDA device found" -- "$BENCH_GPU" --skip collectives -o "$TMP/g.json"
elif [ ! -x "$BENCH_GPU" ]; then
    expect calibrate-run-no-gpu-bench 1 "shardcast-bench-gpu not found (build it with 'make bench-gpu'" -- "$BIN" calibrate run --backend gpu
fi

# sweep: strong scaling, both engines, and the MPI split (byte-identical to the serial CSV)
expect sweep-strong 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2,4 --model gpt3-1.3b --layout zero3 --grad-accum 4 --scaling strong -o "$TMP/strong.csv"
if awk -F, 'NR>1 {print $8}' "$TMP/strong.csv" | tr '\n' ' ' | grep -q "^4 2 1 $"; then pass=$((pass + 1)); else echo "FAIL sweep-strong-accum: $(awk -F, 'NR>1 {print $8}' "$TMP/strong.csv" | tr '\n' ' ')"; fail=$((fail + 1)); fi
expect sweep-bad-scaling 2 "--scaling: expected weak or strong, got \"linear\"" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1 --model gpt3-1.3b --layout zero3 --scaling linear
expect sweep-both 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model gpt3-1.3b --layout zero3 --layout mics:p=8 --engine both -o "$TMP/serial.csv"
if command -v mpirun >/dev/null 2>&1; then
    expect sweep-mpi 0 "" -- env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
        "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model gpt3-1.3b --layout zero3 --layout mics:p=8 --engine both -o "$TMP/mpi.csv"
    if cmp -s "$TMP/serial.csv" "$TMP/mpi.csv"; then pass=$((pass + 1)); else echo "FAIL sweep-mpi-identical"; fail=$((fail + 1)); fi
else
    echo "SKIP sweep-mpi: mpirun not found"
fi
# a calibration with uncertainties: the step carries an interval, and plan uses it
expect predict-interval 0 "(1 sd, from the calibration's parameter uncertainties)" -- "$BIN" predict --cluster p4d.24xlarge --nodes 16 --model gpt3-13b --layout zero3 --calibration tests/fixtures/cal_sd.json
expect predict-interval-json 0 '"step_sd_s"' -- "$BIN" predict --cluster p4d.24xlarge --nodes 16 --model gpt3-13b --layout zero3 --calibration tests/fixtures/cal_sd.json --json
# tensor-parallel layouts (issue 8): the shipped Perlmutter scenario, the overlap switch, errors, plan over families
expect predict-axonn 0 "axonn:x=2,y=2,z=4       16.619" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=2,y=2,z=4 --engine model
expect predict-tp 0 "tp:t=4                  13.530" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout tp:t=4 --engine model
expect predict-tp-no-overlap 0 "tp:t=4,overlap=0        14.568" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout tp:t=4,overlap=0 --engine model
expect predict-axonn-sim 0 "axonn:x=2,y=2,z=4" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=2,y=2,z=4 --engine sim
expect tp-too-wide 2 "layout: tp:t=8: tensor parallelism stays inside a node: expected t dividing 4 GPUs per node, got 8" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout tp:t=8
expect axonn-heads 2 "layout: axonn:x=1,y=16,z=1: splits the attention heads 16 ways; gpt-axonn-20b has 56 heads and 56 key/value heads" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=1,y=16,z=1
expect axonn-bad-placement 2 "expected placement to order the axes x, y, z, d" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=2,y=2,z=2,placement=xyz
expect placement-flag 0 "axonn:x=4,y=1,z=4,placement=zxyd    53.661" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=4,y=1,z=4 --placement zxyd --engine model
expect placement-bad 2 "--placement: expected the axes x, y, z, d from inside a node outwards (a permutation of \"xyzd\"), got \"zzz\"" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=4,y=1,z=4 --placement zzz
expect placement-no-options 2 "--placement: expected the axes x, y, z, d from inside a node outwards (a permutation of \"xyzd\"), got \"xyzd,overlap=0\"" -- "$BIN" predict --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=2,y=2,z=4 --placement xyzd,overlap=0
expect plan-luwu-no-node 2 "--layouts: luwu needs a cluster with an in_network_optimizer; p4d.24xlarge has none" -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-6.7b --nodes 2 --layouts luwu
expect plan-dedupe 0 '"candidates": 136,' -- "$BIN" plan --cluster p4d.24xlarge --model gpt3-6.7b --nodes 2 --layouts axonn --layout axonn:x=2,y=1,z=4,placement=xzyd --layout axonn:x=2,y=2,z=2,d=2 --confirm 0 --json
expect plan-families 0 "recommended: " -- "$BIN" plan --scenario axonn-perlmutter-gpt20b --nodes 16 --layouts axonn,tp,zero3,mics --confirm 1
expect plan-axonn-why 0 "per step and GPU: x" -- "$BIN" plan --scenario axonn-perlmutter-gpt20b --nodes 16 --layout axonn:x=2,y=2,z=4 --confirm 0
. "$(dirname "$0")/reliability.sh"
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
