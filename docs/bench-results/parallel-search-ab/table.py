# The before/after table of docs/benchmarks.md "Search on parallel branches":
#   python3 table.py before-2f6ded7 after-c2a982e
# reads NAME-round1.json and NAME-round2.json of each build and prints the median of the two rounds.
import json,statistics,sys
a_name, b_name = sys.argv[1], sys.argv[2]
def load(t):
    out={}
    for r in (1,2):
        for b in json.load(open(f'{t}-round{r}.json'))['benchmarks']:
            out.setdefault((b['label'],int(b['nodes'])),[]).append(b)
    return out
a=load(a_name); b=load(b_name)
fam_order=['parallel4','parallel8','parallel16','elementwise16']
keys=sorted(a, key=lambda k:(fam_order.index(k[0].split('/')[0]), k[0].split('/')[1], k[1], ['exact','beam','greedy'].index(k[0].split('/')[2])))
print('| family | specs | nodes | searcher | before: ms (search ms), cut | after: ms (search ms), cut | before / after |')
print('|---|---|---:|---|---|---|---:|')
for k in keys:
    fam,spec,alg=k[0].split('/')
    def s(x, f): return statistics.median([y[f] for y in x])
    ta, tb = s(a[k],'worst_s'), s(b[k],'worst_s')
    sa, sb = s(a[k],'worst_search_s'), s(b[k],'worst_search_s')
    ca, cb = max(y['budget_cut'] for y in a[k]), max(y['budget_cut'] for y in b[k])
    fmt=lambda t: f"{t*1000:,.1f}" if t < 10 else f"{t*1000:,.0f}"
    print(f"| {fam} | {spec} | {k[1]:,} | {alg} | {fmt(ta)} ({fmt(sa)}), {ca:.0f} | {fmt(tb)} ({fmt(sb)}), {cb:.0f} | {ta/tb:.2f} |")
