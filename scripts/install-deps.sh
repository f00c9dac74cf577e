#!/usr/bin/env bash
# Installs the Debian packages wafersim builds and tests with, skipping those already present.
set -euo pipefail
packages=(build-essential cmake pkg-config libsystemc-dev libprotobuf-dev protobuf-compiler
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libgtest-dev libgmock-dev
  libbenchmark-dev libboost1.81-dev libpugixml-dev libeigen3-dev gnuplot-nox xvfb gtkwave time)
# --fuzz: also clang and its libFuzzer runtime (`make fuzz`).
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
