# loss curves per method on the LLM-like residual-MLP pipeline (train_eval.csv):
# one colour and dash type per method (style.gp), the y axis labelled at
# 1, 2 and 5 times each power of ten when it spans few decades
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
plot for [i=1:nm] sprintf("< awk -F, -v m='%s' '$1 == m' %s", word(methods,i), csv) using 2:3 with lines lt i lw 2 title word(methods,i)
