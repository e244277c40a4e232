# efficiency.gp — weak- or strong-scaling efficiency (%) vs GPUs, one line per layout, log2 GPU axis. Run by
# `shardcast plot --kind efficiency`; the CSV is validated there, this script only draws.
# Variables (a file gnuplot reads first): datafile outfile plottitle width height nseries, series
# (array of nseries names), has_oom, ngpus, gpus (array of the GPU counts, the x tics), xmin xmax
# ymax ylab (weak or strong, chosen by shardcast plot from the global_batch column). Names are
# data: never eval'ed or spliced with @ (cli/gnuplot.h).
# Data: block i = series i: gpus efficiency_pct ("?" = no baseline); block nseries = OOM points.
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
set datafile missing "?"
set title plottitle font ",13"
set grid
set logscale x 2
set xrange [xmin:xmax]
set xtics ()
do for [k=1:ngpus] { set xtics add (sprintf("%.0f", gpus[k]) gpus[k]) }
set xlabel "GPUs (log2 scale)"
set yrange [0:ymax]
set ylabel ylab
set key bottom left box opaque
# the OOM points, a plot clause only when there are any (an empty iteration still warns)
oomclause(col) = has_oom ? sprintf(', datafile index %d using 1:%d with points pt 6 ps 2.2 lw 2 lc rgb "red" title "OOM: does not fit"', nseries, col) : ''
oom2 = oomclause(2)
plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints lt i+1 title series[i+1], \
     100 with lines dt 2 lw 1.5 lc rgb "#555555" title "ideal (100%)" @oom2
unset output
