# The before/after table of docs/benchmarks.md "Dense random DAGs (issue 26, third stop)":
#   python3 table.py before-26115b5 after-5a7ed2e
# reads every NAME-round*.json of each build (sweep_bench's --benchmark_out) and prints, per family,
# spec set, size and searcher, the median over the rounds of the worst partition() time, the most
# candidates and how many graphs a budget cut.
import glob
import json
import statistics
import sys

FAMILIES = ["random_local", "random_any", "parallel4", "parallel8", "parallel16", "elementwise16"]
SEARCHERS = ["exact", "beam", "greedy"]


def load(name):
    rows = {}
    for path in sorted(glob.glob(f"{name}-round*.json")):
        for b in json.load(open(path))["benchmarks"]:
            rows.setdefault((b["label"], int(b["name"].split("/")[2])), []).append(b)
    return rows


def ms(seconds):
    return f"{seconds * 1000:,.1f}" if seconds < 10 else f"{seconds * 1000:,.0f}"


before, after = load(sys.argv[1]), load(sys.argv[2])
keys = sorted(set(before) & set(after), key=lambda k: (FAMILIES.index(k[0].split("/")[0]), k[0].split("/")[1], k[1],
                                                       SEARCHERS.index(k[0].split("/")[2])))
print("| family | specs | size | searcher | before: worst ms, candidates, cut | after: worst ms, candidates, cut | before / after |")
print("|---|---|---:|---|---|---|---:|")
for k in keys:
    family, specs, searcher = k[0].split("/")
    a, b = before[k], after[k]
    ta = statistics.median(x["worst_s"] for x in a)
    tb = statistics.median(x["worst_s"] for x in b)
    ca, cb = max(x["max_candidates"] for x in a), max(x["max_candidates"] for x in b)
    cut_a, cut_b = max(x["budget_cut"] for x in a), max(x["budget_cut"] for x in b)
    graphs = int(a[0]["graphs"])
    print(f"| {family} | {specs} | {int(a[0]['nodes']):,} | {searcher} | {ms(ta)}, {ca:,.0f}, {cut_a:.0f}/{graphs} | "
          f"{ms(tb)}, {cb:,.0f}, {cut_b:.0f}/{graphs} | {ta / tb:.2f} |")
