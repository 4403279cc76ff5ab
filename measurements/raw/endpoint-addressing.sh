#!/usr/bin/env bash
# Hand-written addressing (s3-ops' Endpoint) against evaluating AWS's S3 endpoint rule set
# at run time (tools/endpoint-rules, the interpreter the tests use as an oracle): stripped
# binary size, clean build time and instructions per request, on the same four inputs.
# Run from the repository root; needs valgrind. Writes nothing into the repository.
set -euo pipefail
out=$(mktemp -d)
target=$out/target
build() { CARGO_TARGET_DIR=$target cargo build --release --locked "$@" 2>&1 | tail -1; }

echo "== clean builds (wall, user+sys) =="
for what in "-p endpoint-rules --example resolve_once" "-p s3-ops --example address_once"; do
    rm -rf "$target"
    /usr/bin/time -f "%e s wall, %U s user, %S s sys: $what" \
        env CARGO_TARGET_DIR=$target cargo build --release --locked $what 2>&1 | tail -1
done
build -p endpoint-rules --example resolve_once --example resolve_loop --example print_args
build -p s3-ops --example address_once --example address_loop

echo "== stripped sizes (bytes) =="
for b in print_args resolve_once address_once; do
    cp "$target/release/examples/$b" "$out/$b"
    strip "$out/$b"
    echo "$(stat -c %s "$out/$b") $b"
done
echo "== addressing code in address_once (s3_ops::endpoint, names, partition; bytes) =="
sum=0
while read -r _ size _; do sum=$((sum + 16#$size)); done < <(
    nm --size-sort -C -S "$target/release/examples/address_once" \
        | grep -E 's3_ops::(endpoint|names|partition)::')
echo "$sum"

echo "== instructions (callgrind), N = 0 and 1000 =="
for b in resolve_loop address_loop; do
    for n in 0 1000; do
        valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
            "$target/release/examples/$b" "$n" > /dev/null 2> "$out/log"
        echo "$b $n $(grep -E '^summary:' "$out/cg" | awk '{print $2}')"
    done
    for input in 1 2 3 4; do
        valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
            "$target/release/examples/$b" 1000 "$input" > /dev/null 2> "$out/log"
        echo "$b 1000 input-$input $(grep -E '^summary:' "$out/cg" | awk '{print $2}')"
    done
done
rm -rf "$out"
