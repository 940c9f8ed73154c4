# SPDX-License-Identifier: MIT
# modelled GPipe throughput vs link bandwidth (throughput.csv). Top: tokens/s
# per method, solid with the codec on the GPU (time 0), dotted with the C
# reference's measured time on this CPU; each line is labelled at its left
# end (labels pushed apart where the lines overlap). Bottom: the compressed
# methods relative to tah (GPU codec), where the top panel's overlapping
# lines separate.
name = 'sim_throughput'
load plotdir.'/sim_common.gp'
if (fmt eq 'png') { set terminal pngcairo size 960,820 enhanced font 'Sans,10' } else { set terminal svg size 960,820 enhanced font 'Sans,10' }
set output sprintf('%s/%s.%s', outdir, name, fmt)
nm = words(methods)
sel(m, c) = sprintf("< awk -F, -v m='%s' -v c='%s' '$2 == m && $3 == c' %s | sort -t, -k1 -g", m, c, csv)
# direct labels: each method's name at its lowest bandwidth, placed upwards
# from the smallest throughput so that two labels are at least a factor
# 1.22 apart
labels = sprintf("< awk -F, 'NR > 1 && $3 == \"free\" && (!($2 in b) || $1 < b[$2]) { b[$2] = $1; t[$2] = $7 } END { for (m in t) print t[m] \",\" m \",\" b[m] }' %s | sort -t, -k1 -g | awk -F, '{ y = $1; if (NR > 1 && y < p * 1.22) y = p * 1.22; p = y; print $3 \",\" y \",\" $2 }'", csv)
rel(m) = sprintf("< awk -F, -v m='%s' '$3 == \"free\" && $2 == \"tah\" { t[$1] = $7 } $3 == \"free\" && $2 == m { r[$1] = $7 } END { for (b in r) if (b in t) print b \",\" r[b] / t[b] }' %s | sort -t, -k1 -g", m, csv)
compressed(m) = (m ne 'fp32' && m ne 'fp16')
set multiplot layout 2, 1 title 'tahq-sim throughput model: GPT2-XL-sized micro-batches, K=8, M=32'
set lmargin at screen 0.12
set rmargin at screen 0.80
set title 'tokens/s (solid: codec on the GPU, time 0; dotted: C reference on this CPU)'
set xlabel 'link bandwidth (bit/s)'
set ylabel 'tokens / s'
set logscale xy
set format x '10^{%L}'
set format y '%g'
set offsets graph 0.16, graph 0.03, graph 0.05, graph 0.05
stats csv every ::1 using 7 nooutput
lo_ = STATS_min; hi_ = STATS_max
@log_ytics
plot for [i=1:nm] sel(word(methods,i), 'free') using 1:7 with linespoints lt i lw 2 dt 1 title word(methods,i), \
     for [i=1:nm] sel(word(methods,i), 'cpu') using 1:7 with linespoints lt i lw 1 dt 3 notitle, \
     labels using 1:2:3 with labels right offset char -1.2, 0 font ',9' notitle
set title 'compressed methods relative to tah, codec on the GPU (1 = as fast as tah)'
set ylabel 'tokens/s / tokens/s of tah'
unset logscale y
set offsets graph 0.03, graph 0.03, graph 0.1, graph 0.1
array CI[nm]
nc = 0
do for [i=1:nm] { if (compressed(word(methods,i))) { nc = nc + 1; CI[nc] = i } }
plot for [j=1:nc] rel(word(methods,CI[j])) using 1:2 with linespoints lt CI[j] lw 2 title word(methods,CI[j])
unset multiplot
