# The table of an engines/bench/callgrind.sh output: each query process's instructions per
# store and repetition, the query's share (its count less the `baseline` process of the same
# store and repetition), S3WireStore ÷ AmazonS3 of the shares, requests and results.
#   python3 measurements/raw/engines-callgrind-table.py OUT.jsonl
import json,sys,collections
rows=[json.loads(l) for l in open(sys.argv[1])]
c=collections.defaultdict(dict)
for r in rows:
    if 'store' in r: c[(r['query'],r['rep'])][r['store']]=r
names=[('baseline','baseline'),('full-scan-aggregate','full-scan aggregate'),('selective-page-index','selective page index'),('projection-2-of-16','projection 2 of 16'),('copy-back','copy back')]
reps=sorted({rep for _,rep in c})
print('| query | rep | process, S3WireStore | process, AmazonS3 | query share, S3WireStore | query share, AmazonS3 | ours ÷ theirs | requests | results |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---|')
for q,label in names:
  for rep in reps:
    cell=c.get((q,rep))
    if not cell: continue
    o,t=cell['s3wire'],cell['amazons3']
    same='identical' if o['result_fnv']==t['result_fnv'] else 'DIFFER'
    if q=='baseline':
      print(f"| {label} | {rep} | {o['instructions']:,} | {t['instructions']:,} | — | — | {o['instructions']/t['instructions']:.2f} (process) | {o['requests']} / {t['requests']} | {same} |")
    else:
      b=c[('baseline',rep)]
      so=o['instructions']-b['s3wire']['instructions']; st=t['instructions']-b['amazons3']['instructions']
      print(f"| {label} | {rep} | {o['instructions']:,} | {t['instructions']:,} | {so:,} | {st:,} | {so/st:.4f} | {o['requests']} / {t['requests']} | {same} |")
