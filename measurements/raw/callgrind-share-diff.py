#!/usr/bin/env python3
"""Function by function (self cost, Ir), where two stores' query processes differ under
callgrind, each less its store's `baseline` process (measurements/engines-callgrind-2026-12-07.md):
    callgrind-share-diff.py DIR QUERY [ROWS]
DIR holds QUERY.s3wire, QUERY.amazons3, baseline.s3wire and baseline.amazons3, each from
    valgrind --tool=callgrind --callgrind-out-file=DIR/QUERY.STORE engines-bench query ENDPOINT bench STORE QUERY
"""
import collections
import re
import subprocess
import sys


def load(path):
    out = subprocess.run(['callgrind_annotate', '--threshold=100', '--inclusive=no', path],
                         capture_output=True, text=True, check=True).stdout
    costs, total = collections.Counter(), None
    for line in out.split('\n'):
        m = re.match(r'\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$', line)
        if not m:
            continue
        count, name = int(m.group(1).replace(',', '')), m.group(2)
        if 'PROGRAM TOTALS' in name:
            total = count
            continue
        name = re.sub(r' \[[^\]]*\]$', '', name)
        costs[re.sub(r'^[^:]*:', '', name, count=1)] += count
    return total, costs


directory, query = sys.argv[1], sys.argv[2]
rows = int(sys.argv[3]) if len(sys.argv) > 3 else 12
ours_total, ours = load(f'{directory}/{query}.s3wire')
theirs_total, theirs = load(f'{directory}/{query}.amazons3')
ours_base_total, ours_base = load(f'{directory}/baseline.s3wire')
theirs_base_total, theirs_base = load(f'{directory}/baseline.amazons3')
ours_share, theirs_share = ours_total - ours_base_total, theirs_total - theirs_base_total
print(f'{query}: process {ours_total:,} / {theirs_total:,}; share {ours_share:,} / '
      f'{theirs_share:,} = {ours_share / theirs_share:.5f}, difference {ours_share - theirs_share:,}')
names = set(ours) | set(theirs) | set(ours_base) | set(theirs_base)
share = lambda costs, base, name: costs[name] - base[name]
diffs = sorted(((share(ours, ours_base, n) - share(theirs, theirs_base, n), n) for n in names),
               key=lambda item: -abs(item[0]))
print(f'{"difference":>14} {"S3WireStore":>14} {"AmazonS3":>14}  function')
for difference, name in diffs[:rows]:
    print(f'{difference:>14,} {share(ours, ours_base, name):>14,} '
          f'{share(theirs, theirs_base, name):>14,}  {name[:150]}')
