# SPDX-License-Identifier: MIT
# loss curves per method on the LLM-like residual-MLP pipeline (train_eval.csv):
# one colour and dash type per method (style.gp), the y axis labelled at
# 1, 2 and 5 times each power of ten when it spans few decades; each
# curve is labelled at its end
name = 'sim_loss'
load plotdir.'/sim_common.gp'
set title 'tahq-sim train: full-data loss (no compression at evaluation) vs step'
set xlabel 'SGD step'
set ylabel 'loss (1/2 mean squared error)'
stats csv every ::1 using 3 nooutput
lo_ = STATS_min; hi_ = STATS_max
set logscale y
@log_ytics
nm = words(methods)
# each curve's name at its last step, pushed apart (a factor 1.06 at least)
# where the curves end close together
ends = sprintf("< awk -F, 'NR > 1 { s[$1] = $2; l[$1] = $3 } END { for (m in l) print l[m] \",\" m \",\" s[m] }' %s | sort -t, -k1 -g | awk -F, '{ y = $1; if (NR > 1 && y < p * 1.06) y = p * 1.06; p = y; print $3 \",\" y \",\" $2 }'", csv)
set offsets graph 0, graph 0.14, graph 0.05, graph 0.05
plot for [i=1:nm] sprintf("< awk -F, -v m='%s' '$1 == m' %s", word(methods,i), csv) using 2:3 with lines lt i lw 2 title word(methods,i), \
     ends using 1:2:3 with labels left offset char 0.6, 0 font ',8' notitle
