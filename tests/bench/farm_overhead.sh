#!/usr/bin/env bash
# What the farm costs a tuning job (issue 57): the same app, budget and cores tuned by
# `protuner tune` and by a farm of real processes (redis-server with AOF, one
# protuner-measurerd, a coordinator and one searcher), alternating, each run from empty
# caches. Both measure on the last CPU, and search where the system puts them: tune is one
# process (its measurer's children are pinned, its search threads are not), so the farm's
# searcher is not pinned either. Per run: the candidates measured within the budget
# (tune's result.json `measurements`, the farm's app record) and the best runtime; then,
# per app, the farm's mean measurements over tune's and the ratio of the mean bests beside
# the spread of each mode's own runs (the host's noise).
#
# Usage: tests/bench/farm_overhead.sh [--build DIR] [--out DIR] [--suite FILE]
#                                     [--budget-minutes M] [--runs R]
# Defaults: the build/ tree, a temporary folder, apps/demo.yaml (its budgets: 2 minutes),
# 2 runs of each mode per app.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
farm_build=$root/build
out=
suite_file=$root/apps/demo.yaml
budget=
runs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) farm_build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --suite) suite_file=$2; shift 2 ;;
    --budget-minutes) budget=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 64 ;;
  esac
done
# shellcheck source=tests/bench/farm_processes.sh
source "$root/tests/bench/farm_processes.sh"
farm_require protuner protuner-measurerd
out=${out:-$(mktemp -d)}
mkdir -p "$out"
trap farm_stop EXIT

last_cpu=$(($(nproc) - 1))
mapfile -t apps < <(sed -n 's/^ *- name: *\([A-Za-z0-9_]*\).*/\1/p' "$suite_file")

# One app of the suite, alone, with the budget given, as a suite file in $2.
one_app_suite() {
  awk -v app="$1" '
    /^apps:/ { print; in_apps = 1; next }
    in_apps && /^ *- name:/ { keep = ($0 ~ "name: *" app "([^A-Za-z0-9_]|$)") }
    !in_apps || keep { print }' "$suite_file" > "$2"
  if [ -n "$budget" ]; then sed -i "s/budget_minutes: *[0-9.]*/budget_minutes: $budget/" "$2"; fi
  sed -i "s/seeds: *[0-9]*/seeds: 1/" "$2"
}

# Prints "measurements best_ms" of `protuner tune` on app $1 in folder $2.
run_tune() {
  local app=$1 dir=$2
  "$farm_build/bin/protuner" --log-level warn tune --app "$app" \
    --suite "$dir/suite.yaml" --cpus "$last_cpu" --cache-dir "$dir/cache" --out "$dir/out" \
    > "$dir/tune.log" 2>&1 || { echo "tune of $app failed: $dir/tune.log" >&2; exit 1; }
  jq -r '"\(.measurements) \(.runtime_ms)"' "$dir/out/$app/result.json"
}

# Prints "measurements best_ms" of the farm on app $1 in folder $2.
run_farm() {
  local app=$1 dir=$2 id
  farm_dir=$dir
  farm_start_redis
  farm_spawn measurer "$farm_build/bin/protuner-measurerd" --bind "tcp://127.0.0.1:*" \
    --cpus "$last_cpu" --cache-dir "$dir/cache" --redis "$farm_redis" --name overhead-measurer
  farm_spawn coordinator "$farm_build/bin/protuner" coordinator --redis "$farm_redis"
  farm_spawn searcher "$farm_build/bin/protuner" searcher --redis "$farm_redis" --cores 1 \
    --library-cache "$dir/libraries"
  id=$(farm_submit "$dir/suite.yaml")
  farm_wait_suite "$id"
  "$farm_build/bin/protuner" report "$id" --redis "$farm_redis" --json > "$dir/report.json"
  farm_stop
  jq -r --arg a "$app" '.apps[] | select(.name == $a) | "\(.measurements) \(.best_ms)"' \
    "$dir/report.json"
}

printf '| app | run | tune: measured | tune: best ms | farm: measured | farm: best ms |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
declare -A sums
for app in "${apps[@]}"; do
  for run in $(seq 1 "$runs"); do
    for mode in tune farm; do
      dir=$out/$app-$mode-$run
      rm -rf "$dir"
      mkdir -p "$dir"
      one_app_suite "$app" "$dir/suite.yaml"
      read -r n best < <("run_$mode" "$app" "$dir")
      sums[$app,$mode,n]=$(awk -v s="${sums[$app,$mode,n]:-0}" -v x="$n" 'BEGIN { print s + x }')
      sums[$app,$mode,best]="${sums[$app,$mode,best]:-} $best"
      eval "${mode}_n=\$n ${mode}_best=\$best"
    done
    printf '| %s | %d | %s | %.3f | %s | %.3f |\n' "$app" "$run" "$tune_n" "$tune_best" \
      "$farm_n" "$farm_best"
  done
done
echo
printf '| app | farm / tune measurements | farm / tune mean best | tune best spread | farm best spread |\n'
printf '|---|---:|---:|---:|---:|\n'
spread() { tr ' ' '\n' | awk 'NF { if (!n++ || $1 < lo) lo = $1; if ($1 > hi) hi = $1; s += $1 }
  END { printf "%.3f %.1f%%\n", s / n, 100 * (hi - lo) / lo }'; }
for app in "${apps[@]}"; do
  read -r tune_mean tune_spread < <(echo "${sums[$app,tune,best]}" | spread)
  read -r farm_mean farm_spread < <(echo "${sums[$app,farm,best]}" | spread)
  awk -v app="$app" -v fn="${sums[$app,farm,n]}" -v tn="${sums[$app,tune,n]}" \
    -v fb="$farm_mean" -v tb="$tune_mean" -v ts="$tune_spread" -v fs="$farm_spread" \
    'BEGIN { printf "| %s | %.2f | %.3f | %s | %s |\n", app, fn / tn, fb / tb, ts, fs }'
done
echo "logs and results: $out"
