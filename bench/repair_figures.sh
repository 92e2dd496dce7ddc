#!/bin/bash
# The failure figures of docs/repair.md and docs/performance.md ("Failures"): members SIGKILLed
# mid-broadcast (gridcast bench --kill N --kill-at F: the N members with the most children),
# the plan patched around them, the survivors' completion over their bound (the killed members'
# upload removed). As root, one run after another, RUNS (default 3) runs a point; one JSON
# line per run goes to $1 (default ./repair-figures.jsonl). flat16-50 is flat16 with 50mbit
# NICs (the host carries the aggregate: docs/performance.md). GRID=small runs flat16-50 at
# 128 MiB only (push and hybrid, 1, 2 and 4 killed at 0.3); GRID=full adds 0.6, 256 MiB and
# two-sites. Usage: [RUNS=3] [GRID=small|full] bench/repair_figures.sh [OUT.jsonl]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-repair-figures.jsonl}
runs=${RUNS:-3}
grid=${GRID:-small}
. bench/figures_lib.sh
F50=$(mktemp --suffix=-flat16-50mbit.yaml)
trap 'rm -f "$F50"' EXIT
sed s/100mbit/50mbit/ deploy/topologies/flat16.yaml > "$F50"
topologies=("$F50")
sizes=(128MiB)
fractions=(0.3)
if [ "$grid" = full ]; then
  topologies+=(deploy/topologies/two-sites.yaml)
  sizes+=(256MiB)
  fractions+=(0.6)
fi
for topology in "${topologies[@]}"; do
  for size in "${sizes[@]}"; do
    for mode in push hybrid; do
      for kill in 1 2 4; do
        for at in "${fractions[@]}"; do
          for ((i = 0; i < runs; ++i)); do
            run --topology "$topology" --size "$size" --mode "$mode" --kill "$kill" --kill-at "$at"
          done
        done
      done
    done
  done
done
