#!/usr/bin/env bash
# Context switches of the async and the blocking client on one task file, alternating
# (measurements/blocking-switches-2026-12-08.md): `perf stat` over the whole harness (its
# null-tls server, the child process that runs the client), one repetition per run.
#   [DOWNLOADS=10000] measurements/raw/blocking-switches.sh WORKLOAD PAIRS
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
    echo "$pair $client $counts$rate $times" | tee -a "$scratch/lines"
  done
done
# Per pair, blocking against async: extra switches (and per download, for a task file of
# DOWNLOADS transfers), rate ratio, extra operation CPU (and per download, in µs).
echo "pair extra_switches per_download rate_ratio extra_cpu_s per_download_us"
awk -v n="${DOWNLOADS:-10000}" '
  { sw[$1,$2]=$3; rate[$1,$2]=$6; cpu[$1,$2]=$NF }
  END { for (p=1; (p,"s3-wire") in sw; p++) {
    d=sw[p,"s3-wire-blocking"]-sw[p,"s3-wire"]; c=cpu[p,"s3-wire-blocking"]-cpu[p,"s3-wire"]
    printf "%d %d %.2f %.3f %.2f %.0f\n", p, d, d/n, rate[p,"s3-wire-blocking"]/rate[p,"s3-wire"], c, c/n*1e6 } }
' "$scratch/lines"
