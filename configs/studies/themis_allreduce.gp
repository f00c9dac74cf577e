# Bandwidth utilisation of the Themis all-reduce study, one panel per topology:
#   gnuplot -c configs/studies/themis_allreduce.gp out/themis/results.csv docs/images/themis_allreduce.png
# (results.csv from `wafersim study configs/studies/themis_allreduce.yaml --out out/themis`).
results = ARG1
set terminal pngcairo size 1500,900 font ",11"
set output ARG2
set datafile separator ","
set datafile columnheaders
set multiplot layout 2,3 title "Themis all-reduce, 1,024 NPUs, 64 chunks: bandwidth utilisation (ideal / measured)"
set xlabel "all-reduce size (GiB)"
set ylabel "bandwidth utilisation"
set yrange [0:1.05]
set xrange [0.05:1]
set grid
set key bottom right
topologies = "2d_switch 3d_switch_hetero 3d_fc_ring_switch 4d_ring_fc_ring_switch 4d_ring_switch_switch_switch"
schedulers = "baseline themis_fifo themis_scf"
pick(t, s) = (strcol("topology") eq t && strcol("scheduler") eq s) ? column("bw_utilization") : NaN
do for [t in topologies] {
  set title t noenhanced
  plot for [s in schedulers] results using (column("size_bytes") / 2.0**30):(pick(t, s)) \
       with linespoints title s noenhanced
}
unset multiplot
