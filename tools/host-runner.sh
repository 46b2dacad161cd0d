#!/usr/bin/env bash
# Builds a host runner from the sources purlinc wrote into a folder
# (`purlinc X.purlin --target=host -o DIR`, any number of collectives):
#   tools/host-runner.sh BUILD_DIR GEN_DIR OUTPUT
# OUTPUT then runs every collective of GEN_DIR on host threads and checks
# each result against the reference evaluator (OUTPUT --help).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$1 gen=$(cd "$2" && pwd) out=$3 # gen absolute: the unity files include from elsewhere
flags=(-std=c++17 -O1 -I"$src/spec/include" -I"$src/runtime/core/include" -I"$src/atom-kernels"
       -I"$src/runtime/host/include" -I"$gen")
objs=$(mktemp -d "${out}.objs.XXXXXX")
trap 'rm -rf "$objs"' EXIT
# Unity builds: the generated sources (each in its own namespace) go into
# one translation unit per core, so the shared headers are parsed once per
# core rather than once per collective (a third of the compile time).
jobs=$(nproc)
files=("$gen"/*.purlin.cpp "$gen"/registry.cpp)
for ((i = 0; i < ${#files[@]}; ++i)); do
  printf '#include "%s"\n' "${files[i]}" >>"$objs/unity$((i % jobs)).cpp"
done
export CXX=${CXX:-c++}
printf '%s\0' "$objs"/unity*.cpp |
  xargs -0 -P "$jobs" -I{} sh -c '$CXX "$@" -c "{}" -o "{}.o"' sh "${flags[@]}"
"$CXX" "$objs"/*.o "$build/runtime/host/libpurlin_host_main.a" "$build/runtime/host/libpurlin_host.a" \
  "$build/runtime/core/libpurlin_runtime_core.a" "$build/spec/libpurlin_spec.a" -lpthread -o "$out"
