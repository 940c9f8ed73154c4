# Error vs bits/element per distribution: every configuration of the sweep
# (grey), the bit-pair grid per tile size G (token allocation, tau=2,
# nearest, fp16), the Pareto front, and the paper operating point
# (G=64, 4/3, r=800, token, tau=2).
# usage: gnuplot -e "plotdir='plots'; csv='...'; front='...'; outdir='...'; dists='...'; fmt='png'" bounds_pareto.gp
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_pareto." . fmt
set multiplot layout nrows, ncols title "tahq: relative MSE vs bits/element (whole message counted)"
set logscale y
set format y "10^{%L}"
set xlabel "bits / element"
set ylabel "relative MSE"
set grid
set key top right font ",8"
grid(d, g) = ok(d) && strcol(c_set) eq "grid" && column(c_G) == g
do for [i = 1:nd] {
  d = word(dists, i)
  set title d
  set xrange [1:*]
  plot csv every ::1 using (ok(d) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 7 ps 0.3 lc rgb "#c0c0c0" title "all configurations", \
       for [g in "16 32 64 128 256"] csv every ::1 using \
         (grid(d, g + 0) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 6 ps 0.5 title "grid G=" . g, \
       front every ::1 using (strcol(1) eq d ? $2 : NaN):3 with steps lw 2 lc rgb "black" \
         title "Pareto front", \
       csv every ::1 using (paper(d) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 9 ps 2 lc rgb "red" title "paper G=64 4/3 r=800"
}
unset multiplot
