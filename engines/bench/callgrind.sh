#!/usr/bin/env bash
# The CPU of the engines measurement's queries as instructions: each query in a process of
# its own under callgrind, through S3WireStore and through object_store's AmazonS3,
# alternating, on SERVER (local-s3 unless named; `local-s3+tls` over TLS, as in run.sh) behind
# the counting proxy (the server and the proxy run natively: only the query's process is
# counted). Instruction counts do not depend on the machine's load, which the wall and CPU
# times of run.sh do. The query `baseline` reads nothing: it is what each process costs
# before its query (the store made, the table's footers read).
#   engines/bench/callgrind.sh OUT.jsonl [ROWS] [FILES] [REPS] [SERVER]
# Needs `cargo build --release --bins` (in engines/) and valgrind.
set -euo pipefail
out=$1 rows=${2:-6000000} files=${3:-8} reps=${4:-2} server=${5:-local-s3}
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${ENGINES_BENCH:-${CARGO_TARGET_DIR:-$here/target}/release/engines-bench}
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
: > "$out"
. "$here/bench/servers.sh"
meta_line "engines/bench/callgrind.sh $*" ",\"valgrind\":\"$(valgrind --version)\",\"rows\":$rows,\"files\":$files,\"reps\":$reps" >> "$out"
start_server "$server"
start_proxy "$server"
"$bench" generate "$upstream" bench "$rows" "$files"
for rep in $(seq "$reps"); do
  for query in baseline full-scan-aggregate selective-page-index projection-2-of-16 copy-back; do
    order="s3wire amazons3"; [ $((rep % 2)) = 0 ] && order="amazons3 s3wire"
    for store in $order; do
      read -r c0 r0 b0 <<< "$(counts "$scratch/$server.stats")"
      line=$(valgrind --tool=callgrind --callgrind-out-file="$scratch/callgrind.out" \
        "$bench" query "$proxy" bench "$store" "$query" 2> "$scratch/valgrind.log")
      sleep 0.3
      read -r c1 r1 b1 <<< "$(counts "$scratch/$server.stats")"
      instructions=$(awk '$1=="summary:"||$1=="totals:"{print $2; exit}' "$scratch/callgrind.out")
      echo "${line%\}},\"server\":\"$server\",\"rep\":$rep,\"instructions\":$instructions,\"connections\":$((c1 - c0)),\"requests\":$((r1 - r0)),\"bytes_from_server\":$((b1 - b0))}" >> "$out"
    done
  done
done
exec {keep}>&-
echo "{\"meta_end\":true,\"load_after\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >> "$out"
