#!/usr/bin/env bash
# Builds and runs all of collage's tests (the README's test command; .ci/run calls it).
#
# Configurations (each in build/test-<name>):
#   gcc17           g++, C++17: tests, benchmarks (built, not run), examples, header check
#   clang20         clang++, C++20: tests, examples, header check
#   asan            g++, C++20, ASan + UBSan: tests, examples, header check
#   clang17-headers clang++, C++17: header check only
#   gcc20-headers   g++, C++20: header check only
# COLLAGE_TEST_CONFIGS="gcc17 asan" runs a subset; COLLAGE_JOBS sets the parallelism (default 2).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

bash scripts/install-deps.sh

all_configs="gcc17 clang20 asan clang17-headers gcc20-headers"
configs=${COLLAGE_TEST_CONFIGS:-$all_configs}
jobs=${COLLAGE_JOBS:-2}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CTEST_OUTPUT_ON_FAILURE=1

# run_config NAME CXX STD KIND [extra cmake args...]; KIND is "full" or "headers".
run_config() {
  local name=$1 cxx=$2 std=$3 kind=$4
  shift 4
  local dir="build/test-$name"
  echo "==== [$name] $cxx, C++$std ($kind) in $dir"
  local args=(
    -S . -B "$dir"
    -DCMAKE_CXX_COMPILER="$cxx"
    -DCMAKE_CXX_STANDARD="$std"
    -DCMAKE_BUILD_TYPE=
    "-DCMAKE_CXX_FLAGS=-O1 -g1"
    -DCOLLAGE_WERROR=ON
  )
  if [[ $kind == headers ]]; then
    args+=(-DCOLLAGE_BUILD_TESTS=OFF -DCOLLAGE_BUILD_BENCHMARKS=OFF -DCOLLAGE_BUILD_EXAMPLES=OFF)
  fi
  cmake "${args[@]}" "$@" || return 1
  if [[ $kind == headers ]]; then
    cmake --build "$dir" --target collage_header_check -j "$jobs" || return 1
    return 0
  fi
  cmake --build "$dir" -j "$jobs" || return 1
  (cd "$dir" && ctest --output-on-failure -j "$jobs") || return 1
}

declare -a summary=()
failed=0
for config in $configs; do
  case $config in
    gcc17) set -- g++ 17 full -DCOLLAGE_BUILD_BENCHMARKS=ON -DCOLLAGE_BUILD_EXAMPLES=ON ;;
    clang20) set -- clang++ 20 full -DCOLLAGE_BUILD_BENCHMARKS=OFF -DCOLLAGE_BUILD_EXAMPLES=ON ;;
    asan) set -- g++ 20 full -DCOLLAGE_SANITIZE=ON -DCOLLAGE_BUILD_BENCHMARKS=OFF -DCOLLAGE_BUILD_EXAMPLES=ON ;;
    clang17-headers) set -- clang++ 17 headers ;;
    gcc20-headers) set -- g++ 20 headers ;;
    *)
      echo "test.sh: unknown configuration '$config' (known: $all_configs)" >&2
      summary+=("$config: UNKNOWN")
      failed=1
      continue
      ;;
  esac
  start=$SECONDS
  if run_config "$config" "$@"; then
    summary+=("$config: PASS ($((SECONDS - start))s)")
  else
    summary+=("$config: FAIL ($((SECONDS - start))s)")
    failed=1
  fi
done

echo "==== summary"
for line in "${summary[@]}"; do
  echo "  $line"
done
exit $failed
