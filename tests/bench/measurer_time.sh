#!/usr/bin/env bash
# Where a measurer's time goes: compiling candidates against checking and timing them, per
# app, on a farm of real processes (redis-server, one protuner-measurerd, a coordinator and
# a searcher, as `protuner up` lays them out: the measurer on the last CPU). Measurers are
# the farm's scarce, isolated machines; if compiling takes more than half of their time,
# compiling belongs elsewhere (issue 57). The figures are the measurer's own counters
# (protuner_measurer_busy_seconds_total and protuner_measurer_compile_seconds_total), read
# from its /metrics when the suite is done.
#
# Usage: tests/bench/measurer_time.sh [--build DIR] [--out DIR] [SUITE.yaml]
# Defaults: the build/ tree, a temporary folder, apps/demo.yaml.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build
out=
suite=$root/apps/demo.yaml
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -*) echo "unknown flag $1" >&2; exit 64 ;;
    *) suite=$1; shift ;;
  esac
done
# shellcheck source=tests/bench/farm_processes.sh
source "$root/tests/bench/farm_processes.sh"
farm_build=$build
farm_require protuner protuner-measurerd
out=${out:-$(mktemp -d)}
farm_dir=$out
trap farm_stop EXIT
metrics_port=$(farm_free_port)
last_cpu=$(($(nproc) - 1))
others=0
[ "$last_cpu" -gt 0 ] && others=0-$((last_cpu - 1))

farm_start_redis
farm_spawn measurer "$build/bin/protuner-measurerd" --bind "tcp://127.0.0.1:*" \
  --cpus "$last_cpu" --cache-dir "$out/measurer-cache" --redis "$farm_redis" \
  --name bench-measurer --metrics-port "$metrics_port"
farm_spawn coordinator taskset -c "$others" "$build/bin/protuner" coordinator --redis "$farm_redis"
farm_spawn searcher taskset -c "$others" "$build/bin/protuner" searcher --redis "$farm_redis" \
  --cores 1 --library-cache "$out/libraries"

id=$(farm_submit "$suite")
echo "suite $id from $suite; logs in $out/logs"
start=$(date +%s)
farm_wait_suite "$id"
echo "suite done in $(( $(date +%s) - start )) s"
"$build/bin/protuner" report "$id" --redis "$farm_redis"

curl -s "http://127.0.0.1:$metrics_port/metrics" > "$out/metrics.txt"
python3 - "$out/metrics.txt" <<'PY'
import re, sys
busy, compile_ = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'protuner_measurer_(busy|compile)_seconds_total\{app="([^"]*)"\} ([0-9.e+-]+)', line)
    if m:
        (busy if m.group(1) == "busy" else compile_)[m.group(2)] = float(m.group(3))
print()
print("| app | measurer busy s | compiling s | compiling share |")
print("|---|---:|---:|---:|")
for app in sorted(busy):
    c = compile_.get(app, 0.0)
    share = c / busy[app] if busy[app] > 0 else 0.0
    print(f"| {app} | {busy[app]:.1f} | {c:.1f} | {share:.0%} |")
total_b, total_c = sum(busy.values()), sum(compile_.values())
if total_b > 0:
    print(f"| all | {total_b:.1f} | {total_c:.1f} | {total_c / total_b:.0%} |")
PY
