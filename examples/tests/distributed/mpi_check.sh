#!/usr/bin/env bash
# ctest's mpirun tests of distributed measurement (each under a timeout, so a hang fails):
#
#   mpi_check.sh same TC_MPI_CHECK           the same answers and partitioning with 1, 2 and 3 ranks
#   mpi_check.sh faults TC_MPI_CHECK         a rank killed mid-candidate (mpirun --enable-recovery)
#                                            and a stuck rank: each costs one candidate, named, and
#                                            the job ends
#   mpi_check.sh collage-run COLLAGE_RUN TC_MAKE_MODELS
#                                            mpirun -np 2 collage-run partitions a zoo model as one
#                                            process does (the analytic cost model: deterministic)
set -uo pipefail

mode=$1
shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid the cross-memory attach of Open MPI's shared-memory transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# A launcher that ignores SIGTERM is killed 10 s later.
mpirun=(timeout -k 10 120 mpirun --oversubscribe --bind-to none)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

fail() {
  echo "FAIL: $*"
  failed=1
}

# Runs mpirun with the given arguments into $work/$name.out (stdout and stderr), in bounded time.
# On a heavily loaded machine Open MPI's launcher itself has been seen to hang after MPI_Abort
# (its PMIx layer reporting BAD-PARAM): a run that times out is tried once more, saying so, and
# fails the test when it times out again.
run() {
  local name=$1
  shift
  local started rc
  for attempt in 1 2; do
    started=$SECONDS
    "${mpirun[@]}" "$@" >"$work/$name.out" 2>&1
    rc=$?
    echo "== $name: mpirun ${*} (exit $rc, $((SECONDS - started)) s, attempt $attempt)"
    sed 's/^/   /' "$work/$name.out" | grep -v "^   candidate " | head -20
    [[ $rc -eq 124 || $rc -eq 137 ]] || return 0
  done
  fail "$name did not end within 120 s, twice"
}

case $mode in
  same)
    check=$1
    for n in 1 2 3; do
      run "np$n" -np "$n" "$check" same
      grep -q "^verdict: ok" "$work/np$n.out" || fail "np $n: answers differ from one process's"
      grep -E "^(candidate|partitioning) " "$work/np$n.out" >"$work/np$n.answers"
      [[ -s $work/np$n.answers ]] || fail "np $n: no answers"
    done
    for n in 2 3; do
      cmp -s "$work/np1.answers" "$work/np$n.answers" || fail "np $n answers differ from np 1's"
    done
    ;;
  faults)
    check=$1
    run dies --enable-recovery -np 3 "$check" dies 2
    grep -q "^verdict: ok" "$work/dies.out" || fail "a killed rank: wrong answers"
    grep -q "^note: rank 2 (.*) given up: nothing heard from it" "$work/dies.out" || fail "a killed rank: no note"
    run stuck -np 3 "$check" stuck 1
    grep -q "^verdict: ok" "$work/stuck.out" || fail "a stuck rank: wrong answers"
    grep -q "^note: rank 1 (.*) given up: it spent over 1 s on one candidate" "$work/stuck.out" || fail "a stuck rank: no note"
    ;;
  collage-run)
    collage_run=$1
    make_models=$2
    "$make_models" "$work/models" >/dev/null || fail "tc-make-models failed"
    model=$work/models/mnist.onnx
    parts() { sed -n '/"parts": \[/,/^      \]/p' "$1"; }
    "$collage_run" "$model" --cost analytic --json "$work/alone.json" >"$work/alone.out" 2>&1 || fail "collage-run alone failed"
    run np2 -np 2 "$collage_run" "$model" --cost analytic --json "$work/np2.json"
    grep -q "2 MPI ranks, measuring: 0, 1" "$work/np2.out" || fail "np 2: rank 1 did not measure"
    [[ -n $(parts "$work/alone.json") ]] || fail "no parts in collage-run's JSON"
    [[ "$(parts "$work/alone.json")" == "$(parts "$work/np2.json")" ]] || fail "np 2 partitions otherwise than one process"
    ;;
  *)
    echo "usage: $0 same TC_MPI_CHECK | faults TC_MPI_CHECK | collage-run COLLAGE_RUN TC_MAKE_MODELS" >&2
    exit 2
    ;;
esac
exit $failed
