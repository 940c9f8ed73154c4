# Ablations at the paper operating point (G=64, 4/3, nearest, fp16):
# relative MSE vs bits/element of the high-precision-share sweep r = 0..1000
# for token (v1) and tile (v2) allocation -- the two curves compare the
# allocations at equal bits/element -- and the outlier gate tau = 0, 2, inf
# at r = 800 for each allocation.
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_ablation." . fmt
set multiplot layout nrows, ncols title "tahq: gate and allocation ablations (G=64, 4/3)"
set logscale y
set format y "10^{%L}"
set xlabel "bits / element"
set ylabel "relative MSE"
set grid
set key top right font ",8"
ratio(d, a) = ok(d) && strcol(c_set) eq "ratio" && strcol(c_alloc) eq a
abl(d, a, t) = ok(d) && strcol(c_set) eq "ablation" && strcol(c_alloc) eq a && \
               strcol(c_tau) eq t && strcol(c_round) eq "nearest" && strcol(c_meta) eq "fp16"
do for [i = 1:nd] {
  d = word(dists, i)
  set title d
  plot csv every ::1 using (ratio(d, "token") ? column(c_bpe) : NaN):(column(c_relmse)) \
         with linespoints pt 7 ps 0.5 lw 1.5 title "token alloc, r = 0..1000", \
       csv every ::1 using (ratio(d, "tile") ? column(c_bpe) : NaN):(column(c_relmse)) \
         with linespoints pt 5 ps 0.5 lw 1.5 title "tile alloc, r = 0..1000", \
       for [t in "0 2 inf"] csv every ::1 using \
         (abl(d, "token", t) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 9 ps 1.6 title "token r=800 tau=" . t, \
       for [t in "0 2 inf"] csv every ::1 using \
         (abl(d, "tile", t) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 11 ps 1.6 title "tile r=800 tau=" . t, \
       for [t in "0 2 inf"] csv every ::1 using \
         (abl(d, "none", t) ? column(c_bpe) : NaN):(column(c_relmse)) \
         with points pt 13 ps 1.2 title "no alloc tau=" . t
}
unset multiplot
