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
for tool in protuner protuner-measurerd; do
  [ -x "$build/bin/$tool" ] || { echo "missing $build/bin/$tool: build first" >&2; exit 66; }
done
out=${out:-$(mktemp -d)}
mkdir -p "$out/redis" "$out/logs"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
measurer_port=$(free_port)
metrics_port=$(free_port)
redis=redis://127.0.0.1:$redis_port
last_cpu=$(($(nproc) - 1))
others=0
[ "$last_cpu" -gt 0 ] && others=0-$((last_cpu - 1))

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$out/redis" --appendonly yes \
  --appendfsync always --save '' > "$out/logs/redis.log" 2>&1 &
pids+=($!)
until redis-cli -p "$redis_port" ping > /dev/null 2>&1; do sleep 0.1; done
"$build/bin/protuner-measurerd" --bind "tcp://127.0.0.1:$measurer_port" --cpus "$last_cpu" \
  --cache-dir "$out/measurer-cache" --redis "$redis" --name bench-measurer \
  --metrics-port "$metrics_port" > "$out/logs/measurer.log" 2>&1 &
pids+=($!)
taskset -c "$others" "$build/bin/protuner" coordinator --redis "$redis" \
  > "$out/logs/coordinator.log" 2>&1 &
pids+=($!)
taskset -c "$others" "$build/bin/protuner" searcher --redis "$redis" --cores 1 \
  --library-cache "$out/libraries" > "$out/logs/searcher.log" 2>&1 &
pids+=($!)

id=$("$build/bin/protuner" submit "$suite" --redis "$redis" --json | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["id"])')
echo "suite $id from $suite; logs in $out/logs"
start=$(date +%s)
until "$build/bin/protuner" status "$id" --redis "$redis" --json | python3 -c \
  'import json,sys; sys.exit(0 if json.load(sys.stdin)["phase"] in ("done","cancelled") else 1)'
do sleep 5; done
echo "suite done in $(( $(date +%s) - start )) s"
"$build/bin/protuner" report "$id" --redis "$redis"

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
