#!/usr/bin/env bash
# A simulated farm on this machine (issue 57): for each size, a fresh Redis (AOF,
# appendfsync always), M measurers whose measurement is a sleep (simulated_measurerd: the
# product's measurer service, registration and library fetching, with a 2.5-7.5 s sleep in
# place of compiling and timing), one coordinator and S searchers, all real processes
# speaking the real protocols, tune a suite (the corpus generators, each under a 15-minute
# budget). After a warm-up, one window is counted: per size, the measurements answered,
# the measurers' utilisation (busy seconds over measurer-seconds), their mean queue, and the
# CPU seconds the coordinator, Redis, the searchers and the measurers used per 1,000
# measurements, with Redis' commands per measurement and the searchers' memory (PSS).
#
# Usage: tests/bench/simulated_farm.sh [--build DIR] [--out DIR] [--sizes "8x4 16x8 ..."]
#                                      [--warmup-seconds W] [--window-seconds T]
#                                      [--sleep-seconds MIN,MAX] [--suite FILE]
# Defaults: the build/ tree, a temporary folder, sizes 8x4 16x8 32x16 64x32 (searchers x
# measurers), 90 s of warm-up, a 300 s window, 2.5,7.5, tests/generators/corpus.yaml.
# Utilisation counts a measurement when it ends, so it is exact to within one sleep per
# measurer over the window (7.5 s of 300: 2.5%).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
farm_build=$root/build
out=
sizes="8x4 16x8 32x16 64x32"
warmup=90
window=300
sleep_seconds=2.5,7.5
suite_file=$root/tests/generators/corpus.yaml
while [ $# -gt 0 ]; do
  case "$1" in
    --build) farm_build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --warmup-seconds) warmup=$2; shift 2 ;;
    --window-seconds) window=$2; shift 2 ;;
    --sleep-seconds) sleep_seconds=$2; shift 2 ;;
    --suite) suite_file=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 64 ;;
  esac
done
# shellcheck source=tests/bench/farm_processes.sh
source "$root/tests/bench/farm_processes.sh"
farm_require protuner simulated_measurerd
out=${out:-$(mktemp -d)}
mkdir -p "$out"
trap farm_stop EXIT

# The suite under budgets longer than the run, so every app is still running at its end.
budget=$(( (warmup + window) / 60 + 5 ))
[ "$budget" -lt 15 ] && budget=15
suite=$out/suite.yaml
sed "s/budget_minutes: *[0-9.]*/budget_minutes: $budget/" "$suite_file" > "$suite"

sum_cpu() {
  local total=0 pid
  for pid in "$@"; do total=$(awk -v t="$total" -v c="$(farm_cpu_seconds "$pid")" 'BEGIN { print t + c }'); done
  echo "$total"
}
sum_metric() {  # family, ports...
  local family=$1 total=0 port
  shift
  for port in "$@"; do total=$(awk -v t="$total" -v v="$(farm_metric "$port" "$family")" 'BEGIN { print t + v }'); done
  echo "$total"
}
redis_stat() {  # an INFO field
  redis-cli -u "$farm_redis" info all | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'
}
# The farm's counters, on one line: measurer busy seconds, measurements answered (not
# counting requests cancelled by their client, as a request moved to an idle measurer is
# at the one it leaves), CPU seconds of the coordinator and of Redis, Redis' commands, CPU
# seconds of the searchers and of the measurers.
counters() {
  echo "$(sum_metric protuner_measurer_busy_seconds_total "${measurer_ports[@]}")" \
    "$(awk -v all="$(sum_metric protuner_measurer_requests_total "${measurer_ports[@]}")" \
      -v cancelled="$(sum_metric 'protuner_measurer_requests_total[{]status="cancelled"[}]' \
        "${measurer_ports[@]}")" 'BEGIN { printf "%.6f", all - cancelled }')" \
    "$(farm_cpu_seconds "$coordinator_pid")" "$(farm_cpu_seconds "$farm_redis_pid")" \
    "$(redis_stat total_commands_processed)" "$(sum_cpu "${searcher_pids[@]}")" \
    "$(sum_cpu "${measurer_pids[@]}")"
}

printf '| searchers x measurers | measurements | per s | utilisation | mean queue | coordinator CPU s / 1000 | Redis CPU s / 1000 | Redis commands / measurement | searchers CPU s / 1000 | measurers CPU s / 1000 | searcher PSS MB |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for size in $sizes; do
  searchers=${size%x*}
  measurers=${size#*x}
  farm_dir=$out/$size
  rm -rf "$farm_dir"
  farm_start_redis
  measurer_pids=()
  measurer_ports=()
  for i in $(seq 1 "$measurers"); do
    port=$(farm_free_port)
    farm_spawn "measurer-$i" "$farm_build/bin/simulated_measurerd" --redis "$farm_redis" \
      --name "sim-measurer-$i" --bind "tcp://127.0.0.1:*" --metrics-port "$port" \
      --cache-dir "$farm_dir/measurer-cache" --sleep-seconds "$sleep_seconds" --seed "$i"
    measurer_pids+=("$farm_pid")
    measurer_ports+=("$port")
  done
  farm_spawn coordinator "$farm_build/bin/protuner" coordinator --redis "$farm_redis"
  coordinator_pid=$farm_pid
  searcher_pids=()
  for i in $(seq 1 "$searchers"); do
    farm_spawn "searcher-$i" "$farm_build/bin/protuner" searcher --redis "$farm_redis" \
      --name "sim-searcher-$i" --cores 1 --library-cache "$farm_dir/libraries"
    searcher_pids+=("$farm_pid")
  done
  id=$(farm_submit "$suite")
  sleep "$warmup"

  before=$(counters)
  start=$(date +%s.%N)
  queue_sum=0
  queue_samples=0
  while awk -v s="$start" -v w="$window" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - s < w) }'; do
    queue_sum=$(awk -v t="$queue_sum" -v q="$(sum_metric protuner_measurer_queue_length "${measurer_ports[@]}")" 'BEGIN { print t + q }')
    queue_samples=$((queue_samples + 1))
    sleep 10
  done
  elapsed=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { print n - s }')
  read -r busy n coord redis cmds search meas < <(
    awk -v a="$before" -v b="$(counters)" 'BEGIN {
      k = split(a, x, " "); split(b, y, " ")
      for (i = 1; i <= k; i++) printf "%.6f%s", y[i] - x[i], (i < k ? " " : "\n")
    }')
  redis-cli -u "$farm_redis" info commandstats > "$farm_dir/redis-commandstats.txt"
  pss=0
  for pid in "${searcher_pids[@]}"; do pss=$((pss + $(farm_pss_mb "$pid"))); done

  awk -v size="$size" -v m="$measurers" -v s="$searchers" -v t="$elapsed" -v n="$n" \
    -v busy="$busy" \
    -v q="$(awk -v a="$queue_sum" -v b="$queue_samples" 'BEGIN { print (b ? a / b : 0) }')" \
    -v c="$coord" -v r="$redis" -v k="$cmds" -v sc="$search" -v mc="$meas" \
    -v pss="$((pss / searchers))" 'BEGIN {
      per = (n > 0) ? 1000 / n : 0
      printf "| %s | %d | %.2f | %.1f%% | %.1f | %.2f | %.2f | %.1f | %.0f | %.2f | %d |\n",
        size, n, n / t, 100 * busy / (m * t), q, c * per, r * per, (n > 0 ? k / n : 0),
        sc * per, mc * per, pss
    }'
  "$farm_build/bin/protuner" cancel "$id" --redis "$farm_redis" > /dev/null 2>&1 || true
  farm_stop
done
echo
echo "window ${window} s after ${warmup} s of warm-up; sleeps ${sleep_seconds} s; logs: $out/<size>/logs;"
echo "Redis' commands by name: $out/<size>/redis-commandstats.txt"
