#!/bin/bash
# The upload-bound figures of docs/collectives.md (issue 35), as root: on two topologies of the
# upload-bound family at rates the host carries, the simulator's prediction for auto's plan,
# then push (auto) and pull on the netgrid, alternating, ROUNDS push runs and ROUNDS - 1 pull
# runs. One JSON line per prediction and per run goes to $1 (default ./upload-bound-figures.jsonl).
# Usage: bench/upload_bound_figures.sh [OUT.jsonl] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-upload-bound-figures.jsonl}
rounds=${2:-3}
. bench/figures_lib.sh
predict() {  # TOPOLOGY SIZE
  local plan
  plan=$($G simulate --topology "$1" --size "$2" --algo auto --json 2>/dev/null)
  echo "{\"predict\": \"$1 $2\", \"auto\": $(echo "$plan" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["auto"]))')}" | tee -a "$out"
}
for case in "deploy/topologies/upload-three-sites-96.yaml 64MiB" "deploy/topologies/upload-asym-48-half.yaml 64MiB"; do
  set -- $case
  predict "$1" "$2"
  for ((i = 1; i <= rounds; ++i)); do
    run --topology "$1" --size "$2" --mode push
    if ((i < rounds)); then run --topology "$1" --size "$2" --mode pull; fi
  done
done
