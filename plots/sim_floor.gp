# SPDX-License-Identifier: MIT
# the bias floor b = |grad f(w_b)|^2 (full-batch descent with the codec) vs
# TAH's high bit width, nearest and stochastic rounding (floor.csv, study bits)
name = 'sim_floor'
load plotdir.'/sim_common.gp'
set title "tahq-sim floor: b = |grad f(w_b)|^2 by full-batch descent, TAH hi/lo = B/(B-1) bits\n(smooth problem, 64 sequences, K = 4; bars: range over step size and averaging)"
set xlabel 'high bits B (low bits B - 1)'
set ylabel 'floor b'
set logscale y
set format y '10^{%L}'
set xrange [1.5:8.5]
sel(r) = sprintf("< awk -F, -v r='%s' '$1 == \"bits\" && $7 == r' %s", r, csv)
plot sel('nearest') using 5:8:9:10 with yerrorlines lw 2 pt 7 title 'round to nearest', \
     sel('stochastic') using 5:8:9:10 with yerrorlines lw 2 dt 2 pt 6 title 'stochastic rounding'
