#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its seed corpus (every seed first: inputs
# that once found a bug stay there as regression tests). New inputs go to a scratch directory,
# never into the repository. Exit status: the fuzzer's (non-zero on a crash, a leak, a
# timeout or an out-of-memory), with the input that did it named.
# The seed is fixed (1), so the seconds CI gives a target replay the same mutations and a
# red run means a change, not luck; GRIDCAST_FUZZ_SEED=0 draws a fresh one (for long runs).
# Usage: run_fuzzer.sh FUZZER CORPUS_DIR SECONDS   (GRIDCAST_FUZZ_SECONDS overrides SECONDS)
set -uo pipefail
fuzzer=$1 corpus=$2 seconds=${GRIDCAST_FUZZ_SECONDS:-$3} seed=${GRIDCAST_FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/gridcast-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new"
"$fuzzer" -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/new" "$corpus" > "$work/log" 2>&1
status=$?
grep -E "^stat::number_of_executed_units|^stat::new_units_added|^Done [0-9]+ runs" "$work/log"
if [ $status -ne 0 ]; then
  tail -60 "$work/log"
  for artifact in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$artifact" ] || continue
    echo "run_fuzzer: $(basename "$fuzzer") failed on this input (add it to $corpus once fixed):"
    od -A d -t x1 -v "$artifact" | head -40
  done
fi
exit $status
