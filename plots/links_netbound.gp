# SPDX-License-Identifier: MIT
# plots/links_netbound.gp - speed-ups measured where the link is the
# bottleneck, against the paper-equivalent link rate (plots/links.py
# netbound maps each measured rate onto the paper's setting by equal
# transfer/compute ratio). Set by plots/links_netbound.sh: plotdir, pts
# (netbound.csv), cur (netbound_curves.csv), out (the .png).
set terminal pngcairo size 1400,560 font "Helvetica,11"
load plotdir . "/style.gp"
set datafile separator ","
set output out
# rows of netbound.csv: config (col 1), method (8), phase (9)
selp(cfg, m, ph) = sprintf("< awk -F, 'NR > 1 && $1 == \"%s\" && $8 == \"%s\" && $9 == \"%s\"' %s", cfg, m, ph, pts)
# rows of netbound_curves.csv: config (1), send (2), method (3)
selc(cfg, send, m) = sprintf("< awk -F, 'NR > 1 && $1 == \"%s\" && $2 ~ /%s/ && $3 == \"%s\"' %s", cfg, send, m, cur)
set multiplot layout 1,2 title "tahq-train-mpi over shaped links, network-bound: points measured (median; bars: min..max of the ratio over repeats), coloured lines: the event model\ncalibrated on the same runs (best-fitting sends), black/grey: the paper's setting projected (GPT2-XL, K=8, M=32, 40 TFLOP/s assumed)"
set logscale x
set xrange [50:200000]
set xlabel "paper-equivalent link rate (Mbit/s): equal fp32 transfer/compute ratio"
set ylabel "TAH step speed-up over fp32 (steady state)"
set key inside top right box opaque font ",9"
set yrange [0:*]
set arrow 1 from graph 0, first 4.3 to graph 1, first 4.3 nohead lc rgb ref_red dt 2
set label 1 "4.3x (paper)" at graph 0.02, first 4.45 tc rgb ref_red
plot selc("k2-untied", ".", "tah") using 5:6 with lines lt 1 title "model, K=2 untied", \
     selp("k2-untied", "tah", "steady") using 6:14:15:16 with yerrorbars lt 1 title "TAH, K=2, untied head", \
     selp("k2-untied", "tah-gain", "steady") using ($6 * 1.08):14:15:16 with yerrorbars lt 3 title "TAH gain, K=2, untied", \
     selc("k2-tied", ".", "tah") using 5:6 with lines lt 2 title "model, K=2 tied", \
     selp("k2-tied", "tah", "steady") using 6:14:15:16 with yerrorbars lt 2 title "TAH, K=2, tied (exchange in fp32)", \
     selc("k4-untied", ".", "tah") using 5:6 with lines lt 4 title "model, K=4 untied", \
     selp("k4-untied", "tah", "steady") using 6:14:15:16 with yerrorbars lt 4 title "TAH, K=4, untied", \
     selc("paper-projection", "overlap", "tah") using 5:6 with lines lt 7 lw 2 title "paper setting, overlapped sends", \
     selc("paper-projection", "blocking", "tah") using 5:6 with lines lt 8 lw 2 title "paper setting, blocking sends"
unset arrow 1
unset label 1
set ylabel "AQ-SGD step / TAH step"
set yrange [0:*]
set arrow 2 from graph 0, first 1.33 to graph 1, first 1.33 nohead lc rgb ref_red dt 2
set label 2 "1.33x (paper)" at graph 0.02, first 1.40 tc rgb ref_red
set arrow 3 from graph 0, first 1 to graph 1, first 1 nohead lc rgb ref_black dt 3
plot selc("k2-untied", ".", "tah") using 5:7 with lines lt 1 title "model K=2, AQ-SGD steady", \
     selc("k2-untied", ".", "tah") using 5:8 with lines lt 2 title "model K=2, AQ-SGD 1st epoch", \
     selp("k2-untied", "tah", "steady") using 6:17 with points lt 1 ps 1.2 title "K=2: AQ-SGD steady / TAH", \
     selp("k2-untied", "tah", "steady") using 6:18 with points lt 2 ps 1.2 title "K=2: AQ-SGD 1st epoch / TAH", \
     selc("k4-untied", ".", "tah") using 5:7 with lines lt 4 title "model K=4, AQ-SGD steady", \
     selc("k4-untied", ".", "tah") using 5:8 with lines lt 5 title "model K=4, AQ-SGD 1st epoch", \
     selp("k4-untied", "tah", "steady") using 6:17 with points lt 4 ps 1.2 title "K=4: AQ-SGD steady / TAH", \
     selp("k4-untied", "tah", "steady") using 6:18 with points lt 5 ps 1.2 title "K=4: AQ-SGD 1st epoch / TAH", \
     selc("paper-projection", "overlap", "tah") using 5:7 with lines lt 7 lw 2 title "paper setting: steady", \
     selc("paper-projection", "overlap", "tah") using 5:8 with lines lt 8 lw 2 title "paper setting: 1st epoch"
unset multiplot
