#!/usr/bin/env bash
# Runs ASTRA-sim's analytical (congestion-unaware) binary and wafersim side by side on the same
# ASTRA-sim input files and prints one Markdown table row per case: ASTRA-sim's time, then
# wafersim's at message and packet fidelity, with the difference.
#
#   scripts/astra-sim-compare.sh ASTRA_BIN [CASES]
#
# ASTRA_BIN: AstraSim_Analytical_Congestion_Unaware, built outside this repository
# (docs/validation.md, "Side by side with ASTRA-sim", says how). CASES: a file of lines
# "collective bytes ranks network.yml system.json [wafersim --set options...]" (paths from the
# repository root; default scripts/astra-sim-cases.txt). Workloads are written with
# `wafersim generate`; each case runs ASTRA-sim, then wafersim, before the next.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
astra=${1:?usage: astra-sim-compare.sh ASTRA_BIN [CASES]}
cases=${2:-$root/scripts/astra-sim-cases.txt}
wafersim=${WAFERSIM:-$root/build/wafersim}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' >"$work/memory.json"

finish_time() {  # ASTRA-sim's log: every rank's "sys[i] finished, T cycles"; prints the largest
  grep -o 'finished, [0-9]* cycles' | awk '{ if ($2 > t) t = $2; n++ } END { if (n) print t }'
}

echo "| collective | network | system | ASTRA-sim (ns) | wafersim message (ns) | wafersim packet (ns) | ideal (ns) |"
echo "|---|---|---|---|---|---|---|"
while read -r collective bytes ranks network system sets; do
  [[ -z "$collective" || "$collective" == \#* ]] && continue
  prefix="$work/$collective-$bytes-$ranks"
  [[ -f "$prefix.0.et" ]] || "$wafersim" generate --prefix "$prefix" --collective "$collective" \
    --bytes "$bytes" --ranks "$ranks" >/dev/null
  a=$("$astra" --workload-configuration="$prefix" --system-configuration="$root/$system" \
    --network-configuration="$root/$network" --remote-memory-configuration="$work/memory.json" \
    2>&1 | finish_time || true)
  shown=failed
  [[ -n "$a" ]] && shown=$(python3 -c "print(f'{$a:,}')")
  row="| $collective $bytes B x $ranks | ${network##*/} | ${system##*/} ${sets} | $shown |"
  for fidelity in message packet; do
    # shellcheck disable=SC2086
    "$wafersim" run --astra-network "$root/$network" --astra-system "$root/$system" \
      --workload "$prefix" --fidelity "$fidelity" --quiet --out "$work/out" \
      ${sets:+--set $sets} >/dev/null 2>&1 || true
    w=$(python3 -c "import json; print(round(json.load(open('$work/out/report.json'))['makespan_ns']))" \
      2>/dev/null || echo failed)
    ideal=$(python3 -c "import json; print(round(json.load(open('$work/out/report.json'))['collectives'][0]['ideal_ns']))" \
      2>/dev/null || echo -)
    if [[ -n "$a" && "$w" != failed ]]; then
      row+=$(python3 -c "print(f' {$w:,} ({($w - $a) / $a * 100:+.1f}%) |')")
    else
      row+=" $w |"
    fi
  done
  echo "$row $ideal |"
done <"$cases"
