# average over t < T of |grad f(w_t)|^2 vs T (log-log), fitted slopes, 1/sqrt(T) reference
name = 'sim_converge'
load plotdir.'/sim_common.gp'
set title 'tahq-sim converge: smooth problem, eta = c/sqrt(T); points: mean over seeds'
set xlabel 'horizon T'
set ylabel '(1/T) sum_{t<T} |grad f(w_t)|^2'
set logscale xy
set format x '2^{%L}'
set logscale x 2
nm = words(methods)
# slope b and ln-intercept a of each method's fit (quantity avg)
array B[nm]
array A[nm]
do for [i=1:nm] {
  B[i] = real(system(sprintf("awk -F, -v m='%s' '$1 == m && $2 == \"avg\" {print $3}' %s", word(methods,i), fit)))
  A[i] = real(system(sprintf("awk -F, -v m='%s' '$1 == m && $2 == \"avg\" {print $8}' %s", word(methods,i), fit)))
}
y0 = real(system(sprintf("awk -F, 'NR == 2 {print $4}' %s", csv)))
t0 = real(system(sprintf("awk -F, 'NR == 2 {print $2}' %s", csv)))
set samples 200
plot for [i=1:nm] sprintf("< awk -F, -v m='%s' '$1 == m' %s", word(methods,i), csv) using 2:4 with points pt 7 lc i title word(methods,i), \
     for [i=1:nm] [256:65536] exp(A[i]) * x**B[i] with lines lc i dt 1 title sprintf('%s fit: slope %.3f', word(methods,i), B[i]), \
     [256:65536] y0 * 1.5 * (x / t0)**(-0.5) with lines lc 'black' dt 2 lw 2 title '1/sqrt(T) reference'
