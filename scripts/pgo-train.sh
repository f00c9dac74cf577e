#!/usr/bin/env bash
# Runs an instrumented wafersim (built with -DWAFERSIM_PGO=GENERATE) on a set of typical jobs, so
# that its branch counts land in its profile folder for the optimised build (-DWAFERSIM_PGO=USE;
# `make build` does the three steps, docs/performance.md). A few seconds: synthetic traffic at
# flit and packet fidelity, the README's main job, a 256-NPU ring All-Reduce and a 2-D one at
# message fidelity, all from files in this repository.
#
#   scripts/pgo-train.sh INSTRUMENTED_WAFERSIM PROFILE_DIR
#
# PROFILE_DIR must be the WAFERSIM_PGO_DIR the binary was built with: its old counts are removed
# first (the instrumented binary adds to what it finds).
set -euo pipefail
wafersim=$(realpath "${1:?usage: pgo-train.sh INSTRUMENTED_WAFERSIM PROFILE_DIR}")
profiles=${2:?usage: pgo-train.sh INSTRUMENTED_WAFERSIM PROFILE_DIR}
cd "$(dirname "$0")/.."

mkdir -p "$profiles"
find "$profiles" -name '*.gcda' -delete
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() { "$wafersim" "$@" > /dev/null; }

# Flit fidelity: BookSim's meshconfig at two loads, then packet fidelity on the same mesh.
for rate in 0.1 0.3; do
  run traffic --quiet --platform configs/booksim_meshconfig.yaml --pattern uniform --rate $rate \
    --warmup-cycles 1000 --measure-cycles 2000 --out "$work/flit_$rate"
done
run traffic --quiet --platform configs/booksim_mesh8x8.yaml --pattern transpose --rate 0.2 \
  --set fabric.fidelity=packet --warmup-cycles 1000 --measure-cycles 2000 --out "$work/packet"

# The README's main job: a Chakra trace replayed on a wafer mesh at packet fidelity.
run run --quiet --platform configs/wafer_mesh_4x2.yaml \
  --workload tests/data/chakra-traces/text/Resnet50_DataParallel --out "$work/main_job"

# Message fidelity on ASTRA-sim's inputs: a ring of 256 NPUs (4 chunks) and a ring of rings.
printf 'topology: [ Ring ]\nnpus_count: [ 256 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
  > "$work/ring256.yml"
sed 's/\["ring", "ring"\]/["ring"]/; s/\["direct", "direct"\]/["direct"]/' \
  configs/astra-sim/ring_ring_4chunks.json > "$work/ring_4chunks.json"
run generate --prefix "$work/ring256/ar" --collective all_reduce --bytes 1073741824 --ranks 256
run run --quiet --fidelity message --astra-network "$work/ring256.yml" \
  --astra-system "$work/ring_4chunks.json" --workload "$work/ring256/ar" --out "$work/ring256_out"
run generate --prefix "$work/ring64/ar" --collective all_reduce --bytes 1073741824 --ranks 64
run run --quiet --fidelity message --astra-network configs/astra-sim/ring8_ring8.yml \
  --astra-system configs/astra-sim/ring_ring_4chunks.json --workload "$work/ring64/ar" \
  --out "$work/ring8_ring8_out"

count=$(find "$profiles" -name '*.gcda' | wc -l)
if [ "$count" -eq 0 ]; then
  echo "pgo-train.sh: no profile was written to $profiles: build $wafersim with" \
    "-DWAFERSIM_PGO=GENERATE -DWAFERSIM_PGO_DIR=$profiles" >&2
  exit 1
fi
echo "pgo-train.sh: $count profiles in $profiles"
