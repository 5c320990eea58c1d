#!/usr/bin/env bash
# Checks that the example compiler's folders include only downwards: a file under examples/ may
# include a file of its own folder or of a folder below it in the list, never one above. Inside
# backends/, a backend's folder includes backends/backend.hpp and kit/ but no other backend, and
# only the registry sees them all. Prints each include that points up and exits 1 if there is one.
#
#   scripts/check-layers.sh [EXAMPLES_DIR]     (default: examples/ beside this script)
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/examples"}
cd "$root"

# The layers, lowest first. Folders not listed (tests/, guide/, mnist/) are clients and may include
# any of them.
layers=(tensor onnx models runtime loops backends executor costing distributed driver conformance collage_run)

rank_of() {
  local folder=$1 k
  for k in "${!layers[@]}"; do
    [[ ${layers[$k]} == "$folder" ]] && { echo "$k"; return; }
  done
  echo -1
}

bad=0
while IFS= read -r file; do
  from=${file%%/*}
  from_rank=$(rank_of "$from")
  [[ $from_rank -ge 0 ]] || continue
  while IFS=: read -r line target; do
    to=${target%%/*}
    to_rank=$(rank_of "$to")
    [[ $to_rank -ge 0 ]] || continue
    if ((to_rank > from_rank)); then
      echo "$file:$line: includes \"$target\": $from/ is below $to/"
      bad=1
    elif [[ $from == backends && $to == backends ]]; then
      # backends/<name>/ may include backends/backend.hpp, kit/ (kit/ itself: backend.hpp only)
      # and its own folder; files directly in backends/ (the registry) may include any backend.
      from_sub=$(cut -d/ -f2 <<<"$file")
      to_sub=$(cut -d/ -f2 <<<"$target")
      [[ $from_sub == *.* || $to_sub == "$from_sub" || $to_sub == backend.hpp ]] && continue
      [[ $to_sub == kit && $from_sub != kit ]] && continue
      echo "$file:$line: includes \"$target\": backends/$from_sub/ may include only backend.hpp, kit/ and its own folder"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file" | while IFS= read -r t; do
             echo "$(grep -n "^#include \"$t\"" "$file" | head -1 | cut -d: -f1):$t"
           done)
done < <(find "${layers[@]}" -type f \( -name '*.hpp' -o -name '*.cpp' \) 2>/dev/null | sort)

if ((bad)); then
  echo "check-layers: includes that point up (see the layer list in scripts/check-layers.sh)" >&2
  exit 1
fi
echo "check-layers: every include of ${layers[*]} points down"
