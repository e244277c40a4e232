# accuracy.gp — predicted vs measured tokens/s per GPU of the published cases (docs/accuracy.png),
# log-log, one point per case coloured by source, the y = x line and a ±10 % band. Run by
# `make accuracy-report` on the points `shardcast accuracy --plot-data FILE` writes; this script
# only draws. Variables (gnuplot -e): datafile outfile; optional plottitle width height.
# Data: one block per source (blocks split by two blank lines), first line "source" "predicted",
# then lines: measured predicted (tokens/s per GPU).
if (!exists("plottitle")) plottitle = "shardcast accuracy: predicted vs measured (analytical model)"
if (!exists("width")) width = 1150
if (!exists("height")) height = 800
set terminal pngcairo size width,height noenhanced font ",10"
set output outfile
set linetype 1 lc rgb "#1f77b4" pt 7 ps 1.2
set linetype 2 lc rgb "#ff7f0e" pt 5 ps 1.2
set linetype 3 lc rgb "#2ca02c" pt 9 ps 1.4
set linetype 4 lc rgb "#d62728" pt 11 ps 1.4
set linetype 5 lc rgb "#9467bd" pt 13 ps 1.4
set linetype 6 lc rgb "#8c564b" pt 15 ps 1.2
set linetype 7 lc rgb "#e377c2" pt 7 ps 1.2
set linetype 8 lc rgb "#7f7f7f" pt 5 ps 1.2
set linetype 9 lc rgb "#bcbd22" pt 9 ps 1.4
set linetype 10 lc rgb "#17becf" pt 11 ps 1.4
set linetype cycle 10
stats datafile using 1:2 nooutput
nblocks = STATS_blocks
lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.5
hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.5
set logscale xy 10
set xrange [lo:hi]
set yrange [lo:hi]
set size ratio -1
set grid
set title plottitle font ",13"
set xlabel "measured throughput (tokens/s per GPU, log scale)"
set ylabel "predicted throughput (tokens/s per GPU, log scale)"
set key outside right top box opaque reverse Left
set samples 400
plot sample [t=lo:hi] '+' using (t):(0.9 * t):(1.1 * t) with filledcurves lc rgb "#cccccc" fs solid 0.5 \
         title "within ±10 %", \
     x with lines lc rgb "#444444" dt 2 lw 1.5 title "y = x (prediction = measurement)", \
     for [i=0:nblocks-1] datafile index i using 1:2 with points lt i+1 title columnheader(1)
unset output
