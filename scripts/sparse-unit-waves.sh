#!/usr/bin/env bash
# Writes waves/sparse_unit.vcd, the VCD that waves/sparse_unit.gtkw opens: NPU 0's sparse unit
# while 8 NPUs run a 3-layer pruned MLP (1024 x 1024 weights at 30% and 2%, batch 64) on the ring
# (configs/ring_8npus.yaml). Each pipeline step shows its length, the entries decoded and the MACs
# done, and the cycles the HBM port and the datapath waited. Run from the repository root; then
# `gtkwave waves/sparse_unit.gtkw`.
set -euo pipefail
build=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/wafersim" generate --workload sparse-mlp --prefix "$tmp/mlp" --ranks 8 --layers 3 \
  --hidden 1024 --batch 64 --densities 0.3,0.02 >/dev/null
"$build/wafersim" run --quiet --platform configs/ring_8npus.yaml --workload "$tmp/mlp" \
  --waves "$tmp/sparse_unit.vcd" --waves-select 'platform.npu0_sparse.*'
cp "$tmp/sparse_unit.vcd" waves/sparse_unit.vcd
echo "wrote waves/sparse_unit.vcd; open it with: gtkwave waves/sparse_unit.gtkw"
