#!/bin/sh
# anchor.sh — "measure on 2 nodes, predict 4" on the emulated cluster (issue 29): 4 network
# namespaces x 2 ranks (calibrate/emulate/cluster.sh); `shardcast calibrate run --backend cpu` on
# the first two nodes (collectives, GEMMs, memory, real zero3 and mics:p=2 steps), fitted against
# configs/clusters/emulated-cpu.json with and without --anchor-steps; the same two steps measured
# on all four nodes; `shardcast validate` predicts those four-node steps with each two-node
# calibration. Prints measured vs predicted and says whether the anchored forecast is within the
# tolerance (default 10 %). The steps fitted and predicted are measured alike, back to back: steps
# only, the two-node ones with the twin stepping beside them (see the comment where they are).
# Not here: the two-node loop itself (run.sh), the cluster (cluster.sh). Too slow for make check
# (about 1.5-3 minutes of the host's 2 cores, 2026-11-27): `make emulate-anchor`.
#
# usage: calibrate/emulate/anchor.sh [--tolerance F] [--out DIR] [--layers L] [--hidden H] [--seq S]
# Exit status: 0 the anchored four-node forecast is within the tolerance, 1 it is not or the loop
# did not close, 2 usage, 77 skipped (network namespaces refused here).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
EMU="$ROOT/calibrate/emulate"
. "$EMU/mpiargs.sh"
TOL=0.10
OUT=out/emulate-anchor
LAYERS=2
HIDDEN=256
SEQ=256
while [ $# -gt 0 ]; do
    case $1 in
    --tolerance) TOL=${2:?--tolerance needs a value}; shift 2 ;;
    --out) OUT=${2:?--out needs a value}; shift 2 ;;
    --layers) LAYERS=${2:?}; shift 2 ;;
    --hidden) HIDDEN=${2:?}; shift 2 ;;
    --seq) SEQ=${2:?}; shift 2 ;;
    -h | --help) sed -n '12,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "anchor.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

say() { printf 'emulate-anchor: %s\n' "$*"; }
fail() { echo "emulate-anchor: FAIL: $*" >&2; exit 1; }
[ -x ./shardcast ] || fail "./shardcast not built (make)"
[ -x ./shardcast-bench ] || fail "./shardcast-bench not built (needs mpicc and OpenBLAS: make deps && make)"
command -v mpirun >/dev/null 2>&1 || fail "mpirun not found (make deps installs openmpi-bin)"

export SCEMU_OWNER=$$
export SCEMU_PREFIX="${SCEMU_PREFIX:-sa$(($$ % 100000))}"
export SCEMU_NET="${SCEMU_NET:-10.78.$(($$ % 250))}"
CLUSTER_UP=""
cleanup() {
    rc=$?
    trap '' INT TERM HUP
    [ -n "$CLUSTER_UP" ] && sh "$EMU/cluster.sh" down >/dev/null 2>&1
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$OUT" || exit 1
T0=$(date +%s)
sh "$EMU/cluster.sh" up -k 4 -r 1gbit >"$OUT/cluster.log" 2>&1
rc=$?
if [ $rc = 77 ]; then
    grep '^SKIP' "$OUT/cluster.log" || echo "SKIP: network namespaces not permitted"
    exit 77
fi
CLUSTER_UP=1
[ $rc = 0 ] || { cat "$OUT/cluster.log" >&2; fail "cluster.sh up failed"; }
eval "$(sh "$EMU/cluster.sh" env)"
H4=""
for h in $(echo "$SCEMU_HOSTS" | tr ',' ' '); do H4="$H4${H4:+,}$h:2"; done
H2=$(echo "$H4" | cut -d, -f1-2)
H2B=$(echo "$H4" | cut -d, -f3-4)
say "cluster: $SCEMU_NODES nodes at $SCEMU_HOSTS, htb $SCEMU_RATE; $(nproc) cores shared by all ranks"

mpi() { scemu_mpi_args "$1"; } # the mpirun options every emulated run passes (mpiargs.sh)
STEP="--step zero3,mics:p=2 --layers $LAYERS --hidden $HIDDEN --seq $SEQ --steps 5"
M2="$OUT/m2.json"
M4="$OUT/m4.json"
rm -f "$M2" "$M4" "$OUT/m2-harness.json" "$OUT/m2-steps.json"
# Real nodes have their own cores; these share the host's. So that a rank has the same share of
# a core in the two-node measurement as in the four-node one (8 ranks), a twin of the two-node
# measurement runs at the same time on the other two nodes: the load is the four-node run's.
say "measuring on 2 nodes (4 ranks, a twin on the other 2 nodes): collectives 4K..1M, GEMMs, memory"
m2() { # $1 hosts, $2 output, $3 log, then more options
    h=$1 o=$2 l=$3
    shift 3
    # shellcheck disable=SC2046,SC2086
    timeout 300 ./shardcast calibrate run --backend cpu -np 4 $(mpi "$h") --groups p=2 --min 4K --max 1M \
        --iters 5 --warmup 2 --gemm-max 512 --membw-max 64M "$@" \
        --note "emulated: 2 of 4 namespaces x 2 ranks on $(nproc) shared cores, htb 1gbit, a twin run beside it" \
        -o "$o" >"$l" 2>&1
}
m2 "$H2B" "$OUT/m2-twin.json" "$OUT/bench2-twin.txt" &
TWIN=$!
m2 "$H2" "$OUT/m2-harness.json" "$OUT/bench2.txt" ||
    { tail -20 "$OUT/bench2.txt" >&2; fail "the two-node measurement failed (output: $OUT/bench2.txt)"; }
wait "$TWIN" || say "the twin measurement failed ($OUT/bench2-twin.txt); it only loaded the host"
# The steps of both runs are measured alike and back to back: steps only, each after the same
# warm-up, the two-node one with its twin in the same phase. Measured inside the full harness
# (2026-11-27), the two-node steps ran while the twin was elsewhere in its harness: 0.57 s for
# zero3 against 1.19 s measured steps-only with the twin stepping beside it, and the four-node
# forecast was off by -53 % where like for like it is -14 % (docs/CALIBRATE.md).
say "measuring the steps on 2 nodes (4 ranks, the twin stepping beside them), then on 4 nodes (8 ranks)"
# shellcheck disable=SC2086
m2 "$H2B" "$OUT/m2-steps-twin.json" "$OUT/bench2-steps-twin.txt" $STEP --skip collectives,gemm,membw,interference &
TWIN=$!
# shellcheck disable=SC2086
m2 "$H2" "$OUT/m2-steps.json" "$OUT/bench2-steps.txt" $STEP --skip collectives,gemm,membw,interference ||
    { tail -20 "$OUT/bench2-steps.txt" >&2; fail "the two-node step measurement failed (output: $OUT/bench2-steps.txt)"; }
wait "$TWIN" || say "the twin step measurement failed ($OUT/bench2-steps-twin.txt); it only loaded the host"
# shellcheck disable=SC2046,SC2086
timeout 200 ./shardcast calibrate run --backend cpu -np 8 $(mpi "$H4") --groups p=2 --iters 5 --warmup 2 \
    --skip collectives,gemm,membw,interference $STEP \
    --note "emulated: 4 namespaces x 2 ranks on $(nproc) shared cores, htb 1gbit" -o "$M4" >"$OUT/bench4.txt" 2>&1 ||
    { tail -20 "$OUT/bench4.txt" >&2; fail "the four-node measurement failed (output: $OUT/bench4.txt)"; }
# the fit's input: the harness's measurements with the steps measured like the four-node ones
# ("steps" is the last member the harness writes)
{ grep -q '^  "steps": \[' "$OUT/m2-harness.json" && grep -q '^  "steps": \[' "$OUT/m2-steps.json"; } ||
    fail "no \"steps\" member where the harness writes it ($OUT/m2-harness.json, $OUT/m2-steps.json)"
{ sed '/^  "steps": \[/,$d' "$OUT/m2-harness.json"; sed -n '/^  "steps": \[/,$p' "$OUT/m2-steps.json"; } >"$M2" ||
    fail "could not write $M2"

./shardcast calibrate fit "$M2" --cluster emulated-cpu -o "$OUT/cal2.json" >"$OUT/fit.txt" 2>&1 ||
    { cat "$OUT/fit.txt" >&2; fail "calibrate fit refused the two-node measurements"; }
./shardcast calibrate fit "$M2" --cluster emulated-cpu --anchor-steps -o "$OUT/cal2-anchored.json" >"$OUT/fit-anchored.txt" 2>&1 ||
    { cat "$OUT/fit-anchored.txt" >&2; fail "calibrate fit --anchor-steps refused the two-node measurements"; }
sed -n '/anchor/,$p' "$OUT/fit-anchored.txt" | head -12
for c in cal2 cal2-anchored; do
    ./shardcast validate "$M4" --cluster emulated-cpu --calibration "$OUT/$c.json" --tolerance "$TOL" >"$OUT/validate4-$c.txt" 2>&1
    [ $? -le 1 ] || { cat "$OUT/validate4-$c.txt" >&2; fail "validate failed on $c"; }
    ./shardcast validate "$M2" --cluster emulated-cpu --calibration "$OUT/$c.json" --tolerance "$TOL" >"$OUT/validate2-$c.txt" 2>&1
done
# rows: "  step  step zero3, 2 layers, hidden 256  <measured> <predicted> <error>%"
summary() { awk -v tag="$2" '$1 == "step" { lay = $3; sub(/,$/, "", lay); printf "%-26s %-10s %12s %12s %8s\n", tag, lay, $(NF-2), $(NF-1), $NF }' "$1"; }
printf '\n== 2 nodes measured, 4 nodes predicted (emulated, %d cores, %d s)\n' "$(nproc)" "$(($(date +%s) - T0))"
printf '%-26s %-10s %12s %12s %8s\n' "calibration / run" "layout" "measured s" "predicted s" "error"
summary "$OUT/validate2-cal2.txt" "fit, 2-node steps"
summary "$OUT/validate2-cal2-anchored.txt" "anchored, 2-node steps"
summary "$OUT/validate4-cal2.txt" "fit, 4-node steps"
summary "$OUT/validate4-cal2-anchored.txt" "anchored, 4-node steps"
# where the four-node step's time went, per op (the harness's max over ranks of each op's time in
# a step): the compute should match (the twin's load), the collectives show what grew
ops() { awk -v tag="$2" '/"layout":/ { lay = $2; gsub(/[",]/, "", lay) }
    /"per_op_s"/ { on = 1; line = ""; next }
    on && /}/ { printf "%-10s %-10s %s\n", tag, lay, line; on = 0; next }
    on { k = $1; v = $2; gsub(/[",:]/, "", k); gsub(/,/, "", v); line = line sprintf(" %s %.3f", k, v) }' "$1"; }
printf '\n== measured per op, s (max over ranks)\n'
ops "$M2" "2 nodes"
ops "$M4" "4 nodes"
say "files: $OUT/{m2.json,m4.json,cal2.json,cal2-anchored.json,fit*.txt,validate*.txt}"
# the verdict: every four-node step of the anchored calibration within the tolerance
awk -v tol="$TOL" '$1 == "step" { e = $NF; sub(/%$/, "", e); e += 0; e = e < 0 ? -e : e; n++; if (e > 100 * tol) bad++ }
    END { if (!n) { print "emulate-anchor: FAIL: no four-node step was predicted"; exit 1 }
          if (bad) { printf "emulate-anchor: FAIL: %d of %d four-node steps off by more than %g %%\n", bad, n, 100 * tol; exit 1 }
          printf "emulate-anchor: ok: %d four-node steps within %g %% of the two-node anchor'"'"'s forecast\n", n, 100 * tol }' \
    "$OUT/validate4-cal2-anchored.txt"
