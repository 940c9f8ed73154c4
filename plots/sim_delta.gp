# SPDX-License-Identifier: MIT
# relative bias 1 - delta = |E g_hat - grad f|^2 / |grad f|^2 per bit budget
# (delta.csv): colour and point type give the codec family (TAH token
# allocation with round to nearest, TAH with stochastic rounding, plain
# per-tile quantization), the dash type the distance to the optimum
# (alpha = 1 solid, 0.1 dashed, 0.01 dotted).
name = 'sim_delta'
load plotdir.'/sim_common.gp'
set title "tahq-sim delta: relative bias of the compressed gradient at w = (1 - alpha) w*\n(assumption |E g - grad f|^2 <= (1 - delta)|grad f|^2; delta = 0.9 means 1 - delta = 0.1)"
set xlabel 'forward bits per element (whole message)'
set ylabel '1 - delta'
set logscale y
set format y '10^{%L}'
fam(a, pat) = sprintf("< awk -F, -v a='%s' -v p='%s' '$4 == a && $1 ~ p' %s | sort -t, -k2 -g", a, pat, csv)
alphas = '1 0.1 0.01'
pats = '^tah[0-9]/[0-9][+]bwd-none$ ^tah[0-9]/[0-9]-sr[+]bwd-none$ ^plain[0-9][+]bwd-none$'
famname(i) = word("TAH-nearest TAH-stochastic plain-per-tile", i)
nfam = int(system(sprintf("awk -F, 'NR > 1 && ($1 ~ /^tah[0-9]\\/[0-9](-sr)?[+]bwd-none$/ || $1 ~ /^plain[0-9][+]bwd-none$/)' %s | wc -l", csv)))
if (nfam == 0) {
  # a table without the bit-width families (tahq-sim delta --methods ...):
  # each method's points, one marker per alpha
  set title "tahq-sim delta: relative bias of the compressed gradient at w = (1 - alpha) w*\n(per method; marker: alpha = 1 circle, 0.1 square, 0.01 triangle)"
  meths = system(sprintf("awk -F, 'NR > 1 && !s[$1]++ { printf \"%%s \", $1 }' %s", csv))
  ptk(k) = word("7 5 9", k) + 0
  sel(m, a) = sprintf("< awk -F, -v m='%s' -v a='%s' '$1 == m && $4 == a' %s", m, a, csv)
  plot for [i=1:words(meths)] for [k=1:3] sel(word(meths,i), word(alphas,k)) using 2:6 with points \
         lt i pt ptk(k) ps 1.4 title (k == 1 ? word(meths,i) : ''), \
       0.1 with lines lc rgb ref_black dt (6, 3) lw 1.5 title '1 - delta = 0.1 (delta = 0.9)', \
       1 with lines lc rgb ref_red dt (2, 2) lw 1.5 title '1 - delta = 1 (delta = 0)'
  exit
}
plot for [f=1:3] for [k=1:3] fam(word(alphas,k), word(pats,f)) using 2:6 with linespoints \
       lt f dt k lw 1.8 title sprintf('%s, alpha=%s', famname(f), word(alphas,k)), \
     0.1 with lines lc rgb ref_black dt (6, 3) lw 1.5 title '1 - delta = 0.1 (delta = 0.9)', \
     1 with lines lc rgb ref_red dt (2, 2) lw 1.5 title '1 - delta = 1 (delta = 0)'
