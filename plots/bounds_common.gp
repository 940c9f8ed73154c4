# Shared settings of the bounds_*.gp scripts (loaded by each).
# Variables set by plots/bounds.sh with -e: plotdir, csv, front, outdir, dists, fmt.
# Columns of the per-point CSV written by `tahq bounds` (header in its first line):
c_set = 2; c_dist = 3; c_G = 4; c_hi = 5; c_lo = 6; c_r = 7; c_alloc = 8; c_tau = 9
c_round = 10; c_meta = 11; c_status = 12; c_bpe = 19; c_flagged = 24; c_relmse = 25
c_maxratio = 28; c_relmse_bound = 32; c_meanratio = 33; c_front = 34
if (!exists("csv")) csv = "build/bounds/bounds.csv"
if (!exists("front")) front = "build/bounds/bounds_front.csv"
if (!exists("outdir")) outdir = "build/bounds"
if (!exists("dists")) dists = "gauss laplace student-t llm"
if (!exists("fmt")) fmt = "png"
set datafile separator ","
nd = words(dists)
ncols = (nd > 1) ? 2 : 1
nrows = (nd + ncols - 1) / ncols
W = 560 * ncols; H = 420 * nrows
if (fmt eq "svg") { set terminal svg size W, H dynamic font "Sans,11" background "white" }
else { set terminal pngcairo size W, H font "Sans,10" }
ok(d) = strcol(c_dist) eq d && strcol(c_status) eq "ok"
paper(d) = ok(d) && column(c_G) == 64 && column(c_hi) == 4 && column(c_lo) == 3 && \
           column(c_r) == 800 && strcol(c_alloc) eq "token" && strcol(c_tau) eq "2" && \
           strcol(c_round) eq "nearest" && strcol(c_meta) eq "fp16"
