#!/bin/bash
# The figures of docs/origin.md (issue 54): the payload staged from an HTTP origin behind a link
# of RATE to the source (gridcast bench --origin-rate: python3 -m http.server in a namespace of
# its own), against curl alone fetching it on the source and the broadcast of the local file,
# all three timed in each run. Two-sites, 256 MiB, push, the origin behind 200mbit (faster than
# the broadcast: the figure is staged / the local broadcast) and behind 50mbit (about the
# broadcast's own rate: staged / curl alone). As root, one run after another, RUNS (default 3)
# runs a point; one JSON line per run goes to $1 (default ./origin-figures.jsonl), whose
# origin_ratio is staged over the longer of the two.
# Usage: [RUNS=3] bench/origin_figures.sh [OUT.jsonl]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-origin-figures.jsonl}
runs=${RUNS:-3}
. bench/figures_lib.sh
for rate in 200mbit 50mbit; do
  for ((i = 0; i < runs; ++i)); do
    run --topology deploy/topologies/two-sites.yaml --size 256MiB --mode push --origin-rate "$rate"
  done
done
