# SPDX-License-Identifier: MIT
# Ablations at the paper operating point (G=64, 4/3, nearest, fp16):
# relative MSE vs bits/element of the high-precision-share sweep r = 0..1000
# for token (v1) and tile (v2) allocation -- the two curves compare the
# allocations at equal bits/element -- and the outlier gate tau = 0, 2, inf
# at r = 800 for each allocation. Colour and point fill give the allocation
# (token: blue, filled; tile: vermillion, open; none: green crosses), the
# point shape the gate (token and tile: tau = 0 triangle, 2 circle, inf
# square; none: 0 x, 2 +, inf *).
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_ablation." . fmt
set multiplot layout nrows, ncols title "tahq bounds: gate and allocation ablations (G=64, 4/3)"
set key font ",9"
ratio(d, a) = ok(d) && strcol(c_set) eq "ratio" && strcol(c_alloc) eq a
abl(d, a, t) = ok(d) && strcol(c_set) eq "ablation" && strcol(c_alloc) eq a && \
               strcol(c_tau) eq t && strcol(c_round) eq "nearest" && strcol(c_meta) eq "fp16"
taus = "0 2 inf"
pt_token(j) = word("9 7 5", j) + 0
pt_tile(j) = word("8 6 4", j) + 0
pt_none(j) = word("2 1 3", j) + 0
do for [i = 1:nd] {
  d = word(dists, i)
  set title dname(d) noenhanced
  if (!has(abl_dists, d)) {
    empty_msg = sprintf("%s: no ablation point (G = 64 does not divide its channels)", dname(d))
    @empty_panel
  } else {
    unset logscale y
    stats csv every ::1 using ((ratio(d, "token") || ratio(d, "tile") || \
        (ok(d) && strcol(c_set) eq "ablation")) ? column(c_relmse) : NaN) nooutput
    lo_ = STATS_min; hi_ = STATS_max
    set logscale y
    @log_ytics
    set xlabel "bits / element"
    set ylabel "relative MSE"
    plot csv every ::1 using (ratio(d, "token") ? column(c_bpe) : NaN):(column(c_relmse)) \
           with linespoints lt 1 pt 7 ps 0.5 title "token alloc, r = 0..1000", \
         csv every ::1 using (ratio(d, "tile") ? column(c_bpe) : NaN):(column(c_relmse)) \
           with linespoints lt 2 pt 6 ps 0.5 title "tile alloc, r = 0..1000", \
         for [j = 1:3] csv every ::1 using \
           (abl(d, "token", word(taus, j)) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points lc rgb "#0072B2" pt pt_token(j) ps 1.8 title "token r=800 tau=" . word(taus, j), \
         for [j = 1:3] csv every ::1 using \
           (abl(d, "tile", word(taus, j)) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points lc rgb "#D55E00" pt pt_tile(j) ps 1.8 lw 1.5 title "tile r=800 tau=" . word(taus, j), \
         for [j = 1:3] csv every ::1 using \
           (abl(d, "none", word(taus, j)) ? column(c_bpe) : NaN):(column(c_relmse)) \
           with points lc rgb "#009E73" pt pt_none(j) ps 1.6 lw 1.5 title "no alloc tau=" . word(taus, j)
  }
}
unset multiplot
