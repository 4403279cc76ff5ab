#!/usr/bin/env bash
# Where the HEAD-object program's bytes come from, by link map (measurements/client-size.md):
# relinks comparisons/size's s3-wire-head (already built in $1, a target directory of
# measure.sh) with a link map, sums the exception tables (.gcc_except_table, the LSDAs) of
# functions the linker discarded, by crate; then relinks it with GNU ld instead of rust-lld.
#   measurements/raw/size-link-map.sh TARGET_DIR
set -euo pipefail
target=$1
cd "$(dirname "$0")/../../comparisons/size"
relink() { # touch the program so only it is rebuilt (relinked), with extra rustc flags
    touch s3-wire-head/src/main.rs
    CARGO_TARGET_DIR=$target cargo rustc --release --locked -q -p s3-wire-head -- "$@"
    strip -o "$target/stripped" "$target/release/s3-wire-head"
    stat -c %s "$target/stripped"
}
echo "rust-lld (default): $(relink -C "link-arg=-Wl,-Map=$target/head.map") bytes stripped"
python3 - "$target/head.map" <<'PY'
import collections, re, sys
kept_text, lsda = set(), collections.Counter()
for line in open(sys.argv[1]):
    fields = line.split(None, 4)
    if len(fields) < 5:
        continue
    try:
        size = int(fields[2], 16)
    except ValueError:
        continue
    m = re.match(r'(\S+?)(?:\((\S+)\))?:\((\S+)\)$', fields[4].strip())
    if not m:
        continue
    path, member, section = m.groups()
    crate = (member or path).split('/')[-1].split('-')[0].split('.')[0]
    if section.startswith('.text.'):
        kept_text.add(section[len('.text.'):])
    elif section.startswith('.gcc_except_table.'):
        lsda[(crate, section[len('.gcc_except_table.'):])] += size
dead, live = collections.Counter(), collections.Counter()
for (crate, function), size in lsda.items():
    (live if function in kept_text else dead)[crate] += size
print(f"exception tables of discarded functions: {sum(dead.values())} bytes; of kept ones: {sum(live.values())}")
for crate, size in dead.most_common(8):
    print(f"  discarded, {crate}: {size}")
PY
echo "GNU ld: $(relink -C link-arg=-fuse-ld=bfd) bytes stripped"
