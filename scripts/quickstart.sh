#!/usr/bin/env bash
# The README's two commands: install what is missing, build, then either tune the demo
# suite on the embedded farm (`protuner up`) or run every test.
#
#   scripts/quickstart.sh demo [suite.yaml]   install, build what the demo runs, protuner up
#   scripts/quickstart.sh test                install, build everything, run every test
#
# Environment: PROTUNER_BUILD_DIR (default: build), PROTUNER_JOBS (default: nproc).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PROTUNER_BUILD_DIR:-$root/build}
jobs=${PROTUNER_JOBS:-$(nproc)}
mode=${1:-}

case "$mode" in
  demo|test) ;;
  *) echo "usage: $0 demo [suite.yaml] | $0 test" >&2; exit 64 ;;
esac

if [ "$(id -u)" -eq 0 ]; then
  bash "$root/scripts/install-deps.sh"
elif ! bash "$root/scripts/install-deps.sh" >/dev/null 2>&1; then
  sudo bash "$root/scripts/install-deps.sh"
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

case "$mode" in
  demo)
    cmake --build "$build" -j "$jobs" --target protuner_demo
    exec "$build/bin/protuner" up "${2:-$root/apps/demo.yaml}"
    ;;
  test)
    cmake --build "$build" -j "$jobs"
    # Two at a time: the machine class has 2 cores, and several tests JIT-compile.
    exec ctest --test-dir "$build" -j 2 --output-on-failure --timeout 900
    ;;
esac
