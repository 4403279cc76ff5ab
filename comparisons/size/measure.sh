#!/usr/bin/env bash
# Clean-build weight of the size programs, one after the other (see
# measurements/client-size.md): normal dependency packages, clean-build CPU and
# wall time, stripped binary bytes. Usage: comparisons/size/measure.sh [program ...]
# Each program builds from its own empty target directory under $SIZE_TARGETS
# (default /tmp/s3-wire-size); sources are fetched before timing.
set -euo pipefail
cd "$(dirname "$0")"
targets=${SIZE_TARGETS:-/tmp/s3-wire-size}
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(s3-wire-head baseline-s3-wire-0.1.1 floor-reqwest floor-hyper)
printf '| program | normal deps | CPU user+sys (s) | wall (s) | load before | stripped bytes |\n|---|---:|---:|---:|---:|---:|\n'
for program in "${programs[@]}"; do
    # s3-wire-head and hyper-stack are members of this directory's workspace, built alone
    # (-p: no other member's code or features); the others are workspaces of their own.
    extra=()
    case "$program" in
        s3-wire-head | hyper-stack) dir=.; extra=(-p "$program") ;;
        *) dir=$program ;;
    esac
    # s3-wire 0.1.1 declares rust-version 1.97.1.
    [ "$program" = baseline-s3-wire-0.1.1 ] && extra=(--ignore-rust-version)
    binary=$program
    [ "$dir" = . ] || binary=$(cd "$dir" && cargo metadata --format-version 1 --no-deps --locked \
        | python3 -c 'import json,sys; m=json.load(sys.stdin); print([t["name"] for p in m["packages"] if p["source"] is None for t in p["targets"] if "bin" in t["kind"]][0])')
    target="$targets/$program"
    rm -rf "$target"
    (cd "$dir" && cargo fetch --locked -q)
    load=$(cut -d' ' -f1 /proc/loadavg)
    times=$( { cd "$dir" && CARGO_TARGET_DIR="$target" /usr/bin/time -f '%U %S %e' \
        cargo build --release --locked -q "${extra[@]}" 2>&1 >/dev/null; } | tail -1)
    read -r user sys wall <<<"$times"
    strip -o "$target/stripped" "$target/release/$binary"
    deps=$(cd "$dir" && cargo tree -e normal --prefix none --locked -p "$binary" 2>/dev/null \
        | awk '{print $1, $2}' | sort -u | grep -v "^$binary " | wc -l)
    printf '| %s | %s | %.1f | %s | %s | %s |\n' "$program" "$deps" \
        "$(echo "$user + $sys" | bc)" "$wall" "$load" "$(stat -c %s "$target/stripped")"
done
