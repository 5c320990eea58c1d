#!/usr/bin/env bash
# The README's main command: installs missing packages, builds the demo (Release) and runs it.
# Arguments are passed to the demo.
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
  -DCOLLAGE_WERROR=OFF >/dev/null
cmake --build build/demo --target collage_demo -j "${COLLAGE_JOBS:-2}"

exec build/demo/examples/collage_demo "$@"
