# breakdown.gp — where a training step goes: stacked bars of compute, exposed all-gather,
# reduce-scatter and all-reduce, optimizer and idle time, one bar per GPU count, grouped by
# layout. Run by `shardcast plot --kind breakdown`; the CSV is validated there, this script only
# draws. Variables (a file gnuplot reads first): datafile outfile plottitle width height parts
# (1-based parts that are non-zero somewhere), nbars, barlab barx (arrays: each bar's tic label
# and x), ngroups, grouplab groupx (arrays: each layout's name and centre; ngroups = 0 when every
# layout has one bar and barlab names the layouts), xlab xmax ymax. Names are data: never eval'ed
# or spliced with @ (cli/gnuplot.h).
# Data: x c0 c1 c2 c3 c4 c5 c6 fits — c0 = 0 and c1..c6 the running sums in seconds.
set terminal pngcairo size width,height noenhanced font ",10"
set output outfile
partnames = '"compute" "exposed all-gather" "exposed reduce-scatter" "exposed all-reduce" "optimizer" "idle"'
partcolors = '#1f77b4 #ff7f0e #2ca02c #9467bd #7f7f7f #d9d9d9'
set title plottitle font ",13"
set grid ytics
set style fill solid 0.9 border lc rgb "#333333"
set xrange [-0.7:xmax]
set yrange [0:ymax]
set xtics ()
do for [b=1:nbars] { set xtics add (barlab[b] barx[b]) }
set xtics nomirror scale 0
if (ngroups > 0) {
    # two rows of labels: GPU counts under the bars, layout names under each group
    set bmargin 6
    do for [g=1:ngroups] {
        set label grouplab[g] at groupx[g], graph 0 center offset 0,-2.2 font ",10:Bold"
    }
    set xlabel xlab offset 0,-1.6
} else {
    # one bar per layout: the tics name the layouts
    if (nbars > 6) { set xtics rotate by -30 }
    set xlabel xlab
}
set ylabel "time per training step (s)"
set key outside right top box
bw = 0.4
plot for [p in parts] datafile using 1:((column(p+1)+column(p+2))/2):(bw):((column(p+2)-column(p+1))/2) \
         with boxxyerror lc rgb word(partcolors, p+0) title word(partnames, p+0), \
     datafile using 1:8:(column(9) == 0 ? "OOM" : "") with labels offset 0,0.8 \
         tc rgb "red" font ",10:Bold" notitle
unset output
