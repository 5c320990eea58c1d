#!/usr/bin/env bash
# collage against ONNX Runtime on the CPU: each model is timed by ONNX Runtime's CPU build (npm's
# onnxruntime-node, installed into BUILD/ort when missing) and by collage-run (collage's choice, the
# partitioning that runs after the guard), alternating the two ROUNDS times, at each thread count.
# Each side reports the median of its own runs; the table gives the median over rounds.
#
#   bench/ort/compare.sh [--build DIR] [--threads "1 2"] [--rounds 5] [--budget S] [--keep-db] [MODEL.onnx...]
#
# Each model is first tuned at each thread count (costs measured, kept in a database for the
# rounds). The database starts empty unless --keep-db: costs measured on another day, on a machine
# whose speed has moved since, would show as the additive model's error. The tuning run's own
# additive error (the parts and the whole measured in one process) is recorded beside the rounds';
# each round records the error of collage-run's estimate and that of the search's own costs.
#
# Without models: the model zoo (tc-make-models --all) plus every .onnx in bench/ort/models/ if
# present. Writes DIR/bench-results/ort_vs_collage.json and .md, with what ran over the best single
# configuration timed in the same process and the additive cost model's error of collage's choice.
# Needs node and npm (Debian's nodejs, npm), installed when missing.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$repo/build/bench-release"
threads="1 2"
rounds=5
budget=60
keep_db=0
models=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --keep-db) keep_db=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown option '$1'" >&2; exit 2 ;;
    *) models+=("$(realpath "$1")"); shift ;;
  esac
done

command -v npm >/dev/null 2>&1 || bash "$repo/scripts/install-deps.sh" node
ort_dir="$build/ort"
if [[ ! -d $ort_dir/node_modules/onnxruntime-node ]]; then
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
cp "$repo/bench/ort/ort_time.mjs" "$ort_dir/"

cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOLLAGE_BUILD_TESTS=OFF -DCOLLAGE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target collage-run tc-make-models -j "${COLLAGE_JOBS:-2}" >/dev/null
collage_run=$(find "$build" -type f -name collage-run -perm -u+x | head -n 1)
if [[ ${#models[@]} -eq 0 ]]; then
  "$(find "$build" -type f -name tc-make-models -perm -u+x | head -n 1)" "$build/bench-models" --all >/dev/null
  models=("$build"/bench-models/*.onnx)
  [[ -d $repo/bench/ort/models ]] && models+=("$repo"/bench/ort/models/*.onnx)
fi

results="$build/bench-results"
mkdir -p "$results"
raw="$results/ort_vs_collage.jsonl"
: >"$raw"
[[ $keep_db == 1 ]] || rm -f "$results/ort_vs_collage.db"
for t in $threads; do
  for model in "${models[@]}"; do
    name=$(basename "$model" .onnx)
    # Tune once (measurements kept in the database), so that the timed rounds measure nothing.
    rm -f "$results/tune.json"
    "$collage_run" "$model" --threads "$t" --tuning-budget "$budget" --db "$results/ort_vs_collage.db" \
      --json "$results/tune.json" >/dev/null 2>&1 || true
    for ((round = 0; round < rounds; ++round)); do
      if ! ort=$(cd "$ort_dir" && node ort_time.mjs "$model" --threads "$t" --runs 30 --warmups 5 2>"$results/ort.err" | tail -n 1) ||
        [[ -z $ort ]]; then
        echo "compare.sh: ONNX Runtime failed on $name at $t thread(s): $(tail -n 1 "$results/ort.err")" >&2
        ort=""
      fi
      rm -f "$results/run.json"
      if ! "$collage_run" "$model" --threads "$t" --db "$results/ort_vs_collage.db" --json "$results/run.json" \
        >/dev/null 2>"$results/collage.err"; then
        echo "compare.sh: collage-run failed on $name at $t thread(s): $(tail -n 1 "$results/collage.err")" >&2
      fi
      python3 - "$results/run.json" "$name" "$t" "$round" "$ort" "$results/tune.json" >>"$raw" <<'PY'
import json, sys
path, name, threads, round_, ort, tune_path = sys.argv[1:7]
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}
report = load(path)
guard = report.get("guard") or {}
runs = guard.get("runs", "collage")
collage = next((c for c in report.get("configurations", []) if c.get("name") == runs and "latency_ms" in c), None)
ort = json.loads(ort) if ort else {}
print(json.dumps({"model": name, "threads": int(threads), "round": int(round_), "runs": runs,
                  "collage_ms": collage and collage["latency_ms"], "ort_ms": ort.get("median_ms"),
                  "ort": ort.get("ort"), "best_single_ms": guard.get("best_single_ms"),
                  "additive_error": report.get("additive_error"),
                  "search_additive_error": report.get("search_additive_error"),
                  "tuning_additive_error": load(tune_path).get("additive_error")}))
PY
    done
  done
done
python3 "$repo/bench/ort/summary.py" "$raw" "$results/ort_vs_collage.json" "$results/ort_vs_collage.md"
cat "$results/ort_vs_collage.md"
