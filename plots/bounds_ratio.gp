# Measured error against the SPEC section 6 bound, every point of the sweep:
# max |error|/bound (must be <= 1; a point above the line is a bound
# violation), mean |error|/bound, and relative MSE over the bound's own
# relative MSE (sum bound^2 / sum x^2), by distribution.
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_ratio." . fmt
if (fmt eq "svg") { set terminal svg size 1100, 900 dynamic font "Sans,11" background "white" }
else { set terminal pngcairo size 1100, 900 font "Sans,10" }
set multiplot layout 3, 1 title "tahq: measured error / SPEC bound"
set grid
set key outside right font ",9"
set xlabel "bits / element"
set ylabel "max |error| / bound"
set yrange [0:1.1]
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb "red" lw 2
plot for [i = 1:nd] csv every ::1 using \
       (ok(word(dists, i)) ? column(c_bpe) : NaN):(column(c_maxratio)) \
       with points pt 7 ps 0.4 title word(dists, i)
unset arrow 1
set ylabel "mean |error| / bound"
set yrange [0:*]
plot for [i = 1:nd] csv every ::1 using \
       (ok(word(dists, i)) ? column(c_bpe) : NaN):(column(c_meanratio)) \
       with points pt 7 ps 0.4 title word(dists, i)
set ylabel "relMSE / relMSE of the bound"
set logscale y
set yrange [*:1.2]
plot for [i = 1:nd] csv every ::1 using \
       (ok(word(dists, i)) ? column(c_bpe) : NaN):(column(c_relmse) / column(c_relmse_bound)) \
       with points pt 7 ps 0.4 title word(dists, i)
unset multiplot
