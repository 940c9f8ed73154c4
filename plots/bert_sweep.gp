# The MiniLM fine-tuning sweep figure (plots/bert_sweep.sh): validation
# masked-token loss per method (mean over seeds, with the random-init
# control) and the tah gate's flagged-tile share along training.
# Variables: dir (the sweep folder), control (its CSV or ""), out (PNG path).
set terminal pngcairo size 1200,480 font ",10"
set output out
set datafile separator ","
set multiplot layout 1,2
set title "MiniLM MLM fine-tuning, K = 3: validation masked-token loss"
set xlabel "step"
set ylabel "loss (nats), mean over seeds"
set key top right
set grid
val = dir."/bert_val.csv"
m(s, name) = (s eq name) ? 1 : NaN
plot val using 2:($3 * m(strcol(1), "fp32_k3")) with linespoints lw 2 title "fp32", \
     val using 2:($3 * m(strcol(1), "tah4-3_k3")) with linespoints lw 2 title "TAH 4/3, tau 2", \
     val using 2:($3 * m(strcol(1), "tah4-3-tauinf_k3")) with linespoints lw 2 title "TAH 4/3, tau inf (no gate)", \
     val using 2:($3 * m(strcol(1), "plain4_k3")) with linespoints lw 2 title "plain 4-bit", \
     control using 1:4 every ::1 with linespoints dt 2 lc rgb "gray40" title "fp32, random init (seed 1)"
set title "tah gate (tau 2, G 64): flagged tiles along training"
set ylabel "flagged-tile share (%)"
set yrange [0:*]
fl = dir."/bert_flags.csv"
r(s, pre) = (strstrt(s, pre) == 1) ? 1 : NaN
plot fl using 2:(100 * $5 * r(strcol(1), "fp32_k3_s1") * ($3 == 0 ? 1 : NaN)) with linespoints title "fp32 s1, boundary 0", \
     fl using 2:(100 * $5 * r(strcol(1), "fp32_k3_s1") * ($3 == 1 ? 1 : NaN)) with linespoints title "fp32 s1, boundary 1", \
     fl using 2:(100 * $5 * r(strcol(1), "tah4-3_k3_s1") * ($3 == 0 ? 1 : NaN)) with linespoints dt 2 title "TAH 4/3 s1, boundary 0", \
     fl using 2:(100 * $5 * r(strcol(1), "tah4-3_k3_s1") * ($3 == 1 ? 1 : NaN)) with linespoints dt 2 title "TAH 4/3 s1, boundary 1"
unset multiplot
