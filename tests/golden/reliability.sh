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
