# AmazonS3 ÷ S3WireStore per cell of an engines/bench/run.sh output: the medians' ratio, a 95 %
# interval by bootstrap of the repetitions (pairs resampled, 10,000 draws, seed 1), and a sign
# test of the repetitions where S3WireStore took no more. METRIC is wall_s (the default) or
# cpu_s; the servers are those of the run, in its order.
#   python3 measurements/raw/engines-interval.py OUT.jsonl [METRIC]
import json,sys,statistics as st,collections,random
from math import comb
metric=sys.argv[2] if len(sys.argv)>2 else 'wall_s'
rows=[json.loads(l) for l in open(sys.argv[1])]
d=collections.defaultdict(dict)
servers=[]
for r in rows:
    if r.get('store') in ('s3wire','amazons3'):
        if r['server'] not in servers: servers.append(r['server'])
        d[(r['server'],r['query'])].setdefault(r['rep'],{})[r['store']]=r[metric]
names=['full-scan-aggregate','selective-page-index','projection-2-of-16','copy-back']
random.seed(1)
print(f'{metric}:')
print('| server | query | AmazonS3 ÷ S3WireStore, medians | 95 % interval (bootstrap of the pairs, 10,000 draws) | reps S3WireStore took no more | sign test, two-sided p |')
print('|---|---|---:|---|---:|---:|')
for server in servers:
  for q in names:
    pairs=[(v['s3wire'],v['amazons3']) for v in d[(server,q)].values()]
    n=len(pairs)
    ratio=lambda ps: st.median([b for a,b in ps])/st.median([a for a,b in ps])
    boots=sorted(ratio([random.choice(pairs) for _ in range(n)]) for _ in range(10000))
    lo,hi=boots[249],boots[9749]
    k=sum(1 for a,b in pairs if b>=a)
    m=min(k,n-k); p=min(1.0,2*sum(comb(n,i) for i in range(m+1))/2**n)
    print(f"| {server} | {q} | {ratio(pairs):.3f}× | {lo:.3f}–{hi:.3f} | {k} of {n} | {p:.2f} |")
