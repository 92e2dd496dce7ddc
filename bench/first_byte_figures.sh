#!/bin/bash
# Time from a request to the source's first payload byte (`first_byte_s`, issue 52) at any
# size: gridcastd on loopback (unshaped: the source and RECEIVERS receivers), sparse payloads,
# --digest xxh3, pushed (MODE=pull or MODE=hybrid for a swarm's source). Sizes up to 4 GiB
# run to the end (the summary's first_byte_s and completion_s); larger ones are cancelled
# once the source logged its first byte (the figure does not need the transfer; 64 GiB twice
# would not fit the disk). The receivers' data directories are on ext4 in a sparse loop image,
# so reserving a large payload at Prepare (fallocate) writes no data. Caches dropped before each send.
#
# Environment: RECEIVERS (default 2), CHUNK (a --chunk size, e.g. 16KiB), TO_END=1 (send every
# size to the end: the receivers' image holds what they write, on the host's disk).
#
# Usage: bench/first_byte_figures.sh OUT.jsonl [RUNS] [SIZES...]   (root; default 3 runs of
# 256MiB 4GiB 64GiB 1TiB). Every line of OUT: {"size", "mode", "run", "started_s" (sizes run to the
# end only), "first_byte_s", "completion_s" (null when cancelled), "transfer_s" and "verified"
# (sizes run to the end only)}.
set -euo pipefail
out=${1:?usage: $0 OUT.jsonl [RUNS] [SIZES...]}
runs=${2:-3}
shift 2 || shift $#
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(256MiB 4GiB 64GiB 1TiB)
here=$(cd "$(dirname "$0")/.." && pwd)
G=${G:-$here/build/bin/gridcast}
D=${D:-$here/build/bin/gridcastd}
mode=${MODE:-push}
case "$mode" in
  push) how=(--algo multilane) ;;
  pull | hybrid) how=(--mode "$mode") ;;
  *) echo "MODE is push, pull or hybrid" >&2; exit 2 ;;
esac
[ -n "${CHUNK:-}" ] && how+=(--chunk "$CHUNK")
receivers=${RECEIVERS:-2}
members=$(seq 0 "$receivers")
state=$(mktemp -d /tmp/gridcast-first-byte-XXXXXX)
image=$state/receivers.img
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  umount "$state/receivers" 2>/dev/null || true
  [ -n "${KEEP_LOGS:-}" ] && cp "$state"/m*.log "$KEEP_LOGS"/ 2>/dev/null; rm -rf "$state"
}
trap cleanup EXIT

truncate -s 3T "$image"
mkfs.ext4 -q -F "$image"
mkdir -p "$state/receivers" "$state/payloads"
mount -o loop "$image" "$state/receivers"
secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
{
  echo "secret: $secret"
  echo "members:"
  for m in $members; do
    echo "  - {name: m$m, control: 127.0.0.1:$((7810 + m)), data: 127.0.0.1:$((7820 + 2 * m))}"
  done
} > "$state/cluster.yaml"
for m in $members; do
  dir=$state/receivers/data-$m
  [ "$m" = 0 ] && dir=$state/data-0
  mkdir -p "$dir"
  "$D" --name "m$m" --cluster "$state/cluster.yaml" --data-dir "$dir" --send-root "$state/payloads" \
    > "$state/m$m.log" 2>&1 &
  pids+=($!)
done
sleep 1

for size in "${sizes[@]}"; do
  bytes=$(numfmt --from=iec-i "${size%B}")
  payload=$state/payloads/sparse-$size.bin
  rm -f "$payload"
  truncate -s "$bytes" "$payload"
  head -c 1048576 /dev/urandom | dd of="$payload" conv=notrunc status=none
  for run in $(seq 1 "$runs"); do
    for m in $(seq 1 "$receivers"); do rm -rf "$state/receivers/data-$m"/*; done
    sync
    echo 3 > /proc/sys/vm/drop_caches
    before=$(grep -c "first payload byte left" "$state/m0.log" || true)
    "$G" send "$payload" --cluster "$state/cluster.yaml" --digest xxh3 "${how[@]}" --json \
      > "$state/send.json" 2> "$state/send.err" &
    send=$!
    if [ "$bytes" -le $((4 << 30)) ] || [ -n "${TO_END:-}" ]; then
      wait "$send"
      python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"size": sys.argv[2], "mode": sys.argv[4], "run": int(sys.argv[3]), "started_s": d["control"]["started_s"], "first_byte_s": d["control"]["first_byte_s"], "completion_s": d["completion_s"], "transfer_s": d["transfer_s"], "verified": d["verified"]}))' \
        "$state/send.json" "$size" "$run" "$mode" | tee -a "$out"
    else
      for _ in $(seq 1 600); do
        [ "$(grep -c "first payload byte left" "$state/m0.log" || true)" -gt "$before" ] && break
        sleep 0.1
      done
      if [ "$(grep -c "first payload byte left" "$state/m0.log" || true)" -le "$before" ]; then
        "$G" status --cluster "$state/cluster.yaml" >&2 || true
        kill "$send" 2>/dev/null || true
        wait "$send" || true
        echo "$size run $run: no first byte within 60 s:" >&2
        cat "$state/send.err" >&2
        exit 1
      fi
      line=$(grep "first payload byte left" "$state/m0.log" | tail -1)
      plan=$(sed -E 's/.*broadcast ([0-9a-f]+):.*/\1/' <<< "$line")
      first=$(sed -E 's/.*left ([0-9.]+) s after.*/\1/' <<< "$line")
      "$G" cancel "$plan" --cluster "$state/cluster.yaml" > /dev/null 2>&1 || true
      wait "$send" || true
      echo "{\"size\": \"$size\", \"mode\": \"$mode\", \"run\": $run, \"first_byte_s\": $first, \"completion_s\": null}" | tee -a "$out"
    fi
  done
  rm -f "$payload"
done
