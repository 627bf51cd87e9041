# Sourced by the farm benchmarks (measurer_time.sh, farm_overhead.sh, simulated_farm.sh):
# starting a farm's real processes on this machine, stopping them, and reading what they
# count. Not run on its own.
#
# Set before use: farm_build (the build tree) and farm_dir (this farm's folder: Redis data,
# logs, caches). farm_start_redis sets farm_redis (the URL) and farm_redis_pid;
# farm_spawn NAME CMD... starts one process, logged to $farm_dir/logs/NAME.log, and sets
# farm_pid; farm_stop ends every process started, newest first.

farm_pids=()

# Exits unless $farm_build/bin holds every tool named and jq is installed.
farm_require() {
  local tool
  for tool in "$@"; do
    [ -x "$farm_build/bin/$tool" ] || { echo "missing $farm_build/bin/$tool: build first" >&2; exit 66; }
  done
  command -v jq > /dev/null || { echo "jq is missing: scripts/install-deps.sh" >&2; exit 69; }
}

farm_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

farm_spawn() {
  local name=$1
  shift
  mkdir -p "$farm_dir/logs"
  "$@" > "$farm_dir/logs/$name.log" 2>&1 &
  farm_pid=$!
  farm_pids+=("$farm_pid")
}

# redis-server as the farm runs it: loopback, AOF with appendfsync always.
farm_start_redis() {
  local port
  port=$(farm_free_port)
  mkdir -p "$farm_dir/redis"
  farm_spawn redis redis-server --port "$port" --bind 127.0.0.1 --dir "$farm_dir/redis" \
    --appendonly yes --appendfsync always --save ''
  farm_redis_pid=$farm_pid
  farm_redis=redis://127.0.0.1:$port
  until redis-cli -p "$port" ping > /dev/null 2>&1; do sleep 0.1; done
}

# Newest first, each waited for, so a searcher hands its job back while Redis still runs.
farm_stop() {
  local i
  for ((i = ${#farm_pids[@]} - 1; i >= 0; i--)); do
    kill "${farm_pids[i]}" 2> /dev/null || true
    wait "${farm_pids[i]}" 2> /dev/null || true
  done
  farm_pids=()
}

# Submits a suite file and prints its id.
farm_submit() {
  "$farm_build/bin/protuner" submit "$1" --redis "$farm_redis" --json | jq -r .id
}

# Waits until suite $1 is done or cancelled.
farm_wait_suite() {
  until "$farm_build/bin/protuner" status "$1" --redis "$farm_redis" --json |
    jq -e '.phase == "done" or .phase == "cancelled"' > /dev/null; do
    sleep 5
  done
}

# The sum of every series of metric family $2 (a name, or a regular expression over the
# whole series name with its labels) on 127.0.0.1:$1/metrics.
farm_metric() {
  curl -s "http://127.0.0.1:$1/metrics" |
    awk -v re="^$2[ {]" '$0 ~ re { s += $NF } END { printf "%.6f\n", s + 0 }'
}

# CPU seconds (user + system) process $1 has used, its threads and waited-for children
# included.
farm_cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.3f\n", ($12 + $13 + $14 + $15) / hz }' \
    "/proc/$1/stat"
}

# The memory process $1 costs in MB: its proportional set size, which splits the pages it
# shares with other processes (libHalide, libtorch) among them.
farm_pss_mb() {
  awk '/^Pss:/ { printf "%.0f\n", $2 / 1024 }' "/proc/$1/smaps_rollup"
}
