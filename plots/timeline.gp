# timeline.gp — Gantt chart of a simulated step: one row per rank stream (compute, comm), spans
# coloured by what they are. Run by `shardcast plot --kind timeline`, which reads and checks the
# Chrome trace; this script only draws. Variables (a file gnuplot reads first): datafile outfile
# plottitle width height nrows, rowlab (array of nrows row names, the y tics at 0..nrows-1),
# kinds (0-based kinds present) kindnames tmin tmax. Text is data: never eval'ed (cli/gnuplot.h).
# Data: t0_ms t1_ms row kind, kind 0 compute 1 all-gather 2 reduce-scatter 3 all-reduce
# 4 optimizer 5 other collective.
set terminal pngcairo size width,height noenhanced font ",10"
set output outfile
kindcolors = '#1f77b4 #ff7f0e #2ca02c #9467bd #333333 #8c564b'
set title plottitle font ",13"
set grid xtics
set xrange [tmin:tmax]
set yrange [nrows-0.5:-0.5]
set ytics ()
do for [r=1:nrows] { set ytics add (rowlab[r] r-1) }
set ytics nomirror scale 0
set xlabel "time (ms)"
set ylabel "rank stream"
set style fill solid 1.0 noborder
set bmargin 6
set key at screen 0.5, screen 0.01 center bottom horizontal box
plot for [k in kinds] datafile using ((column(4) == k+0) ? ($1+$2)/2 : NaN):3:(($2-$1)/2):(0.38) \
         with boxxyerror lc rgb word(kindcolors, k+1) title word(kindnames, k+1)
unset output
