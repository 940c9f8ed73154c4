# loss curves per method on the LLM-like residual-MLP pipeline (train_eval.csv)
name = 'sim_loss'
load plotdir.'/sim_common.gp'
set title 'tahq-sim train: full-data loss (no compression at evaluation) vs step'
set xlabel 'SGD step'
set ylabel 'loss (1/2 mean squared error)'
set logscale y
set format y '10^{%L}'
plot for [m in methods] sprintf("< awk -F, -v m='%s' '$1 == m' %s", m, csv) using 2:3 with lines lw 2 title m
