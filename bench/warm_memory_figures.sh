#!/bin/bash
# Repeated in-memory broadcasts to the same daemons (issue 51, docs/performance.md "Warm memory"),
# as root: on one flat8-10g netgrid whose daemons stay up, ROUNDS sends of a SIZE payload with
# --in-memory --digest xxh3, each removed from the members after its send (as a workflow that
# stages one dataset after another does), then the same with --warm-memory 0 (every payload's
# pages fresh: "cold"), then to disk. Every send starts with a clean page cache; one JSON line
# per send goes to $1: the send's summary (first_byte_s: Prepare, taking the memory, included;
# completion_s from the request, transfer_s from the start), the command's wall time, and the
# CPU seconds of every daemon (the source's too) over it, summed.
# Usage: [CONFIGS="warm cold disk"] bench/warm_memory_figures.sh [OUT.jsonl] [ROUNDS] [SIZE]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
G=$PWD/build/bin/gridcast
out=${1:-warm-memory-figures.jsonl}
rounds=${2:-3}
size=${3:-768MiB}
topology=deploy/topologies/flat8-10g.yaml
state=/tmp/gridcast-warm-memory-$$
trap '$G netgrid down --state "$state" >/dev/null 2>&1; rm -rf "$state"' EXIT

# The CPU seconds (user + system) every gridcastd of the netgrid has used so far, summed.
daemons_cpu() {
  local total=0 pid ticks
  for pid in $(pgrep -x gridcastd); do
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$((total + ticks))
  done
  awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

pgrep -x gridcastd >/dev/null && { echo "gridcastd runs already: its CPU would count" >&2; exit 1; }
for config in ${CONFIGS:-warm cold disk}; do
  warm=1GiB where=--in-memory
  [ "$config" = cold ] && warm=0
  [ "$config" = disk ] && where=
  $G netgrid up "$topology" --state "$state" --daemons --daemon-arg=--warm-memory --daemon-arg="$warm" >/dev/null || exit 1
  mkdir -p "$state/payloads"
  for round in $(seq "$rounds"); do
    payload="$state/payloads/round-$round.bin"
    head -c "$(numfmt --from=iec-i "${size%B}")" /dev/urandom > "$payload"
    sync
    echo 1 > /proc/sys/vm/drop_caches
    before=$(daemons_cpu)
    start=$(date +%s%N)
    # shellcheck disable=SC2086 # $where: one flag or none
    result=$($G send "$payload" --cluster "$state/cluster.yaml" $where --digest xxh3 --json 2>/dev/null |
      /usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))')
    wall=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    cpu=$(awk -v a="$before" -v b="$(daemons_cpu)" 'BEGIN { printf "%.2f", b - a }')
    # shellcheck disable=SC2086
    $G remove "round-$round.bin" $where --cluster "$state/cluster.yaml" >/dev/null
    rm -f "$payload"
    echo "{\"config\": \"$config\", \"warm_memory\": \"$warm\", \"round\": $round, \"size\": \"$size\", \"wall_s\": $wall, \"daemons_cpu_s\": $cpu, \"send\": ${result:-null}}" |
      tee -a "$out"
  done
  $G netgrid down --state "$state" >/dev/null
  rm -rf "$state"
  while pgrep -x gridcastd >/dev/null; do sleep 0.2; done  # the next netgrid's CPU is its own
done
