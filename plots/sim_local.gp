# SPDX-License-Identifier: MIT
# local slope per octave of the mean over t < T of |grad f(w_t)|^2, with
# 95% bootstrap CIs (converge_local.csv): a pure T^-1/2 stays at -0.5, a
# floor pulls it towards 0 as T grows, a T^-1/4 rate sits at -0.25.
name = 'sim_local'
load plotdir.'/sim_common.gp'
set title "tahq-sim converge: local slope d ln E / d ln T per octave, 95% bootstrap CI\n(-0.5: T^{-1/2}; towards 0: a floor; -0.25: a T^{-1/4} rate)"
set xlabel 'octave midpoint sqrt(T_{lo} T_{hi})'
set ylabel 'local slope'
set logscale x 2
set format x '2^{%L}'
set yrange [-0.8:0.05]
plot for [m in methods] sprintf("< awk -F, -v m='%s' '$1 == m' %s", m, csv) using (sqrt($2*$3)):4:5:6 with yerrorlines pt 7 ps 0.6 title m noenhanced, \
     -0.5 with lines lc 'black' dt 2 lw 2 title 'T^{-1/2}', -0.25 with lines lc 'gray' dt 3 title 'T^{-1/4}', 0 with lines lc 'red' dt 3 title 'floor'
