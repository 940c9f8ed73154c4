# SPDX-License-Identifier: MIT
# plots/links.gp - the slow-link figures (plots/links.sh sets dir, outdir,
# fmt, mode: the column of the best-fitting model, 4 overlap, 5 blocking,
# 6 protocol)
if (fmt eq "svg") { set terminal svg size 1300,520 dynamic font "Helvetica,12" } else { set terminal pngcairo size 1300,520 font "Helvetica,11" }
load plotdir . "/style.gp"
set datafile separator ","
methods = "fp32 fp16 aqsgd tah tah-tile plain4"
pts = dir . "/links_model_points.csv"
cur = dir . "/links_model_curve.csv"
summ = dir . "/summary.csv"
mname = (mode == 6 ? "protocol: blocking above the eager limit" : mode == 5 ? "blocking" : "overlapped")
# the rows of a CSV whose column c1 is v1 and c2 is v2 (a line through
# undefined points would break at every row of the other series)
sel(f, c1, v1, c2, v2) = sprintf("< awk -F, 'NR > 1 && $%d == \"%s\" && $%d == \"%s\"' %s", c1, v1, c2, v2, f)
sel4(f, a, b, m, ph) = sprintf("< awk -F, 'NR > 1 && $1 + 0 == %s && $2 + 0 == %s && $4 == \"%s\" && $5 == \"%s\"' %s", a, b, m, ph, f)

# 1. measured step times and speed-ups over the model's curves
set output outdir . "/links_measured." . fmt
set multiplot layout 1,2 title "tahq-train-mpi, K=2, over shaped links on this machine: measured (points: median, min..max of 3 repeats) and the calibrated model (lines; " . mname . " sends)"
set logscale x
set xlabel "link rate (Mbit/s)"
set ylabel "step time (s)"
set key inside top right
plot for [i=1:words(methods)] sel(cur, 2, word(methods,i), 3, "steady") using 1:(column(mode)) with lines lt i notitle, \
     for [i=1:words(methods)] sel(pts, 2, word(methods,i), 3, "steady") using ($1 * 1.06 ** (i - 3.5)):5:6:7 with yerrorbars lt i title word(methods,i), \
     sel(cur, 2, "aqsgd", 3, "first") using 1:(column(mode)) with lines lt 7 notitle, \
     sel(pts, 2, "aqsgd", 3, "first") using ($1 * 1.06 ** 3.5):5:6:7 with yerrorbars lt 7 title "aqsgd, 1st epoch"
set ylabel "speed-up over fp32 (steady state)"
set key inside top right
plot for [i=1:words(methods)] sel(cur, 2, word(methods,i), 3, "steady") using 1:8 with lines lt i notitle, \
     for [i=1:words(methods)] summ using 1:(strcol(2) eq word(methods,i) ? $17 : 1/0) with points lt i title word(methods,i)
unset multiplot

# 2. AQ-SGD's average step over TAH's vs epochs
set output outdir . "/links_epochs." . fmt
set multiplot layout 1,2 title "AQ-SGD's mean step time over E epochs (the first at full precision) / TAH's step time"
unset logscale x
set xlabel "epochs E"
set ylabel "AQ-SGD / TAH"
set logscale y
set ytics (0.9, 1, 1.1, 1.2, 1.33, 1.5, 2, 2.5, 3, 4)
set format y "%g"
set key inside right center
bws = "1000 500 100"
ep = dir . "/links_epochs.csv"
set title "this machine (calibrated model), K=2"
plot for [i=1:3] sel(ep, 1, "machine", 2, word(bws,i)) using 3:4 with linespoints lt i title word(bws,i) . " Mbit/s", \
     1.33 with lines lt 7 title "1.33"
set title "GPT2-XL projection (K=8, M=32; ASSUMED compute and codec rates)"
plot for [i=1:3] sel(ep, 1, "gpt2xl", 2, word(bws,i)) using 3:4 with linespoints lt i title word(bws,i) . " Mbit/s", \
     1.33 with lines lt 7 title "1.33"
unset multiplot

# 3. the projection's speed-ups over fp32
set output outdir . "/links_projection." . fmt
set multiplot layout 1,2 title "GPT2-XL projection (K=8, M=32, 40 TFLOP/s and GPU codec times ASSUMED, overlapped sends): speed-up over fp32"
set logscale x
unset logscale y
set xlabel "link rate (Mbit/s)"
set ylabel "speed-up over fp32"
unset title
pj = dir . "/links_projection.csv"
set ytics auto
set key outside right center
set title "latency 1 ms, codec 0.25 ms per encode/decode"
plot for [i=1:words(methods)] sel4(pj, "1", "0.25", word(methods,i), "steady") using 3:8 with lines lt i title word(methods,i), \
     sel4(pj, "1", "0.25", "aqsgd", "first") using 3:8 with lines lt 7 title "aqsgd, 1st epoch", \
     4.3 with lines lt 8 title "4.3"
set title "TAH over fp32: latency and codec time"
lats = "0.1 1 10"
plot for [i=1:3] sel4(pj, word(lats,i), "0.25", "tah", "steady") using 3:8 with lines lt i title "lat " . word(lats,i) . " ms", \
     sel4(pj, "1", "1", "tah", "steady") using 3:8 with lines lt 4 title "lat 1 ms, codec 1 ms", \
     sel4(pj, "1", "0", "tah", "steady") using 3:8 with lines lt 5 title "lat 1 ms, codec 0", \
     4.3 with lines lt 8 title "4.3"
unset multiplot
