#!/usr/bin/env bash
# Writes waves/fred_switch.vcd, the VCD that waves/fred_switch.gtkw opens: a wafer-wide 3 MiB
# all-reduce in 4 chunks on Fred-D (configs/fred_d.yaml), in-switch at packet fidelity (so that
# the input buffers fill and drain packet by packet), traced at leaf 0 and the spine. The run writes its own .gtkw beside a temporary VCD, so the view is not overwritten. With
# --screenshot it also redraws docs/images/waveform_fred_switch.png (needs xvfb and imagemagick).
# Run from the repository root; then `gtkwave waves/fred_switch.gtkw`.
set -euo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/wafersim" generate --prefix "$tmp/ar" --ranks 20 --bytes 3145728 >/dev/null
"$build/wafersim" run --quiet --platform configs/fred_d.yaml --workload "$tmp/ar" \
  --fidelity packet --out "$tmp/out" --waves "$tmp/fred_switch.vcd" \
  --waves-select 'platform.leaf0.*' 'platform.spine.*'
cp "$tmp/fred_switch.vcd" waves/fred_switch.vcd
echo "wrote waves/fred_switch.vcd; open it with: gtkwave waves/fred_switch.gtkw"
if [[ ${1:-} == --screenshot ]]; then
  echo 'gtkwave::/Time/Zoom/Zoom_Full' >"$tmp/zoom.tcl"
  xvfb-run -a -s "-screen 0 1600x700x24" bash -c \
    "gtkwave -S $tmp/zoom.tcl waves/fred_switch.gtkw >/dev/null 2>&1 & sleep 8; \
     import -window root docs/images/waveform_fred_switch.png; kill %1"
  echo "wrote docs/images/waveform_fred_switch.png"
fi
