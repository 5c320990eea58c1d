#!/usr/bin/env python3
"""Markdown table of sweep_bench's JSON output (--benchmark_out): one row per graph family, spec
set and size; per searcher the worst partition() time over the size's graphs, the process's peak
resident memory, and how many graphs a budget cut. With a second file, the peak memory is read
from it (a run whose times are not used).

    python3 bench/sweep_table.py sweep.json [memory.json]
"""
import json
import sys

FAMILIES = ["random_local", "random_any", "parallel4", "parallel8", "parallel16", "elementwise16"]
SEARCHERS = ["exact", "beam", "greedy"]


def seconds(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def read(path):
    """{(specs, family index, size): {"family": name, searcher: benchmark}} of one JSON file."""
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        family, specs, searcher = b["label"].split("/")
        size = int(b["name"].split("/")[2])
        row = rows.setdefault((specs, FAMILIES.index(family), size), {"family": family})
        row[searcher] = b
    return rows


def main(path, memory_path=None):
    rows = read(path)
    memory = read(memory_path) if memory_path else rows
    print("| specs | family | nodes (largest) | graphs | max candidates | "
          + " | ".join(f"{s}: worst, peak MiB, cut" for s in SEARCHERS) + " |")
    print("|---|---|---:|---:|---:|" + "---|" * len(SEARCHERS))
    for key in sorted(rows):
        row = rows[key]
        first = row[SEARCHERS[0]]
        cells = []
        for s in SEARCHERS:
            b = row.get(s)
            if b is None:
                cells.append("")
                continue
            unsound = int(b["unsound"])
            peak = memory.get(key, {}).get(s, {}).get("peak_rss_mib")
            peak_text = "" if peak is None else f"{peak:.0f}"
            cell = f"{seconds(b['worst_s'])}, {peak_text}, {int(b['budget_cut'])}"
            cells.append(cell + (f" (**{unsound} unsound**)" if unsound else ""))
        print(f"| {key[0]} | {row['family']} | {int(first['nodes']):,} | {int(first['graphs'])} | "
              f"{int(first['max_candidates']):,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
