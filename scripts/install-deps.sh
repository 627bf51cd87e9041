#!/usr/bin/env bash
# Installs every Debian 12 package protuner builds, tests and runs with.
# Idempotent: safe to run again; apt only acts on what is missing. Needs root.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates
  # Halide 14 (brings LLVM 14) and its autoschedulers, the baselines we compare against
  libhalide14-0-dev
  # libtorch (CPU) for the learned cost models
  libtorch-dev
  # transport, state, metrics
  libzmq3-dev cppzmq-dev libsodium-dev libhiredis-dev redis-server prometheus-cpp-dev prometheus
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # JSON, YAML, command line, logging
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  # tools the helper scripts use
  python3 procps jq
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}) and not root; run as root" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The Debian packages start redis-server and prometheus as system services; tests start
# their own instances on free loopback ports, so the system ones are not needed.
