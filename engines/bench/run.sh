#!/usr/bin/env bash
# The engines measurement: DataFusion's query set over a TPC-H-like lineitem in S3 through
# S3WireStore and through object_store's AmazonS3, side by side on one server, one query a
# process, REPS repetitions alternating the stores' order; then the same query on Ballista
# (a scheduler and two executors of one task slot each, S3WireStore in every process: the
# ratio to one process, for scale); on local-s3 and on moto. A server named with `+tls`
# (`local-s3+tls`, `moto+tls`) is reached over TLS: the counting proxy in front of it serves
# TLS with a CA made for the run, which every process trusts through AWS_CA_BUNDLE.
#   engines/bench/run.sh OUT.jsonl [ROWS] [FILES] [REPS] [SERVERS]
# Needs `cargo build --release --bins` (in engines/) and, for moto, the interop venv the
# tests make (S3W_MOTO_PYTHON names its python).
set -euo pipefail
out=$1 rows=${2:-6000000} files=${3:-8} reps=${4:-3} servers=${5:-"local-s3 moto"}
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${ENGINES_BENCH:-${CARGO_TARGET_DIR:-$here/target}/release/engines-bench}
bin_dir=$(dirname "$bench")
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
: > "$out"
. "$here/bench/servers.sh"
meta_line "engines/bench/run.sh $*" ",\"rows\":$rows,\"files\":$files,\"reps\":$reps" >> "$out"
listening() { until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do sleep 0.2; done; }
for server in $servers; do
  start_server "$server"
  start_proxy "$server"
  # Ballista's processes reach the server through the proxy too.
  scheduler_port=$("$bench" free-port)
  AWS_ENDPOINT_URL=$proxy "$bin_dir/ballista-scheduler" --bucket bench --port "$scheduler_port" \
    > "$scratch/$server.scheduler.log" 2>&1 {keep}>&- &
  ballista_pids=$!
  listening "$scheduler_port"
  for executor in 0 1; do
    port=$("$bench" free-port) grpc_port=$("$bench" free-port)
    mkdir -p "$scratch/$server.executor-$executor"
    AWS_ENDPOINT_URL=$proxy "$bin_dir/ballista-executor" --bucket bench \
      --scheduler-port "$scheduler_port" --port "$port" --grpc-port "$grpc_port" \
      --concurrent-tasks 1 --work-dir "$scratch/$server.executor-$executor" \
      > "$scratch/$server.executor-$executor.log" 2>&1 {keep}>&- &
    ballista_pids="$ballista_pids $!"
    listening "$port"
  done
  start=$(date +%s.%N)
  "$bench" generate "$upstream" bench "$rows" "$files"
  # (printf: bc writes .5 for 0.5, which is not JSON)
  echo "{\"server\":\"$server\",\"generated_s\":$(printf '%.3f' "$(echo "$(date +%s.%N) - $start" | bc)")}" >> "$out"
  for rep in $(seq "$reps"); do
    for query in full-scan-aggregate selective-page-index projection-2-of-16 copy-back; do
      order="s3wire amazons3"; [ $((rep % 2)) = 0 ] && order="amazons3 s3wire"
      for store in $order "ballista@$scheduler_port"; do
        read -r c0 r0 b0 <<< "$(counts "$scratch/$server.stats")"
        line=$("$bench" query "$proxy" bench "$store" "$query")
        sleep 0.3
        read -r c1 r1 b1 <<< "$(counts "$scratch/$server.stats")"
        echo "${line%\}},\"server\":\"$server\",\"rep\":$rep,\"connections\":$((c1 - c0)),\"requests\":$((r1 - r0)),\"bytes_from_server\":$((b1 - b0))}" >> "$out"
      done
    done
  done
  kill "$proxy_pid" $ballista_pids
  exec {keep}>&-
  wait 2>/dev/null || true
done
echo "{\"meta_end\":true,\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >> "$out"
