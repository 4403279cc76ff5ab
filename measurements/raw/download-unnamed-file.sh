#!/bin/sh
# A/B of 10,000 downloads of 256 KiB to files on disk (64 at a time, perf child tasks's
# default) over TLS: /tmp/perf-base (named temporary file renamed over the target) against
# /tmp/perf-new (unnamed file linked under the target's name), alternated, files synced
# (the default) and not. Run from the directory holding the null server's ca.pem.
# Usage: download-unnamed-file.sh ENDPOINT DIR [ROUNDS]
E=$1; D=$2; rounds=${3:-3}
W=$(dirname "$0")/../../tools/perf/workloads/download-256KiB-10_000x.run.json
for r in $(seq $rounds); do
  for s in on off; do
    for b in base new; do
      rm -rf "$D"; mkdir -p "$D"; sync; sleep 2
      out=$(S3W_PERF_SYNC_FILES=$s /tmp/perf-$b child tasks --endpoint $E --access-key null-access-key \
        --secret-key null-secret-key --ca-file ca.pem --workload $W --file "$D" 2>&1 | tail -1)
      echo "round=$r sync=$s build=$b load=$(cut -d' ' -f1 /proc/loadavg) $out"
    done
  done
done
