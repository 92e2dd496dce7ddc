# Sourced by the bench/*_figures.sh scripts. run ARGS...: one `gridcast bench ARGS --json` after
# a sync and a dropped page cache, its JSON line (with the load average before it) appended to
# $out. Needs G (the gridcast binary) and out (the JSONL file).
run() {
  sync
  echo 1 > /proc/sys/vm/drop_caches
  local load result
  load=$(cut -d' ' -f1 /proc/loadavg)
  result=$($G bench "$@" --json 2>/dev/null | tail -1)
  echo "{\"args\": \"$*\", \"load_before\": $load, \"result\": ${result:-null}}" | tee -a "$out"
}
