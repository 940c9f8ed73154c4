# SPDX-License-Identifier: MIT
# plots/style.gp - the one style of every tahq plot, loaded by
# bounds_common.gp and sim_common.gp (so by every plots/*.gp script) after
# they set the terminal.
#
# Lines are told apart by dash type and point type as well as colour, so a
# figure reads in grey scale and for colour-blind readers: linetype i has
# colour i of the Okabe-Ito palette (9 and 10: two of Tol's), dash type
# i and point type i. A script
# that plots with `lt i` (or lets gnuplot cycle) gets all three; `lc i`
# alone sets only the colour.
set linetype 1 lc rgb "#0072B2" lw 1.6 dt 1 pt 7 ps 0.8                    # blue, solid, filled circle
set linetype 2 lc rgb "#D55E00" lw 1.6 dt 2 pt 5 ps 0.8                    # vermillion, dashed, filled square
set linetype 3 lc rgb "#009E73" lw 1.6 dt 3 pt 9 ps 0.9                    # green, dotted, filled triangle
set linetype 4 lc rgb "#CC79A7" lw 1.6 dt 4 pt 11 ps 0.9                   # purple, dash-dot, filled down-triangle
set linetype 5 lc rgb "#E69F00" lw 1.6 dt 5 pt 13 ps 0.9                   # orange, dash-dot-dot, filled diamond
set linetype 6 lc rgb "#56B4E9" lw 1.6 dt (8, 3, 2, 3) pt 6 ps 0.8         # sky blue, open circle
set linetype 7 lc rgb "#000000" lw 1.6 dt (5, 3) pt 4 ps 0.8               # black, open square
set linetype 8 lc rgb "#7F7F7F" lw 1.6 dt (12, 4) pt 8 ps 0.9              # grey, open triangle
set linetype 9 lc rgb "#882255" lw 1.6 dt (10, 3, 2, 3, 2, 3) pt 12 ps 0.9 # wine, open diamond
set linetype 10 lc rgb "#44AA99" lw 1.6 dt (4, 4) pt 10 ps 0.9             # teal, open down-triangle
set linetype cycle 10
# Neutral elements: reference lines and the cloud of all points.
ref_black = "#000000"
ref_red = "#B2182B"
cloud_grey = "#C8C8C8"
set grid lc rgb "#D0D0D0" lw 0.6 dt 3
set border lw 1
set tics out nomirror
set mxtics default
# Legends outside the data, top right, without the sample lines crowding.
set key outside right top Left reverse samplen 3 spacing 1.1
# Axis ranges fitted to the data: autoscale stops at the extreme points
# (no rounding out to the next tic), with a small margin around them.
set autoscale fix
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
# Labels on a log y axis that spans few decades: gnuplot labels only the
# powers of ten, so a panel within one decade shows one number or none. Set
# lo_ and hi_ to the data's range, then @log_ytics: it labels 2..9 times each
# power of ten within one decade, 2 and 5 times it within three, and leaves
# wider axes to gnuplot.
log_ytics = "set ytics autofreq; set format y '%g'; " . \
  "do for [k_ = floor(log10(lo_)) : ceil(log10(hi_))] { " . \
  "do for [m_ in (hi_ / lo_ < 10 ? '2 3 4 5 6 7 8 9' : hi_ / lo_ < 1000 ? '2 5' : '')] { " . \
  "set ytics add (sprintf('%g', (m_ + 0) * 10.0 ** k_) (m_ + 0) * 10.0 ** k_) } }"
