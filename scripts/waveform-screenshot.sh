#!/usr/bin/env bash
# Regenerates waves/ring_on_mesh.vcd and the screenshot in docs/images/ (docs/outputs.md): an
# 8-rank ring all-reduce of 1 MiB on the 4x2 wafer mesh at flit fidelity, opened in GTKWave under
# a virtual X server. Needs gtkwave, xvfb and imagemagick (import). Run from the repository root.
set -euo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
"$build/wafersim" generate --prefix "$tmp/ar" --ranks 8 --bytes 1048576 >/dev/null
"$build/wafersim" run --quiet --platform configs/wafer_mesh_4x2.yaml --fidelity flit \
  --workload "$tmp/ar" --waves "$tmp/ring_on_mesh.vcd" --waves-to 600 \
  --waves-select 'platform.router0.to_router1.*' 'platform.router1.from_router0.*' \
  'platform.npu0.nic.*' 'platform.npu0.collective_step'
cp "$tmp/ring_on_mesh.vcd" waves/ring_on_mesh.vcd
echo 'gtkwave::/Time/Zoom/Zoom_Full' >"$tmp/zoom.tcl"
xvfb-run -a -s "-screen 0 1600x700x24" bash -c \
  "gtkwave -S $tmp/zoom.tcl waves/ring_on_mesh.gtkw >/dev/null 2>&1 & sleep 8; \
   import -window root docs/images/waveform_ring_on_mesh.png; kill %1"
echo "wrote docs/images/waveform_ring_on_mesh.png"
