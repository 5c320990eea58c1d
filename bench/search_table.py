#!/usr/bin/env python3
"""Prints the search_bench results (Google Benchmark JSON) as a Markdown table of medians.

    python3 bench/search_table.py docs/bench-results/search.json
"""
import json
import sys

SEARCHERS = {0: "exact", 1: "beam", 2: "greedy"}


def main(path):
    runs = json.load(open(path))["benchmarks"]
    rows = {}
    for r in runs:
        single = r.get("run_type") != "aggregate"
        if not single and r.get("aggregate_name") != "median":
            continue
        if "error_occurred" in r or "nodes" not in r:
            continue
        key = r["run_name"]
        if single and key in rows:
            continue  # aggregates win over the individual repetitions
        rows[key] = r
    print("| shape | size | nodes | targets | searcher | iterations | candidates | states expanded "
          "| candidates (ms) | search (ms) | total (ms) | peak RSS (MiB) | cost |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        shape, algorithm = r["label"].split("/")
        size = name.split("/")[2]
        ms = r["real_time"] if r["time_unit"] == "ms" else r["real_time"] / 1e6
        # One timed call after a warm-up, or as many as Google Benchmark chose (heap warm from the last).
        iterations = "1" if "iterations:1" in name else "auto"
        print(f"| {shape} | {size} | {int(r['nodes']):,} | {int(r['targets'])} | {algorithm} | {iterations} "
              f"| {int(r['candidates']):,} | {int(r['states_expanded']):,} | {r['candidates_s'] * 1e3:.1f} "
              f"| {r['search_s'] * 1e3:.1f} | {ms:.1f} | {r['peak_rss_mib']:.0f} | {r['cost']:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/bench-results/search.json")
