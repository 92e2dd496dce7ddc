#!/bin/bash
# The fast-network figures of docs/performance.md (issues 13 and 32), as root: CPU per byte on
# loopback with each chunk digest, then flat8-10g (10gbit NICs: the host, not the shaping, is
# the limit) with push (to disk and to memory, both digests), the MPI shim, pull and tuned
# MPI_Bcast in rounds, then the slow-link checks that must not regress.
# Every run starts with a clean page cache; one JSON line per run goes to $1 (each bench line has
# cpu_s_per_gib and transfer_cpu_s_per_gib)
# (default ./fast-network-figures.jsonl). Usage: bench/fast_network_figures.sh [OUT.jsonl] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
G=build/bin/gridcast
out=${1:-fast-network-figures.jsonl}
rounds=${2:-3}
clean() {
  sync
  echo 1 > /proc/sys/vm/drop_caches
}
record() {  # NAME ARGS RESULT
  echo "{\"run\": \"$1\", \"load_before\": $2, \"result\": ${3:-null}}" | tee -a "$out"
}
run() {
  clean
  local load result
  load=$(cut -d' ' -f1 /proc/loadavg)
  result=$($G bench "$@" --json 2>/dev/null | tail -1)
  record "bench $*" "$load" "$result"
}
F8=deploy/topologies/flat8-10g.yaml
forwarding() {  # ARGS: bench_forwarding_cpu's
  clean
  load=$(cut -d' ' -f1 /proc/loadavg)
  record "bench_forwarding_cpu $*" "$load" "$(build/bin/bench_forwarding_cpu "$@" --json 2>/dev/null | tr -d '\n')"
}
for _ in $(seq "$rounds"); do
  for digest in sha256 xxh3; do forwarding --size 1GiB --digest $digest; done
  # One member receiving from one as fast as loopback carries: where verifying binds.
  forwarding --size 2GiB --members 2 --digest sha256
done
# Each round: tuned MPI_Bcast, then gridcast's modes (both chunk digests where the issue
# compares them), every JSON line with its cpu_s_per_gib.
for round in $(seq "$rounds"); do
  run --topology $F8 --size 1GiB --mode mpi
  run --topology $F8 --size 1GiB --mode push
  run --topology $F8 --size 1GiB --mode push --digest xxh3
  run --topology $F8 --size 1GiB --mode push --algo multilane
  run --topology $F8 --size 1GiB --mode push --algo multilane --in-memory
  run --topology $F8 --size 1GiB --mode push --in-memory --digest xxh3
  # The first run after the in-memory pushes pays for memory they just freed (the kernel and
  # this VM's host take it back and hand it out again: 18.3 s where the next run takes 13):
  # the two digests take turns at going first.
  if (( round % 2 )); then
    run --topology $F8 --size 1GiB --mode mpi-shim
    run --topology $F8 --size 1GiB --mode mpi-shim --digest sha256
  else
    run --topology $F8 --size 1GiB --mode mpi-shim --digest sha256
    run --topology $F8 --size 1GiB --mode mpi-shim
  fi
  run --topology $F8 --size 1GiB --mode pull
done
# Where the network binds: nothing may get slower.
F50=$(mktemp --suffix=-flat16-50mbit.yaml)
sed s/100mbit/50mbit/ deploy/topologies/flat16.yaml > "$F50"
run --topology "$F50" --size 128MiB --mode push --algo multilane
run --topology deploy/topologies/two-sites.yaml --size 256MiB --mode push
rm -f "$F50"
