#!/usr/bin/env bash
# The test command (README; CI runs it through .ci/run): installs what is
# missing, builds everything this machine can build (the compiler; the CUDA
# runtime and kernels when nvcc is present, for sm_80, sm_90 and sm_100),
# and runs every test: lit + FileCheck (dialects, passes, frontend
# diagnostics, mutation fuzzing), unit tests, host end-to-end runs against
# the reference evaluator, and the GPU tests (which skip, visibly, without
# a GPU).
#   PURLIN_CUDA=OFF bash tools/test.sh    skip CUDA where nvcc exists but no
#                                         GPU does (no CUDA runtime, kernels
#                                         or nvcc tests); ON requires it;
#                                         AUTO (default): when nvcc is found
#   PURLIN_TEST_LONG=1 bash tools/test.sh  every case of the host runners'
#                                         grids (by default lit runs a
#                                         deterministic 1 in 3: test/lit.cfg.py)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
BUILD=${BUILD:-build}
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DPURLIN_CUDA="${PURLIN_CUDA:-AUTO}" >"$BUILD.configure.log" 2>&1 \
  || { cat "$BUILD.configure.log"; exit 1; }
grep -E "^-- purlin:" "$BUILD.configure.log" || true
jobs=$(nproc)
ninja -C "$BUILD" -j"$jobs"
ninja -C "$BUILD" -j"$jobs" check-purlin 2>&1 | tee "$BUILD.check.log"
count() { grep -oE "^ *$1 *: *[0-9]+" "$BUILD.check.log" | grep -oE '[0-9]+$' || echo 0; }
# The GPU tests once more in plain sight: a quick run on a GPU, or the
# visible skip without one.
if [ "${PURLIN_CUDA:-AUTO}" != OFF ] && [ -x "$BUILD/test/gpu/purlin-gpu-test" ]; then
  "$BUILD/test/gpu/purlin-gpu-test" --quick | tail -n 3
else
  echo "GPU tests: not built (no nvcc, or PURLIN_CUDA=OFF)"
fi
echo "lit: $(count Passed) passed, $(count Failed) failed, $(count Unsupported) skipped"
