#!/usr/bin/env bash
# Builds the `collage` command-line tool (Release) and, without arguments, partitions the bundled
# MNIST example (examples/mnist: the graph from the Collage RFC and a spec with three targets). Prints the partitioning as text, writes build/tool/mnist.dot and, when
# Graphviz is installed, build/tool/mnist.png.
#
# With arguments, runs `collage ARGS...` instead, e.g.
#   ./scripts/collage.sh candidates --graph examples/mnist/graph.json --spec examples/mnist/spec.json
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

bash scripts/install-deps.sh core pictures

cmake -S . -B build/tool \
  -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_BUILD_TYPE=Release \
  -DCOLLAGE_BUILD_TESTS=OFF \
  -DCOLLAGE_BUILD_BENCHMARKS=OFF \
  -DCOLLAGE_BUILD_EXAMPLES=OFF \
  -DCOLLAGE_BUILD_TOOLS=ON \
  -DCOLLAGE_WERROR=OFF >/dev/null
cmake --build build/tool --target collage-cli -j "${COLLAGE_JOBS:-2}"

collage=build/tool/tools/collage/collage
if [[ $# -gt 0 ]]; then
  exec "$collage" "$@"
fi

graph=examples/mnist/graph.json
spec=examples/mnist/spec.json
echo
echo "\$ collage partition --graph $graph --spec $spec --format text"
"$collage" partition --graph "$graph" --spec "$spec" --format text
"$collage" partition --graph "$graph" --spec "$spec" --format dot --out build/tool/mnist.dot
echo
echo "wrote build/tool/mnist.dot"
if command -v dot >/dev/null 2>&1; then
  dot -Tpng build/tool/mnist.dot -o build/tool/mnist.png
  echo "wrote build/tool/mnist.png"
else
  echo "(install Graphviz for a picture: dot -Tpng build/tool/mnist.dot -o build/tool/mnist.png)"
fi
