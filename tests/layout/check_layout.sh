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
forbid "cluster common" 'client/|deploy/|collectives/|tomography/|delta/' \
  "common/ and cluster/ are the lowest floors: they include only each other and proto/"
forbid "common" 'cluster/|proto/' "common/ depends on nothing of ours"
forbid "collectives tomography delta" 'daemon/|cluster/|client/|deploy/|proto/' \
  "collectives/, tomography/ and delta/ are pure libraries of their own"
forbid "delta" 'collectives/|tomography/' "delta/ uses only common/"
forbid "collectives tomography delta" 'thread>|mutex>|chrono>|future>|condition_variable>|fstream>|boost/asio|grpc|sys/socket|netinet/|libtorrent/' \
  "collectives/, tomography/ and delta/ are pure: no threads, clocks, files or sockets"

# The daemon's layers, lowest first (daemon/CMakeLists.txt builds one target per layer). A layer
# includes only the layers before it; the files directly in daemon/ (which wire them into
# gridcastd) may include any.
layers=(metrics transport store executor pull participant coordinator service)
for ((i = 0; i < ${#layers[@]}; ++i)); do
  above=$(IFS='|'; echo "${layers[*]:i+1}")
  if [ -n "$above" ]; then
    forbid "daemon/${layers[i]}" "daemon/($above)/" \
      "daemon/${layers[i]}/ is below ($above): it includes none of them"
  fi
  forbid "daemon/${layers[i]}" 'daemon/[a-z_]+\.h' "daemon/${layers[i]}/ includes no file of the daemon's top"
done
for dir in daemon/*/; do
  dir=${dir%/}
  if [[ ! " ${layers[*]} " == *" ${dir#daemon/} "* ]]; then
    echo "layout: $dir/ is no layer of the daemon; add it to check_layout.sh's layers and to daemon/CMakeLists.txt"
    failures=$((failures + 1))
  fi
done

# The same order in the build: target gridcast_LAYER links no gridcast_ target of a layer above.
layer_index() {
  local i
  for ((i = 0; i < ${#layers[@]}; ++i)); do
    if [ "${layers[i]}" = "$1" ]; then echo "$i"; return; fi
  done
  echo -1
}
links=$(tr '\n' ' ' < daemon/CMakeLists.txt | grep -oE 'target_link_libraries\([^)]*\)')
while read -r target linked; do
  [ -n "$target" ] || continue
  from=$(layer_index "${target#gridcast_}")
  [ "$from" -ge 0 ] || continue
  for dependency in $linked; do
    [[ $dependency == gridcast_* ]] || continue
    to=$(layer_index "${dependency#gridcast_}")
    if [ "$to" -ge "$from" ]; then
      echo "layout: daemon/CMakeLists.txt links $target to $dependency, a layer not below it"
      failures=$((failures + 1))
    fi
  done
done < <(echo "$links" | sed -E 's/target_link_libraries\(//; s/\)$//; s/ (PUBLIC|PRIVATE|INTERFACE) / /g')
for layer in "${layers[@]}"; do
  if ! grep -q "add_library(gridcast_$layer " daemon/CMakeLists.txt; then
    echo "layout: daemon/CMakeLists.txt builds no target gridcast_$layer for the layer daemon/$layer/"
    failures=$((failures + 1))
  fi
done

if [ "$failures" -gt 0 ]; then exit 1; fi
echo "layout: every include keeps to its floor"
