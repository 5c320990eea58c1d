#!/usr/bin/env bash
# Builds and runs collage's tests (the README's test command; .ci/run calls it with --full).
#
#   ./scripts/test.sh              the quick check: the gcc17 configuration alone
#   ./scripts/test.sh --full       every configuration below (what CI runs)
#   ./scripts/test.sh NAME...      the named configurations
# COLLAGE_TEST_CONFIGS="NAME..." names configurations too ("all" is --full); COLLAGE_JOBS sets the
# parallelism (default: the number of cores).
#
# Configurations, each in build/test-<name>, all with -Werror and followed by ctest:
#   gcc17    g++ C++17 -O1: the library's tests, the examples with the example compiler, the tool;
#            every header compiled on its own
#   clang20  clang++ C++20 Release (-O3): every target (the example compiler and the benchmarks,
#            built, not run, included) and the libFuzzer smoke runs of the tool's readers and the
#            ONNX reader; the packaging tests (label consumer) and the NVRTC compilations
#            (CudaNvrtc.*, which compile CUDA source and so do not depend on the host compiler)
#            run in gcc17 only
#   asan     g++ C++20 -Og with ASan + UBSan: the library's tests, the examples and the tool (the
#            packaging tests, labelled consumer, are left to the other two)
# The example compiler (examples/: the tensor IR, ONNX, the backends, collage-run) takes most of the
# build time, so it is built twice: at -O1 by g++ and at -O3 by clang++ (COLLAGE_BUILD_EXAMPLE_COMPILER).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

all_configs="gcc17 clang20 asan"
quick_configs="gcc17"

# config_args NAME: sets `args` to the cmake arguments of configuration NAME and `ctest_args` to its
# ctest arguments; fails for unknown names.
config_args() {
  # -Og: g++ compiles the sanitized tests in about a third of the time -O1 takes (UBSan's checks
  # at -O1 cost the most), and they run about as fast.
  local debug=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-O1 -g1")
  local sanitized_debug=(-DCMAKE_BUILD_TYPE= "-DCMAKE_CXX_FLAGS=-Og -g1")
  local parts=(-DCOLLAGE_BUILD_TESTS=ON -DCOLLAGE_BUILD_EXAMPLES=ON -DCOLLAGE_BUILD_TOOLS=ON)
  local compiler=(-DCOLLAGE_BUILD_EXAMPLE_COMPILER=ON)
  local no_compiler=(-DCOLLAGE_BUILD_EXAMPLE_COMPILER=OFF)
  ctest_args=()
  case $1 in
    # gcc17 builds the native and eigen kernels for the x86-64 baseline (a portable build), clang20
    # for this machine (-march=native, the default).
    gcc17) args=(-DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_STANDARD=17 "${debug[@]}" "${parts[@]}" "${compiler[@]}"
                 -DCOLLAGE_BUILD_BENCHMARKS=OFF -DTC_CPU_ARCH_FLAGS=) ;;
    clang20) args=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_STANDARD=20 -DCMAKE_BUILD_TYPE=Release "${parts[@]}"
                   "${compiler[@]}" -DCOLLAGE_BUILD_BENCHMARKS=ON -DCOLLAGE_CHECK_HEADERS=OFF)
             ctest_args=(-LE consumer -E '^CudaNvrtc[.]') ;;
    asan) args=(-DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_STANDARD=20 "${sanitized_debug[@]}" "${parts[@]}" "${no_compiler[@]}"
                -DCOLLAGE_BUILD_BENCHMARKS=OFF -DCOLLAGE_SANITIZE=ON -DCOLLAGE_CHECK_HEADERS=OFF)
          ctest_args=(-LE consumer) ;;
    *) return 1 ;;
  esac
  args+=(-DCOLLAGE_WERROR=ON)
}

configs=()
if [[ $# -gt 0 ]]; then
  for arg in "$@"; do
    case $arg in
      --full) configs+=($all_configs) ;;
      -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
      -*) echo "test.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
      *) configs+=("$arg") ;;
    esac
  done
elif [[ ${COLLAGE_TEST_CONFIGS:-} == all ]]; then
  configs=($all_configs)
else
  configs=(${COLLAGE_TEST_CONFIGS:-$quick_configs})
fi
# The package groups of scripts/install-deps.sh these configurations need.
dep_groups=(core)
for config in "${configs[@]}"; do
  if ! config_args "$config"; then
    echo "test.sh: unknown configuration '$config' (known: $all_configs)" >&2
    exit 2
  fi
  [[ " ${args[*]} " == *" -DCMAKE_CXX_COMPILER=clang++ "* ]] && dep_groups+=(clang)
  [[ " ${args[*]} " == *" -DCOLLAGE_BUILD_BENCHMARKS=ON "* ]] && dep_groups+=(bench)
  [[ " ${args[*]} " == *" -DCOLLAGE_BUILD_EXAMPLE_COMPILER=ON "* ]] && dep_groups+=(examples postgres mpi)
done

bash scripts/install-deps.sh "${dep_groups[@]}"

jobs=${COLLAGE_JOBS:-$(nproc)}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CTEST_OUTPUT_ON_FAILURE=1

# run_config NAME: configures, builds and tests configuration NAME in build/test-NAME; where it
# fails, sets `failure` to the step and, for tests, their names.
run_config() {
  local dir="build/test-$1" args ctest_args
  config_args "$1"
  echo "==== [$1] in $dir: ${args[*]}"
  # Ninja when installed (the quicker scheduler); an existing build directory keeps its generator.
  local generator=()
  if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
  failure="cmake could not configure it"
  cmake -S . -B "$dir" "${generator[@]}" "${args[@]}" || return 1
  failure="the build failed"
  cmake --build "$dir" -j "$jobs" || return 1
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"
  if ! (cd "$dir" && ctest --output-on-failure -j "$jobs" "${ctest_args[@]}"); then
    # The summary names the failed tests: a CI log that keeps only its tail still says which.
    failure="failed tests: $(cut -d: -f2- "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | paste -sd ' ')"
    return 1
  fi
}

declare -a summary=() rerun_dirs=()
failed=0
total_start=$SECONDS
for config in "${configs[@]}"; do
  start=$SECONDS
  if run_config "$config"; then
    summary+=("$config: PASS ($((SECONDS - start))s)")
  else
    summary+=("$config: FAIL ($((SECONDS - start))s): $failure")
    [[ $failure == "failed tests:"* ]] && rerun_dirs+=("build/test-$config")
    failed=1
  fi
done

# The failed tests once more, last, so that their output ends the log; the run still fails.
for dir in "${rerun_dirs[@]}"; do
  echo "==== $dir: the failed tests again"
  if (cd "$dir" && ctest --rerun-failed --output-on-failure); then
    summary+=("$dir: the failed tests passed when run again: they are flaky")
  fi
done

echo "==== summary ($((SECONDS - total_start))s)"
for line in "${summary[@]}"; do
  echo "  $line"
done
if [[ ${#configs[@]} -eq 1 && $configs == "$quick_configs" ]]; then
  echo "  (the quick check; ./scripts/test.sh --full runs every configuration, as CI does)"
fi
exit $failed
