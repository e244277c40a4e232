# reliability.sh — golden tests of issue 19 (sourced by run.sh: uses $BIN, $TMP, expect, pass, fail):
# outputs whole or absent, inputs that used to crash or pass unchecked, numbers that are not numbers.
R="$TMP/rel"
mkdir -p "$R/scratch"

# ---- outputs whole or absent ----------------------------------------------------------------------
"$BIN" sweep --cluster p4d.24xlarge --nodes 1 --model gpt3-1.3b --layout zero3 --engine model -o "$R/one.csv" 2>/dev/null
# a gnuplot that exits 0 after writing half a PNG (what a full disk does): exit 1, no file
mkdir -p "$R/fakegp"
cat >"$R/fakegp/gnuplot" <<'GP'
#!/bin/sh
out=$(sed -n "s/^.*outfile='\([^']*\)'.*$/\1/p" "$1")
printf '\211PNG\r\n\032\n\000\000\000\015IHDR' >"$out"
exit 0
GP
chmod +x "$R/fakegp/gnuplot"
expect plot-truncated-png 1 "the image is not a whole PNG" -- env PATH="$R/fakegp:$PATH" TMPDIR="$R/scratch" \
    "$BIN" plot "$R/one.csv" --kind scaling --out "$R/trunc.png"
if [ ! -e "$R/trunc.png" ] && [ -z "$(ls -A "$R" | grep '^\.trunc')" ] && [ -z "$(ls -A "$R/scratch")" ]; then
    pass=$((pass + 1)); else echo "FAIL plot-truncated-png-no-file: $(ls -A "$R" "$R/scratch")"; fail=$((fail + 1)); fi
# 8,192 bars: their labels once went in one `gnuplot -e` argument, past the 128 KiB limit ("exec failed")
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } NR == 2 { for (i = 1; i <= 8192; i++) { $4 = i; $5 = i * 8; print } }' \
    "$R/one.csv" >"$R/big.csv"
expect plot-8192-rows 0 "plot: breakdown" -- env TMPDIR="$R/scratch" "$BIN" plot "$R/big.csv" --kind breakdown --out "$R/big.png"
# a link where the old fixed temporary name was is not followed (its target keeps its bytes)
echo keep >"$R/victim"
ln -s "$R/victim" "$R/linked.csv.tmp"
expect sweep-no-follow 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1 --model gpt3-1.3b --layout zero3 --engine model -o "$R/linked.csv"
if [ "$(cat "$R/victim")" = keep ] && [ -s "$R/linked.csv" ]; then pass=$((pass + 1)); else echo "FAIL sweep-no-follow-victim"; fail=$((fail + 1)); fi
# what a kill -9 left behind (a temporary of a process that is gone) is removed by the next run
touch "$R/.killed.csv.sc2147483646.Ab12Cd"
expect sweep-stale-temp 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1 --model gpt3-1.3b --layout zero3 --engine model -o "$R/killed.csv"
if [ ! -e "$R/.killed.csv.sc2147483646.Ab12Cd" ]; then pass=$((pass + 1)); else echo "FAIL sweep-stale-temp-removed"; fail=$((fail + 1)); fi

# ---- inputs that crashed or were taken wrongly ------------------------------------------------------
P="--cluster p4d.24xlarge --model gpt3-13b"
# x*y*z overflowed int in the layout check: SIGFPE (exit 136)
expect axonn-overflow 2 "expected a grid of at most 4194304 GPUs, got 4294967296" -- "$BIN" predict $P --nodes 2 --layout axonn:x=65536,y=65536,z=1
expect seed-negative 2 "--seed: expected a non-negative integer, got \"-1\"" -- "$BIN" predict $P --nodes 2 --layout zero3 --seed -1
expect trace-ranks-float 2 "--trace-ranks: expected an integer from 1 to 4194304, got \"1e6\"" -- "$BIN" predict $P --nodes 2 --layout zero3 --trace-ranks 1e6
expect nodes-empty-item 2 "--nodes: expected numbers separated by single commas, got \"1,,2\"" -- "$BIN" predict $P --nodes 1,,2 --layout zero3
expect layout-empty-option 2 "in \"mics:p=8,,\": expected key=value options separated by single commas" -- "$BIN" predict $P --nodes 2 --layout mics:p=8,,
expect spec-directory 2 "configs/: cannot read: is a directory, expected a file" -- "$BIN" predict --cluster configs/ --model gpt3-13b --nodes 2 --layout zero3
expect measurements-directory 2 "cannot read: is a directory, expected a file" -- "$BIN" validate configs/ --cluster p4d.24xlarge
expect plan-budget-inf 2 "--budget-usd-per-hour: expected a number from 1e-6 to 1e9, got \"inf\"" -- "$BIN" plan $P --nodes 2 --budget-usd-per-hour inf
# control characters from the input are not echoed raw (an escape sequence would drive the terminal)
expect escape-control 2 'a\x1b[31mb: no such file' -- "$BIN" predict --cluster "$(printf 'a\033[31mb')" --model gpt3-13b --nodes 2 --layout zero3
# m above the node's GPUs overflowed a stack array on NVLink-mesh clusters (validate, calibrate fit)
expect meas-m-validate 2 'meas_m_too_big.json: $.collectives[0].m: expected at most the 8 GPUs per node of p3dn.24xlarge, got 64' -- \
    "$BIN" validate tests/fixtures/meas_m_too_big.json --cluster p3dn.24xlarge
expect meas-m-fit 2 '$.collectives[0].m: expected at most the 8 GPUs per node' -- \
    "$BIN" calibrate fit tests/fixtures/meas_m_too_big.json --cluster p3dn.24xlarge --base p3dn.24xlarge -o "$R/cal.json"
# single-rank collectives: GSL's default handler aborted the process (exit 134); now an input error
expect meas-single-rank 2 'meas_single_rank.json: $.collectives: the measurements cannot determine' -- \
    "$BIN" calibrate fit tests/fixtures/meas_single_rank.json --cluster p3dn.24xlarge --base defaults -o "$R/cal.json"

# ---- numbers that are not numbers -----------------------------------------------------------------
# 1e-320 (a denormal) and 1e308 passed "positive number" and printed -nan/inf with exit 0; --json
# then dropped every timing field
for v in 1e-320 1e308; do
    sed "s/\"nic_bandwidth_Gbps\": *[0-9.]*/\"nic_bandwidth_Gbps\": $v/" configs/clusters/p4d.24xlarge.json >"$R/nic-$v.json"
    expect "range-nic-$v" 2 "nic-$v.json: \$.node.nic_bandwidth_Gbps: expected a positive number from 1e-09 to 1e+15, got" -- \
        "$BIN" predict --cluster "$R/nic-$v.json" --model gpt3-13b --nodes 2 --layout zero3 --engine model --json
done
sed 's/"switch_latency_us": *[0-9.]*/"switch_latency_us": 1e-320/' configs/clusters/p4d.24xlarge.json >"$R/lat.json"
expect range-latency 2 '$.network.switch_latency_us: expected 0 or a number from 1e-09 to 1e+15' -- \
    "$BIN" predict --cluster "$R/lat.json" --model gpt3-13b --nodes 2 --layout zero3 --engine model
sed 's/"value": *0\.[0-9]*/"value": 1e-320/' configs/calibrations/p4d.24xlarge.json >"$R/cal-tiny.json"
expect range-calibration 2 'cal-tiny.json: $.' -- \
    "$BIN" predict --cluster p4d.24xlarge --calibration "$R/cal-tiny.json" --model gpt3-13b --nodes 2 --layout zero3 --engine model

# ---- CSV per RFC 4180: a model named gpt,x "q" makes a CSV that plot reads back ---------------------
sed 's/"name": *"[^"]*"/"name": "gpt,x \\"q\\""/' configs/models/gpt3-1.3b.json >"$R/comma.json"
expect csv-quoted-write 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --model "$R/comma.json" --nodes 1,2 --layout zero3 --engine model -o "$R/comma.csv"
expect csv-quoted-field 0 'p4d.24xlarge,"gpt,x ""q""",model,1,8,"zero3"' -- cat "$R/comma.csv"
expect csv-quoted-plot 0 "plot: scaling" -- "$BIN" plot "$R/comma.csv" --kind scaling --out "$R/comma.png"
# control characters in a spec's strings are rejected where they are read
printf '{"name": "a\\u001b[31mb"}' >"$R/ctl.json"
expect spec-control-char 2 'ctl.json: $.name: expected a string without control characters' -- "$BIN" describe --model "$R/ctl.json"

# plan's engine column read an uninitialised flag for the analytical candidates (valgrind)
"$BIN" plan --cluster p4d.24xlarge --model gpt3-6.7b --nodes 2 --confirm 0 >"$R/plan0.txt" 2>&1
if grep -q ' model$' "$R/plan0.txt" && ! grep -q ' sim$' "$R/plan0.txt"; then pass=$((pass + 1)); else echo "FAIL plan-engine-column"; fail=$((fail + 1)); fi

# ---- scale: the simulator allocated every group's member list at the size of the world ------------
# (address space O(groups x ranks): 76 MiB at 1,024 nodes, 8.8 GB at 16,384); now O(ranks + sum of
# group sizes): 1,024 nodes of mics:p=8 run in 60 MB of address space
sed 's/"max_nodes": 512/"max_nodes": 16384/' configs/clusters/p4d.24xlarge.json >"$R/p4d16k.json"
[ "${SC_ASAN:-}" = 1 ] && echo "SKIP sim-memory-1024-nodes, sim-budget-memory: ulimit -v under ASan"
[ "${SC_ASAN:-}" = 1 ] || expect sim-memory-1024-nodes 0 "mics:p=8" -- sh -c "ulimit -v 60000; exec \"$BIN\" predict --cluster \"$R/p4d16k.json\" --calibration p4d.24xlarge --model gpt3-13b --nodes 1024 --layout mics:p=8"
# a run over the time or memory budget says so before it starts, and how to go on (every rank
# simulated: --symmetry off)
expect sim-budget-time 2 "budget: simulating 131072 GPUs (16384 nodes) would take about" -- \
    "$BIN" predict --cluster "$R/p4d16k.json" --calibration p4d.24xlarge --model gpt3-13b --nodes 16384 --layout mics:p=8 --sim-limit-s 10 --symmetry off
[ "${SC_ASAN:-}" = 1 ] || expect sim-budget-memory 2 "over the 293 MiB this process may use; --engine model needs none, or --sim-limit-s 0 goes on" -- \
    sh -c "ulimit -v 300000; exec \"$BIN\" predict --cluster \"$R/p4d16k.json\" --calibration p4d.24xlarge --model gpt3-13b --nodes 16384 --layout mics:p=8 --symmetry off"
# the same run exactly symmetric: one 16-node pod of the 1,024 simulated, within both budgets
[ "${SC_ASAN:-}" = 1 ] || expect sim-symmetric-16k-nodes 0 "exact symmetry: 128 of 131072 ranks simulated" -- \
    sh -c "ulimit -v 300000; exec \"$BIN\" predict --cluster \"$R/p4d16k.json\" --calibration p4d.24xlarge --model gpt3-13b --nodes 16384 --layout mics:p=8 --sim-limit-s 10"
# SIGTERM in the middle of writing a trace: the temporary is removed and the process dies of the signal
mkdir -p "$R/term"
"$BIN" predict --cluster p4d.24xlarge --model gpt3-13b --nodes 64 --layout mics:p=8 --trace "$R/term/step.json" --trace-ranks 512 >/dev/null 2>&1 &
tpid=$!
sleep 0.4
{ kill -TERM $tpid; wait $tpid; } 2>/dev/null
trc=$?
if [ -z "$(ls -A "$R/term")" ] || { [ -s "$R/term/step.json" ] && [ "$(ls -A "$R/term" | wc -l)" = 1 ]; }; then pass=$((pass + 1)); else echo "FAIL sigterm-no-temp (exit $trc): $(ls -A "$R/term")"; fail=$((fail + 1)); fi
# (pipelines run their data-parallel copies once (exact symmetry): 64 micro-batches make it ~4 s)
expect sweep-budget 2 "budget: the 26 simulations of this sweep would take about" -- "$BIN" sweep --cluster "$R/p4d16k.json" \
    --calibration p4d.24xlarge --model gpt3-13b --nodes 2..8192 --layout megatron:t=8,p=2 --layout megatron:t=4,p=2 --engine sim --grad-accum 64 --sim-limit-s 1 -o "$R/big-sweep.csv"
# /dev/zero as an input never ends: plot grew until the kernel killed it; the JSON loaders read forever
expect plot-dev-zero 2 "/dev/zero: cannot read: is a device, expected a file" -- "$BIN" plot /dev/zero --kind scaling --out "$R/z.png"
expect ds-config-dev-zero 2 "/dev/zero: cannot read: is a device, expected a file" -- "$BIN" predict $P --nodes 2 --layout zero3 --ds-config /dev/zero
# racing writers of one target: the file is always one writer's whole output (the fixed name
# <out>.tmp, opened with truncation, mixed their bytes)
mkdir -p "$R/race"
for k in 1 2 3 4 5 6 7 8; do
    "$BIN" sweep --cluster p4d.24xlarge --model gpt3-1.3b --nodes "1..$((1 << k))" --layout zero3 --engine model -o "$R/race/ref$k.csv" 2>/dev/null
done
for round in 1 2 3; do
    for k in 1 2 3 4 5 6 7 8; do
        "$BIN" sweep --cluster p4d.24xlarge --model gpt3-1.3b --nodes "1..$((1 << k))" --layout zero3 --engine model -o "$R/race/out.csv" 2>/dev/null &
    done
    wait
    ok=0
    for k in 1 2 3 4 5 6 7 8; do cmp -s "$R/race/out.csv" "$R/race/ref$k.csv" && ok=1; done
    if [ $ok = 1 ] && [ "$(ls -A "$R/race" | wc -l)" = 9 ]; then pass=$((pass + 1)); else echo "FAIL race-$round: $(ls -A "$R/race")"; fail=$((fail + 1)); fi
done

# ---- issue 31: no input text is ever run as gnuplot code ------------------------------------------
# A layout, model or cluster name, a model spec's "name", an HF _name_or_path, a trace's file name and
# --title hold backquotes, $(...), system("..."), quotes, a backslash, an @macro (and, where the input
# can carry one, a newline). Every plot kind draws a PNG and no marker file appears: the tics string
# was `eval`ed by memory.gp and breakdown.gp, so a layout named zero3`touch x` ran `touch x`. The
# markers are relative (names stop at 95 characters): everything runs in $I.
I="$R/inject"
mkdir -p "$I"
here=$(pwd)
EV='x`touch m1`$(touch m2)system("touch m3")'"'"'q"\ @x'
nl=$(printf '\nx')
nl=${nl%x}
"$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model gpt3-1.3b --layout zero3 --layout zero2 --engine model -o "$I/base.csv" 2>/dev/null
CSVEV=$(printf '%s' "$EV" | sed 's/"/""/g') awk -F, 'BEGIN { OFS = ","; q = "\"" } NR == 1 { print; next }
    { $1 = q $1 ENVIRON["CSVEV"] q; $2 = q $2 ENVIRON["CSVEV"] q; sub(/"$/, ENVIRON["CSVEV"] q, $6); print }' \
    "$I/base.csv" >"$I/evil.csv"
awk -F, 'NR == 1 || $4 == 1' "$I/evil.csv" >"$I/evil1.csv" # one bar per layout: the tics name the layouts
# a model spec and an HF config named so (JSON-escaped: \" and \\)
JEV=$(printf '%s' "$EV" | sed 's/\\/\\\\/g; s/"/\\"/g')
JEV=$JEV awk '!done && match($0, /"name": *"[^"]*"/) { $0 = substr($0, 1, RSTART - 1) "\"name\": \"" ENVIRON["JEV"] "\"" substr($0, RSTART + RLENGTH); done = 1 } { print }' \
    configs/models/gpt3-1.3b.json >"$I/model.json"
mkdir -p "$I/hf"
printf '{"model_type": "llama", "_name_or_path": "%s", "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8, "intermediate_size": 2816, "vocab_size": 32000, "max_position_embeddings": 2048}\n' \
    "$(printf '%s' "$JEV" | sed 's/%/%%/g')" >"$I/hf/config.json"
cd "$I"
for m in model hf; do
    case $m in model) M="$I/model.json" ;; hf) M="hf:$I/hf/config.json" ;; esac
    expect "inject-sweep-$m" 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1,2 --model "$M" --layout zero3 --layout zero2 --engine model -o "$I/$m.csv"
    expect "inject-name-in-csv-$m" 0 'x`touch m1`$(touch m2)system(""touch m3"")' -- cat "$I/$m.csv"
done
n=0
for csv in evil evil1 model hf; do
    for k in scaling efficiency memory breakdown; do
        [ $csv = evil1 ] && [ $k != breakdown ] && [ $k != memory ] && continue
        n=$((n + 1))
        expect "inject-plot-$csv-$k" 0 "plot: $k" -- "$BIN" plot "$I/$csv.csv" --kind $k --out "$I/p$n.png"
    done
done
expect inject-plot-title 0 "plot: memory" -- "$BIN" plot "$I/evil.csv" --kind memory --title "t$EV$nl$EV" --out "$I/title.png"
TR="$I/t$EV${nl}y.json"
expect inject-trace 0 "" -- "$BIN" predict --cluster p4d.24xlarge --model gpt3-1.3b --nodes 1 --layout zero3 --trace "$TR"
expect inject-plot-timeline 0 "plot: timeline" -- "$BIN" plot --kind timeline "$TR" --out "$I/timeline.png"
cd "$here"
pngs=0
for f in "$I"/*.png; do [ -e "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '211PNG' ] && pngs=$((pngs + 1)); done
if [ $pngs = $((n + 2)) ]; then pass=$((pass + 1)); else echo "FAIL inject-pngs: $pngs of $((n + 2)) PNGs"; fail=$((fail + 1)); fi
if [ -z "$(ls -A "$I" | grep '^m[0-9]$')" ]; then pass=$((pass + 1)); else echo "FAIL inject-ran-code: $(ls -A "$I" | grep '^m[0-9]$' | tr '\n' ' ')"; fail=$((fail + 1)); fi

# ---- issue 31: HF config sizes multiplied in int ----------------------------------------------------
# 4 x n_embd = 4 x 2^29 wrapped to -2^31: -1.15e9 parameters, negative TFLOPS and memory that
# "fits", exit 0. HF sizes now meet a model spec's bounds (2^24), products computed in 64 bits.
printf '{"model_type": "gpt2", "n_embd": 536870912, "n_head": 1, "n_layer": 2}' >"$R/hf-big.json"
expect hf-overflow-n-embd 2 'hf-big.json: $.n_embd: expected an integer from 1 to 16777216, got 536870912' -- \
    "$BIN" predict --cluster p4d.24xlarge --model "hf:$R/hf-big.json" --nodes 1 --layout zero3 --engine model
printf '{"model_type": "mpt", "d_model": 4194304, "n_heads": 1, "expansion_ratio": 8}' >"$R/hf-mpt.json"
expect hf-overflow-mpt 2 'hf-mpt.json: $.expansion_ratio: expected expansion_ratio x d_model (the MLP width) at most 16777216, got 8 x 4194304 = 33554432' -- \
    "$BIN" describe --model "hf:$R/hf-mpt.json"

# ---- issue 31: readers that never returned ----------------------------------------------------------
# /dev/zero never ends: the accelerate and nccl-tests readers read it line by line forever
expect accelerate-dev-zero 2 "/dev/zero: cannot read: is a device, expected a file" -- timeout 20 \
    "$BIN" predict --cluster p4d.24xlarge --model gpt3-1.3b --nodes 1 --engine model --accelerate-config /dev/zero
expect import-dev-zero 2 "/dev/zero: cannot read: is a device, expected a file" -- timeout 20 \
    "$BIN" calibrate import nccl-tests /dev/zero --kind all-reduce -o "$R/imp.json"
# a named FIFO is read once, to its end: the JSON loaders opened the path twice (a probe, then the
# read) and waited for a second writer forever
mkfifo "$R/fifo"
for what in ds-config hf accelerate import; do
    case $what in
    ds-config) src=tests/fixtures/ds_zero3.json
        set -- predict --cluster p4d.24xlarge --model gpt3-1.3b --nodes 1 --engine model --ds-config "$R/fifo" ;;
    hf) src=tests/fixtures/hf/Meta-Llama-3-8B/config.json; set -- describe --model "hf:$R/fifo" ;;
    accelerate) src=tests/fixtures/accelerate_fsdp2.yaml
        set -- predict --cluster p4d.24xlarge --model gpt3-1.3b --nodes 1 --engine model --accelerate-config "$R/fifo" ;;
    import) src=tests/fixtures/nccl_tests_all_reduce_2node.log
        set -- calibrate import nccl-tests "$R/fifo" --kind all-reduce -o "$R/imp.json" ;;
    esac
    timeout 20 sh -c 'cat "$1" >"$2"' sh "$src" "$R/fifo" 2>/dev/null &
    expect "fifo-$what" 0 "" -- timeout 20 "$BIN" "$@"
    wait
done

# ---- issue 31: control characters in an HF model's name ---------------------------------------------
# _name_or_path "org/a<ESC>[31mb" became the model's name, raw on the terminal and in the CSV
printf '{"model_type": "llama", "_name_or_path": "org/a\\u001b[31mb"}' >"$R/hf-ctl.json"
expect hf-name-control-char 2 'hf-ctl.json: $._name_or_path: expected a string without control characters, got "org/a\x1b[31mb"' -- \
    "$BIN" sweep --cluster p4d.24xlarge --model "hf:$R/hf-ctl.json" --nodes 1 --layout zero3 --engine model -o "$R/hf-ctl.csv"

# ---- issue 31: the accelerate YAML is parsed by libyaml -----------------------------------------------
# the hand reader split lines over 511 bytes (the rest became a key), took tab-indented keys as
# top-level, and passed flow mappings and lists with only a note; now YAML is YAML, and what
# shardcast does not read (a list where a value goes, a duplicate key) is refused with its line
A="predict --cluster p4d.24xlarge --model gpt3-6.7b --nodes 4 --engine model --accelerate-config"
printf 'distributed_type: FSDP\nfsdp_config: {fsdp_sharding_strategy: SHARD_GRAD_OP, fsdp_version: 2}\n' >"$R/acc-flow.yaml"
expect accelerate-flow-mapping 0 "shard_grad_op " -- "$BIN" $A "$R/acc-flow.yaml"
printf 'distributed_type: FSDP\nmain_training_function: "%0600d"\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n' 0 >"$R/acc-long.yaml"
expect accelerate-long-line 0 "ddp " -- "$BIN" $A "$R/acc-long.yaml"
printf 'distributed_type: FSDP\nfsdp_config:\n\tfsdp_sharding_strategy: NO_SHARD\n' >"$R/acc-tab.yaml"
expect accelerate-tab 2 "acc-tab.yaml: line 3: invalid YAML: found character that cannot start any token" -- "$BIN" $A "$R/acc-tab.yaml"
printf 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: [NO_SHARD]\n' >"$R/acc-list.yaml"
expect accelerate-list 2 'acc-list.yaml: $.fsdp_config.fsdp_sharding_strategy: expected a single value, got a list (line 3)' -- "$BIN" $A "$R/acc-list.yaml"
printf 'distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 1\n  fsdp_version: 2\n' >"$R/acc-dup.yaml"
expect accelerate-duplicate 2 'acc-dup.yaml: $.fsdp_config: duplicate key "fsdp_version" (lines 3 and 4)' -- "$BIN" $A "$R/acc-dup.yaml"

# ---- issue 31: calibrate import writes only what its loader reads -----------------------------------
# errors -1 and a time of 1e308 us were written and then refused by validate / calibrate fit; a NaN
# row was dropped without a word; --ranks 8x was read by atoi as 8
L=tests/fixtures/nccl_tests_all_reduce_2node.log
sed 's/  0    66.06/ -1    66.06/' $L >"$R/all_reduce_neg.log"
expect import-wrong-negative 2 'all_reduce_neg.log: line 13: #wrong: expected a count of wrong results or N/A, got "-1"' -- \
    "$BIN" calibrate import nccl-tests "$R/all_reduce_neg.log" -o "$R/imp.json"
sed 's/65.48/1e308/' $L >"$R/all_reduce_big.log"
expect import-time-1e308 2 'all_reduce_big.log: line 13: time: expected a positive number of us from 1e-9 to 1e15, got 1e+308' -- \
    "$BIN" calibrate import nccl-tests "$R/all_reduce_big.log" -o "$R/imp.json"
sed 's/300.1/nan/' $L >"$R/all_reduce_nan.log"
expect import-time-nan 2 'all_reduce_nan.log: line 14: time: expected a positive number of us' -- \
    "$BIN" calibrate import nccl-tests "$R/all_reduce_nan.log" -o "$R/imp.json"
expect import-ranks-atoi 2 '--ranks: expected an integer from 1 to 16777216, got "8x"' -- \
    "$BIN" calibrate import nccl-tests $L --ranks 8x -o "$R/imp.json"
# and what it writes loads: validate reads all 3 rows back (N/A in #wrong: the run did not check, 0
# errors; exit 1: the synthetic log is outside the tolerance, as the fixture is)
sed 's/      0    66.06/    N\/A    66.06/' $L >"$R/all_reduce_na.log"
expect import-na-roundtrip 0 "" -- "$BIN" calibrate import nccl-tests "$R/all_reduce_na.log" -o "$R/imp-na.json"
expect import-na-loads 1 "MAPE collective   38.4% over 3 rows" -- "$BIN" validate "$R/imp-na.json" --cluster p4d.24xlarge

# ---- issue 31: the rest ------------------------------------------------------------------------------
# an output replacing a 0600 file became 0644: the replaced file's permission bits are kept
printf 'x\n' >"$R/private.csv"
chmod 600 "$R/private.csv"
expect mode-kept-sweep 0 "" -- "$BIN" sweep --cluster p4d.24xlarge --nodes 1 --model gpt3-1.3b --layout zero3 --engine model -o "$R/private.csv"
expect mode-kept-600 0 "600" -- stat -c %a "$R/private.csv"
# 20,000 lines on one plot took 296 s (gnuplot's time grows with their square): at most 1,000
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } NR == 2 { for (i = 1; i <= 1001; i++) { $6 = "\"z" i "\""; print } }' \
    "$R/one.csv" >"$R/series1001.csv"
expect plot-series-budget 2 "series1001.csv: expected at most 1000 lines (one per layout, micro-batch, engine, model and cluster), got 1001" -- \
    "$BIN" plot "$R/series1001.csv" --kind scaling --out "$R/s.png"
