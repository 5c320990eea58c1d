#!/usr/bin/env bash
# The zoo check (issue 27): the stand-ins of the ONNX model zoo's architectures at the zoo files'
# old opsets and IR versions, and the PyTorch-style opset 18 and 20 exports
# (examples/models/zoo_standins.hpp), each written by tc-make-models and run by collage-run in
# every CPU configuration, its outputs checked against the reference interpreter on random
# inputs. The GPUs are hidden (CUDA_VISIBLE_DEVICES=""): the GPU suite checks those.
#
#   zoo-check.sh COLLAGE_RUN TC_MAKE_MODELS [NAME...]   check the NAMEd stand-ins (default: all)
#   zoo-check.sh --covers TC_MAKE_MODELS NAME...        fail unless NAME... are exactly the
#                                                       stand-ins tc-make-models writes
#
# One line a model, "ok NAME (S s)" or "FAILED NAME" followed by the end of collage-run's output;
# exit status 1 when one failed (a model it cannot read, a configuration that fails or whose
# outputs do not match), 2 on a bad command line.
set -uo pipefail

usage() {
  echo "usage: $0 COLLAGE_RUN TC_MAKE_MODELS [NAME...] | $0 --covers TC_MAKE_MODELS NAME..." >&2
  exit 2
}

work=$(mktemp -d "${TMPDIR:-/tmp}/zoo-check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

if [[ ${1:-} == --covers ]]; then
  (($# >= 3)) || usage
  make_models=$2
  shift 2
  "$make_models" "$work" --standins >/dev/null || { echo "FAILED: tc-make-models --standins" >&2; exit 1; }
  written=$(cd "$work" && ls -- *.onnx | sed 's/[.]onnx$//' | sort)
  listed=$(printf '%s\n' "$@" | sort)
  if [[ $written != "$listed" ]]; then
    echo "the list checked and the stand-ins differ (< only written, > only listed):"
    diff <(echo "$written") <(echo "$listed") | grep '^[<>]'
    exit 1
  fi
  echo "ok: $# stand-ins, all listed"
  exit 0
fi

(($# >= 2)) || usage
collage_run=$1
make_models=$2
shift 2
if (($# == 0)); then
  "$make_models" "$work" --standins >/dev/null || { echo "FAILED: tc-make-models --standins" >&2; exit 1; }
  set -- $(cd "$work" && ls -- *.onnx | sed 's/[.]onnx$//')
else
  "$make_models" "$work" "$@" >/dev/null || { echo "FAILED: tc-make-models $*" >&2; exit 1; }
fi

failed=0
for name in "$@"; do
  start=$(date +%s.%N)
  # Analytic costs: nothing is measured, so the partitioning and the run take a fraction of a second.
  if CUDA_VISIBLE_DEVICES="" "$collage_run" "$work/$name.onnx" --compare --cost analytic >"$work/$name.out" 2>&1; then
    echo "ok $name ($(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
  else
    echo "FAILED $name"
    grep -v -e '^collage-run: cuda' -e '^collage-run: .*: left out, its cuda device' "$work/$name.out" | tail -n 15 | sed 's/^/  /'
    failed=1
  fi
done
exit $failed
