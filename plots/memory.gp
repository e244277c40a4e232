# memory.gp — memory per GPU of each layout (bars, one per GPU count) against the GPU's HBM (dashed
# line), layouts that do not fit marked OOM. Run by `shardcast plot --kind memory`; the CSV is
# validated there, this script only draws. Variables (a file gnuplot reads first): datafile outfile
# plottitle width height nsub, subs (array of nsub bar names), ncat, cats (array of ncat layout
# names, the x tics at 0..ncat-1), logy ymin ymax hbm hbm_varies, valrot (0: each bar's value
# above it horizontally, 1: rotated, for many bars; -1: no values). Names are data: never eval'ed
# or spliced with @ (cli/gnuplot.h).
# Data: block j = bars of GPU count j: x mem_total_GiB bar_width fits hbm_GiB.
set terminal pngcairo size width,height noenhanced font ",10"
set output outfile
set linetype 1 lc rgb "#1f77b4"
set linetype 2 lc rgb "#ff7f0e"
set linetype 3 lc rgb "#2ca02c"
set linetype 4 lc rgb "#9467bd"
set linetype 5 lc rgb "#8c564b"
set linetype 6 lc rgb "#e377c2"
set linetype 7 lc rgb "#7f7f7f"
set linetype 8 lc rgb "#17becf"
set linetype cycle 8
set title plottitle font ",13"
set grid ytics
set style fill solid 0.85 border lc rgb "#333333"
set xrange [-0.6:ncat-0.4]
set xtics ()
do for [k=1:ncat] { set xtics add (cats[k] k-1) }
set xtics nomirror
if (ncat > 5) { set xtics rotate by -30 }
set xlabel "layout (p = partition group size)"
if (logy) { set logscale y 10; set ylabel "memory per GPU (GiB, log scale)" } else { set ylabel "memory per GPU (GiB)" }
set yrange [ymin:ymax]
# a log axis labelled at 1, 2 and 5 of every decade (not only at the powers of ten), and the
# HBM capacity labelled where its line crosses the axis, so bars near it can be read
if (logy) { \
    set ytics (); \
    do for [e=-3:7] { set ytics add (sprintf("%g", 10.0**e) 10.0**e, sprintf("%g", 2*10.0**e) 2*10.0**e, sprintf("%g", 5*10.0**e) 5*10.0**e) }; \
    set mytics 10 }
if (!hbm_varies) { set ytics add (sprintf("HBM %g", hbm) hbm) }
set key outside right top box
# HBM capacity: one dashed line, or a dash over each bar when the rows differ in HBM
hbmclause = hbm_varies ? \
    sprintf(', for [j=0:%d] datafile index j using ($1-$3/2):5:3:(0) with vectors nohead dt 2 lw 2 lc rgb "red" title (j == 0 ? "HBM per GPU" : "")', nsub-1) : \
    sprintf(', %.10g with lines dt 2 lw 2 lc rgb "red" title "HBM per GPU (%g GiB)"', hbm, hbm)
# each bar's value (GiB) above it; OOM above that where the layout does not fit
valfmt(v) = v < 100 ? sprintf("%.1f", v) : sprintf("%.0f", v)
valclause = valrot < 0 ? '' : sprintf(', for [j=0:%d] datafile index j using 1:2:(valfmt($2)) with labels %s font ",8" notitle', \
    nsub-1, valrot ? 'rotate by 90 left offset 0,0.3' : 'offset 0,0.6')
oomopts = valrot > 0 ? 'rotate by 90 left offset 0,2.4' : (valrot == 0 ? 'offset 0,1.5' : 'offset 0,0.8')
plot for [j=0:nsub-1] datafile index j using 1:2:3 with boxes lt j+1 title subs[j+1], \
     for [j=0:nsub-1] datafile index j using 1:2:(column(4) == 0 ? "OOM" : "") with labels @oomopts \
         tc rgb "red" font ",10:Bold" notitle @valclause @hbmclause
unset output
