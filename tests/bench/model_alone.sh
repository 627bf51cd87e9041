#!/usr/bin/env bash
# The plugin's default against Halide's Adams2019 and the generator's own schedule, side by
# side in one run: for each generator, the schedule `libautoschedule_protuner.so` picks by
# the analytic model alone (HL_PROTUNER_ALGORITHM unset: mcts_1s, nothing measured), as a
# user's generator build would get it, then all three timed by the isolated measurer.
# Prints one row per generator and the geomean of Adams2019 / ours (issue 55: at least 1
# on every generator).
#
# Usage: tests/bench/model_alone.sh [--build DIR] [--library LIB] [--budget S] [--out DIR]
#                                   [GENERATOR...]
# Defaults: the build/ tree, its corpus library, a 30 s budget (the plugin's default) and
# every generator of tests/generators/corpus.yaml.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
library=
budget=30
out=
generators=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --library) library=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -*) echo "unknown flag $1" >&2; exit 64 ;;
    *) generators+=("$1"); shift ;;
  esac
done
library=${library:-$build/lib/libprotuner_corpus_generators.so}
out=${out:-$(mktemp -d)}
if [ ${#generators[@]} -eq 0 ]; then
  mapfile -t generators < <(sed -n 's/^ *generator: *\([a-z_0-9]*\).*/\1/p' \
    "$root/tests/generators/corpus.yaml")
fi
for tool in protuner protuner-gengen; do
  [ -x "$build/bin/$tool" ] || { echo "missing $build/bin/$tool: build first" >&2; exit 66; }
done
mkdir -p "$out"
target=$("$build/bin/protuner" host | sed -n 's/^halide target  *//p' | tr -d ' ')

# The minimum runtime (ms) of one measurement, or its status when it did not run.
measure() {
  local json
  json=$("$build/bin/protuner" measure --library "$library" --generator "$1" "${@:2}" \
    --json --cache-dir "$out/cache" 2>/dev/null || true)
  if printf '%s' "$json" | grep -q '"status":"ok"'; then
    printf '%s' "$json" | sed -n 's/.*"min_ms":\([0-9.e+-]*\).*/\1/p' | awk '{printf "%.3f", $1}'
  else
    printf '%s' "$json" | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p' | head -c 20
    [ -n "$json" ] || printf 'no_result'
  fi
}

printf '%-18s %10s %10s %14s %10s %s\n' generator own_ms adams_ms ours_model_ms adams/ours \
  "search (plugin's summary)"
log_sum=0
counted=0
for g in "${generators[@]}"; do
  schedule=$out/$g.json
  HL_PROTUNER_BUDGET_S=$budget HL_PROTUNER_SCHEDULE_JSON=$schedule \
    "$build/bin/protuner-gengen" -p "$library,$build/lib/libautoschedule_protuner.so" \
    -s ProTuner -g "$g" -o "$out" -e static_library,h,schedule "target=$target" \
    auto_schedule=true machine_params=2,33554432,40 > "$out/$g.plugin.log" 2>&1 || true
  summary=$(grep -o 'mcts_1s: .* complete schedules' "$out/$g.plugin.log" | head -1 || true)
  own=$(measure "$g" --own)
  adams=$(measure "$g" --autoscheduler Adams2019)
  ours=plugin_failed
  [ -f "$schedule" ] && ours=$(measure "$g" --schedule "$schedule")
  ratio=-
  if [[ $adams =~ ^[0-9.]+$ && $ours =~ ^[0-9.]+$ ]]; then
    ratio=$(awk -v a="$adams" -v o="$ours" 'BEGIN { printf "%.2f", a / o }')
    log_sum=$(awk -v s="$log_sum" -v r="$ratio" 'BEGIN { print s + log(r) }')
    counted=$((counted + 1))
  fi
  printf '%-18s %10s %10s %14s %10s %s\n' "$g" "$own" "$adams" "$ours" "$ratio" "${summary:-}"
done
if [ "$counted" -gt 0 ]; then
  awk -v s="$log_sum" -v n="$counted" \
    'BEGIN { printf "geomean Adams2019 / ours over %d generators: %.2fx\n", n, exp(s / n) }'
fi
echo "schedules, plugin logs and the measurement cache: $out"
