#!/bin/sh
# A/B of the plain-HTTP signed multipart upload cells: /tmp/perf-base (c32b255) against /tmp/perf-head (f3a2bb1), alternated; usage: upload-part-read-once.sh ENDPOINT [ROUNDS]
E=$1; rounds=${2:-5}
for r in $(seq $rounds); do
  for cell in "1073741824 /dev/shm/src1g 8388608 4" "1073741824 /dev/shm/src1g 0 0" "268435456 /dev/shm/src256m 8388608 4" "268435456 /dev/shm/src256m 0 0"; do
    set -- $cell
    for b in base head; do
      extra=""
      [ "$3" != 0 ] && extra="--part-size $3 --concurrency $4"
      out=$(/tmp/perf-$b child upload --endpoint $E --access-key null-access-key --secret-key null-secret-key --key k --size $1 --file $2 $extra 2>&1 | tail -1)
      echo "round=$r size=$1 part=$3 conc=$4 build=$b $out"
    done
  done
done
