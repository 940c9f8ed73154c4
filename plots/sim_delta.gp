# relative bias 1 - delta = |E g_hat - grad f|^2 / |grad f|^2 per bit budget (delta.csv)
name = 'sim_delta'
load plotdir.'/sim_common.gp'
set title "tahq-sim delta: relative bias of the compressed gradient, w = (1 - alpha) w*\n(assumption |E g - grad f|^2 <= (1 - delta)|grad f|^2; delta = 0.9 means 0.1)"
set xlabel 'forward bits per element (whole message)'
set ylabel '1 - delta'
set logscale y
set format y '10^{%L}'
set xrange [0:17]
fam(a, pat) = sprintf("< awk -F, -v a='%s' -v p='%s' '$4 == a && $1 ~ p' %s | sort -t, -k2 -g", a, pat, csv)
plot for [a in '1 0.1 0.01'] fam(a, '^tah[0-9]/[0-9][+]bwd-none$') using 2:6 with linespoints lw 2 pt 7 title sprintf('TAH token, nearest, alpha=%s', a), \
     for [a in '1 0.1 0.01'] fam(a, '^tah[0-9]/[0-9]-sr[+]bwd-none$') using 2:6 with linespoints dt 2 pt 6 title sprintf('TAH token, stochastic, alpha=%s', a), \
     for [a in '1 0.1 0.01'] fam(a, '^plain[0-9][+]bwd-none$') using 2:6 with linespoints dt 3 pt 5 title sprintf('plain per-tile, alpha=%s', a), \
     0.1 with lines lc 'black' dt 2 title 'delta = 0.9', 1 with lines lc 'red' dt 2 title 'delta = 0'
