# SPDX-License-Identifier: MIT
# mean over t < T of |grad f(w_t)|^2 vs T (log-log): seed means with 95% CIs,
# the fitted model a T^-1/2 + a2/T + a3 T^-3/2 + b (a T^-beta + a2/T + b
# where the rate is a different one), the fitted floor b (dashed, where the verdict finds one), and
# a T^-1/2 reference. Inputs: csv = converge_summary.csv, fit =
# converge_model.csv, verdict = converge_verdict.csv, methods.
name = 'sim_converge'
load plotdir.'/sim_common.gp'
set title "tahq-sim converge: smooth problem; points: seed mean and 95% CI; lines: fitted model;\nthin flat lines: fitted floor b; black: T^{-1/2} reference"
set xlabel 'horizon T (steps)'
set ylabel '(1/T) sum_{t<T} |grad f(w_t)|^2'
set logscale xy
set logscale x 2
set format x '2^{%L}'
set format y '%g'
set mytics 10
# labels at 2 and 5 times each power of ten too (the data span one to two
# decades, where gnuplot alone labels only 1 and 10)
set ytics add ('0.02' 0.02, '0.05' 0.05, '0.2' 0.2, '0.5' 0.5, '2' 2, '5' 5, '20' 20, '50' 50)
set ytics format '%g'
nm = words(methods)
array A[nm]
array A2[nm]
array Bf[nm]
array Be[nm]
array A3[nm]
array Fl[nm]
q(cmd) = real(system(cmd))
do for [i=1:nm] {
  m = word(methods, i)
  rate = system(sprintf("awk -F, -v m='%s' '$1 == m {print $3}' %s", m, verdict))
  model = (rate eq 'different') ? 'a*T^-beta+a2/T+b' : 'a*T^-1/2+a2/T+a3*T^-3/2+b'
  sel = sprintf("awk -F, -v m='%s' -v k='%s' '$1 == m && $2 == k' %s | head -n 1", m, model, fit)
  Be[i] = q(sel . " | cut -d, -f5")
  A[i] = q(sel . " | cut -d, -f8")
  A2[i] = q(sel . " | cut -d, -f11")
  A3[i] = q(sel . " | cut -d, -f14")
  Bf[i] = q(sel . " | cut -d, -f17")
  Fl[i] = (system(sprintf("awk -F, -v m='%s' '$1 == m {print $7}' %s", m, verdict)) eq 'floor') ? 1 : 0
}
tmin = q(sprintf("awk -F, 'NR > 1 {print $2}' %s | sort -g | head -n 1", csv))
tmax = q(sprintf("awk -F, 'NR > 1 {print $2}' %s | sort -g | tail -n 1", csv))
y0 = q(sprintf("awk -F, 'NR == 2 {print $4}' %s", csv))
set xrange [tmin / 1.3 : tmax * 1.3]
set samples 200
# each method in its own line type of style.gp (colour, dash and point):
# points with their CIs and the fitted model; the floor thin, in the colour
plot for [i=1:nm] sprintf("< awk -F, -v m='%s' '$1 == m' %s", word(methods,i), csv) using 2:4:11:12 with yerrorbars lt i title word(methods,i) noenhanced, \
     for [i=1:nm] [tmin:tmax] A[i] * x**(-Be[i]) + A2[i] / x + A3[i] * x**(-1.5) + Bf[i] with lines lt i notitle, \
     for [i=1:nm] [tmin:tmax] (Fl[i] ? Bf[i] : 1/0) with lines lt i lw 0.8 notitle, \
     [tmin:tmax] y0 * 1.5 * (x / tmin)**(-0.5) with lines lc 'black' lw 2 title 'T^{-1/2}'
