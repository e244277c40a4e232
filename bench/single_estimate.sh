#!/bin/sh
# single_estimate.sh — bench/single_estimate.c compiled against several trees' build/libshardcast.a and
# run in each tree in turn (interleaved rounds), with the default calibration and each tree's shipped
# p4d file: CPU us per configuration per run, then instructions per configuration inside an_predict
# (callgrind, 3 passes) when INSTR=1. Each tree must be built (make -j2 there) first. Not a test.
#
#   bench/single_estimate.sh ROUNDS PASSES TREE...     e.g. 5 300 /tmp/d0ad5ef /work/main .
set -eu
rounds=$1 passes=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)/single_estimate.c
libs="$(pkg-config --libs gsl jansson yaml-0.1 2>/dev/null) -lm -pthread"
for t in "$@"; do
    d=$(cd "$t" && pwd)
    # shellcheck disable=SC2086
    cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$d" -o "$d/build/single_estimate" "$src" "$d/build/libshardcast.a" $libs
done
cal="configs/calibrations/p4d.24xlarge.json"
r=1
while [ "$r" -le "$rounds" ]; do
    for k in default "$cal"; do
        for t in "$@"; do
            printf 'round %d %-8s %-40s ' "$r" "$(basename "$k" .json)" "$t"
            (cd "$t" && ./build/single_estimate "$k" "$passes")
        done
    done
    r=$((r + 1))
done
if [ "${INSTR:-0}" = 1 ]; then
    for k in default "$cal"; do
        for t in "$@"; do
            n=$(cd "$t" && valgrind --tool=callgrind --toggle-collect=an_predict --callgrind-out-file=/dev/null \
                ./build/single_estimate "$k" 3 2>&1 | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
            printf 'instr %-8s %-40s %s per configuration\n' "$(basename "$k" .json)" "$t" "$((n / 324))"
        done
    done
fi
