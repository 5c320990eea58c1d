#!/usr/bin/env bash
# Checks that the example compiler's folders include only downwards: a file under examples/ may
# include a file of its own folder or of a folder below it in the list, never one above. Inside
# backends/, a backend's folder includes backends/backend.hpp, kit/ (kit/ itself only
# backend.hpp) and its own folder, never another backend; files directly in backends/ (the
# registry) see them all. Prints each include that points up and exits 1 if there is one.
#
#   scripts/check-layers.sh [EXAMPLES_DIR]     (default: examples/ beside this script)
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/examples"}
cd "$root"

# The layers, lowest first. Folders not listed (tests/, guide/, mnist/) are clients and may include
# any of them.
layers="tensor onnx models runtime loops backends executor costing distributed driver conformance collage_run"

find $layers -type f \( -name '*.hpp' -o -name '*.cpp' \) 2>/dev/null | sort | xargs awk -v layers="$layers" '
  BEGIN { n = split(layers, names, " "); for (k = 1; k <= n; ++k) rank[names[k]] = k; bad = 0 }
  FNR == 1 { split(FILENAME, from, "/") }
  /^#include "/ {
    target = $2; gsub(/"/, "", target)
    split(target, to, "/")
    if (!(to[1] in rank)) next
    if (rank[to[1]] > rank[from[1]]) {
      printf "%s:%d: includes \"%s\": %s/ is below %s/\n", FILENAME, FNR, target, from[1], to[1]; bad = 1
    } else if (from[1] == "backends" && to[1] == "backends" && from[2] !~ /\./ && to[2] != from[2] &&
               to[2] != "backend.hpp" && !(to[2] == "kit" && from[2] != "kit")) {
      printf "%s:%d: includes \"%s\": backends/%s/ may include only backend.hpp, kit/ and its own folder\n",
             FILENAME, FNR, target, from[2]; bad = 1
    }
  }
  END { exit bad }' || {
  echo "check-layers: includes that point up (see the layer list in scripts/check-layers.sh)" >&2
  exit 1
}
echo "check-layers: every include of $layers points down"
