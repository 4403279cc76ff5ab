#!/bin/sh
# A/B of one 64 MiB GET read from block_on on the multi-thread runtime (perf child get):
# /tmp/perf-base (each chunk handed to the caller's thread) against /tmp/perf-new (read
# ahead by a task on a worker, handed over in batches: a variant described in
# measurements/get-read-ahead-2026-12-03.md, not in the project), alternated, over TLS and plain HTTP.
# The object single/get must be stored first (perf child put ... --key single/get --size
# 67108864). Run from the directory holding the TLS null server's ca.pem.
# Usage: get-read-ahead.sh TLS_ENDPOINT PLAIN_ENDPOINT [ROUNDS]
T=$1; P=$2; rounds=${3:-15}
A="--access-key null-access-key --secret-key null-secret-key --key single/get --size 67108864"
for r in $(seq $rounds); do
  for server in tls plain; do
    for b in base new; do
      if [ $server = tls ]; then E="--endpoint $T --ca-file ca.pem"; else E="--endpoint $P"; fi
      out=$(/tmp/perf-$b child get $E $A 2>&1 | tail -1)
      echo "round=$r server=$server build=$b load=$(cut -d' ' -f1 /proc/loadavg) $out"
    done
  done
done
