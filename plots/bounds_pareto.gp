# SPDX-License-Identifier: MIT
# Error vs bits/element per distribution: every configuration of the sweep
# (grey), the bit-pair grid per tile size G (token allocation, tau=2,
# nearest, fp16; one point type and colour per G), the Pareto front, and the
# paper operating point (G=64, 4/3, r=800, token, tau=2).
# usage: gnuplot -e "plotdir='plots'; csv='...'; front='...'; outdir='...'; dists='...'; fmt='png'" bounds_pareto.gp
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_pareto." . fmt
set multiplot layout nrows, ncols title "tahq bounds: relative MSE vs bits/element (whole message counted)"
set key font ",9"
grid(d, g) = ok(d) && strcol(c_set) eq "grid" && column(c_G) == g
Gs = "16 32 64 128 256"
do for [i = 1:nd] {
  d = word(dists, i)
  set title dname(d) noenhanced
  if (!has(ok_dists, d)) {
    empty_msg = sprintf("%s: no configuration could be encoded", dname(d))
    @empty_panel
  } else {
    set logscale y
    set format y "10^{%L}"
    set xlabel "bits / element"
    set ylabel "relative MSE"
    plot csv every ::1 using (ok(d) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points pt 7 ps 0.35 lc rgb cloud_grey title "all configurations", \
         for [j = 1:words(Gs)] csv every ::1 using \
           (grid(d, word(Gs, j) + 0) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points lt j title "grid G=" . word(Gs, j), \
         front every ::1 using (strcol(1) eq d ? $2 : NaN):3 with steps lw 2 lc rgb ref_black \
           dt 1 title "Pareto front", \
         csv every ::1 using (paper(d) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points pt 3 ps 2.2 lw 2 lc rgb ref_red title "paper G=64 4/3 r=800"
  }
}
unset multiplot
