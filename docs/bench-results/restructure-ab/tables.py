#!/usr/bin/env python3
"""The tables of docs/benchmarks.md's section "Before and after the restructuring (issue 23)", from the raw runs in
this folder: python3 tables.py DIR.

Google Benchmark groups: each process (one build, one round) gives the median of its 3 repetitions (CPU time); a
figure is the median over the rounds. A ratio to an in-run baseline (the figures docs/kernels.md and
docs/kernels-libraries.md quote) is taken in each process, then its median over the rounds. collage-run: each
configuration's latency as --compare reports it (its median over interleaved rounds), median over the runs."""
import collections, glob, json, os, re, statistics, sys

med = statistics.median
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
SIDES = ("before", "now")


def load(group):
    runs = {s: {} for s in SIDES}
    labels = {}
    for fn in sorted(glob.glob(f"{OUT}/{group}/*-r*.json")):
        side, rnd = re.match(r"(\w+)-r(\d+)\.json", os.path.basename(fn)).groups()
        reps = collections.defaultdict(lambda: collections.defaultdict(list))
        for b in json.load(open(fn))["benchmarks"]:
            if b.get("run_type") != "iteration":
                continue
            key = (b["run_name"], b.get("family_index", 0))
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
            reps[key]["cpu"].append(b["cpu_time"] * scale)
            reps[key]["real"].append(b["real_time"] * scale)
            for c in ("GB/s", "GFLOP/s", "FLOP/s", "states_expanded", "candidates", "cost", "exact_gave_up"):
                if c in b:
                    reps[key][c].append(b[c])
            if b.get("label"):
                labels[key] = b["label"]
        runs[side][int(rnd)] = {k: {m: med(v) for m, v in d.items()} for k, d in reps.items()}
    return runs, labels


def rounds(runs, side, key, metric="cpu"):
    return [r[key][metric] for _, r in sorted(runs[side].items()) if key in r and metric in r[key]]


def rel(runs, side, a, b, metric):
    return [r[a][metric] / r[b][metric] for _, r in sorted(runs[side].items()) if a in r and b in r]


def f(x):
    return f"{x:,.0f}" if abs(x) >= 1000 else (f"{x:.1f}" if abs(x) >= 100 else (f"{x:.2f}" if abs(x) >= 1 else f"{x:.3f}"))


def geo(xs):
    p = 1.0
    for x in xs:
        p *= x
    return p ** (1 / len(xs))


def spread(xs):
    return f"{f(min(xs))}–{f(max(xs))}"


def kernels(group, rows, counter, title):
    """rows: (figure, ours key, baseline key). Columns: ours ms, baseline ms (same code on both sides: the noise),
    ours/baseline (the docs' figure)."""
    runs, _ = load(group)
    print(f"\n{title}\n")
    print("| figure | ours ms: before | now | now / before | baseline ms: before | now | now / before | "
          "ours / baseline: before | now |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ro, rb, rr = [], [], []
    for name, o, b in rows:
        oa, ob = med(rounds(runs, "before", o)), med(rounds(runs, "now", o))
        ba, bb = med(rounds(runs, "before", b)), med(rounds(runs, "now", b))
        ra, rn = med(rel(runs, "before", o, b, counter)), med(rel(runs, "now", o, b, counter))
        ro.append(ob / oa); rb.append(bb / ba); rr.append(rn / ra)
        print(f"| {name} | {f(oa)} | {f(ob)} | {ob/oa:.2f} | {f(ba)} | {f(bb)} | {bb/ba:.2f} | {ra:.0%} | {rn:.0%} |")
    print(f"| **geomean of the ratios** | | | **{geo(ro):.2f}** | | | **{geo(rb):.2f}** | | now / before "
          f"**{geo(rr):.2f}** |")
    return ro, rb, rr


def native():
    runs, labels = load("native")
    keys = {k[0]: k for s in SIDES for r in runs[s].values() for k in r}
    rows = []
    for i, size in ((1, "[1,64,112,112], 3.2 MB"), (2, "[16,64,128,128], 64 MB")):
        rows.append((f"bias + ReLU {size} / memcpy", keys[f"BM_NativeBiasRelu/{i}"], keys[f"BM_Memcpy/{i}"]))
        rows.append((f"ReLU(x + y) * 0.5 {size} / memcpy", keys[f"BM_NativeResidual/{i}"], keys[f"BM_Memcpy/{i}"]))
    kernels("native", rows, "GB/s", "Fused elementwise chains against memcpy (ours / baseline: GB/s over GB/s)")
    rows = [(f"GEMM {labels[keys[f'BM_NativeGemm/{i}']]}", keys[f"BM_NativeGemm/{i}"], keys[f"BM_EigenGemm/{i}"])
            for i in range(6)]
    rows += [(f"conv {labels[keys[f'BM_NativeConv/{i}']]}", keys[f"BM_NativeConv/{i}"], keys[f"BM_EigenConv/{i}"])
             for i in range(10)]
    kernels("native", rows, "GFLOP/s", "GEMM and convolution against Eigen (ours / baseline: GFLOP/s over GFLOP/s)")
    print("\nOther partitions (no baseline), CPU ms:\n")
    print("| partition | before | now | now / before | per round: before; now |")
    print("|---|---:|---:|---:|---|")
    for n in ("BM_NativeGelu", "BM_NativeTransposeReshapeAdd", "BM_NativeSoftmaxDecomposed", "BM_NativeSoftmax",
              "BM_NativeLayerNormDecomposed", "BM_NativeLayerNorm"):
        a, b = rounds(runs, "before", keys[n]), rounds(runs, "now", keys[n])
        print(f"| {n[9:]} | {f(med(a))} | {f(med(b))} | {med(b)/med(a):.2f} | {' '.join(f(x) for x in a)}; "
              f"{' '.join(f(x) for x in b)} |")
    print("\nconv + bias + ReLU fused, CPU ms:\n")
    print("| convolution | before | now | now / before |")
    print("|---|---:|---:|---:|")
    rs = []
    for i in range(10):
        k = keys[f"BM_NativeConvBiasRelu/{i}"]
        a, b = med(rounds(runs, "before", k)), med(rounds(runs, "now", k))
        rs.append(b / a)
        print(f"| {labels[k]} | {f(a)} | {f(b)} | {b/a:.2f} |")
    print(f"| geomean | | | {geo(rs):.2f} |")


def library():
    runs, _ = load("library")
    keys = {k[0]: k for s in SIDES for r in runs[s].values() for k in r}
    shapes = []
    for n in keys:
        sh = n.rsplit("/", 2)[0]
        if sh not in shapes:
            shapes.append(sh)
    shapes.sort(key=lambda s: (not s.startswith("conv"), s))
    for lib in ("eigen", "onednn"):
        rows = [(sh.split("/", 1)[1], keys[f"{sh}/{lib}/ours"], keys[f"{sh}/{lib}/direct"]) for sh in shapes
                if f"{sh}/{lib}/ours" in keys]
        kernels("library", rows, "FLOP/s", f"{lib}: our kernel against calling the library directly "
                f"(ours / baseline: FLOP/s over FLOP/s, the docs' \"ours / direct\")")


def search():
    runs, _ = load("search")
    keys = []
    for s in SIDES:
        for r in runs[s].values():
            for k in r:
                if k not in keys:
                    keys.append(k)
    shape = {"0": "chain", "1": "residual", "2": "bert", "3": "wide"}
    alg = {"0": "exact", "1": "beam", "2": "greedy"}
    first = {}
    for k in keys:
        first.setdefault(k[0], k[1])

    def name(k):
        p = k[0].split("/")
        mode = "one call" if "iterations:1" in k[0] else ("repeated, 1 s warm-up" if "min_time" in k[0] else "repeated")
        if k[1] != first[k[0]]:
            mode += ", targets block"
        unit = {"chain": "nodes", "residual": "blocks", "bert": "layers", "wide": "branches"}[shape[p[1]]]
        return f"{shape[p[1]]} {p[2]} {unit}, {p[3]} target{'s' if p[3] != '1' else ''}, {alg[p[4]]}, {mode}"

    keys.sort(key=lambda k: ("bcrw".index(shape[k[0].split('/')[1]][0]), int(k[0].split('/')[2]),
                             k[0].split('/')[4], "iterations" in k[0], k[1]))
    print("\nSearch suite, CPU ms (real ms in brackets); same candidates, states and costs on both sides unless noted\n")
    print("| row | before | now | now / before | per round, CPU ms: before; now |")
    print("|---|---:|---:|---:|---|")
    rs = []
    for k in keys:
        a, b = rounds(runs, "before", k), rounds(runs, "now", k)
        ar, br = rounds(runs, "before", k, "real"), rounds(runs, "now", k, "real")
        note = ""
        for c in ("states_expanded", "exact_gave_up", "candidates", "cost"):
            ca, cb = set(rounds(runs, "before", k, c)), set(rounds(runs, "now", k, c))
            if ca != cb:
                note += f" {c}: {'/'.join(f(x) for x in sorted(ca))} → {'/'.join(f(x) for x in sorted(cb))}"
        if not note:
            rs.append(med(b) / med(a))
        print(f"| {name(k)}{' *(' + note.strip() + ')*' if note else ''} | {f(med(a))} ({f(med(ar))}) | "
              f"{f(med(b))} ({f(med(br))}) | {med(b)/med(a):.2f} | {' '.join(f(x) for x in a)}; {' '.join(f(x) for x in b)} |")
    print(f"| **geomean** (rows doing the same work) | | | **{geo(rs):.2f}** | |")


def e2e():
    lat = collections.defaultdict(lambda: collections.defaultdict(list))
    tune = collections.defaultdict(list)
    speed = collections.defaultdict(list)
    bad = []
    for fn in sorted(glob.glob(f"{OUT}/e2e/*.json")):
        model, side, rnd = re.match(r"(.+)-(before|now)-r(\d+)\.json", os.path.basename(fn)).groups()
        d = json.load(open(fn))
        best, coll = None, None
        for c in d["configurations"]:
            if c.get("latency_ms") is None:
                continue
            if not c.get("matches", True):
                bad.append((fn, c["name"]))
            lat[(model, c["name"])][side].append(c["latency_ms"])
            if c["name"] in ("onednn", "eigen", "native"):
                best = min(best or 1e30, c["latency_ms"])
            if c["name"] == "collage":
                coll = c["latency_ms"]
        speed[(model, side)].append(best / coll)
        tune[(model, side)].append(d.get("tuning_seconds"))
    order = ["onednn", "eigen", "native", "greedy", "collage"]
    zoo = ["mnist", "resnet-mini", "mobilenet-mini", "bert-mini", "resnet18", "mobilenet_v2", "resnet50", "bert-base"]
    models = sorted({k[0] for k in lat}, key=zoo.index)
    print("\nEnd to end, `collage-run MODEL --compare`, latency in ms (median over runs of each run's median)\n")
    print("| model | " + " | ".join(f"{c}: before | now | now / before" for c in order) + " |")
    print("|---|" + "---:|---:|---:|" * len(order))
    per = collections.defaultdict(list)
    for m in models:
        cells = []
        for c in order:
            a, b = lat[(m, c)]["before"], lat[(m, c)]["now"]
            per[c].append(med(b) / med(a))
            cells.append(f"{f(med(a))} | {f(med(b))} | {med(b)/med(a):.2f}")
        print(f"| {m} | " + " | ".join(cells) + " |")
    print("| **geomean** | " + " | ".join(f" | | **{geo(per[c]):.2f}**" for c in order) + " |")
    print("\n| model | collage vs best single: before | now | tuning s (empty database): before | now | "
          "collage ms per run: before; now |")
    print("|---|---:|---:|---:|---:|---|")
    for m in models:
        print(f"| {m} | {med(speed[(m,'before')]):.2f}x | {med(speed[(m,'now')]):.2f}x | {med(tune[(m,'before')]):.2f} | "
              f"{med(tune[(m,'now')]):.2f} | {' '.join(f(x) for x in lat[(m,'collage')]['before'])}; "
              f"{' '.join(f(x) for x in lat[(m,'collage')]['now'])} |")
    print(f"\noutput mismatches: {bad or 'none'}; runs per side: {len(tune[(models[0], 'before')])}, "
          f"{len(tune[(models[0], 'now')])}")


if __name__ == "__main__":
    for g in sys.argv[2:] or ["native", "library", "search", "e2e"]:
        globals()[g]()
