# scaling.gp — throughput vs GPUs, one line per layout: samples/s (left) and model TFLOPS per GPU
# (right), log2 GPU axis. Run by `shardcast plot --kind scaling`, which validates the CSV; this
# script only draws. Variables (a file gnuplot reads first): datafile outfile plottitle width height
# nseries, series (array of nseries names), has_oom, ngpus, gpus (array of the GPU counts, the x
# tics), xmin xmax. Names are data: never eval'ed or spliced with @ (cli/gnuplot.h).
# Data: block i (0-based, blocks split by two blank lines) = series i: gpus samples_per_s
# tflops_per_gpu; block nseries = points predicted not to fit in memory.
set terminal pngcairo size width,height noenhanced font ",10"
set output outfile
set linetype 1 lc rgb "#1f77b4" lw 2 pt 7
set linetype 2 lc rgb "#ff7f0e" lw 2 pt 5
set linetype 3 lc rgb "#2ca02c" lw 2 pt 9
set linetype 4 lc rgb "#d62728" lw 2 pt 11
set linetype 5 lc rgb "#9467bd" lw 2 pt 13
set linetype 6 lc rgb "#8c564b" lw 2 pt 15
set linetype 7 lc rgb "#e377c2" lw 2 pt 7
set linetype 8 lc rgb "#7f7f7f" lw 2 pt 5
set linetype cycle 8
set multiplot layout 1,2 title plottitle font ",13"
set grid
set logscale x 2
set xrange [xmin:xmax]
set xtics ()
do for [k=1:ngpus] { set xtics add (sprintf("%.0f", gpus[k]) gpus[k]) }
set xlabel "GPUs (log2 scale)"
set key top left box opaque
# the OOM points, a plot clause only when there are any (an empty iteration still warns)
oomclause(col) = has_oom ? sprintf(', datafile index %d using 1:%d with points pt 6 ps 2.2 lw 2 lc rgb "red" title "OOM: does not fit"', nseries, col) : ''
oom2 = oomclause(2)
oom3 = oomclause(3)

set logscale y 10
set ylabel "throughput (samples/s, log scale)"
plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints lt i+1 title series[i+1] @oom2

unset logscale y
set yrange [0:*]
set ylabel "model TFLOPS per GPU (TFLOP/s)"
set key bottom left
plot for [i=0:nseries-1] datafile index i using 1:3 with linespoints lt i+1 title series[i+1] @oom3
unset multiplot
unset output
