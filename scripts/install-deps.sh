#!/usr/bin/env bash
# Installs the Debian packages collage's build, tests, benchmarks and demo need, when they are missing.
# Idempotent and quiet when everything is already installed.
#
#   install-deps.sh [GROUP...]    the packages of the named groups (default: all groups)
#     core    compiler, CMake, ccache, Boost, nlohmann-json, GoogleTest, Eigen: the library, its tests,
#             examples and tool with g++
#     examples  ONNX, protobuf, oneDNN, SQLite and the ONNX backend node tests: the example tensor
#             compiler (examples/) and collage-run
#     postgres  PostgreSQL (server and libpq): collage-run --db postgresql://..., and the throw-away
#             server its tests start (scripts/throwaway-postgres.sh)
#     mpi     Open MPI: mpirun -np N collage-run, measuring on every rank, and its mpirun tests
#     clang   clang (the clang configurations of scripts/test.sh, libFuzzer)
#     bench   Google Benchmark
#     pictures  Graphviz and gnuplot (the demo's picture, the benchmark plots)
#     node    Node.js and npm (bench/ort/compare.sh installs ONNX Runtime's CPU build from npm)
set -euo pipefail

declare -A groups=(
  [core]="cmake make ninja-build g++ ccache locales libboost-dev libboost-graph-dev libeigen3-dev nlohmann-json3-dev googletest libgtest-dev"
  [examples]="libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev libsqlite3-dev libonnx-testdata"
  [postgres]="postgresql libpq-dev"
  [mpi]="openmpi-bin libopenmpi-dev"
  [clang]="clang"
  [bench]="libbenchmark-dev"
  [pictures]="graphviz gnuplot"
  [node]="nodejs npm"
)

packages=()
for group in "${@:-core examples postgres mpi clang bench pictures}"; do
  for name in $group; do
    if [[ -z ${groups[$name]+set} ]]; then
      echo "install-deps.sh: unknown group '$name' (known: ${!groups[*]})" >&2
      exit 2
    fi
    # A Node.js from elsewhere (NodeSource's nodejs carries npm) conflicts with Debian's npm package.
    if [[ $name == node ]] && command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
      continue
    fi
    packages+=(${groups[$name]})
  done
done

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps.sh: not a Debian-based system; install these yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

# A locale whose decimal separator is ',' lets the tests check that numbers in reports, traces
# and databases do not follow the process locale.
ensure_comma_locale() {
  if locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then return 0; fi
  command -v localedef >/dev/null 2>&1 || return 0
  ${sudo_cmd[@]+"${sudo_cmd[@]}"} localedef -i de_DE -f UTF-8 de_DE.UTF-8 >/dev/null 2>&1 || true
}

sudo_cmd=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
  sudo_cmd=(sudo)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  ensure_comma_locale
  exit 0
fi

echo "install-deps.sh: installing missing packages: ${missing[*]}"
if [[ $(id -u) -ne 0 && ${#sudo_cmd[@]} -eq 0 ]]; then
  echo "install-deps.sh: not root and no sudo; please install: ${missing[*]}" >&2
  exit 1
fi
${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get update
${sudo_cmd[@]+"${sudo_cmd[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
ensure_comma_locale
