#!/usr/bin/env bash
# purlin's main job: compile every example collective (examples/*.purlin)
# through SNAC and run it on the default target -- the GPU when one answers,
# else the host (ranks as threads) -- with 8 ranks by default, checking every
# result against the reference evaluator, and print a table:
# collective, strategy, ranks, bytes, result.
#   tools/run.sh            RANKS=4 tools/run.sh     TARGET=host tools/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
BUILD=${BUILD:-build}
RANKS=${RANKS:-8}
# The builds print as they go (and into a log beside the build folder), so
# that a long build shows its progress and a failure its errors.
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release 2>&1 | tee "$BUILD.configure.log" \
  | grep -E "^-- purlin:|Error|error" || true
[ -f "$BUILD/build.ninja" ] || { cat "$BUILD.configure.log"; echo "run.sh: configuring failed (above)" >&2; exit 1; }
# purlinc, purlin-opt (for the README's IR commands) and the host runner.
echo "building the compiler and the host runner (log: $BUILD.build.log)"
ninja -C "$BUILD" -j"$(nproc)" purlinc purlin-opt purlin_host_main 2>&1 | tee "$BUILD.build.log" \
  || { echo "run.sh: the build failed (above)" >&2; exit 1; }
target=${TARGET:-}
if [ -z "$target" ]; then
  if nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; then
    target=sm_90
  else
    target=host
  fi
fi
gen="$BUILD/gen/$target"
rm -rf "$gen" && mkdir -p "$gen"
for f in examples/*.purlin; do
  "$BUILD/bin/purlinc" "$f" --target="$target" -o "$gen"
done
echo "compiled $(ls "$gen"/*.purlin.h | wc -l) collectives for $target into $gen"
if [ "$target" = host ]; then
  bash tools/host-runner.sh "$BUILD" "$gen" "$gen/run"
  "$gen/run" --ranks "$RANKS" --counts 1031 --dtypes bf16 --ops sum --inplace both \
    --strategy all --launches 3 --table
else
  # The GPU: build the runtime, these kernels and the GPU tests, then run
  # every collective with RANKS virtual ranks on the first GPU.
  cmake -G Ninja -S . -B "$BUILD-gpu" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DPURLIN_GEN_DIR="$PWD/$gen" -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= 2>&1 \
    | tee "$BUILD-gpu.configure.log" | grep -E "^-- purlin:|Error|error" || true
  [ -f "$BUILD-gpu/build.ninja" ] || { cat "$BUILD-gpu.configure.log"; echo "run.sh: configuring failed (above)" >&2; exit 1; }
  echo "building the GPU kernels and tests (log: $BUILD-gpu.build.log)"
  ninja -C "$BUILD-gpu" -j"$(nproc)" purlin-gpu-test 2>&1 | tee "$BUILD-gpu.build.log" \
    || { echo "run.sh: the build failed (above)" >&2; exit 1; }
  # Every collective on 2, 4 and 8 virtual ranks of the first GPU, every
  # type and op, against the reference: one line per collective.
  "$BUILD-gpu/test/gpu/purlin-gpu-test" --quick
fi
