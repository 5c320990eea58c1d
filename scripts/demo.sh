#!/usr/bin/env bash
# The README's main command: installs missing packages, builds the `collage` tool (Release) and
# partitions the bundled MNIST example (examples/mnist: the graph from the Collage RFC and a spec
# with three targets). Prints the partitioning as text, writes build/demo/mnist.dot and, when
# Graphviz is installed, build/demo/mnist.png.
#
# With arguments, runs `collage ARGS...` instead, e.g.
#   ./scripts/demo.sh candidates --graph examples/mnist/graph.json --spec examples/mnist/spec.json
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

bash scripts/install-deps.sh

cmake -S . -B build/demo \
  -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_BUILD_TYPE=Release \
  -DCOLLAGE_BUILD_TESTS=OFF \
  -DCOLLAGE_BUILD_BENCHMARKS=OFF \
  -DCOLLAGE_BUILD_EXAMPLES=ON \
  -DCOLLAGE_BUILD_TOOLS=ON \
  -DCOLLAGE_WERROR=OFF >/dev/null
cmake --build build/demo --target collage-cli -j "${COLLAGE_JOBS:-2}"

collage=build/demo/tools/collage/collage
if [[ $# -gt 0 ]]; then
  exec "$collage" "$@"
fi

graph=examples/mnist/graph.json
spec=examples/mnist/spec.json
echo
echo "\$ collage partition --graph $graph --spec $spec --format text"
"$collage" partition --graph "$graph" --spec "$spec" --format text
"$collage" partition --graph "$graph" --spec "$spec" --format dot --out build/demo/mnist.dot
echo
echo "wrote build/demo/mnist.dot"
if command -v dot >/dev/null 2>&1; then
  dot -Tpng build/demo/mnist.dot -o build/demo/mnist.png
  echo "wrote build/demo/mnist.png"
else
  echo "(install Graphviz for a picture: dot -Tpng build/demo/mnist.dot -o build/demo/mnist.png)"
fi
