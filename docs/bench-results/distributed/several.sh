#!/usr/bin/env bash
# Several collage-run processes (two of them MPI jobs) against one PostgreSQL server at once.
set -uo pipefail
# Needs a Release build in build/rel (BUILD=... names another) and the models of
#   build/rel/examples/models/tc-make-models build/rel/models --all (run from the repository root)
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
build=${BUILD:-build/rel}
models=$build/models
R=$build/examples/collage_run/collage-run
S=scripts/throwaway-postgres.sh
export PGOPTIONS="-c client_min_messages=warning"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
out=$(mktemp -d)
pgdir=$(mktemp -d)/pg
url=$($S start $pgdir)
for round in 1 2; do
  s=$SECONDS
  $R $models/mnist.onnx --db "$url" > $out/mnist.$round 2>&1 &
  $R $models/resnet-mini.onnx --db "$url" > $out/resnet.$round 2>&1 &
  mpirun --oversubscribe --bind-to none -np 2 $R $models/mobilenet-mini.onnx --db "$url" > $out/mobilenet.$round 2>&1 &
  mpirun --oversubscribe --bind-to none -np 2 $R $models/bert-mini.onnx --db "$url" > $out/bert.$round 2>&1 &
  wait
  echo "round $round ($((SECONDS - s)) s):"
  for f in mnist resnet mobilenet bert; do echo "  $f: $(grep -o 'tuning:.*' $out/$f.$round) | exit lines: $(grep -c 'collage-run:.*database' $out/$f.$round)"; done
  echo "  rows: $(psql -tA "$url" -c 'SELECT count(*), count(DISTINCT (identity, key)) FROM collage_measurements')"
done
$S stop $pgdir
