#!/usr/bin/env bash
# The engines measurement: DataFusion's query set over a TPC-H-like lineitem in S3 through
# S3WireStore and through object_store's AmazonS3, side by side on one server, one query a
# process, REPS repetitions alternating the stores' order; then the same query on Ballista
# (a scheduler and two executors of one task slot each, S3WireStore in every process: the
# ratio to one process, for scale); on local-s3 and on moto.
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
echo "{\"meta\":true,\"date\":\"$(date -u +%FT%TZ)\",\"commit\":\"$(git -C "$here" rev-parse --short HEAD)\",\"cpu\":\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')\",\"cores\":$(nproc),\"load_before\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"command\":\"engines/bench/run.sh $*\",\"rows\":$rows,\"files\":$files,\"reps\":$reps}" >> "$out"
stat() { awk -v k="$2" '$1==k{print $2}' "$1" 2>/dev/null || echo 0; }
listening() { until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do sleep 0.2; done; }
for server in $servers; do
  mkfifo "$scratch/$server.in"
  case $server in
    local-s3)
      export AWS_ACCESS_KEY_ID=local-s3-access-key AWS_SECRET_ACCESS_KEY=local-s3-secret-key-0123456789 AWS_REGION=us-east-1
      "$bench" serve-local-s3 < "$scratch/$server.in" > "$scratch/$server.out" &
      ;;
    moto)
      export AWS_ACCESS_KEY_ID=moto-access-key AWS_SECRET_ACCESS_KEY=moto-secret-key AWS_REGION=us-east-1
      "${S3W_MOTO_PYTHON:?the interop venv python}" "$here/../crates/s3-wire-tokio/tests/interop/moto_server.py" < "$scratch/$server.in" > "$scratch/$server.out" 2>/dev/null &
      ;;
  esac
  exec {keep}> "$scratch/$server.in"   # the server runs until this closes
  until [ -s "$scratch/$server.out" ]; do sleep 0.1; done
  upstream=$(head -1 "$scratch/$server.out")
  case $upstream in http*) ;; *) upstream="http://127.0.0.1:$upstream" ;; esac
  # Without the fifo's writing end: the server sees its end when the script closes it.
  "$bench" proxy "$upstream" "$scratch/$server.stats" > "$scratch/$server.proxy" {keep}>&- &
  proxy_pid=$!
  until [ -s "$scratch/$server.proxy" ]; do sleep 0.1; done
  proxy=$(head -1 "$scratch/$server.proxy")
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
  echo "{\"server\":\"$server\",\"generated_s\":$(echo "$(date +%s.%N) - $start" | bc)}" >> "$out"
  for rep in $(seq "$reps"); do
    for query in full-scan-aggregate selective-page-index projection-2-of-16 copy-back; do
      order="s3wire amazons3"; [ $((rep % 2)) = 0 ] && order="amazons3 s3wire"
      for store in $order "ballista@$scheduler_port"; do
        r0=$(stat "$scratch/$server.stats" requests); b0=$(stat "$scratch/$server.stats" bytes)
        line=$("$bench" query "$proxy" bench "$store" "$query")
        sleep 0.3
        r1=$(stat "$scratch/$server.stats" requests); b1=$(stat "$scratch/$server.stats" bytes)
        echo "${line%\}},\"server\":\"$server\",\"rep\":$rep,\"requests\":$((r1 - r0)),\"bytes_from_server\":$((b1 - b0))}" >> "$out"
      done
    done
  done
  kill "$proxy_pid" $ballista_pids
  exec {keep}>&-
  wait 2>/dev/null || true
done
echo "{\"meta_end\":true,\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >> "$out"
