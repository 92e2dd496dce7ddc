#!/bin/bash
# The allgather figures of docs/allgather.md: every all-to-all planner through gridcastd, beside
# its simulated time, against Open MPI's MPI_Allgather (forced algorithms) and the shim, on
# two-sites-25mbit (two-sites at a quarter of its rates, see the topology file). One run after
# another, as root, caches dropped before each; one JSON line per run to $1 (default
# ./allgather-figures.jsonl). Usage: bench/allgather_figures.sh [OUT.jsonl] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-allgather-figures.jsonl}
rounds=${2:-1}
. bench/figures_lib.sh
T=deploy/topologies/two-sites-25mbit.yaml
for round in $(seq "$rounds"); do
  for algo in auto ring prefix-send kprefix:8 kshift:8 mesh2d hypercube; do
    run --topology $T --size 64MiB --mode allgather --algo $algo
  done
  for algo in ring neighbor bruck recursive_doubling; do
    run --topology $T --size 64MiB --mode mpi-allgather --algo $algo
  done
  run --topology $T --size 64MiB --mode mpi-shim-allgather
done
