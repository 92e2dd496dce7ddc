#!/bin/bash
# The failure figures of docs/repair.md and docs/performance.md ("Failures"): members SIGKILLed
# mid-broadcast (gridcast bench --kill N --kill-at F: the N members with the most children),
# the plan patched around them, the survivors' completion over their bound (the killed members'
# upload removed). As root, one run after another, RUNS (default 3) runs a point; one JSON
# line per run goes to $1 (default ./repair-figures.jsonl). flat16-50 is flat16 with 50mbit
# NICs (the host carries the aggregate: docs/performance.md). GRID=small runs flat16-50 at
# 128 MiB only (push and hybrid, 1, 2 and 4 killed at 0.3); GRID=full adds 0.6 and two-sites
# at 256 MiB (issue 53's points: about an hour at RUNS=3). GRID=slow runs the stragglers instead: the interior member with the most children
# in the plan (auto's, as bench sends it) shaped to a tenth of its NIC both ways from the start
# (gridcast bench --slow NAME=RATE), flat16-50 at 128 MiB and two-sites at 256 MiB, push and
# hybrid; its figure is others_ratio. Usage: [RUNS=3] [GRID=small|full|slow]
# bench/repair_figures.sh [OUT.jsonl]
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
# The member with the most children in `gridcast plan`'s auto plan for topology $1 and size $2.
busiest() {
  $G plan --topology "$1" --size "$2" --algo auto --json | /usr/bin/python3 -c '
import collections, json, sys
plan = json.load(sys.stdin)
children = collections.Counter()
for lane in plan["lanes"]:
    for edge in lane["edges"]:
        children[edge["parent"]] += len(edge["children"])
del children[plan["members"][0]]
print(children.most_common(1)[0][0])'
}
if [ "$grid" = slow ]; then
  for point in "$F50 128MiB 5mbit" "deploy/topologies/two-sites.yaml 256MiB 10mbit"; do
    read -r topology size rate <<< "$point"
    member=$(busiest "$topology" "$size")
    for mode in push hybrid; do
      for ((i = 0; i < runs; ++i)); do
        run --topology "$topology" --size "$size" --mode "$mode" --slow "$member=$rate"
      done
    done
  done
  exit 0
fi
points=("$F50 128MiB")
fractions=(0.3)
if [ "$grid" = full ]; then
  points+=("deploy/topologies/two-sites.yaml 256MiB")
  fractions+=(0.6)
fi
for point in "${points[@]}"; do
  read -r topology size <<< "$point"
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
