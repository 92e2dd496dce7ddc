#!/usr/bin/env bash
# The layout of docs/architecture: who may include whom. Prints every include that breaks a
# rule, with the rule, and fails if there is any. Usage: check_layout.sh SOURCE_DIR
set -uo pipefail
cd "${1:-.}"
failures=0

# forbid DIRS PATTERN WHY: no file under DIRS has an #include line matching PATTERN.
forbid() {
  local dirs=$1 pattern=$2 why=$3 hits
  # shellcheck disable=SC2086
  hits=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cc' --include='*.c' \
           "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pattern)" $dirs 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layout: $why:"
    echo "$hits" | sed 's/^/  /'
    failures=$((failures + 1))
  fi
}

forbid "client deploy include cluster common proto" 'daemon/' \
  "only the daemon (and its tests and benchmarks) include daemon/; shared code lives in common/ or cluster/"
forbid "cluster common" 'client/|deploy/|collectives/|tomography/' \
  "common/ and cluster/ are the lowest floors: they include only each other and proto/"
forbid "common" 'cluster/|proto/' "common/ depends on nothing of ours"
forbid "collectives tomography" 'daemon/|cluster/|client/|deploy/|proto/' \
  "collectives/ and tomography/ are pure libraries of their own"
forbid "collectives tomography" 'thread>|mutex>|chrono>|future>|condition_variable>|boost/asio|grpc|sys/socket|netinet/|libtorrent/' \
  "collectives/ and tomography/ are pure: no threads, clocks or sockets"

if [ "$failures" -gt 0 ]; then exit 1; fi
echo "layout: every include keeps to its floor"
