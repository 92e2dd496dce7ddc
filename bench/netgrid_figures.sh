#!/bin/bash
# The netgrid figures of docs/performance.md ("Current figures"), one run after another, as root.
# Each run starts with a clean page cache (a full one makes every payload write pay for
# reclaim) and records the load average before it; one JSON line per run goes to $1
# (default ./netgrid-figures.jsonl). Usage: bench/netgrid_figures.sh [OUT.jsonl]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-netgrid-figures.jsonl}
run() {
  sync
  echo 1 > /proc/sys/vm/drop_caches
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  local result
  result=$($G bench "$@" --json 2>/dev/null | tail -1)
  echo "{\"args\": \"$*\", \"load_before\": $load, \"result\": ${result:-null}}" | tee -a "$out"
}
F=deploy/topologies/flat16.yaml
T=deploy/topologies/two-sites.yaml
Q=deploy/topologies/flat16-25mbit.yaml
run --topology $F --size 256MiB --mode push --algo multilane
run --topology $F --size 256MiB --mode mpi
run --topology $F --size 256MiB --mode pull
run --topology $F --size 256MiB --mode pull-default
run --topology $F --size 256MiB --mode push
run --topology $F --size 256MiB --mode hybrid
run --topology $F --size 256MiB --mode hybrid --kill 2
run --topology $F --size 256MiB --mode hybrid --kill 2 --kill-at 0.3
run --topology $T --size 256MiB --mode push
run --topology $T --size 256MiB --mode mpi
run --topology $T --size 256MiB --mode pull
run --topology $Q --size 64MiB --mode push
run --topology $Q --size 64MiB --mode hybrid
run --topology $Q --size 64MiB --mode hybrid --kill 2
run --topology $Q --size 64MiB --mode hybrid --kill 2 --kill-at 0.3
