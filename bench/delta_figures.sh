#!/bin/bash
# The re-staging figures of docs/delta.md (issue 36), as root: on two-sites, 256 MiB, each base
# change of `gridcast bench --base-change` and a tree of 1,000 files (a base sent, changed, sent again; every copy
# checked), ROUNDS rounds of the six, caches dropped before each run. One JSON line per
# run goes to $1 (default ./delta-figures.jsonl).
# Usage: bench/delta_figures.sh [OUT.jsonl] [ROUNDS] [TOPOLOGY] [SIZE]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-delta-figures.jsonl}
rounds=${2:-2}
topology=${3:-deploy/topologies/two-sites.yaml}
size=${4:-256MiB}
. bench/figures_lib.sh
for ((i = 1; i <= rounds; ++i)); do
  for kind in same scattered insert append prepend tree; do
    run --topology "$topology" --size "$size" --mode push --base-change "$kind"
  done
done
