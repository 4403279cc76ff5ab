#!/usr/bin/env bash
# What the sigv4a feature adds to a program that signs (measurements/sigv4-signing.md):
# interleaved clean release builds of comparisons/size/sigv4-sign without and with it.
# Usage: comparisons/size/measure-sigv4a.sh (targets under $SIZE_TARGETS, default /tmp/s3-wire-size).
set -euo pipefail
cd "$(dirname "$0")"
cargo fetch --locked -q
printf '| build | features | normal deps | CPU user+sys (s) | wall (s) | load before | stripped bytes |\n|---|---|---:|---:|---:|---:|---:|\n'
for round in 1 2; do
  for features in "" "sigv4a"; do
    target=${SIZE_TARGETS:-/tmp/s3-wire-size}/sigv4-sign-$round-${features:-none}
    rm -rf "$target"
    flags=(); [ -n "$features" ] && flags=(--features "$features")
    load=$(cut -d' ' -f1 /proc/loadavg)
    times=$( { CARGO_TARGET_DIR="$target" /usr/bin/time -f '%U %S %e' cargo build --release --locked -q -p sigv4-sign "${flags[@]}" 2>&1 >/dev/null; } | tail -1)
    read -r user sys wall <<<"$times"
    strip -o "$target/stripped" "$target/release/sigv4-sign"
    deps=$(cargo tree -e normal --prefix none --locked -p sigv4-sign "${flags[@]}" 2>/dev/null | awk '{print $1, $2}' | sort -u | grep -v "^sigv4-sign " | wc -l)
    printf '| %s | %s | %s | %.1f | %s | %s | %s |\n' "$round" "${features:-none}" "$deps" "$(echo "$user + $sys" | bc)" "$wall" "$load" "$(stat -c %s "$target/stripped")"
  done
done
