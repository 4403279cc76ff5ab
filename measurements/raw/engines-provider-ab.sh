#!/usr/bin/env bash
# One engines query through S3WireStore and AmazonS3 over TLS with each rustls provider the
# bench can install (ENGINES_TLS_PROVIDER: ring or aws-lc-rs), the four variants rotating
# their order each repetition, on a fresh local-s3 behind the bench's TLS proxy
# (measurements/engines-2026-12-08-tls-provider.md). Prints `store provider wall_s cpu_s`.
#   measurements/raw/engines-provider-ab.sh QUERY REPS [SERVER]
# Needs engines-bench built (`cargo build --release --bins` in engines/; CARGO_TARGET_DIR names
# its target directory if not engines/target). Tables: measurements/raw/engines-provider-table.py.
set -euo pipefail
query=$1 reps=$2 server=${3:-local-s3+tls}
here=$(cd "$(dirname "$0")/../../engines" && pwd)
bench=${ENGINES_BENCH:-${CARGO_TARGET_DIR:-$here/target}/release/engines-bench}
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
. "$here/bench/servers.sh"
start_server "$server"
start_proxy "$server"
"$bench" generate "$upstream" bench 6000000 8 > /dev/null
variants=("s3wire ring" "amazons3 ring" "s3wire aws-lc" "amazons3 aws-lc")
for rep in $(seq "$reps"); do
  for i in 0 1 2 3; do
    read -r store provider <<< "${variants[$(( (i + rep) % 4 ))]}"
    ENGINES_TLS_PROVIDER=$provider "$bench" query "$proxy" bench "$store" "$query" \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["store"], sys.argv[1], d["wall_s"], d["cpu_s"])' "$provider"
    sleep 0.2
  done
done
exec {keep}>&-
