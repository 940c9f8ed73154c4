# SPDX-License-Identifier: MIT
# shared terminal setup for the tahq-sim plots, then the shared style
# (style.gp); expects plotdir, fmt, outdir, name
if (fmt eq 'png') { set terminal pngcairo size 960,640 enhanced font 'Sans,10' } else { set terminal svg size 960,640 enhanced font 'Sans,10' }
set output sprintf('%s/%s.%s', outdir, name, fmt)
set datafile separator ','
load plotdir.'/style.gp'
set fit quiet
set fit logfile '/dev/null'
