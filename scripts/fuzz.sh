#!/usr/bin/env bash
# Runs each libFuzzer target of fuzz/ for a set time (`make fuzz`, FUZZ_SECONDS, default 600).
# Seeds: the repository's Chakra traces and configuration files. The growing corpus stays in
# build-fuzz/corpus-*; a crash or sanitizer report is written to build-fuzz/findings/ and makes
# this script fail. A finding belongs in tests/data/bad/ once fixed (tests/data/bad/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
out=build-fuzz
mkdir -p "$out/findings" "$out/corpus-trace" "$out/corpus-config" "$out/seeds-trace" "$out/seeds-config"

# Trace seeds: every .et file in tests/data (small ones first; libFuzzer caps input length).
find tests/data -name '*.et' -size -64k -exec cp -t "$out/seeds-trace" {} + 2>/dev/null || true
# Config seeds: the first byte picks the reader (fuzz/fuzz_config.cpp).
i=0
for f in configs/*.yaml tests/data/bad/platform/*.yaml; do
  { printf '\000'; cat "$f"; } > "$out/seeds-config/platform-$((i++))"
done
for f in tests/data/astra-sim-examples/network/analytical/*.yml tests/data/bad/astra/*.yml; do
  { printf '\001'; cat "$f"; } > "$out/seeds-config/network-$((i++))"
done
for f in tests/data/astra-sim-examples/system/*/*.json tests/data/bad/astra/*.json; do
  { printf '\002'; cat "$f"; } > "$out/seeds-config/system-$((i++))"
done
for f in tests/data/bad/groups/*.json; do
  { printf '\003'; cat "$f"; } > "$out/seeds-config/groups-$((i++))"
done
for f in configs/studies/*.yaml tests/data/bad/study/*.yaml; do
  { printf '\004'; cat "$f"; } > "$out/seeds-config/study-$((i++))"
done

status=0
for target in trace config; do
  echo "fuzz_$target: ${seconds} s"
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$out/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/findings/$target-" \
    "$out/corpus-$target" "$out/seeds-$target" || status=1
done
if [ "$status" -ne 0 ]; then
  echo "fuzz: findings in $out/findings" >&2
fi
exit "$status"
