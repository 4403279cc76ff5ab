#!/usr/bin/env bash
# A quick A/B of one engines query through S3WireStore and AmazonS3, alternating, on a fresh
# local-s3 (measurements/engines-2026-12-07-proxy-nodelay.md): direct to the server, or through
# engines-bench's counting proxy as engines/bench/run.sh does.
#   measurements/raw/engines-proxy-ab.sh QUERY REPS [direct|proxy]
# Needs engines-bench built in /work/main/target (CARGO_TARGET_DIR for engines/).
set -euo pipefail
query=$1 reps=$2 mode=${3:-direct}
here=$(cd "$(dirname "$0")/../../engines" && pwd)
bench=${ENGINES_BENCH:-${CARGO_TARGET_DIR:-$here/target}/release/engines-bench}
scratch=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
. "$here/bench/servers.sh"
start_server local-s3
endpoint=$upstream
if [ "$mode" = proxy ]; then start_proxy local-s3; endpoint=$proxy; fi
"$bench" generate "$endpoint" bench 6000000 8 > /dev/null
for rep in $(seq "$reps"); do
  order="s3wire amazons3"; [ $((rep % 2)) = 0 ] && order="amazons3 s3wire"
  for store in $order; do
    /usr/bin/time -f "TIME %e %U %S vcs=%w ivcs=%c" -o "$scratch/time" \
      "$bench" query "$endpoint" bench "$store" "$query" > "$scratch/line"
    echo "$store $(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["wall_s"], d["cpu_s"])' < "$scratch/line") $(cat "$scratch/time")"
    sleep 0.3
  done
done
exec {keep}>&-
