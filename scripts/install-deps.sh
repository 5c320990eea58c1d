#!/usr/bin/env bash
# Installs the Debian packages collage's build, tests, benchmarks and demo need, when they are missing.
# Idempotent and quiet when everything is already installed.
set -euo pipefail

packages=(
  cmake make g++ clang ccache
  libboost-dev libboost-graph-dev libeigen3-dev nlohmann-json3-dev
  googletest libgtest-dev libbenchmark-dev
  graphviz gnuplot
)

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

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-deps.sh: installing missing packages: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "install-deps.sh: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
  fi
fi
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
