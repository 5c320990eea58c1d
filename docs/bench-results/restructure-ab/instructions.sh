#!/bin/bash
# Instruction counts (callgrind) of docs/benchmarks.md's "Before and after the restructuring (issue 23)":
#   BEFORE=build-at-1f4ed3e NOW=build-at-cdd84e0 instructions.sh
# native: the inclusive count of NativeKernel::run in a process that runs the benchmark once
# (--benchmark_min_time=0: one iteration); search: the whole search_bench process for the row's iterations:1
# variant (graph, warm-up call, one timed call).
OUT=${OUT:-$(dirname "$0")/instructions}
mkdir -p "$OUT"
declare -A ROOT=([before]=$BEFORE [now]=$NOW)
cg=$(mktemp)
for bm in BM_NativeBiasRelu/1 BM_NativeResidual/1 BM_NativeGelu BM_NativeSoftmaxDecomposed \
          BM_NativeLayerNormDecomposed BM_NativeGemm/0 BM_NativeGemm/3 BM_NativeConv/1 BM_NativeConv/5 \
          BM_NativeConv/8 BM_NativeConvBiasRelu/1 BM_NativeConvBiasRelu/7; do
  for s in before now; do
    valgrind --tool=callgrind --callgrind-out-file="$cg" "${ROOT[$s]}/examples/backends/native/tc_native_bench" \
      --benchmark_filter="^$bm\$" --benchmark_min_time=0 >/dev/null 2>&1
    n=$(callgrind_annotate --inclusive=yes "$cg" | grep 'NativeKernel::run(' | head -1 | awk '{print $1}' | tr -d ,)
    echo "$bm $s $n" | tee -a "$OUT/native-kernel-run-instructions.txt"
  done
done
for row in 2/12/3/0 2/48/3/0 2/48/3/1 2/48/3/2 0/10000/3/0 1/1600/3/0 3/32/3/1 3/32/3/2 3/32/3/0 3/32/1/0; do
  for s in before now; do
    n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "${ROOT[$s]}/bench/search_bench" \
          --benchmark_filter="BM_Partition/$row/iterations:1\$" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    echo "$row $s $n" | tee -a "$OUT/search-process-instructions.txt"
  done
done
rm -f "$cg"
