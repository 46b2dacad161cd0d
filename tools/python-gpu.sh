#!/usr/bin/env bash
# The Python package on a GPU machine without MLIR (no purlinc there):
#   here:  tools/python-gpu.sh gen      compiles the collectives the GPU tests
#                                       load, for sm_90, into .pycache-gpu/
#   here:  tools/python-gpu.sh stage DIR  the committed tree (git archive
#                                       HEAD) and .pycache-gpu/ into DIR: an
#                                       ignored folder of the checkout the
#                                       device tool sends, to carry
#   there: tools/python-gpu.sh run      builds libpurlin_cuda.so and
#                                       libpurlin_host_api.so (CMake, no nvcc
#                                       kernels), runs python/tests/gpu with
#                                       pytest (virtual ranks; then 2, 4, 8
#                                       processes under a private MPS daemon,
#                                       PYTEST_MP=0 skips them; PYTEST_ARGS,
#                                       PYTEST_MP_ARGS: more pytest
#                                       arguments, e.g. -k), the
#                                       benchmark (eager calls on the C++
#                                       path, _fastpath.cpp, built first,
#                                       and on the Python path), and the
#                                       C API's figure (purlin-bench) for
#                                       comparison
set -uo pipefail
cd "$(dirname "$0")/.."
export PURLIN_PY_CACHE=$PWD/.pycache-gpu PYTHONPATH=$PWD/python
# A crash prints its Python stack; output is not lost in a pipe's buffer.
export PYTHONFAULTHANDLER=1 PYTHONUNBUFFERED=1
case "${1:-run}" in
gen)
  python3 - <<'PY'
import os, sys
sys.path.insert(0, "python/tests")
import purlin
from collectives import EVEN_SUM, REVERSE
for n in purlin.STANDARD + purlin.FUSED:
    print(purlin.compile(os.path.join("examples", n + ".purlin"), target="sm_90"))
for src in (EVEN_SUM, REVERSE):
    print(purlin.compile(src, target="sm_90"))
PY
  ;;
stage)
  dir=${2:?usage: tools/python-gpu.sh stage DIR}
  [ -d .pycache-gpu ] || "$0" gen
  rm -rf "$dir" && mkdir -p "$dir"
  git archive HEAD | tar -x -C "$dir"
  cp -r .pycache-gpu "$dir/"
  echo "staged in $dir ($(du -sh "$dir" | cut -f1)); there: cd $(basename "$dir") && bash tools/python-gpu.sh run"
  ;;
run)
  LOG=${OUT:-build-gpu/logs}
  mkdir -p "$LOG"
  cmake -G Ninja -S . -B build-gpu -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    >"$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; exit 1; }
  ninja -C build-gpu -j"$(nproc)" purlin_cuda_api purlin_host_api >"$LOG/build.log" 2>&1 \
    || { grep -E "error|Error" "$LOG/build.log" | head -30; exit 1; }
  echo "== libraries built"
  # The C API's benchmark builds (nvcc) while the tests run.
  ninja -C build-gpu -j4 purlin-bench >"$LOG/bench-build.log" 2>&1 &
  bench_build=$!
  export PURLIN_BUILD_DIR=$PWD/build-gpu
  # First-use compiles (NVRTC) cached in .jitcache, which a later run may
  # carry back (OUT gets a copy).
  export PURLIN_CACHE_DIR=$PWD/.jitcache
  mkdir -p "$PURLIN_CACHE_DIR"
  python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
  # The eager calls' C++ path (python/purlin/_fastpath.cpp), built at first
  # use into $PURLIN_PY_CACHE: built here, outside the timed and time-limited
  # runs (its build time for the record); a failed build says why and the
  # calls take the Python path (test_fast_path_against_python then fails).
  python3 -c "
import time, torch
from purlin import _fastpath
t = time.perf_counter()
m = _fastpath.module()
print('== fast path (_fastpath.cpp):', 'ready' if m else 'NOT BUILT', 'in %.1f s' % (time.perf_counter() - t))
" 2>&1 | grep -v 'No CUDA runtime'
  t0=$(date +%s)
  if [ "${PYTEST:-1}" = 1 ]; then  # PYTEST=0: the benchmarks alone
    timeout "${PYTEST_TIMEOUT:-300}" python3 -m pytest -q -p no:cacheprovider --durations=8 \
      python/tests/gpu/test_gpu.py ${PYTEST_ARGS:-} 2>&1 | tee "$LOG/pytest.log" | tail -40
    echo "== pytest (virtual ranks): $(( $(date +%s) - t0 )) s"
  fi
  # One process per GPU: 2, 4, 8 processes under an MPS daemon of our own
  # (private pipe and log folders; stopped however this script ends).
  if [ "${PYTEST_MP:-${PYTEST:-1}}" = 1 ]; then
    mps=$(mktemp -d /tmp/purlin-mps-XXXXXX)
    export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; rm -rf "$mps"' EXIT
    nvidia-cuda-mps-control -d && echo "== MPS: on" || echo "== MPS: off"
    export PURLIN_MP_REPORT=$LOG/mp-ranks.txt
    t0=$(date +%s)
    timeout "${PYTEST_MP_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider \
      --durations=4 python/tests/gpu/test_mp.py ${PYTEST_MP_ARGS:-} 2>&1 | tee "$LOG/pytest-mp.log" | tail -30
    echo "== pytest (processes): $(( $(date +%s) - t0 )) s"
    cat "$PURLIN_MP_REPORT" 2>/dev/null
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    sleep 1
  fi
  [ -n "${OUT:-}" ] && tar czf "$OUT/jitcache.tgz" .jitcache
  timeout "${BENCH_TIMEOUT:-60}" python3 python/tests/gpu/bench.py 2>&1 | tee "$LOG/bench.log" | tail -5
  # The C API's figure in the same run: graph replay, then eager with the
  # host's time per purlinLaunch (host=), cooperative launch and plain.
  if wait $bench_build; then
    B=build-gpu/tools/purlin-bench/purlin-bench
    $B -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 -w 100 -c 1 2>&1 |
      tee -a "$LOG/bench.log" | tail -3
    for coop in 1 0; do
      echo "# eager, PURLIN_COOPERATIVE=$coop" | tee -a "$LOG/bench.log"
      PURLIN_COOPERATIVE=$coop $B -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 \
        -w 100 -c 1 -G 0 --host-time 2>&1 | tee -a "$LOG/bench.log" | tail -1
    done
    # Where purlinLaunch's host time goes (PURLIN_HOST_PROFILE: per phase,
    # over every launch of the run, printed at exit).
    echo "# eager, PURLIN_HOST_PROFILE=1" | tee -a "$LOG/bench.log"
    PURLIN_HOST_PROFILE=1 $B -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 \
      -w 100 -c 1 -G 0 --host-time 2>&1 | tee -a "$LOG/bench.log" | tail -8
  fi
  ;;
esac
