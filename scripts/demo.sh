#!/usr/bin/env bash
# The README's main command: installs missing packages, builds the example compiler (Release),
# writes the bundled models as ONNX (the RFC's MNIST and small ResNet-, MobileNet- and BERT-style
# models) and runs `collage-run --compare` on each: every backend alone, the greedy baseline and
# collage's search over all backends, with measured costs, each checked against the reference
# interpreter and timed end to end. Prints the comparison tables and writes, per model, the JSON
# report and the picture of collage's partitioning to build/demo/.
#
# Measurements are kept in build/demo/measurements.db: a second run measures nothing.
# COLLAGE_DEMO_BUDGET sets the tuning budget per model in seconds (default 60);
# COLLAGE_DEMO_MODELS the models (default "mnist resnet-mini mobilenet-mini bert-mini").
#
# With arguments, runs `collage-run ARGS...` instead, e.g.
#   ./scripts/demo.sh build/demo/models/resnet-mini.onnx --compare --explain
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

bash scripts/install-deps.sh core examples pictures

out=build/demo
cmake -S . -B "$out" \
  -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_BUILD_TYPE=Release \
  -DCOLLAGE_BUILD_TESTS=OFF \
  -DCOLLAGE_BUILD_BENCHMARKS=OFF \
  -DCOLLAGE_BUILD_EXAMPLES=ON \
  -DCOLLAGE_BUILD_EXAMPLE_COMPILER=ON \
  -DCOLLAGE_BUILD_TOOLS=OFF \
  -DCOLLAGE_CHECK_HEADERS=OFF \
  -DCOLLAGE_WERROR=OFF >/dev/null
cmake --build "$out" --target collage-run tc-make-models -j "${COLLAGE_JOBS:-2}"

collage_run=$out/examples/collage_run/collage-run
make_models=$out/examples/models/tc-make-models
if [[ $# -gt 0 ]]; then
  exec "$collage_run" "$@"
fi

models=${COLLAGE_DEMO_MODELS:-mnist resnet-mini mobilenet-mini bert-mini}
budget=${COLLAGE_DEMO_BUDGET:-60}
# shellcheck disable=SC2086
"$make_models" "$out/models" $models >/dev/null

status=0
for model in $models; do
  echo
  echo "==== $model"
  echo "\$ collage-run $out/models/$model.onnx --compare --tuning-budget $budget --db $out/measurements.db"
  if ! "$collage_run" "$out/models/$model.onnx" --compare --tuning-budget "$budget" --db "$out/measurements.db" \
      --json "$out/$model.json" --dot "$out/$model.dot"; then
    status=1
  fi
done
echo
echo "wrote $out/<model>.json (the comparison) and $out/<model>.dot (collage's partitioning, coloured by backend)"
if command -v dot >/dev/null 2>&1; then
  echo "and $out/<model>.dot.png"
fi
exit $status
