#!/usr/bin/env bash
# Latency-load curves of BookSim 2 and wafersim, point for point, on BookSim's own
# runfiles/meshconfig (8x8 mesh, 16 VCs x 8 flits, iSLIP with 2 iterations, 1-flit packets) and
# wafersim's configs/booksim_meshconfig.yaml. Prints a CSV: pattern, offered load, then each
# tool's average packet latency (cycles) and accepted load (flits/node/cycle), empty where that
# tool called the point saturated (BookSim: average latency over its latency_thres of 500 cycles or
# no convergence; wafersim: --latency-threshold 500 or accepted below offered).
#
#   scripts/booksim-curves.sh BOOKSIM [MESHCONFIG] > curves.csv
#   scripts/booksim-curves.sh --plot curves.csv OUT_DIR   # one PNG per pattern (gnuplot)
#
# BOOKSIM: the booksim binary, built outside this repository (docs/performance.md says how).
# MESHCONFIG: default BOOKSIM's ../runfiles/meshconfig. Runs one point of each tool after the
# other; a pattern stops two points after both tools saturated.
set -euo pipefail
if [[ ${1:-} == --plot ]]; then
  csv=${2:?usage: booksim-curves.sh --plot CSV OUT_DIR}
  out=${3:?usage: booksim-curves.sh --plot CSV OUT_DIR}
  for pattern in uniform transpose bit_complement; do
    grep "^$pattern," "$csv" >"$out/booksim_$pattern.dat"
    gnuplot <<GP
set terminal pngcairo size 800,560
set datafile separator ','
set output '$out/booksim_curve_$pattern.png'
set title 'BookSim meshconfig, 8x8 mesh, $pattern traffic'
set xlabel 'offered load (flits/node/cycle)'
set ylabel 'average packet latency (cycles)'
set yrange [0:200]
set grid
set key top left
plot '$out/booksim_$pattern.dat' using 2:3 with linespoints title 'BookSim 2', \
     '' using 2:5 with linespoints title 'wafersim'
GP
    rm "$out/booksim_$pattern.dat"
  done
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
booksim=${1:?usage: booksim-curves.sh BOOKSIM [MESHCONFIG]}
meshconfig=${2:-$(dirname "$booksim")/../runfiles/meshconfig}
wafersim=${WAFERSIM:-$root/build/wafersim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

booksim_point() {  # pattern rate -> "latency,accepted" or ","
  "$booksim" "$meshconfig" traffic="$1" injection_rate="$2" >"$work/b.log" 2>&1 || true
  if grep -q "unstable" "$work/b.log"; then
    echo ","
    return
  fi
  sed -n '/Overall Traffic Statistics/,$p' "$work/b.log" | awk -F'[=(]' '
    /^Packet latency average/ { l = $2 + 0 }
    /^Accepted flit rate average/ { a = $2 + 0 }
    END { printf "%.2f,%.4f\n", l, a }'
}

wafersim_point() {  # pattern rate -> "latency,accepted" or ","
  "$wafersim" traffic --quiet --platform "$root/configs/booksim_meshconfig.yaml" \
    --pattern "$1" --rate "$2" --warmup-cycles 3000 --measure-cycles 10000 \
    --latency-threshold 500 --out "$work/w" >/dev/null 2>&1 || true
  python3 - "$work/w/traffic.json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print(","); sys.exit()
ok = not r["saturated"] and r["accepted_flits_per_node_cycle"] > 0.97 * r["offered_flits_per_node_cycle"]
print(f'{r["avg_packet_latency_cycles"]:.2f},{r["accepted_flits_per_node_cycle"]:.4f}' if ok else ",")
EOF
}

echo "pattern,offered,booksim_latency,booksim_accepted,wafersim_latency,wafersim_accepted"
for pattern in uniform transpose bit_complement; do
  booksim_name=$pattern
  [[ $pattern == bit_complement ]] && booksim_name=bitcomp
  after=0
  for rate in 0.02 0.05 0.08 0.10 0.11 0.12 0.13 0.14 0.15 0.16 0.18 0.20 0.22 0.23 0.24 0.25 \
    0.26 0.28 0.30 0.32 0.34 0.36 0.38 0.40 0.41 0.42 0.43 0.44 0.45 0.46 0.47 0.48 0.50; do
    b=$(booksim_point "$booksim_name" "$rate")
    w=$(wafersim_point "$pattern" "$rate")
    echo "$pattern,$rate,$b,$w"
    [[ $b == "," && $w == "," ]] && after=$((after + 1))
    [[ $after -ge 2 ]] && break
  done
done
