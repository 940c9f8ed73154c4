# SPDX-License-Identifier: MIT
# tahq alloc-study: error against bits/element per allocation policy, one
# panel per input; top figure relative MSE (log), bottom figure the gap to
# the oracle at the same budget. Every point is a row of the CSV (the
# budgets r = 0..1000 of SPEC token allocation; each policy at the fewest low
# units that fit the budget, so its bits/element is at most the SPEC token
# message's).
# Variables set by plots/alloc_study.sh with -e: plotdir, csv, outdir,
# inputs (space-separated names), fmt, what ("relmse" or "gap").
if (!exists("plotdir")) plotdir = "plots"
if (!exists("csv")) csv = "build/alloc_study/alloc_study.csv"
if (!exists("outdir")) outdir = "build/alloc_study"
if (!exists("inputs")) inputs = "gauss laplace student-t llm"
if (!exists("fmt")) fmt = "png"
if (!exists("what")) what = "relmse"
c_input = 1; c_r = 10; c_pol = 12; c_unit = 14; c_scope = 15; c_bpe = 20; c_relmse = 21
c_gap = 25
set datafile separator ","
ni = words(inputs)
ncols = (ni > 2) ? 3 : ni
# one more cell for the legend
nrows = (ni + ncols) / ncols
W = 560 * ncols; H = 380 * nrows + 40
if (fmt eq "svg") { set terminal svg size W, H dynamic font "Sans,11" background "white" }
else { set terminal pngcairo size W, H font "Sans,10" }
load plotdir . "/style.gp"
# the policies drawn: policy, unit, scope, legend
np = 9
pol(j) = word("entropy entropy inv-entropy random range bound bound gain oracle", j)
unit(j) = word("token tile tile tile tile tile token tile tile", j)
scope(j) = word("sequence token sequence sequence sequence sequence sequence sequence micro-batch", j)
leg(j) = word("SPEC_token_(entropy,_per_sequence) SPEC_tile_(entropy,_per_token) " . \
              "inverse_entropy,_tiles_per_sequence random_tiles_per_sequence " . \
              "range,_tiles_per_sequence bound,_tiles_per_sequence bound,_tokens_per_sequence " . \
              "gain,_tiles_per_sequence oracle", j)
legend(j) = system("echo '" . leg(j) . "' | tr _ ' '")
# the rows of input d and policy j, in budget order (awk: a filter with NaN
# rows in between would break the lines)
rows(d, j) = sprintf("< awk -F, -v d='%s' -v p='%s' -v u='%s' -v s='%s' " . \
  "'NR > 1 && $%d == d && $%d == p && (p == \"oracle\" || ($%d == u && $%d == s)) && $%d != \"\"' '%s'", \
  d, pol(j), unit(j), scope(j), c_input, c_pol, c_unit, c_scope, c_bpe, csv)
ycol = (what eq "gap") ? c_gap : c_relmse
yscale = (what eq "gap") ? 100.0 : 1.0
set output outdir . "/alloc_study_" . what . "." . fmt
set multiplot layout nrows, ncols title (what eq "gap" ? \
  "tahq alloc-study: gap to the oracle at equal bytes (whole message, map included)" : \
  "tahq alloc-study: relative MSE against bits/element per allocation policy (equal bytes)")
unset key
set xlabel "bits / element"
do for [i = 1:ni] {
  d = word(inputs, i)
  set title d noenhanced
  if (what eq "gap") {
    unset logscale y
    set ytics autofreq
    set format y "%g"
    set ylabel "relative MSE / oracle - 1 (%)"
  } else {
    unset logscale y
    stats csv every ::1 using (strcol(c_input) eq d && column(c_bpe) > 0 ? column(c_relmse) : NaN) nooutput
    lo_ = STATS_min; hi_ = STATS_max
    set logscale y
    @log_ytics
    set format y "%.2g"
    set ylabel "relative MSE"
  }
  plot for [j = 1:np] rows(d, j) using (column(c_bpe)):(column(ycol) * yscale) \
    with linespoints lt j ps 0.6 title legend(j)
}
# the legend in a cell of its own
set key inside center center Left reverse samplen 4 spacing 1.3 font ",10"
unset border; unset tics; unset xlabel; unset ylabel; unset title; unset logscale y; unset grid
set xrange [0:1]; set yrange [0:1]
plot for [j = 1:np] NaN with linespoints lt j title legend(j)
unset multiplot
