#!/bin/sh
# an_identical.sh — bench/an_identical.c compiled against two trees' build/libshardcast.a and run in
# each (each reads its own configs), then the two result files compared byte for byte: a
# performance change of the analytical engine must print "identical". Each tree must be built
# (make -j2 there) first. Not a test (~1 s of CPU per tree).
#
#   bench/an_identical.sh TREE_A TREE_B        e.g. bench/an_identical.sh /work/main .
set -eu
[ $# -eq 2 ] || { echo "usage: an_identical.sh TREE_A TREE_B" >&2; exit 2; }
src=$(cd "$(dirname "$0")" && pwd)/an_identical.c
libs="$(pkg-config --libs gsl jansson yaml-0.1 2>/dev/null) -lm -pthread"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
for t in "$@"; do
    i=$((i + 1))
    d=$(cd "$t" && pwd)
    # shellcheck disable=SC2086
    cc -std=c11 -D_GNU_SOURCE -O2 -I"$d" -o "$out/an_identical$i" "$src" "$d/build/libshardcast.a" $libs
    printf '%-40s ' "$t"
    (cd "$d" && "$out/an_identical$i" "$out/$i.bin")
done
if cmp -s "$out/1.bin" "$out/2.bin"; then echo identical; else echo "DIFFERENT"; exit 1; fi
