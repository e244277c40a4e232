#!/bin/sh
# sim_ns_event.sh — CPU time per simulated event of full (every rank) runs: one bench_sim process
# per LAYOUT@NODES job on gpt-100b / p4d.24xlarge, its CPU time (user + system of the process and
# its forked child, `perf stat -e task-clock`) over the events it dispatched. Prints one line a job:
#   LABEL LAYOUT NODES GPUS EVENTS CPU_S NS_PER_EVENT LOAD1
# Usage: bench/sim_ns_event.sh BENCH_SIM LABEL LAYOUT@NODES ...  (run from the repository root)
# Not a test; on a shared machine interleave two binaries' jobs and compare ratios.
set -u
BIN=${1:?usage: sim_ns_event.sh BENCH_SIM LABEL LAYOUT@NODES ...}
LABEL=${2:?label}
shift 2
TMP=$(mktemp -d)
for job in "$@"; do
    BENCH_SYMMETRY=off perf stat -x, -e task-clock -o "$TMP/stat" "$BIN" \
        configs/clusters/p4d.24xlarge.json configs/models/gpt-100b.json "$job" >"$TMP/out" 2>&1
    ms=$(awk -F, '/task-clock/ {print $1}' "$TMP/stat")
    ev=$(awk '/ ev / {for (i = 1; i < NF; i++) if ($(i + 1) == "ev") print $i}' "$TMP/out")
    gpus=$(awk '/GPUs/ {for (i = 1; i < NF; i++) if ($(i + 1) == "GPUs") print $i}' "$TMP/out")
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "$LABEL ${job%@*} ${job##*@} $gpus $ev $ms $load" |
        awk '{printf "%s %s %s %s %s %.2f %.0f %s\n", $1, $2, $3, $4, $5, $6 / 1000, $6 * 1e6 / $5, $7}'
done
rm -rf "$TMP"
