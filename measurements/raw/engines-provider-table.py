# The table of a measurements/raw/engines-provider-ab.sh output: for each store and installed
# provider, the wall time's median [min–max] and the CPU's median; then AmazonS3 ÷ S3WireStore
# of the wall medians per provider, with the repetitions where S3WireStore took no more.
#   python3 measurements/raw/engines-provider-table.py OUT.txt
import sys,statistics as st,collections
d=collections.defaultdict(list)
for line in open(sys.argv[1]):
    f=line.split()
    if len(f)==4 and f[0] in ('s3wire','amazons3'): d[(f[0],f[1])].append((float(f[2]),float(f[3])))
print('| store | provider installed | reps | wall (s), median [min–max] | CPU (s), median |')
print('|---|---|---:|---:|---:|')
for provider in ('ring','aws-lc'):
    for store in ('s3wire','amazons3'):
        v=d[(store,provider)]; wall=[x[0] for x in v]
        print(f'| {store} | {provider} | {len(v)} | {st.median(wall):.4f} [{min(wall):.4f}–{max(wall):.4f}] | {st.median(x[1] for x in v):.4f} |')
print()
print('| provider installed | AmazonS3 ÷ S3WireStore, wall medians | reps S3WireStore took no more |')
print('|---|---:|---:|')
for provider in ('ring','aws-lc'):
    ours,theirs=d[('s3wire',provider)],d[('amazons3',provider)]
    # The script runs the four variants once a repetition: the n-th of each store is one pair.
    won=sum(1 for o,t in zip(ours,theirs) if o[0]<=t[0])
    print(f'| {provider} | {st.median(x[0] for x in theirs)/st.median(x[0] for x in ours):.3f}× | {won} of {len(ours)} |')
