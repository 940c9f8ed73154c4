# SPDX-License-Identifier: MIT
# The MiniLM fine-tuning sweep figure (plots/bert_sweep.sh): validation
# masked-token loss per method (mean over seeds) with the random-init
# control, the paired difference to fp32, and the tah gate's flagged-tile
# share along training. Variables: dir (the sweep folder), control (its CSV
# or /dev/null), out (PNG path).
set terminal pngcairo size 1500,470 font ",10"
set output out
load plotdir . "/style.gp"
set key inside
set datafile separator ","
set multiplot layout 1,3
set grid
set xlabel "step"
set xrange [5:45]
val = dir."/bert_val.csv"
dif = dir."/bert_val_diff.csv"
m(s, name) = (s eq name) ? 1 : NaN
set title "validation masked-token loss (mean over seeds)"
set ylabel "loss (nats)"
set key center right
set yrange [6:10]
plot val using 2:($3 * m(strcol(1), "fp32_k3")) with linespoints lw 2 title "fp32", \
     val using 2:($3 * m(strcol(1), "tah4-3_k3")) with linespoints lw 2 title "TAH 4/3, tau 2", \
     val using 2:($3 * m(strcol(1), "tah4-3-tauinf_k3")) with linespoints lw 2 title "TAH 4/3, tau inf (no gate)", \
     val using 2:($3 * m(strcol(1), "plain4_k3")) with linespoints lw 2 title "plain 4-bit", \
     control using 1:4 every ::1 with linespoints dt 2 lc rgb "gray40" title "fp32 from random init (seed 1)"
set autoscale y
set title "paired difference to fp32 (same seed): mean, min..max over seeds"
set ylabel "val loss - fp32's (nats)"
set key top right
plot dif using 2:($3 * m(strcol(1), "tah4-3_k3")):($4 * m(strcol(1), "tah4-3_k3")):($5 * m(strcol(1), "tah4-3_k3")) with yerrorlines lw 2 lc 2 title "TAH 4/3, tau 2", \
     dif using 2:($3 * m(strcol(1), "tah4-3-tauinf_k3")):($4 * m(strcol(1), "tah4-3-tauinf_k3")):($5 * m(strcol(1), "tah4-3-tauinf_k3")) with yerrorlines lw 2 lc 3 title "TAH 4/3, tau inf", \
     dif using 2:($3 * m(strcol(1), "plain4_k3")):($4 * m(strcol(1), "plain4_k3")):($5 * m(strcol(1), "plain4_k3")) with yerrorlines lw 2 lc 4 title "plain 4-bit", \
     0 with lines lc rgb "black" notitle
set title "tah gate (tau 2, G 64): flagged tiles along training"
set ylabel "flagged-tile share (%)"
set yrange [0:*]
set xrange [-2:42]
set key bottom right
fl = dir."/bert_flags.csv"
r(s, pre) = (strstrt(s, pre) == 1) ? 1 : NaN
plot fl using 2:(100 * $5 * r(strcol(1), "fp32_k3_s") * ($3 == 0 ? 1 : NaN)) with points pt 7 lc 1 title "fp32 runs, boundary 0", \
     fl using 2:(100 * $5 * r(strcol(1), "fp32_k3_s") * ($3 == 1 ? 1 : NaN)) with points pt 5 lc 2 title "fp32 runs, boundary 1", \
     fl using 2:(100 * $5 * r(strcol(1), "tah4-3_k3_s") * ($3 == 0 ? 1 : NaN)) with points pt 6 lc 1 title "TAH 4/3 runs, boundary 0", \
     fl using 2:(100 * $5 * r(strcol(1), "tah4-3_k3_s") * ($3 == 1 ? 1 : NaN)) with points pt 4 lc 2 title "TAH 4/3 runs, boundary 1"
unset multiplot
