# SPDX-License-Identifier: MIT
# Paired differences of validation loss to fp32 at the last step of a
# scripts/train_paired.sh sweep (plots/train_paired.py writes paired.dat):
# per method the mean difference (point), its 95% interval (thin bar) and the
# 90% interval that the two one-sided tests use (thick bar), with the
# equivalence margin +-margin as dashed lines: TOST shows equivalence at 5%
# when the thick bar lies between them. Two panels with their own axes:
# paired.dat's block 0 (the 4-bit methods) and block 1 (3/2 bits, an order
# of magnitude further from fp32).
# expects dat, out, margin, title_text
set terminal pngcairo size 1100,520 enhanced font 'Sans,10'
set output out
load 'plots/style.gp'
set bars small
set multiplot layout 1,2 title title_text noenhanced
do for [pn = 0:1] {
    stats dat index pn using 1 nooutput
    set xrange [-0.6:STATS_max + 0.6]
    set title (pn == 0 ? '4 bits' : '3/2 bits') noenhanced
    set ylabel (pn == 0 ? 'validation loss minus fp32, same seed (nats/byte)' : '')
    unset arrow
    set arrow from graph 0, first margin to graph 1, first margin nohead lc rgb ref_red dt 2
    set arrow from graph 0, first -margin to graph 1, first -margin nohead lc rgb ref_red dt 2
    set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb ref_black dt 3
    if (pn == 0) { set key inside bottom right opaque box } else { unset key }
    set yrange [-0.02:*]
    plot dat index pn using 1:6:(0):($7-$6) with vectors nohead lc rgb '#E69F00' dt solid lw 9 title '90% interval (TOST at 5%)', \
         dat index pn using 1:3:4:5:xticlabels(2) with yerrorbars lc rgb '#0072B2' dt solid lw 1.4 pt 7 ps 1 title 'mean paired difference, 95% interval', \
         NaN with lines lc rgb ref_red dt 2 title sprintf('equivalence margin ±%g', margin)
}
unset multiplot
