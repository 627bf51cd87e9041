#!/usr/bin/env bash
# What a free searcher's choice of app does to a suite (issue 57): the same suite on the same
# embedded farm (`protuner up`: one measurer on its own CPU, N searchers on the others), once
# with free searchers joining the app whose best improves fastest (adaptive) and once the
# app with the fewest unfinished jobs (round-robin), alternating, each run on a fresh farm.
# Every run has the same searchers for the same budgets, so the same machine time. Prints
# one row per run: each app's best and the jobs free searchers added to it, and the
# geomean best and speedups over the generators' own and Halide's default schedules; then
# the geomean over runs of each policy.
#
# Usage: tests/bench/join_policy.sh [--build DIR] [--suite FILE] [--searchers N]
#                                   [--budget-minutes M] [--runs R] [--out DIR]
# Defaults: the build/ tree, apps/demo.yaml (its libraries named bare, found in the build's
# lib/), 5 searchers, its budgets (2 minutes per app), 2 runs of each policy.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
suite_file=$root/apps/demo.yaml
searchers=5
budget=
runs=2
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --suite) suite_file=$2; shift 2 ;;
    --searchers) searchers=$2; shift 2 ;;
    --budget-minutes) budget=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 64 ;;
  esac
done
out=${out:-$(mktemp -d)}
[ -x "$build/bin/protuner" ] || { echo "missing $build/bin/protuner: build first" >&2; exit 66; }
command -v jq > /dev/null || { echo "jq is missing: scripts/install-deps.sh" >&2; exit 69; }
mkdir -p "$out"

# The suite with the budget given, if any.
suite=$out/suite.yaml
if [ -n "$budget" ]; then
  sed "s/budget_minutes: *[0-9.]*/budget_minutes: $budget/" "$suite_file" > "$suite"
else
  cp "$suite_file" "$suite"
fi
mapfile -t apps < <(sed -n 's/^ *- name: *\([A-Za-z0-9_]*\).*/\1/p' "$suite")

printf '%-12s %3s' policy run
for app in "${apps[@]}"; do printf ' %18s' "$app ms (+jobs)"; done
printf ' %10s %8s %8s %6s\n' geomean_ms vs_own vs_def wall_s

declare -A log_sum
declare -A counted
for run in $(seq 1 "$runs"); do
  for policy in round-robin adaptive; do
    dir=$out/$policy-$run
    rm -rf "$dir"
    start=$(date +%s)
    if ! "$build/bin/protuner" --log-level warn up "$suite" --data-dir "$dir/farm" \
        --out "$dir/out" --searchers "$searchers" --join "$policy" > "$dir.log" 2>&1; then
      echo "$policy run $run failed: $dir.log" >&2
      tail -20 "$dir.log" >&2
      exit 1
    fi
    wall=$(( $(date +%s) - start ))
    report=$dir/out/report.json
    printf '%-12s %3s' "$policy" "$run"
    for app in "${apps[@]}"; do
      printf ' %18s' "$(jq -r --arg a "$app" '.apps[] | select(.name == $a) |
        "\(.best_ms // "-" | if type == "number" then (. * 1000 | round / 1000) else . end) (+\(.jobs_joined))"' \
        "$report")"
    done
    geomean=$(jq '[.apps[].best_ms | log] | add / length | exp' "$report")
    printf ' %10.3f %8.2f %8.2f %6s\n' "$geomean" \
      "$(jq '.geomean_speedups.own // 0' "$report")" \
      "$(jq '.geomean_speedups.default // 0' "$report")" "$wall"
    log_sum[$policy]=$(awk -v s="${log_sum[$policy]:-0}" -v g="$geomean" \
      'BEGIN { printf "%.12f", s + log(g) }')
    counted[$policy]=$(( ${counted[$policy]:-0} + 1 ))
  done
done
echo
for policy in round-robin adaptive; do
  awk -v p="$policy" -v s="${log_sum[$policy]}" -v n="${counted[$policy]}" \
    'BEGIN { printf "%-12s geomean best over %d runs: %.3f ms\n", p, n, exp(s / n) }'
done
awk -v a="${log_sum[adaptive]}" -v r="${log_sum[round-robin]}" -v n="$runs" \
  'BEGIN { printf "adaptive / round-robin geomean best: %.3f (below 1: adaptive is faster)\n", exp((a - r) / n) }'
echo "logs and reports: $out"
