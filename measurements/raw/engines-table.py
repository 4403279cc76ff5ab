# The per-cell table of an engines/bench/run.sh output: for each server and query, each store's
# wall time (median [min–max]) and median CPU time, AmazonS3 ÷ S3WireStore for both, the
# repetitions where S3WireStore took no more wall time, peak RSS, requests and bytes from the
# server (the proxy's counts, as ranges where repetitions differ; the connections clients
# opened too, in runs that counted them), and whether every
# repetition's result was the same for both stores (Ballista's included).
#   python3 measurements/raw/engines-table.py OUT.jsonl
import json,sys,statistics as st,collections
rows=[json.loads(l) for l in open(sys.argv[1])]
cells=collections.defaultdict(lambda: collections.defaultdict(list))
servers=[]
for r in rows:
    if 'store' not in r: continue
    if r['server'] not in servers: servers.append(r['server'])
    cells[(r['server'],r['query'])][r['store']].append(r)
names=['full-scan-aggregate','selective-page-index','projection-2-of-16','copy-back']
med=lambda rs,k: st.median(x[k] for x in rs)
ratio=lambda a,b: f'{a/b:.2f}×' if b else '—'
def span(values):
    lo,hi=min(values),max(values)
    return f'{lo:,}' if lo==hi else f'{lo:,}–{hi:,}'
connections=any('connections' in r for r in rows)
print('| server | query | S3WireStore wall (s) | AmazonS3 wall (s) | AmazonS3 ÷ S3WireStore, wall | reps S3WireStore took no more wall | CPU s, medians (ours / AmazonS3) | AmazonS3 ÷ S3WireStore, CPU | peak RSS MiB (ours / AmazonS3) | requests (ours / AmazonS3) | '
      + ('connections (ours / AmazonS3) | ' if connections else '') + 'bytes from the server (ours / AmazonS3) | results |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|' + ('---:|' if connections else '') + '---:|---|')
for server in servers:
  for q in names:
    c=cells[(server,q)]; ours,theirs=c['s3wire'],c['amazons3']
    wall=lambda rs: f"{med(rs,'wall_s'):.3f} [{min(x['wall_s'] for x in rs):.3f}–{max(x['wall_s'] for x in rs):.3f}]"
    by_rep={x['rep']:x['wall_s'] for x in theirs}
    won=sum(1 for x in ours if x['wall_s']<=by_rep[x['rep']])
    digests={x['result_fnv'] for s in c.values() for x in s}
    print(f"| {server} | {q} | {wall(ours)} | {wall(theirs)} | {med(theirs,'wall_s')/med(ours,'wall_s'):.2f}× | {won} of {len(ours)} "
          f"| {med(ours,'cpu_s'):.3f} / {med(theirs,'cpu_s'):.3f} | {ratio(med(theirs,'cpu_s'),med(ours,'cpu_s'))} "
          f"| {med(ours,'peak_rss_kib')/1024:.1f} / {med(theirs,'peak_rss_kib')/1024:.1f} "
          f"| {span([x['requests'] for x in ours])} / {span([x['requests'] for x in theirs])} "
          + (f"| {span([x['connections'] for x in ours])} / {span([x['connections'] for x in theirs])} " if connections else '')
          + f"| {span([x['bytes_from_server'] for x in ours])} / {span([x['bytes_from_server'] for x in theirs])} "
          f"| {'identical' if len(digests)==1 else 'DIFFER: '+', '.join(sorted(digests))} |")
print()
print('| server | query | Ballista wall (s) | ÷ one process (S3WireStore) | requests |' + (' connections |' if connections else ''))
print('|---|---|---:|---:|---:|' + ('---:|' if connections else ''))
for server in servers:
  for q in names:
    c=cells[(server,q)]; b=c['ballista']
    if not b: continue
    print(f"| {server} | {q} | {med(b,'wall_s'):.3f} [{min(x['wall_s'] for x in b):.3f}–{max(x['wall_s'] for x in b):.3f}] | {med(b,'wall_s')/med(c['s3wire'],'wall_s'):.2f}× | {span([x['requests'] for x in b])} |"
          + (f" {span([x['connections'] for x in b])} |" if connections else ''))
