# modelled GPipe throughput vs link bandwidth (throughput.csv)
name = 'sim_throughput'
load plotdir.'/sim_common.gp'
set title 'tahq-sim throughput model: GPT2-XL-sized micro-batches, K=8, M=32 (solid: codec on GPU, time 0; dashed: C reference on this CPU)'
set xlabel 'link bandwidth (bit/s)'
set ylabel 'tokens / s'
set logscale xy
set xrange [8e7:1.2e10]
plot for [i=1:words(methods)] sprintf("< awk -F, -v m='%s' '$2 == m && $3 == \"free\"' %s | sort -t, -k1 -g", word(methods,i), csv) using 1:7 with linespoints lw 2 pt 7 lc i title word(methods,i), \
     for [i=1:words(methods)] sprintf("< awk -F, -v m='%s' '$2 == m && $3 == \"cpu\"' %s | sort -t, -k1 -g", word(methods,i), csv) using 1:7 with linespoints dt 2 pt 6 lc i notitle
