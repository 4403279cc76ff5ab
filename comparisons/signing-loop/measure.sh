#!/bin/sh
# Builds signing-loop against this tree and against commit $1 (default b332735), then
# prints callgrind instructions per signature (clone of the request subtracted) and
# alternates wall-time runs. Usage: comparisons/signing-loop/measure.sh [COMMIT] [ROUNDS]
set -eu
base=${1:-b332735}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}/signing-loop
work=$(mktemp -d)
git -C "$repo" worktree add --detach "$work/base" "$base" >/dev/null
mkdir -p "$work/loop"
cp -r "$here/src" "$here/Cargo.toml" "$here/Cargo.lock" "$work/loop/"
sed -i "s#path = \"../../crates/s3-sigv4\"#path = \"$work/base/crates/s3-sigv4\"#" "$work/loop/Cargo.toml"
(cd "$here" && CARGO_TARGET_DIR="$target/head" cargo build --release --quiet)
(cd "$work/loop" && CARGO_TARGET_DIR="$target/base" cargo build --release --quiet)
head_bin="$target/head/release/signing-loop"
base_bin="$target/base/release/signing-loop"
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,
}
n=20000
for which in base head; do
    bin=$(eval echo "\$${which}_bin")
    sign=$(instructions "$bin" $n)
    clone=$(instructions "$bin" $n clone-only)
    echo "$which: $(( (sign - clone) / n )) instructions per signature (callgrind, $n signatures)"
done
for round in $(seq "$rounds"); do
    echo "round $round base: $("$base_bin" 1000000)"
    echo "round $round head: $("$head_bin" 1000000)"
done
git -C "$repo" worktree remove --force "$work/base"
rm -rf "$work"
