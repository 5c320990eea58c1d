#!/usr/bin/env bash
# The evidence of docs/distributed.md that needs a PostgreSQL server:
#   evidence.sh same      the same results as the single-process SQLite path, on the zoo models
#   evidence.sh several   several collage-run processes (two of them MPI jobs) against one server at once
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
mpirun=(mpirun --oversubscribe --bind-to none)

same() {
  out=$(mktemp -d)
  pgdir=$(mktemp -u -d /tmp/tc_pg.XXXXXX)
  url=$($S start $pgdir)
  base=${url%/*}
  parts() { sed -n '/"parts": \[/,/^      \]/p' "$1"; }
  summary() { grep -o 'tuning:.*' "$1"; }
  for m in mnist resnet-mini mobilenet-mini bert-mini; do
    model=$models/$m.onnx
    db=$out/$m.sqlite; rm -f $db*
    $R $model --db $db --json $out/$m.sqlite1.json > $out/$m.sqlite1.out 2>&1
    $R $model --db $db --json $out/$m.sqlite2.json > $out/$m.sqlite2.out 2>&1
    # the SQLite rows, copied into a fresh PostgreSQL database
    pgdb=${m//-/_}_copy
    psql -q "$base/postgres" -c "DROP DATABASE IF EXISTS $pgdb" -c "CREATE DATABASE $pgdb" >/dev/null
    $build/examples/tests/tc-db-bench "$base/$pgdb" 0 0 >/dev/null  # creates the table
    sqlite3 $db "SELECT 'INSERT INTO collage_measurements (identity, key, invalid, cost, spread, samples) VALUES (''\\x' || hex(identity) || '''::bytea, ''\\x' || hex(key) || '''::bytea, ' || (CASE invalid WHEN 1 THEN 'true' ELSE 'false' END) || ', ' || printf('%!.20e', cost) || ', ' || printf('%!.20e', spread) || ', ' || samples || ');' FROM collage_measurements" | psql -q "$base/$pgdb" >/dev/null
    "${mpirun[@]}" -np 3 $R $model --db "$base/$pgdb" --json $out/$m.mpi-copy.json > $out/$m.mpi-copy.out 2>&1
    # a fresh PostgreSQL database measured over 3 ranks, then read by one process
    pgdb2=${m//-/_}_fresh
    psql -q "$base/postgres" -c "DROP DATABASE IF EXISTS $pgdb2" -c "CREATE DATABASE $pgdb2" >/dev/null
    "${mpirun[@]}" -np 3 $R $model --db "$base/$pgdb2" --json $out/$m.mpi-fresh.json > $out/$m.mpi-fresh.out 2>&1
    $R $model --db "$base/$pgdb2" --json $out/$m.pg-single.json > $out/$m.pg-single.out 2>&1
    # the analytic cost model (deterministic): one process against 2, 3, 4 ranks
    $R $model --cost analytic --json $out/$m.analytic1.json > /dev/null 2>&1
    same_analytic=yes
    for n in 2 3 4; do
      "${mpirun[@]}" -np $n $R $model --cost analytic --json $out/$m.analytic$n.json > /dev/null 2>&1
      [[ "$(parts $out/$m.analytic1.json)" == "$(parts $out/$m.analytic$n.json)" ]] || same_analytic=no
    done
    echo "== $m"
    echo "sqlite, 1 process, fresh:      $(summary $out/$m.sqlite1.out)"
    echo "sqlite, 1 process, again:      $(summary $out/$m.sqlite2.out)  parts same as fresh: $([[ "$(parts $out/$m.sqlite1.json)" == "$(parts $out/$m.sqlite2.json)" ]] && echo yes || echo no)"
    echo "postgres copy, 3 ranks:        $(summary $out/$m.mpi-copy.out)  parts same as sqlite: $([[ "$(parts $out/$m.sqlite1.json)" == "$(parts $out/$m.mpi-copy.json)" ]] && echo yes || echo no)"
    echo "postgres fresh, 3 ranks:       $(summary $out/$m.mpi-fresh.out)  parts same as sqlite: $([[ "$(parts $out/$m.sqlite1.json)" == "$(parts $out/$m.mpi-fresh.json)" ]] && echo yes || echo no); est. ms sqlite $(grep -m1 -o '"estimated_ms": [0-9.e-]*' $out/$m.sqlite1.json | cut -d' ' -f2) vs $(grep -m1 -o '"estimated_ms": [0-9.e-]*' $out/$m.mpi-fresh.json | cut -d' ' -f2)"
    echo "postgres fresh, 1 process:     $(summary $out/$m.pg-single.out)  parts same as its 3 ranks: $([[ "$(parts $out/$m.mpi-fresh.json)" == "$(parts $out/$m.pg-single.json)" ]] && echo yes || echo no)"
    echo "analytic, 2/3/4 ranks vs 1:    parts the same: $same_analytic"
  done
  $S stop $pgdir
}

several() {
  out=$(mktemp -d)
  pgdir=$(mktemp -u -d /tmp/tc_pg.XXXXXX)
  url=$($S start $pgdir)
  for round in 1 2; do
    s=$SECONDS
    $R $models/mnist.onnx --db "$url" > $out/mnist.$round 2>&1 &
    $R $models/resnet-mini.onnx --db "$url" > $out/resnet.$round 2>&1 &
    "${mpirun[@]}" -np 2 $R $models/mobilenet-mini.onnx --db "$url" > $out/mobilenet.$round 2>&1 &
    "${mpirun[@]}" -np 2 $R $models/bert-mini.onnx --db "$url" > $out/bert.$round 2>&1 &
    wait
    echo "round $round ($((SECONDS - s)) s):"
    for f in mnist resnet mobilenet bert; do echo "  $f: $(grep -o 'tuning:.*' $out/$f.$round) | exit lines: $(grep -c 'collage-run:.*database' $out/$f.$round)"; done
    echo "  rows: $(psql -tA "$url" -c 'SELECT count(*), count(DISTINCT (identity, key)) FROM collage_measurements')"
  done
  $S stop $pgdir
}

case ${1:-} in
  same | several) "$1" ;;
  *) echo "usage: $0 same | several" >&2; exit 2 ;;
esac
