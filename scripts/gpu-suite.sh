#!/usr/bin/env bash
# The GPU suite, for any machine with an NVIDIA GPU: the GPU tests, the ONNX node tests on the GPU
# backends, collage-run --compare on the model zoo and, where Python has PyTorch and torchvision,
# torchvision ResNet-18/50, MobileNet-v2, EfficientNet-B0, SqueezeNet 1.1, GoogLeNet and a BERT-style
# encoder exported by torch's exporter, each also timed by PyTorch eagerly and by CUDA-graph replay
# (fp32, TF32 off). Writes OUT/gpu-suite.json and the table OUT/gpu-suite.md (scripts/gpu/summary.py).
#
#   scripts/gpu-suite.sh [--bin DIR] [--out DIR] [--node-tests DIR] [--budget SECONDS] [--step-timeout SECONDS]
#                        [--skip-tests] [--profile] [--cold-weights]
#
#   --bin DIR         where collage-run, tc_tests, tc-onnx-conformance and tc-make-models are (default:
#                     a Release build made here, build/gpu-suite); a folder packed by gpu-bundle.sh
#                     works: its env.sh is sourced
#   --out DIR         results (default build/gpu-suite-out)
#   --node-tests DIR  the ONNX backend node tests (default /usr/share/libonnx-testdata/data/node; skipped
#                     where missing)
#   --budget SECONDS  tuning budget per search (default 15); measurements persist in OUT/measurements.db
#   --step-timeout S  stop any one step (a model, the GPU tests, the node tests) after S seconds and say so
#                     (default 300); the suite goes on with the next
#   --skip-tests      leave out the GPU tests and the node tests (models only)
#   --profile         also profile each configuration of each model (collage-run --profile: each step's
#                     device time inside the replayed run against its cost measured alone)
#   --cold-weights    time candidates with their weights out of the L2 where the model's weights outgrow
#                     half of it (collage-run --cold-weights), to set against a run without it
#
# The PyTorch models run first (they are the reference), then the GPU tests, the node tests and the zoo.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=""
out="$repo/build/gpu-suite-out"
node_tests=/usr/share/libonnx-testdata/data/node
budget=15
step_timeout=300
skip_tests=0
profile=()
cold_weights=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --node-tests) node_tests=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --step-timeout) step_timeout=$2; shift 2 ;;
    --skip-tests) skip_tests=1; shift ;;
    --profile) profile=(--profile); shift ;;
    --cold-weights) cold_weights=(--cold-weights); shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-suite.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-suite.sh: no NVIDIA GPU here (nvidia-smi finds none); the suite needs one" >&2
  exit 1
fi
if [[ -z $bin ]]; then
  build="$repo/build/gpu-suite"
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOLLAGE_BUILD_TESTS=ON -DCOLLAGE_BUILD_BENCHMARKS=OFF >/dev/null &&
    cmake --build "$build" --target collage-run tc_tests tc-onnx-conformance tc-make-models -j "${COLLAGE_JOBS:-$(nproc)}" || exit 1
  bin=$build
fi
[[ -f $bin/../env.sh ]] && source "$bin/../env.sh"
[[ -f $bin/env.sh ]] && source "$bin/env.sh"
find_exe() { local p; p=$(command -v "$1" 2>/dev/null || find "$bin" -type f -name "$1" -perm -u+x | head -n 1); echo "$p"; }
collage_run=$(find_exe collage-run)
[[ -n $collage_run ]] || { echo "gpu-suite.sh: no collage-run under $bin" >&2; exit 1; }
mkdir -p "$out/runs" "$out/logs"
nvidia-smi -L | tee "$out/logs/device.txt"
start=$SECONDS

step() {  # LOG COMMAND...: runs COMMAND with its output in LOG, stopped after --step-timeout seconds
  local log=$1; shift
  timeout --kill-after=10 "$step_timeout" "$@" >"$log" 2>&1
  local rc=$?
  [[ $rc == 124 || $rc == 137 ]] && echo "gpu-suite.sh: stopped after $step_timeout s: $(basename "$1") (log: $log)" >>"$log"
  return $rc
}

run_model() {  # NAME MODEL [collage-run options...]
  local name=$1 model=$2; shift 2
  echo "== $name"
  step "$out/logs/$name.log" "$collage_run" "$model" --compare --backends cuda,cublas,cudnn --tuning-budget "$budget" \
    --db "$out/measurements.db" --json "$out/runs/$name.json" "${profile[@]}" "${cold_weights[@]}" "$@"
  grep -E "^(collage|best single|runs|additive|gpu-suite)" "$out/logs/$name.log"
}

if python3 -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "== PyTorch's exports and reference times"
  step "$out/logs/reference.log" python3 "$repo/scripts/gpu/reference.py" --out "$out"
  cat "$out/logs/reference.log"
  for model in "$out"/*.onnx; do
    [[ -e $model ]] || continue
    name=$(basename "$model" .onnx)
    run_model "$name" "$model" --test-data "$out/${name}_data/test_data_set_0"
  done
else
  echo "gpu-suite.sh: Python with torch, torchvision and onnx not found; the PyTorch models are left out"
fi

if [[ $skip_tests == 0 ]]; then
  echo "== GPU tests"
  tests=$(find_exe tc_tests)
  step "$out/logs/gpu-tests.log" "$tests" --gtest_filter='*Gpu*:*Cuda*:*Cublas*:*Cudnn*:*Recording*:-CudaNvrtc.*' \
    --gtest_output="json:$out/gpu-tests.json"
  tail -n 3 "$out/logs/gpu-tests.log"
  if [[ -d $node_tests ]]; then
    echo "== ONNX node tests on cuda, cublas, cudnn"
    step "$out/logs/conformance.log" "$(find_exe tc-onnx-conformance)" --data "$node_tests" --config cuda \
      --config cublas --config cudnn --write-list "$out/conformance.tsv"
    tail -n 3 "$out/logs/conformance.log"
  fi
fi

echo "== the model zoo"
"$(find_exe tc-make-models)" "$out/zoo" >"$out/logs/zoo.log" 2>&1
for model in "$out"/zoo/*.onnx; do
  [[ -e $model ]] && run_model "zoo-$(basename "$model" .onnx)" "$model"
done

python3 "$repo/scripts/gpu/summary.py" "$out"
echo "gpu-suite.sh: $((SECONDS - start)) s; results in $out/gpu-suite.json and $out/gpu-suite.md"
