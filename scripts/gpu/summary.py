#!/usr/bin/env python3
"""Merges the GPU suite's results into OUT/gpu-suite.json and the table OUT/gpu-suite.md.

Reads OUT/reference.json (PyTorch's times, when it ran), OUT/runs/<model>.json (collage-run
--compare --json reports), OUT/gpu-tests.json (GoogleTest's report) and OUT/conformance.tsv.
Standard library only.

    summary.py OUT
"""
import json
import math
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def config(report, name):
    for c in report.get("configurations", []):
        if c.get("name") == name and "error" not in c:
            return c
    return None


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v, digits=3):
    return "-" if v is None else ("%.*g" % (digits, v))


def main():
    out = sys.argv[1]
    reference = (load(os.path.join(out, "reference.json")) or {}).get("models", {})
    rows = []
    runs = os.path.join(out, "runs")
    for file in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
        report = load(os.path.join(runs, file))
        if report is None:
            continue
        model = file[: -len(".json")]
        collage = config(report, "collage")
        best_name = report.get("best_single")
        best = config(report, best_name) if best_name else None
        libraries = config(report, "gpu-libraries")
        torch = reference.get(model, {})
        row = {
            "model": model,
            "torch_eager_ms": torch.get("torch_eager_ms"),
            "torch_cuda_graph_ms": torch.get("torch_cuda_graph_ms"),
            "best_single": best_name,
            "best_single_ms": best and best["latency_ms"],
            "gpu_libraries_ms": libraries and libraries["latency_ms"],
            "collage_ms": collage and collage["latency_ms"],
            "matches": all(c.get("matches", False) for c in report.get("configurations", []) if "error" not in c),
            "additive_error": report.get("additive_error"),
            "guard": (report.get("guard") or {}).get("summary"),
            "guard_fired": (report.get("guard") or {}).get("fired"),
            "tuning_seconds": report.get("tuning_seconds"),
        }
        if row["collage_ms"] and row["best_single_ms"]:
            row["collage_speedup_over_best_single"] = row["best_single_ms"] / row["collage_ms"]
        if row["collage_ms"] and row["torch_cuda_graph_ms"]:
            row["collage_over_torch_cuda_graph"] = row["collage_ms"] / row["torch_cuda_graph_ms"]
        rows.append(row)
    tests = load(os.path.join(out, "gpu-tests.json")) or {}
    summary = {
        "device": (load(os.path.join(out, "reference.json")) or {}).get("device"),
        "gpu_tests": {k: tests.get(k) for k in ("tests", "failures", "disabled", "errors")},
        "models": rows,
        "geomean_collage_over_torch_cuda_graph": geomean([r.get("collage_over_torch_cuda_graph") for r in rows]),
        "geomean_collage_speedup_over_best_single": geomean([r.get("collage_speedup_over_best_single") for r in rows]),
    }
    conformance = os.path.join(out, "conformance.tsv")
    if os.path.exists(conformance):
        with open(conformance) as f:
            lines = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]
        summary["conformance_failed"] = sum(1 for l in lines if "failed" in l[1:])
        summary["conformance_lines"] = len(lines)
    with open(os.path.join(out, "gpu-suite.json"), "w") as f:
        json.dump(summary, f, indent=2)
    md = ["| model | torch eager ms | torch CUDA graph ms | best single (ours) ms | GPU libraries ms | collage ms | "
          "collage / best single | collage / torch graph | additive error | runs | tuning s |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append("| %s | %s | %s | %s %s | %s | %s | %sx | %sx | %s | %s | %s |" % (
            r["model"], fmt(r["torch_eager_ms"]), fmt(r["torch_cuda_graph_ms"]), r["best_single"] or "-",
            fmt(r["best_single_ms"]), fmt(r["gpu_libraries_ms"]), fmt(r["collage_ms"]),
            fmt(r.get("collage_speedup_over_best_single")), fmt(r.get("collage_over_torch_cuda_graph")),
            "-" if r["additive_error"] is None else "%+.1f%%" % (100 * r["additive_error"]),
            "collage" if not r["guard_fired"] else "guard: " + (r["best_single"] or "?"), fmt(r["tuning_seconds"])))
    md.append("")
    md.append("geomean collage / torch CUDA graph: %s; collage / best single: %s" % (
        fmt(summary["geomean_collage_over_torch_cuda_graph"]),
        fmt(summary["geomean_collage_speedup_over_best_single"] and 1 / summary["geomean_collage_speedup_over_best_single"])))
    with open(os.path.join(out, "gpu-suite.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
