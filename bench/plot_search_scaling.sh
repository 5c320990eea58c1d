#!/usr/bin/env bash
# Draws docs/search-scaling.png (log-log time against nodes, one line per searcher and shape)
# from a search_bench JSON file. Needs python3 (to read the JSON) and gnuplot.
#   bench/plot_search_scaling.sh docs/bench-results/search.json docs/search-scaling.png
set -euo pipefail
json=${1:-docs/bench-results/search.json}
png=${2:-docs/search-scaling.png}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 - "$json" "$data" <<'PY'
import json, sys, collections
runs = json.load(open(sys.argv[1]))["benchmarks"]
series = collections.defaultdict(list)
# With repetitions, plot the medians only.
medians_only = any(r.get("aggregate_name") == "median" for r in runs)
for r in runs:
    if medians_only and r.get("aggregate_name") != "median":
        continue
    if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
        continue
    if "error_occurred" in r or "nodes" not in r:
        continue
    label = r.get("label", "")
    if r.get("targets") != 3 or "iterations:1" not in r.get("run_name", ""):
        continue  # one series per shape: the single-iteration runs, 3 targets
    ms = r["real_time"] if r.get("time_unit") == "ms" else r["real_time"] / 1e6
    series[label].append((r["nodes"], ms))
for label, points in series.items():
    with open(f"{sys.argv[2]}/{label.replace('/', '_')}.dat", "w") as f:
        for n, ms in sorted(set(points)):
            f.write(f"{n} {ms}\n")
PY
plots=""
for f in "$data"/*.dat; do
  name=$(basename "$f" .dat)
  plots+="${plots:+, }'$f' using 1:2 with linespoints title '${name//_/ }'"
done
gnuplot <<GP
set terminal pngcairo size 900,600
set output '$png'
set logscale xy
set xlabel 'nodes'
set ylabel 'candidates + search, ms (costs cached)'
set key left top
set grid
plot $plots
GP
echo "wrote $png"
