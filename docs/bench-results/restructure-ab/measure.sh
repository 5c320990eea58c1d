#!/bin/bash
# The A/B timings of docs/benchmarks.md's "Before and after the restructuring (issue 23)".
#
#   BEFORE=path/to/build-at-1f4ed3e NOW=path/to/build-at-cdd84e0 MODELS=dir-of-tc-make-models--all \
#     measure.sh ROUNDS GROUP...          (groups: native library search e2e)
#
# Each round runs every group on both builds in turn (before first in odd rounds, now first in even rounds), one
# process per build and group, pinned to vCPU 1; raw JSON into this folder. collage-run measures from an empty
# SQLite database on every run. tables.py makes the tables.
set -u
OUT=${OUT:-$(dirname "$0")}
E2E_MODELS=${E2E_MODELS:-"resnet-mini mobilenet-mini bert-mini resnet18 mobilenet_v2"}
rounds=$1; shift
declare -A ROOT=([before]=$BEFORE [now]=$NOW)
# collage-run moved from examples/run to examples/collage_run in the restructuring
declare -A RUN=([before]=examples/run/collage-run [now]=examples/collage_run/collage-run)
SEARCH_F='^BM_Partition/2/(12|48|768)/3/[012]/iterations:1$|^BM_Partition/2/12/3/[012]$|^BM_Partition/2/(48|768)/3/0/min_time.*|^BM_Partition/0/(10000|100000)/3/0/iterations:1$|^BM_Partition/1/(1600|9100)/3/0/iterations:1$|^BM_Partition/3/32/1/0/iterations:1$|^BM_Partition/3/(32|64)/3/0/iterations:1$|^BM_Partition/3/32/3/[12]/iterations:1$'
mkdir -p "$OUT"/{native,library,search,e2e}
db=$(mktemp -d)
run_group() {  # side group round
  local s=$1 g=$2 r=$3 b=${ROOT[$1]}
  echo "[$(date -u +%T)] round $r $g $s load $(cut -d' ' -f1-3 /proc/loadavg)"
  case $g in
    native) taskset -c 1 "$b/examples/backends/native/tc_native_bench" --benchmark_repetitions=3 \
              --benchmark_enable_random_interleaving=true --benchmark_min_time=0.3 \
              --benchmark_out="$OUT/native/$s-r$r.json" --benchmark_out_format=json >/dev/null ;;
    library) taskset -c 1 "$b/bench/examples/library_kernels_bench" --benchmark_repetitions=3 \
              --benchmark_enable_random_interleaving=true --benchmark_min_time=0.3 \
              --benchmark_out="$OUT/library/$s-r$r.json" --benchmark_out_format=json >/dev/null ;;
    search) taskset -c 1 "$b/bench/search_bench" --benchmark_filter="$SEARCH_F" --benchmark_repetitions=3 \
              --benchmark_out="$OUT/search/$s-r$r.json" --benchmark_out_format=json >/dev/null ;;
    e2e) for m in $E2E_MODELS; do
           rm -f "$db"/m.db*
           taskset -c 1 "$b/${RUN[$s]}" "$MODELS/$m.onnx" --compare --threads 1 --db "$db/m.db" \
             --json "$OUT/e2e/$m-$s-r$r.json" >/dev/null 2>&1 || echo "  FAILED $m $s"
         done ;;
  esac
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order=(before now); else order=(now before); fi
  for g in "$@"; do
    for s in "${order[@]}"; do run_group "$s" "$g" "$r"; done
  done
done
rm -rf "$db"
