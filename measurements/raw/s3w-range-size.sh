#!/bin/bash
# Download time of s3w by --range-size, interleaved, 3 runs each: local-s3 (1 GiB) and moto (256 MiB).
set -u
S=/work/wt-cli/target/release/s3w
W=/dev/shm/wtcli/range
rm -rf $W; mkdir -p $W
head -c $((1<<30)) /dev/urandom > $W/big.bin
/work/wt-cli/target/release/local-s3 --port 39124 --data-dir $W/data --access-key AK --secret-key SK > $W/server.log 2>&1 &
LOCAL=$!
sleep 1
common=(env -i PATH=/usr/bin:/bin HOME=$W AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK AWS_REGION=us-east-1 AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_EC2_METADATA_DISABLED=true)
L=(AWS_ENDPOINT_URL=http://127.0.0.1:39124)
"${common[@]}" "${L[@]}" $S --quiet mb s3://rng
"${common[@]}" "${L[@]}" $S --quiet --no-progress cp $W/big.bin s3://rng/big.bin
echo "local-s3 1 GiB download, load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in 1 2 3; do for size in 8M 16M 32M 64M 128M; do
  rm -f $W/down.bin
  /usr/bin/time -f "local-s3 range $size rep $rep: %e s %M KiB" "${common[@]}" "${L[@]}" $S --quiet --no-progress --range-size $size cp s3://rng/big.bin $W/down.bin
done; done
kill $LOCAL
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
PY=$(ls -d /work/wt-cli/target/debug/s3w-interop/venv-*/bin/python | head -1)
exec 3< <(sleep 100000)
mkfifo $W/moto.port
($PY /work/wt-cli/crates/s3-wire-tokio/tests/interop/moto_server.py <&3 > $W/moto.port 2>$W/moto.log) &
MOTO=$!
PORT=$(head -1 $W/moto.port)
M=(AWS_ENDPOINT_URL=http://127.0.0.1:$PORT)
head -c $((256<<20)) $W/big.bin > $W/quarter.bin
"${common[@]}" "${M[@]}" $S --quiet mb s3://rng
"${common[@]}" "${M[@]}" $S --quiet --no-progress cp $W/quarter.bin s3://rng/quarter.bin
echo "moto 256 MiB download, load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in 1 2 3; do for size in 8M 16M 32M 64M 128M; do
  rm -f $W/down.bin
  /usr/bin/time -f "moto range $size rep $rep: %e s %M KiB" "${common[@]}" "${M[@]}" $S --quiet --no-progress --range-size $size cp s3://rng/quarter.bin $W/down.bin
done; done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
kill $MOTO
rm -rf $W
