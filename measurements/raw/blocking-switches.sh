#!/usr/bin/env bash
# Context switches of the async and the blocking client on one task file, alternating
# (measurements/blocking-switches-2026-12-08.md): `perf stat` over the whole harness (its
# null-tls server, the child process that runs the client), one repetition per run.
#   measurements/raw/blocking-switches.sh WORKLOAD PAIRS
# Needs tools/perf built (`cargo build --release -p perf`) and Linux perf.
set -euo pipefail
workload=$1 pairs=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${PERF_HARNESS:-${CARGO_TARGET_DIR:-$root/target}/release/perf}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "pair client context_switches cpu_migrations task_clock_ms rate wall_s cpu_operation_s"
for pair in $(seq "$pairs"); do
  order="s3-wire s3-wire-blocking"; [ $((pair % 2)) = 0 ] && order="s3-wire-blocking s3-wire"
  for client in $order; do
    perf stat -x, -e context-switches,cpu-migrations,task-clock -o "$scratch/stat" -- \
      "$harness" run --servers null-tls --clients "$client" --workloads "tasks:$workload" \
      --reps 1 --out "$scratch" --name run > /dev/null 2>&1
    counts=$(grep -v '^#' "$scratch/stat" | grep , | cut -d, -f1 | tr '\n' ' ')
    rate=$(grep -F "| tasks:$workload |" "$scratch/run.md" | head -1 | cut -d'|' -f4 | awk '{print $1, $2}')
    times=$(grep -F "| tasks:$workload | $client |" "$scratch/run.md" | cut -d'|' -f5,6 | tr -d '|s')
    echo "$pair $client $counts$rate $times"
  done
done
