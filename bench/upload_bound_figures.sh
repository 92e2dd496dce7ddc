#!/bin/bash
# The upload-bound figures of docs/collectives.md (issue 35), as root: on two topologies of the
# upload-bound family at rates the host carries, TCP's goodput through the shaping (iperf3 from
# the source across every switch, `gridcast bench --mode iperf`), the simulator's prediction for
# auto's plan at the rates as given and at that goodput, then push (auto) and pull on the
# netgrid, alternating, ROUNDS push runs and ROUNDS - 1 pull runs. One JSON line per prediction
# and per run goes to $1 (default ./upload-bound-figures.jsonl).
# Usage: bench/upload_bound_figures.sh [OUT.jsonl] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-upload-bound-figures.jsonl}
rounds=${2:-3}
. bench/figures_lib.sh
auto_row() {  # TOPOLOGY SIZE GOODPUT
  $G simulate --topology "$1" --size "$2" --algo auto --goodput "$3" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["auto"]))'
}
predict() {  # TOPOLOGY SIZE
  local goodput
  # The mean of the paths' "(0.956 of the NICs' 25mbit)".
  goodput=$($G bench --topology "$1" --size "$2" --mode iperf 2>/dev/null |
    sed -n "s/.*(\([0-9.]*\) of the NICs'.*/\1/p" | awk '{s += $1} END {if (NR) printf "%.3f", s / NR}')
  echo "{\"predict\": \"$1 $2\", \"auto\": $(auto_row "$1" "$2" 1), \"goodput\": ${goodput:-null}, \"auto_at_goodput\": $(auto_row "$1" "$2" "${goodput:-1}")}" | tee -a "$out"
}
for case in "deploy/topologies/upload-three-sites-96.yaml 64MiB" "deploy/topologies/upload-asym-48-half.yaml 64MiB"; do
  set -- $case
  predict "$1" "$2"
  for ((i = 1; i <= rounds; ++i)); do
    run --topology "$1" --size "$2" --mode push
    if ((i < rounds)); then run --topology "$1" --size "$2" --mode pull; fi
  done
done
