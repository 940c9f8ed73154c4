# SPDX-License-Identifier: MIT
# tahq-train sweep, per method (one line type of style.gp each), the mean
# over seeds as a line and the min-max band over seeds around it
# (plots/train_summary.py writes the CSVs): training loss (a trailing mean
# over 10 steps), validation loss, and the validation loss minus fp32's in
# the same seed (paired; where the curves above overlap, this separates them).
# Without an fp32 run (hasdiff = 0) the third panel is left out.
# expects plotdir, fmt, outdir, val, curves, diff, methods, nseeds, hasdiff
name = 'train_loss'
panels = hasdiff ? 3 : 2
height = 400 * panels
if (fmt eq 'png') { set terminal pngcairo size 960,height enhanced font 'Sans,10' } else { set terminal svg size 960,height enhanced font 'Sans,10' }
set output sprintf('%s/%s.%s', outdir, name, fmt)
set datafile separator ','
load plotdir.'/style.gp'
nm = words(methods)
sel(f, m) = sprintf("< awk -F, -v m='%s' '$1 == m' %s", m, f)
set multiplot layout panels, 1 title sprintf("tahq-train: byte-level transformer on Shakespeare through a pipeline; line: mean over %s seeds, band: min-max over seeds", nseeds) noenhanced
set xlabel 'step'
set style fill transparent solid 0.18 noborder
set ylabel 'training loss (nats/byte)'
set title 'training loss, trailing mean over 10 steps'
plot for [i=1:nm] sel(curves, word(methods,i)) using 2:4:5 with filledcurves lt i notitle, \
     for [i=1:nm] sel(curves, word(methods,i)) using 2:3 with lines lt i title word(methods,i) noenhanced
set ylabel 'validation loss (nats/byte)'
set title 'validation loss (uncompressed forward at evaluation)'
plot for [i=1:nm] sel(val, word(methods,i)) using 2:4:5 with filledcurves lt i notitle, \
     for [i=1:nm] sel(val, word(methods,i)) using 2:3 with linespoints lt i title word(methods,i) noenhanced
if (hasdiff) {
  set ylabel 'validation loss - fp32 (same seed)'
  set title 'validation loss minus fp32 in the same seed (0: as good as fp32)'
  plot for [i=1:nm] sel(diff, word(methods,i)) using 2:4:5 with filledcurves lt i notitle, \
       for [i=1:nm] sel(diff, word(methods,i)) using 2:3 with linespoints lt i title word(methods,i) noenhanced, \
       0 with lines lc 'black' dt 2 notitle
}
unset multiplot
