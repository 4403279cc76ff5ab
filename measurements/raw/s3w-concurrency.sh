#!/bin/bash
# s3w's defaults for objects at once (--concurrency) and parts per file (--part-concurrency):
# 2,000 files of 4 KiB up, and a 1 GiB file up and down, on local-s3, interleaved, 3 runs each.
set -u
S=/work/wt-cli/target/release/s3w
W=/dev/shm/wtcli/conc
rm -rf $W; mkdir -p $W/small
for i in $(seq -w 0 1999); do head -c 4096 /dev/urandom > $W/small/f$i; done
head -c $((1<<30)) /dev/urandom > $W/big.bin
/work/wt-cli/target/release/local-s3 --port 39125 --data-dir $W/data --access-key AK --secret-key SK > $W/server.log 2>&1 &
LOCAL=$!
sleep 1
E=(env -i PATH=/usr/bin:/bin HOME=$W AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK AWS_REGION=us-east-1 AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true AWS_ENDPOINT_URL=http://127.0.0.1:39125)
"${E[@]}" $S --quiet mb s3://conc
"${E[@]}" $S --quiet --no-progress cp $W/big.bin s3://conc/big/source
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in 1 2 3; do
  for c in 4 8 16 32; do
    /usr/bin/time -f "small-up --concurrency $c rep $rep: %e s %M KiB" "${E[@]}" $S --quiet --no-progress --concurrency $c cp -r $W/small s3://conc/small-$c-$rep/
  done
  for p in 4 8 16; do
    /usr/bin/time -f "big-up --part-concurrency $p rep $rep: %e s %M KiB" "${E[@]}" $S --quiet --no-progress --part-concurrency $p cp $W/big.bin s3://conc/big/up
    rm -f $W/down.bin
    /usr/bin/time -f "big-down --part-concurrency $p rep $rep: %e s %M KiB" "${E[@]}" $S --quiet --no-progress --part-concurrency $p cp s3://conc/big/source $W/down.bin
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
kill $LOCAL
rm -rf $W
