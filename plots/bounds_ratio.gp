# SPDX-License-Identifier: MIT
# Measured error against the SPEC section 6 bound, every point of the sweep:
# the margin 1 - max |error|/bound (log; a point at or above the bound would
# be a red cross on the bottom edge), mean |error|/bound, and relative MSE
# over the bound's own
# relative MSE (sum bound^2 / sum x^2), by distribution (one colour and
# point type each).
if (!exists("plotdir")) plotdir = "plots"
load plotdir . "/bounds_common.gp"
set output outdir . "/bounds_ratio." . fmt
if (fmt eq "svg") { set terminal svg size 1100, 900 dynamic font "Sans,11" background "white" }
else { set terminal pngcairo size 1100, 900 font "Sans,10" }
set multiplot layout 3, 1 title "tahq bounds: measured error / SPEC bound"
set key font ",9"
# the same plot width in the three panels, whatever their legends
set lmargin at screen 0.08
set rmargin at screen 0.78
nk = words(ok_dists)
set xlabel "bits / element"
# The bound is tight (max |error|/bound is within 1e-5 of 1 at most points),
# so the first panel shows the margin 1 - max |error|/bound on a log axis;
# a point at or above the bound (margin <= 0: a violation, which the tests
# reject) is drawn as a red cross on the bottom edge.
margin(d) = (ok(d) && column(c_maxratio) < 1) ? 1 - column(c_maxratio) : NaN
stats csv every ::1 using ((strcol(c_status) eq "ok" && column(c_maxratio) < 1) ? \
                           1 - column(c_maxratio) : NaN) nooutput
m_lo = STATS_min / 3; m_hi = STATS_max * 3
stats csv every ::1 using ((strcol(c_status) eq "ok") ? column(c_maxratio) : NaN) nooutput
worst = STATS_max
set ylabel "1 - max |error| / bound"
set logscale y
set yrange [m_lo:m_hi]
lo_ = m_lo; hi_ = m_hi
@log_ytics
set title sprintf("margin to the SPEC bound per point (largest max |error|/bound: %.7f)", worst)
plot for [i = 1:nk] csv every ::1 using \
       (ok(word(ok_dists, i)) ? column(c_bpe) : NaN):(margin(word(ok_dists, i))) \
       with points lt i ps 0.5 title dname(word(ok_dists, i)), \
     csv every ::1 using ((strcol(c_status) eq "ok" && column(c_maxratio) >= 1) ? \
       column(c_bpe) : NaN):(m_lo) with points pt 2 ps 2 lw 2 lc rgb ref_red \
       title "at or above the bound"
unset title
unset logscale y
set format y "%g"
set ylabel "mean |error| / bound"
set yrange [*:*]
plot for [i = 1:nk] csv every ::1 using \
       (ok(word(ok_dists, i)) ? column(c_bpe) : NaN):(column(c_meanratio)) \
       with points lt i ps 0.5 title dname(word(ok_dists, i))
set ylabel "relMSE / relMSE of the bound"
stats csv every ::1 using ((strcol(c_status) eq "ok") ? \
                           column(c_relmse) / column(c_relmse_bound) : NaN) nooutput
lo_ = STATS_min; hi_ = STATS_max
set logscale y
set yrange [*:*]
@log_ytics
plot for [i = 1:nk] csv every ::1 using \
       (ok(word(ok_dists, i)) ? column(c_bpe) : NaN):(column(c_relmse) / column(c_relmse_bound)) \
       with points lt i ps 0.5 title dname(word(ok_dists, i))
unset multiplot
