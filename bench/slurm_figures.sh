#!/bin/bash
# The Slurm figures of docs/slurm.md: `gridcast slurm stage` against Slurm's sbcast (its
# default, and its best fanout) on a real Slurm over two-sites, 256 MiB. One run after another,
# as root, caches dropped before each; one JSON line per run to $1 (default
# ./slurm-figures.jsonl). Usage: bench/slurm_figures.sh [OUT.jsonl] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-slurm-figures.jsonl}
rounds=${2:-1}
. bench/figures_lib.sh
T=deploy/topologies/two-sites.yaml
for round in $(seq "$rounds"); do
  run --topology $T --size 256MiB --mode slurm-stage
  run --topology $T --size 256MiB --mode sbcast --algo fanout:2
done
# sbcast's default (and fanout 4) once: each takes several minutes.
run --topology $T --size 256MiB --mode sbcast
run --topology $T --size 256MiB --mode sbcast --algo fanout:4
