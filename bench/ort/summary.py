#!/usr/bin/env python3
"""Medians over rounds of compare.sh's lines: IN.jsonl -> OUT.json, OUT.md. Standard library only."""
import json
import math
import statistics
import sys
from collections import defaultdict


def main():
    raw, out_json, out_md = sys.argv[1:4]
    rows = defaultdict(lambda: {"collage": [], "ort": [], "runs": set(), "error": [], "search_error": [], "tuning_error": [],
                                "best": []})
    versions = set()
    for line in open(raw):
        r = json.loads(line)
        key = (r["threads"], r["model"])
        if r["collage_ms"]:
            rows[key]["collage"].append(r["collage_ms"])
        if r["ort_ms"]:
            rows[key]["ort"].append(r["ort_ms"])
        rows[key]["runs"].add(r["runs"])
        if r.get("additive_error") is not None:
            rows[key]["error"].append(r["additive_error"])
        if r.get("search_additive_error") is not None:
            rows[key]["search_error"].append(r["search_additive_error"])
        if r.get("tuning_additive_error") is not None:
            rows[key]["tuning_error"].append(r["tuning_additive_error"])
        if r.get("collage_ms") and r.get("best_single_ms"):
            rows[key]["best"].append(r["collage_ms"] / r["best_single_ms"])
        if r.get("ort"):
            versions.add(r["ort"])
    table = []
    for (threads, model), v in sorted(rows.items()):
        c = statistics.median(v["collage"]) if v["collage"] else None
        o = statistics.median(v["ort"]) if v["ort"] else None
        median = lambda xs: statistics.median(xs) if xs else None
        table.append({"threads": threads, "model": model, "collage_ms": c, "ort_ms": o,
                      "collage_over_ort": c / o if c and o else None, "rounds": len(v["collage"]),
                      "runs": sorted(v["runs"]), "additive_error": median(v["error"]),
                      "search_additive_error": median(v["search_error"]),
                      "tuning_additive_error": median(v["tuning_error"]),
                      "over_best_single": median(v["best"])})
    geomeans = {}
    for threads in sorted({r["threads"] for r in table}):
        ratios = [r["collage_over_ort"] for r in table if r["threads"] == threads and r["collage_over_ort"]]
        geomeans[threads] = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    json.dump({"onnxruntime": sorted(versions), "rows": table, "geomean_collage_over_ort": geomeans},
              open(out_json, "w"), indent=2)
    lines = ["| threads | model | ONNX Runtime ms | collage ms | collage / ORT | what ran | / best single "
             "| additive error, rounds | by the search's costs | additive error, tuning run |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        f = lambda x: "-" if x is None else "%.4g" % x
        percent = lambda x: "-" if x is None else "%+.1f%%" % (100 * x)
        ratio = "-" if r["collage_over_ort"] is None else f(r["collage_over_ort"]) + "x"
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["threads"], r["model"], f(r["ort_ms"]), f(r["collage_ms"]), ratio, ", ".join(r["runs"]),
            f(r["over_best_single"]), percent(r["additive_error"]), percent(r["search_additive_error"]),
            percent(r["tuning_additive_error"])))
    for threads, g in geomeans.items():
        lines.append("")
        lines.append("geomean collage / ORT at %d thread(s): %s" % (threads, "-" if g is None else "%.3fx" % g))
    open(out_md, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
