#!/usr/bin/env bash
# The one command for the GPU machine (no MLIR there): configure, build the
# runtime, the generated kernels, the GPU tests and the benchmark; run the
# tests, compute-sanitizer on a small case, the benchmarks; summary last.
#
#   tools/gpu.sh [GEN_DIR]     GEN_DIR: purlinc outputs (default gen/, else
#                              the stand-ins of test/gpu/fixtures)
# Env: OUT (logs folder, default build-gpu/logs), PURLIN_GPU_QUICK=1 (fewer
# cases, no large sizes, short sweeps), PURLIN_GPU_JOBS (collectives tested
# at once, one process each: tools/gpu-test-all.sh; default nproc / 4).
#
# The kernels of the element types and ops purlinc built ahead of time
# (its --aot; default bf16, f16, f32 with sum) are compiled here; the GPU
# tests compile every other pair they run first, in parallel, with NVRTC
# (cached in PURLIN_CACHE_DIR, default ~/.cache/purlin: docs/runtime.md).
# Generate with --aot=all to build every pair ahead of time, as before.
# A collective with a concrete type or bound values (test/gpu/Inputs, or
# purlinc --ranks/--dtype/--op/...) is tested with what it declares, and
# the runtime's refusals of anything else.
set -uo pipefail
cd "$(dirname "$0")/.."
GEN=${1:-gen}
[ -n "$(ls "$GEN"/*.purlin.cu 2>/dev/null)" ] || GEN=
LOG=${OUT:-build-gpu/logs}
mkdir -p "$LOG"
summary=()
step() { summary+=("$1"); echo "== $1"; }

cmake -G Ninja -S . -B build-gpu -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
  ${GEN:+-DPURLIN_GEN_DIR=$PWD/$GEN} >"$LOG/configure.log" 2>&1 \
  || { tail -30 "$LOG/configure.log"; echo "configure FAILED"; exit 1; }
t0=$(date +%s)
ninja -C build-gpu -j"$(nproc)" purlin-gpu-test purlin-bench purlin-latency-probe >"$LOG/build.log" 2>&1 \
  || { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
step "build: ok in $(( $(date +%s) - t0 )) s (gen: ${GEN:-test/gpu/fixtures})"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$LOG/gpu.txt"

T=build-gpu/test/gpu/purlin-gpu-test
B=build-gpu/tools/purlin-bench/purlin-bench
if [ "${PURLIN_GPU_QUICK:-0}" = 1 ]; then targs=--quick; else targs=--large; fi
t0=$(date +%s)
# One process a collective, nproc / 4 at once (tools/gpu-test-all.sh).
LOG=$LOG bash tools/gpu-test-all.sh $T $targs 2>&1 | tee "$LOG/gpu-test.log" | grep -E "FAIL|passed|SKIPPED|timeout" | head -60
step "gpu tests ($targs, $(( $(date +%s) - t0 )) s): $(tail -1 "$LOG/gpu-test.log")"

if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 3 $T --sanitize --only all_reduce \
      >"$LOG/sanitizer-$tool.log" 2>&1
    step "compute-sanitizer $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/sanitizer-$tool.log" | tail -1) / $(grep -E 'passed' "$LOG/sanitizer-$tool.log" | tail -1)"
  done
fi

E=256M; [ "${PURLIN_GPU_QUICK:-0}" = 1 ] && E=64M
{
  $B -C all_reduce -g 8 -d bf16 -o sum -b 8 -e $E -f 4 -n 20 -w 5 -c 1
  $B -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 -w 100 -c 1
  echo "# the same with PURLIN_COOPERATIVE=0 (plain launch after an occupancy check)"
  PURLIN_COOPERATIVE=0 $B -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 -w 100 -c 1
  $B -C all_gather -g 8 -d bf16 -b 1K -e $E -f 16 -n 20 -w 5 -c 1
  $B -C reduce_scatter -g 8 -d bf16 -o sum -b 1K -e $E -f 16 -n 20 -w 5 -c 1
  $B -C all_to_all -g 8 -d bf16 -b 1K -e $E -f 16 -n 20 -w 5 -c 1
  build-gpu/tools/purlin-bench/purlin-latency-probe
} 2>&1 | tee "$LOG/bench.log" | grep -v "^# size"
step "bench: see $LOG/bench.log"
# ---------------------------------------------------------------------------
# Several GPUs (issue 5). Runs only where `nvidia-smi -L` lists >= 2 GPUs;
# NOT RUN YET (no multi-GPU machine so far). NVLink multicast stays off.
# - the GPU tests with the ranks spread one per GPU, in one process;
# - one process per GPU (purlinCommInitRank: VMM fds or cudaIpc handles;
#   tools/gpu-mp.sh runs every multi-process case on one GPU);
# - purlin-bench --nccl: purlin and NCCL side by side, same process, same
#   buffers, 8 collectives, 8 B .. 4 GiB (ratio p/nccl per size).
# ---------------------------------------------------------------------------
NG=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$NG" -ge 2 ]; then
  export NCCL_NVLS_ENABLE=0
  ninja -C build-gpu -j"$(nproc)" purlin-mp-test >>"$LOG/build.log" 2>&1 \
    || step "multi-GPU: building purlin-mp-test FAILED (see $LOG/build.log)"
  t0=$(date +%s)
  $T --spread $targs 2>&1 | tee "$LOG/gpu-test-spread.log" | grep -E "FAIL|passed|SKIPPED|timeout" | head -60
  step "gpu tests --spread ($targs, one rank per GPU, $NG GPUs, $(( $(date +%s) - t0 )) s): $(tail -1 "$LOG/gpu-test-spread.log")"
  build-gpu/test/gpu/purlin-mp-test --ranks "$NG" --case coll --quick 2>&1 | tee "$LOG/mp-test.log" | grep -E "FAIL|passed|SKIPPED" | head -40
  step "one process per GPU ($NG processes): $(tail -1 "$LOG/mp-test.log")"
  EN=4G; [ "${PURLIN_GPU_QUICK:-0}" = 1 ] && EN=256M
  t0=$(date +%s)
  for c in all_reduce all_gather reduce_scatter broadcast reduce all_to_all gather scatter; do
    # Checked against the reference up to 64 MiB; unchecked (host memory,
    # time) from 256 MiB. -o is ignored by the copy collectives.
    $B --nccl -C $c -g "$NG" -d bf16 -o sum -b 8 -e 64M -f 8 -n 20 -w 5 -c 1
    $B --nccl -C $c -g "$NG" -d bf16 -o sum -b 256M -e $EN -f 2 -n 10 -w 2 -c 0
  done 2>&1 | tee "$LOG/bench-nccl.log" | grep -v "^# size"
  step "bench vs NCCL ($NG GPUs, 8 B .. $EN, $(( $(date +%s) - t0 )) s): see $LOG/bench-nccl.log"
else
  step "several GPUs: skipped ($NG GPU; needs >= 2)"
fi

# ---------------------------------------------------------------------------
# The low-latency protocol, when its kernels were generated here and carried:
# gen-ll/ (staged_ll: LL lines) and gen-ll128/ (staged_ll128: LL128 lines),
# each with `for f in examples/*.purlin; do purlinc $f --strategy=S
# --target=sm_90 -o DIR; done`. Per folder: its own build (every
# collective has only that plan), the GPU tests, and the latency with the
# boundary barriers kept (as on several GPUs) and not, beside the default
# plans': LL up to 64 KiB, LL128 (mid sizes) up to 4 MiB. staged_ll128 has
# not run on a GPU before (docs/runtime.md, "The low-latency protocol").
lowLatency() { # NAME (ll, ll128) DIR LARGEST
  local name=$1 dir=$2 e=$3 b=build-gpu-$1
  [ -n "$(ls "$dir"/*.purlin.cu 2>/dev/null)" ] || return 0
  cmake -G Ninja -S . -B $b -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    -DPURLIN_GEN_DIR=$PWD/$dir >"$LOG/configure-$name.log" 2>&1 \
    && ninja -C $b -j"$(nproc)" purlin-gpu-test purlin-bench >"$LOG/build-$name.log" 2>&1 \
    || step "staged_$name: build FAILED (see $LOG/build-$name.log)"
  [ -x $b/test/gpu/purlin-gpu-test ] || return 0
  local t0=$(date +%s)
  $b/test/gpu/purlin-gpu-test --quick 2>&1 | tee "$LOG/gpu-test-$name.log" | grep -E "FAIL|passed|SKIPPED|timeout" | head -40
  step "staged_$name gpu tests (--quick, $(( $(date +%s) - t0 )) s): $(tail -1 "$LOG/gpu-test-$name.log")"
  {
    for one in 1 0; do
      echo "# PURLIN_ONE_LAUNCH=$one: staged_$name, then the default plans"
      PURLIN_ONE_LAUNCH=$one $b/tools/purlin-bench/purlin-bench -C all_reduce -g 8 -d bf16 -o sum -b 8 -e $e -f 8 -n 1000 -w 100 -c 1
      PURLIN_ONE_LAUNCH=$one $B -C all_reduce -g 8 -d bf16 -o sum -b 8 -e $e -f 8 -n 1000 -w 100 -c 1
    done
  } 2>&1 | tee "$LOG/bench-$name.log" | grep -v "^# size"
  step "staged_$name bench: see $LOG/bench-$name.log"
}
lowLatency ll "${PURLIN_GEN_LL:-gen-ll}" 64K
lowLatency ll128 "${PURLIN_GEN_LL128:-gen-ll128}" 4M

echo "== summary"
printf '%s\n' "${summary[@]}"
