# SPDX-License-Identifier: MIT
# Shared settings of the bounds_*.gp scripts (loaded by each), then the
# shared style (style.gp).
# Variables set by plots/bounds.sh with -e: plotdir, csv, front, outdir, dists,
# fmt, and input_name (the file name of `tahq bounds --input`, shown for the
# distribution "input").
# Columns of the per-point CSV written by `tahq bounds` (header in its first line):
c_set = 2; c_dist = 3; c_G = 4; c_hi = 5; c_lo = 6; c_r = 7; c_alloc = 8; c_tau = 9
c_round = 10; c_meta = 11; c_status = 12; c_bpe = 19; c_flagged = 24; c_relmse = 25
c_maxratio = 28; c_relmse_bound = 32; c_meanratio = 33; c_front = 34
if (!exists("csv")) csv = "build/bounds/bounds.csv"
if (!exists("front")) front = "build/bounds/bounds_front.csv"
if (!exists("outdir")) outdir = "build/bounds"
if (!exists("dists")) dists = "gauss laplace student-t llm"
if (!exists("fmt")) fmt = "png"
if (!exists("input_name")) input_name = "input"
# the distributions with at least one point of status ok (any set), and
# those with ablation points (G = 64): computed by bounds.sh
if (!exists("ok_dists")) ok_dists = dists
if (!exists("abl_dists")) abl_dists = dists
set datafile separator ","
nd = words(dists)
ncols = (nd > 1) ? 2 : 1
nrows = (nd + ncols - 1) / ncols
W = 760 * ncols; H = 440 * nrows
if (fmt eq "svg") { set terminal svg size W, H dynamic font "Sans,11" background "white" }
else { set terminal pngcairo size W, H font "Sans,10" }
load plotdir . "/style.gp"
# the name shown for a distribution: the input file's name for "input"
dname(d) = (d eq "input") ? input_name : d
ok(d) = strcol(c_dist) eq d && strcol(c_status) eq "ok"
paper(d) = ok(d) && column(c_G) == 64 && column(c_hi) == 4 && column(c_lo) == 3 && \
           column(c_r) == 800 && strcol(c_alloc) eq "token" && strcol(c_tau) eq "2" && \
           strcol(c_round) eq "nearest" && strcol(c_meta) eq "fp16"
# has(list, d): d is a word of list
has(list, d) = strstrt(" " . list . " ", " " . d . " ") > 0
# A panel with a message instead of data (gnuplot cannot plot an empty
# selection: "x range is invalid"): call as
#   if (!has(ok_dists, d)) { @empty_panel } else { ... }
empty_panel = "unset logscale; set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics; " . \
              "set label 99 empty_msg at graph 0.5, graph 0.5 center noenhanced; " . \
              "plot NaN notitle; unset label 99; set xtics; set ytics; " . \
              "set autoscale x; set autoscale y; set autoscale fix"
