#!/usr/bin/env bash
# Issue 16 on the GPU: the fused epilogue collectives (all-reduce +
# residual + RMSNorm and its variants, examples/all_reduce_rmsnorm*.purlin)
# against the host reference, and the benchmark fused vs purlin's
# all-reduce + a separate norm kernel. Two steps, as the GPU machine has no
# MLIR:
#
#   tools/gpu-epilogue.sh gen [DIR]   here, with build/bin/purlinc built:
#                                     writes DIR/ (default gen-epi/): the
#                                     five epilogue examples and all_reduce
#                                     for sm_90 (kernels ahead of time for
#                                     bf16, f16, f32 with sum), and two
#                                     copies of all_reduce_rmsnorm with one
#                                     plan at every size: _direct (one-shot,
#                                     8 lanes, as the chooser's small band)
#                                     and _two_shot (row-aligned owners, 16
#                                     lanes, as its large band), each with
#                                     its in-place (copy) variant; and
#                                     _direct_unfused, _two_shot_unfused:
#                                     the unfused plans (the epilogue apart
#                                     from the combine, one launch)
#   tools/gpu-epilogue.sh variants [DIR]  on the GPU machine: the bench
#                                     built with each measurement switch of
#                                     exec/Epilogue.h, run one after another
#   tools/gpu-epilogue.sh probe [DIR]  on the GPU machine: each kernel's
#                                     own time under ncu (fused, unfused
#                                     plans' two kernels, the pair's)
#   tools/gpu-epilogue.sh hot [DIR]    on the GPU machine: ncu --set full on
#                                     one kernel's first launch, its stall
#                                     reasons and hottest SASS lines
#   tools/gpu-epilogue.sh timing [DIR]  on the GPU machine: the bench built
#                                     with -DPURLIN_EPI_TIMING, the cycles
#                                     between the register row's steps
#   tools/gpu-epilogue.sh base [REV] [DIR]  here: the tree of REV (default
#                                     HEAD; git archive) into gen-base/
#                                     (ignored, carried), with DIR copied
#                                     into it: the baseline of `ab` (valid
#                                     where purlinc's output is the same for
#                                     both trees, as for a change of exec/
#                                     or atom-kernels/ only)
#   tools/gpu-epilogue.sh ab [DIR]    on the GPU machine (carry DIR and
#                                     gen-base): the bench of this tree and
#                                     of gen-base built side by side
#                                     (EPI_VARIANT_GEN's collectives), run
#                                     base, new, base, new at EPI_HIDDEN x
#                                     EPI_TOKENS; per line the fused
#                                     figure of each build (the better of
#                                     two runs) and base/it, and the pair;
#                                     EPI_AB_VARIANTS="F1|F2" adds builds
#                                     of this tree with CUDA flags F1, F2. With
#                                     EPI_AB_TEST=1 this tree's
#                                     purlin-epilogue-test too, run on
#                                     all_reduce_rmsnorm and its two-shot
#                                     (EPI_AB_TEST=quick: the two-shot's
#                                     few rows and the chooser's, ~20 s;
#                                     EPI_AB_TEST_VARIANTS=1: each
#                                     variant's build too)
#   tools/gpu-epilogue.sh rows [DIR]  on the GPU machine (carry DIR): the
#                                     chooser's rows bands, tested at the
#                                     sizes they move and benched beside
#                                     every plan forced (EPI_ROUNDS runs)
#   tools/gpu-epilogue.sh run [DIR]   on the GPU machine from the repository
#                                     root, DIR carried: builds the CUDA
#                                     runtime and purlin-epilogue-test and
#                                     purlin-epilogue-bench (sm_90, no MLIR),
#                                     runs them (the bench also in place at
#                                     EPI_INPLACE_TOKENS, default
#                                     16,32,64,128), writes logs under $OUT
#                                     (else build-gpu-epi/logs), prints a
#                                     summary last
#
# Test grid (purlin-epilogue-test, 8 virtual ranks, out of place, in place,
# and with only res_out at res, which must run the out-of-place plan):
#   all_reduce_rmsnorm, bf16: tokens 1,2,3,7,128,1000,4096 x hidden 1024,
#     4096,8192
#   all_reduce_rmsnorm, f16, f32, f8e4m3, f8e5m2 (f8: kernels compiled at
#     first use, NVRTC): tokens 1,2,3,7,128 x hidden 1024,8192
#   gemma and nores variants, bf16 and f16: tokens 1,2,7,128 x hidden 1024,8192
#   the fp8 variants (an f8e4m3 output through an f32 scale per tensor, or
#     per token, stored as f32), bf16 and f16: tokens 1,2,7,128,1000 x
#     hidden 1024,8192
#   all_reduce_rmsnorm_two_shot (two-shot at every size), bf16: tokens
#     1,7,128,1000 x hidden 1024,4096,8192
#   the unfused plans (_direct_unfused, _two_shot_unfused), bf16, f32 and
#     f8e4m3: tokens 1,7,128(,1000) x hidden 1024,4096,8192 (the epilogue
#     as a launch of its own where every rank is in one launch and the
#     kernels were built ahead of time, in the plan's launch for f8 and
#     with PURLIN_ONE_LAUNCH=0: both paths)
# (the larger cases are checked on their first and last 128 rows: rows are
# independent.) Budget: ~500 s in all; EPI_QUICK=1 runs bf16 only (about
# 160 s since the residual-in-place cases).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
DIR=${2:-gen-epi}
# The collectives the bench's main columns need (variants and ab build these
# alone; EPI_VARIANT_GEN another set). ab also builds the unfused plans'
# copies, for its d_apart and 2s_apart tables and their tests (the
# thirty-third session's first ab call lacked them).
BENCH_GEN=${EPI_VARIANT_GEN:-all_reduce;all_reduce_rmsnorm;all_reduce_rmsnorm_direct;all_reduce_rmsnorm_two_shot;all_reduce_rmsnorm_direct_wide}
[ "$mode" = ab ] && [ -z "${EPI_VARIANT_GEN:-}" ] &&
  BENCH_GEN="$BENCH_GEN;all_reduce_rmsnorm_direct_unfused;all_reduce_rmsnorm_two_shot_unfused;all_reduce_rmsnorm_two_shot_gather"
# benchBuild NAME SRC FLAGS JOBS TARGETS...: configure the tree at SRC into
# build-gpu-epi-NAME (BENCH_GEN's collectives from SRC/$DIR, CUDA flags
# FLAGS) and build TARGETS, logs under $LOG; says so where it fails.
benchBuild() {
  local name=$1 src=$2 flags=$3 jobs=$4
  shift 4
  cmake -G Ninja -S "$src" -B "$PWD/build-gpu-epi-$name" -DPURLIN_BUILD_COMPILER=OFF \
    -DPURLIN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_CHECK_ARCHS= \
    "-DPURLIN_GEN_ONLY=$BENCH_GEN" "-DCMAKE_CUDA_FLAGS=$flags" -DPURLIN_GEN_DIR="$src/$DIR" \
    >"$LOG/configure-$name.log" 2>&1 &&
    ninja -C "build-gpu-epi-$name" -j"$jobs" "$@" >"$LOG/build-$name.log" 2>&1 ||
    { echo "$name: build FAILED"; grep -E "error" "$LOG/build-$name.log" | head -20; }
}
case "$mode" in
gen)
  P=${PURLINC:-build/bin/purlinc}
  rm -rf "$DIR" && mkdir -p "$DIR"
  for f in all_reduce_rmsnorm all_reduce_rmsnorm_gemma all_reduce_rmsnorm_nores all_reduce_rmsnorm_fp8 all_reduce_rmsnorm_fp8_token all_reduce; do
    "$P" "examples/$f.purlin" --target=sm_90 -o "$DIR" || exit 1
  done
  # The plans forced (the chooser's band edge moved to either end).
  mkdir -p "$DIR/src"
  # The unfused plans likewise (issue 16's fallback: the epilogue apart
  # from the combine), from 1 byte on. _direct_wide has EPI_WIDE_LANES
  # lanes (default 32; 16 fits in place, where its copy plan's lanes must
  # all be resident: the twenty-fourth session's d_wide column in place).
  for v in "direct:--epilogue-small-bytes=4611686018427387904" "two_shot:--epilogue-small-bytes=0" \
           "direct_unfused:--epilogue-small-bytes=4611686018427387904 --epilogue-unfused-bytes=1" \
           "two_shot_unfused:--epilogue-small-bytes=0 --epilogue-unfused-bytes=1" \
           "two_shot_gather:--strategy=two_shot_gather --lanes=16" \
           "direct_wide:--epilogue-small-bytes=4611686018427387904 --lanes=${EPI_WIDE_LANES:-32}"; do
    n=all_reduce_rmsnorm_${v%%:*}
    sed "s/collective all_reduce_rmsnorm(/collective $n(/" examples/all_reduce_rmsnorm.purlin > "$DIR/src/$n.purlin"
    # No rows bands (the chooser's: spec/Plan.h), so that each column is
    # its plan at every size (with them, the forty-first session's first
    # runs timed the fused one-shot in d_apart's column at wide rows).
    "$P" "$DIR/src/$n.purlin" --target=sm_90 ${v#*:} --epilogue-wide-rows=0 \
      --epilogue-unfused-rows=0 -o "$DIR" || exit 1
  done
  rm -rf "$DIR/src"
  rm -f "$DIR/registry.cpp"
  echo "wrote $(ls "$DIR"/*.purlin.cu | wc -l) collectives into $DIR/"
  echo "on the GPU machine: tools/gpu-epilogue.sh run $DIR (carry $DIR)"
  ;;
run)
  LOG=${OUT:-build-gpu-epi/logs}
  B=build-gpu-epi
  mkdir -p "$LOG"
  summary=()
  step() { summary+=("$1"); echo "== $1"; }
  t0=$(date +%s)
  cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 \
    || { tail -30 "$LOG/configure.log"; echo "configure FAILED"; exit 1; }
  ninja -C "$B" -j"$(nproc)" purlin-epilogue-test purlin-epilogue-bench >"$LOG/build.log" 2>&1 \
    || { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
  step "build: ok in $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$LOG/gpu.txt"
  T=$B/test/gpu/purlin-epilogue-test
  export PURLIN_CACHE_DIR=${PURLIN_CACHE_DIR:-$PWD/$B/cubin-cache}
  t0=$(date +%s)
  {
    $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,2,3,7,128,1000,4096 --hidden 1024,4096,8192
    # rows wider than the register row's 2 vectors a thread (the SM
    # target's WideRows kernels)
    $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,128 --hidden 12288,16384
    $T --only all_reduce_rmsnorm_two_shot --dtypes bf16 --tokens 1,7,128 --hidden 12288,16384
    if [ "${EPI_QUICK:-0}" != 1 ]; then
      $T --only all_reduce_rmsnorm --dtypes f16,f32,f8e4m3,f8e5m2 --tokens 1,2,3,7,128 --hidden 1024,8192
      $T --only all_reduce_rmsnorm_gemma --dtypes bf16,f16 --tokens 1,2,7,128 --hidden 1024,8192
      $T --only all_reduce_rmsnorm_nores --dtypes bf16,f16 --tokens 1,2,7,128 --hidden 1024,8192
      $T --only all_reduce_rmsnorm_fp8 --dtypes bf16,f16 --tokens 1,2,7,128,1000 --hidden 1024,8192
      $T --only all_reduce_rmsnorm_fp8_token --dtypes bf16,f16 --tokens 1,2,7,128,1000 --hidden 1024,8192
    fi
    $T --only all_reduce_rmsnorm_two_shot --dtypes bf16 --tokens 1,7,128,1000 --hidden 1024,4096,8192
    # The unfused plans: every rank in one launch, so the epilogue runs as
    # a launch of its own (kernels ahead of time: bf16, f32); f8e4m3 is
    # compiled at first use, which keeps it in the plan's launch; and with
    # PURLIN_ONE_LAUNCH=0 (a launch per rank) in the plan's launch too.
    UT=bf16,f32,f8e4m3
    [ "${EPI_QUICK:-0}" = 1 ] && UT=bf16,f32 # no first-use compile
    $T --only all_reduce_rmsnorm_direct_unfused --dtypes $UT --tokens 1,7,128 --hidden 1024,4096,8192
    $T --only all_reduce_rmsnorm_two_shot_unfused --dtypes $UT --tokens 1,7,128,1000 --hidden 1024,4096,8192
    PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm_two_shot_unfused --dtypes bf16 --tokens 1,7,128 --hidden 1024,4096
    PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm_direct_unfused --dtypes bf16 --tokens 1,7,128 --hidden 1024,4096
    # The fused plans in a launch per rank (their boundary syncs kept) on
    # the lanes that have rows (Shared::liveLanes: 1, 7, 16 of 16 here).
    PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,20,128 --hidden 1024,4096
  } 2>&1 | tee "$LOG/epilogue-test.log" | grep -E "FAIL|passed|SKIPPED|FATAL" | head -40
  step "epilogue tests ($(( $(date +%s) - t0 )) s): $(grep -E '^[0-9]+ passed' "$LOG/epilogue-test.log" | awk '{p+=$1; f+=$3} END {print p " passed, " f " failed"}')"
  t0=$(date +%s)
  $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 50 --hidden 4096,8192 \
    --tokens 1,2,4,8,16,32,64,128,256,512,1024,2048,4096 2>&1 | tee "$LOG/epilogue-bench.log"
  step "bench ($(( $(date +%s) - t0 )) s): $(tail -1 "$LOG/epilogue-bench.log"); table in $LOG/epilogue-bench.log"
  # In place (y at x's address): the in-place plans around their edge
  # (direct_copy below 512 KiB a rank, two_shot_copy from it on), to decide
  # whether it can follow the out-of-place edge (docs/performance.md,
  # twenty-third session). EPI_INPLACE_TOKENS= (empty) leaves it out.
  if [ -n "${EPI_INPLACE_TOKENS-16,32,64,128}" ]; then
    t0=$(date +%s)
    $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 50 --hidden 4096,8192 --inplace 1 \
      --tokens "${EPI_INPLACE_TOKENS-16,32,64,128}" 2>&1 | tee "$LOG/epilogue-bench-inplace.log"
    step "bench in place ($(( $(date +%s) - t0 )) s): $(tail -1 "$LOG/epilogue-bench-inplace.log")"
  fi
  echo "== summary"
  printf '%s\n' "${summary[@]}"
  ;;
probe)
  # Each kernel's own time (Nsight Compute, clocks left alone): the bench
  # at hidden 4096, tokens 1 and 128, every form; per kernel name the mean
  # duration, so that the fused kernel, the unfused plans' two kernels and
  # the pair's all-reduce and norm kernels are seen apart from the gaps
  # between launches; caches kept between kernels (--cache-control none),
  # as in the call. Needs ncu (Firecracker machines have it).
  LOG=${OUT:-build-gpu-epi/logs}
  B=build-gpu-epi
  mkdir -p "$LOG"
  t0=$(date +%s)
  cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 \
    || { tail -30 "$LOG/configure.log"; echo "configure FAILED"; exit 1; }
  ninja -C "$B" -j"$(nproc)" purlin-epilogue-bench >"$LOG/build.log" 2>&1 \
    || { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
  echo "== build: ok in $(( $(date +%s) - t0 )) s"
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$NCU" ] || { echo "no ncu"; exit 1; }
  for t in ${PROBE_TOKENS:-1 128}; do
    timeout ${PROBE_TIMEOUT:-150} "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --print-kernel-base mangled \
      $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 2 --hidden 4096 --tokens $t \
      >"$LOG/ncu-$t.csv" 2>"$LOG/ncu-$t.err"
    echo "== tokens $t (rc $?): kernel, launches, mean us"
    python3 - "$LOG/ncu-$t.csv" <<'PY'
import csv, sys, re, collections
tot = collections.defaultdict(float); cnt = collections.Counter()
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
for r in csv.DictReader(rows):
    if r.get("Metric Name") != "gpu__time_duration.sum":
        continue
    name = r["Kernel Name"]
    f = re.search(r"(applyKernelSlot|planKernelSlot|applyKernel|planKernel|residualRmsNorm|purlin_jit\w*)", name)
    m = re.search(r"purlin_gen_(\w+?)\d+PlanFn_(p\d+)", name)
    key = (f.group(1) if f else name[:60]) + (" " + m.group(1) + " " + m.group(2) if m else "")
    v = float(r["Metric Value"].replace(",", ""))
    unit = r.get("Metric Unit", "ns")
    us = v / 1000 if unit in ("nsecond", "ns") else v if unit in ("usecond", "us") else v * 1000
    tot[key] += us; cnt[key] += 1
for k in sorted(tot):
    print(f"  {k:70s} {cnt[k]:5d} {tot[k]/cnt[k]:9.2f}")
PY
  done
  ;;
variants)
  # The bench built once per measurement build of exec/Epilogue.h (each
  # undoes one change; docs/performance.md, thirteenth session), side by
  # side, then run one after another on the same grid (EPI_TOKENS, default
  # 1,8,128,4096; EPI_HIDDEN, default 4096,8192). EPI_VARIANTS="0 6 7 8"
  # builds and runs those alone. Each build is the bench's four
  # collectives only (all_reduce and the three all_reduce_rmsnorm copies),
  # about 14 CPU-minutes (a build of all eight took 27 here): the eleven do
  # not fit one device call of 600 s on 16 cores, so split them, e.g.
  # EPI_VARIANTS="0 1 2 3 4", then "5 6 7 8", then "9 10" (a build folder
  # already there is reused while the machine stays warm).
  # Variants 7-10 change the lane's threads for every kernel of the build
  # (PURLIN_SM_THREADS), the plain all_reduce's too: their pair column is
  # not variant 0's, so compare their fused columns with variant 0's pair.
  # 9 and 10 (128 threads, a 4096 row 4 vectors a thread, 8192 8: one warp
  # on each of the SM's 4 schedulers instead of 4, so the row's per-warp
  # setup is issued once a scheduler, not 4 times; ptxas sm_90 bf16: the
  # one-shot kernel 168 registers, 10 with EPI_LOADS=8 214, the two-shot
  # 197, no spill). 11 loads one-shot's epilogue inputs in each pass
  # again, as before the twenty-second session (no input held in
  # registers: Target::kEpiHeldVecs 0). 12 runs the owned form's
  # statements for 8 ranks side by side instead of 4 (the fused two-shot:
  # one group at 8 ranks, so one pair of passes and one row reduction where
  # 4 at once has two; ptxas sm_90 bf16 plan 0: 128 registers, no spill,
  # 8,513 instructions against 5,643; the hand-written two-shot runs all 8
  # at once and takes half the time: docs/performance.md, twenty-third
  # session). Not kept, measured in the twenty-fifth session (H100):
  # loading 2 or 4 ranks' statement inputs at once, vector by vector, made
  # the unfused two-shot 1.19x slower at 4096 x 4096 and the fused one
  # 1.17x at 4096 x 128 (docs/performance.md). Nor were the raw
  # contribution loads (twenty-seventh session, H100, `ab`: 4 at a time
  # 0.99-1.02x, 8 at a time 0.93-1.02x, with both vectors' inputs held
  # 0.90-1.02x; the code is gone, see git log). Nor was staging the owned
  # form's statement inputs in shared memory by cp.async
  # (PURLIN_EPI_STAGE, twenty-eighth session, H200, `ab`: the fused
  # two-shot 0.80x at 4096 x 128, forced 0.88-0.97x; gone too).
  # The same flags work with `ab` (EPI_AB_VARIANTS).
  # EPI_VARIANT_GEN: the collectives built (PURLIN_GEN_ONLY; default the
  # five the bench's main columns need); EPI_NO_LANES256=1 skips the run
  # with 256-thread lanes at the end.
  LOG=${OUT:-build-gpu-epi-v/logs}
  mkdir -p "$LOG"
  flags=("" "-DPURLIN_EPI_NO_DIV_ROW" "-DPURLIN_EPI_UNGROUPED" "-DPURLIN_EPI_TESTED_TYPES"
         "-DPURLIN_EPI_NO_DIV_ROW -DPURLIN_EPI_UNGROUPED -DPURLIN_EPI_TESTED_TYPES"
         "-DPURLIN_EPI_RANKS_AT_ONCE=1"
         "-DPURLIN_EPI_GUARDED_LOADS"
         "-DPURLIN_SM_THREADS=256 -DPURLIN_SM_EPI_ROW_VECS=4"
         "-DPURLIN_SM_THREADS=256 -DPURLIN_SM_EPI_ROW_VECS=4 -DPURLIN_EPI_LOADS=8"
         "-DPURLIN_SM_THREADS=128 -DPURLIN_SM_EPI_ROW_VECS=8"
         "-DPURLIN_SM_THREADS=128 -DPURLIN_SM_EPI_ROW_VECS=8 -DPURLIN_EPI_LOADS=8"
         "-DPURLIN_SM_EPI_HELD_VECS=0"
         "-DPURLIN_EPI_RANKS_AT_ONCE=8")
  # A bench line's columns (purlin-epilogue-bench's header): hidden, tokens,
  # bytes/rank, fused, plan, direct, two_shot, d_apart, 2s_apart, unfused
  # (the pair), allreduce, norm, ratio, best, d_wide (one-shot on 32 lanes),
  # hand (a hand-written fused kernel: the floor), hand2s (its two-shot),
  # hand_l (hand in the generated one-shot's shape: 16 blocks a rank).
  benchLines() {
    awk '{print "  " $1 " x " $2 ": fused " $4 " (" $5 "), direct " $6 ", two_shot " $7 ", d_apart " $8 ", 2s_apart " $9 ", d_wide " $15 ", hand " $16 ", hand2s " $17 ", hand_l " $18 ", pair " $10 ", ratio " $13 ", best " $14}'
  }
  sel=(${EPI_VARIANTS:-${!flags[@]}})
  t0=$(date +%s)
  for i in "${sel[@]}"; do
    benchBuild "v$i" "$PWD" "${flags[$i]}" $(( $(nproc) / ${#sel[@]} + 1 )) purlin-epilogue-bench &
  done
  wait
  echo "== builds: $(( $(date +%s) - t0 )) s"
  # EPI_BUILD_ONLY=1: the builds alone (tools/gpu-next.sh starts them beside
  # its other builds; its variants step then finds them made).
  [ -n "${EPI_BUILD_ONLY:-}" ] && exit 0
  for i in "${sel[@]}"; do
    echo "== variant $i: ${flags[$i]:-(as committed)}"
    "build-gpu-epi-v$i/tools/purlin-bench/purlin-epilogue-bench" -g 8 -n 50 \
      --hidden "${EPI_HIDDEN:-4096,8192}" --tokens "${EPI_TOKENS:-1,8,128,4096}" 2>&1 |
      tee "$LOG/bench-$i.log" | grep -E "^ +[0-9]" | benchLines
  done
  # The kernel as committed with 256-thread lanes (8 warps meet at each
  # row reduction instead of 16; a 4096 row is then 2 vectors a thread).
  [ -x build-gpu-epi-v0/tools/purlin-bench/purlin-epilogue-bench ] && [ -z "${EPI_NO_LANES256:-}" ] || exit 0
  echo "== variant 0 with PURLIN_LANE_THREADS=256"
  PURLIN_LANE_THREADS=256 build-gpu-epi-v0/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 50 \
    --hidden "${EPI_HIDDEN:-4096,8192}" --tokens "${EPI_TOKENS:-1,8,128,4096}" 2>&1 |
    tee "$LOG/bench-lanes256.log" | grep -E "^ +[0-9]" | benchLines
  ;;
hot)
  # Where one kernel's time goes (Nsight Compute, clocks left alone, the
  # build of `run`): `ncu --set full` on the first launch of each kernel
  # HOT_CASES names, TOKENS:REGEX (a mangled-name regex) at hidden 4096
  # (default: the fused two-shot's and one-shot's plan kernels at 1 token,
  # the two-shot's at 128, the unfused two-shot's apply kernel and the
  # pair's norm kernel at 4096); per kernel its duration, occupancy, the
  # top warp-stall reasons, and its hottest SASS lines (tools/ncu-hot.py).
  LOG=${OUT:-build-gpu-epi/logs}
  B=build-gpu-epi
  mkdir -p "$LOG"
  [ -x $B/tools/purlin-bench/purlin-epilogue-bench ] || {
    cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
      -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 &&
    ninja -C "$B" -j"$(nproc)" purlin-epilogue-bench >"$LOG/build.log" 2>&1 ||
    { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
  }
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -n "$NCU" ] || { echo "no ncu"; exit 1; }
  set -f # the cases' regexes are not file patterns
  for tk in ${HOT_CASES:-1:rmsnorm_two_shot[0-9]*PlanFn_p0 1:rmsnorm_direct[0-9]*PlanFn_p0 \
      128:rmsnorm_two_shot[0-9]*PlanFn_p0 4096:applyKernel.*rmsnorm_two_shot_unfused \
      4096:residualRmsNorm}; do
      t=${tk%%:*} k=${tk#*:}
      tag=$(echo "$k" | tr -c 'A-Za-z0-9_\n' '_' | cut -c1-40)-$t
      timeout ${HOT_TIMEOUT:-120} "$NCU" --clock-control none --set full --kernel-name-base mangled \
        -k "regex:$k" -c 1 -f -o "$LOG/hot-$tag" \
        $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 1 --hidden 4096 --tokens "$t" \
        >"$LOG/hot-$tag.out" 2>&1
      echo "== $k, 4096 x $t (rc $?)"
      "$NCU" -i "$LOG/hot-$tag.ncu-rep" --page details --csv 2>/dev/null | python3 -c '
import csv, sys
want = ("Duration", "Registers Per Thread", "Achieved Occupancy", "Block Size", "Grid Size",
        "Memory Throughput", "DRAM Throughput", "Executed Ipc Active", "Issue Slots Busy",
        "L2 Hit Rate", "L1/TEX Hit Rate")
for r in csv.DictReader(l for l in sys.stdin if l.startswith("\"")):
    if r.get("Metric Name") in want:
        print("  %-24s %s %s" % (r["Metric Name"], r["Metric Value"], r["Metric Unit"]))
' | sort -u
      "$NCU" -i "$LOG/hot-$tag.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = [l for l in sys.stdin if l.startswith("\"")]
r = list(csv.reader(rows))
if len(r) < 3: sys.exit()
head, vals = r[0], r[2]
P = "smsp__average_warps_issue_stalled_"
def num(v):
    try: return float(v.replace(",", ""))
    except ValueError: return None
st = [(num(v), h) for h, v in zip(head, vals)
      if h.startswith(P) and h.endswith("_per_issue_active.ratio") and num(v) is not None]
for v, h in sorted(st, reverse=True)[:6]:
    print("  stall %-32s %.2f cycles per issued instruction" % (h[len(P):-len("_per_issue_active.ratio")], v))
'
      "$NCU" -i "$LOG/hot-$tag.ncu-rep" --page source --print-source sass --csv \
        >"$LOG/hot-$tag-src.csv" 2>/dev/null &&
        python3 tools/ncu-hot.py "$LOG/hot-$tag-src.csv" ${HOT_TOP:-12} | head -${HOT_LINES:-80}
  done
  ;;
base)
  REV=${2:-HEAD}
  D=${3:-gen-epi}
  [ -d "$D" ] || { echo "no $D: tools/gpu-epilogue.sh gen $D first"; exit 1; }
  rm -rf gen-base && mkdir gen-base && git archive "$REV" | tar -x -C gen-base || exit 1
  cp -r "$D" "gen-base/$D"
  echo "gen-base: $(git rev-parse --short "$REV") with $D; carry $D gen-base, there: tools/gpu-epilogue.sh ab $D"
  ;;
ab)
  # The lesson of the twenty-fifth session: a change's baseline is the
  # committed code, built and run in the same call. EPI_AB_VARIANTS:
  # measurement builds of this tree too, "FLAGS|FLAGS|..." (CUDA flags
  # each; named v1, v2, ... in the table).
  [ -d gen-base ] || { echo "no gen-base: tools/gpu-epilogue.sh base first (here), carry it"; exit 1; }
  LOG=${OUT:-build-gpu-epi-ab/logs}
  mkdir -p "$LOG"
  IFS='|' read -r -a vflags <<<"${EPI_AB_VARIANTS:-}"
  sides=(base new)
  for i in "${!vflags[@]}"; do sides+=("v$((i + 1))"); done
  t0=$(date +%s)
  for side in "${sides[@]}"; do
    root=$PWD flags= tgts=purlin-epilogue-bench
    [ $side = base ] && root=$PWD/gen-base
    [ $side = new ] && [ -n "${EPI_AB_TEST:-}" ] && tgts="$tgts purlin-epilogue-test"
    case $side in v*) flags=${vflags[$(( ${side#v} - 1 ))]}
      [ -n "${EPI_AB_TEST:-}" ] && [ -n "${EPI_AB_TEST_VARIANTS:-}" ] &&
        tgts="$tgts purlin-epilogue-test" ;;
    esac
    benchBuild "ab-$side" "$root" "$flags" $(( $(nproc) / ${#sides[@]} + 2 )) $tgts &
  done
  wait
  echo "== builds: $(( $(date +%s) - t0 )) s"
  for i in "${!vflags[@]}"; do echo "   v$((i + 1)): ${vflags[$i]}"; done
  # EPI_BUILD_ONLY=1: the builds alone (tools/gpu-next.sh starts them beside
  # its other builds; its ab step then finds them made).
  [ -n "${EPI_BUILD_ONLY:-}" ] && exit 0
  export PURLIN_CACHE_DIR=${PURLIN_CACHE_DIR:-$PWD/build-gpu-epi-ab-new/cubin-cache}
  # EPI_AB_TEST_VARIANTS=1: each variant's build runs the same tests
  # after this tree's (a measurement build's results checked before its
  # figures are read).
  abTests() { # side
    local T=build-gpu-epi-ab-$1/test/gpu/purlin-epilogue-test t0 tlog=$LOG/ab-test-$1.log
    [ $1 = new ] && tlog=$LOG/ab-test.log
    t0=$(date +%s)
    if [ "$EPI_AB_TEST" = quick ]; then
      # the fused two-shot's few-row cut and the chooser's plans at the
      # sizes that take it (about 20 s)
      { $T --only all_reduce_rmsnorm_two_shot --dtypes bf16 --tokens 1,7,20,128 --hidden 1024,4096
        $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,64,128 --hidden 4096
        # rows wider than the register row's 2 vectors a thread
        # (the chooser's: direct, two_shot, two_shot_unfused; in place
        # direct_unfused and two_shot_copy), SM target's WideRows kernels
        $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,20,128 --hidden 12288,16384
        $T --only all_reduce_rmsnorm_two_shot --dtypes bf16 --tokens 1,7,20 --hidden 16384
      } >"$tlog" 2>&1
    else
    { $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,2,3,7,20,128,1000,4096 --hidden 1024,4096,8192
      $T --only all_reduce_rmsnorm --dtypes bf16,f32 --tokens 1,7,128,1000 --hidden 12288,16384
      $T --only all_reduce_rmsnorm_two_shot --dtypes bf16 --tokens 1,7,128,1000 --hidden 1024,4096,8192,12288,16384
      PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,20,128 --hidden 1024,4096
      $T --only all_reduce_rmsnorm_direct_unfused --dtypes bf16,f32 --tokens 1,7,128 --hidden 1024,4096,8192,16384
      $T --only all_reduce_rmsnorm_two_shot_unfused --dtypes bf16,f32 --tokens 1,7,128,1000 --hidden 1024,4096,8192,16384
      PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm_direct_unfused --dtypes bf16 --tokens 1,7,128 --hidden 1024,4096
    } >"$tlog" 2>&1
    fi
    grep -E "FAIL|FATAL" "$tlog" | head -20
    local name=; [ $1 = new ] || name=" $1"
    echo "== tests$name ($(( $(date +%s) - t0 )) s): $(grep -E '^[0-9]+ passed' "$tlog" | awk '{p+=$1; f+=$3} END {print p " passed, " f " failed"}')"
  }
  if [ -n "${EPI_AB_TEST:-}" ]; then
    abTests new
    if [ -n "${EPI_AB_TEST_VARIANTS:-}" ]; then
      for i in "${!vflags[@]}"; do abTests "v$((i + 1))"; done
    fi
  fi
  for round in 1 2; do
    for side in "${sides[@]}"; do
      B=build-gpu-epi-ab-$side/tools/purlin-bench/purlin-epilogue-bench
      [ -x $B ] || continue
      $B -g 8 -n 50 --hidden "${EPI_HIDDEN:-4096,8192}" --tokens "${EPI_TOKENS:-1,8,16,32,64,128,1024,4096}" \
        ${EPI_BENCH_ARGS:-} >"$LOG/ab-$side-$round.log" 2>&1 || echo "$side round $round: rc $?"
    done
  done
  # Five tables: the chooser's fused plan (bench columns 4 and 5), the
  # fused two-shot forced (column 7: the owned form at every size), the
  # unfused plans (columns 8 and 9: d_apart, 2s_apart, each as two
  # launches) and the one-shot on 32 lanes (column 15, d_wide:
  # all_reduce_rmsnorm_direct_wide).
  python3 - "$LOG" "${sides[@]}" <<'PY'
import sys, glob
log, sides = sys.argv[1], sys.argv[2:]
for title, col, plancol in (("the chooser's fused plan", 3, 4), ("the fused two_shot, forced", 6, None),
                            ("d_apart, the unfused one-shot", 7, None),
                            ("2s_apart, the unfused two-shot", 8, None),
                            ("d_wide, the one-shot on 32 lanes", 14, None)):
    print(f"== {title}, us (the better of two runs each); x: base / this")
    best, pair = {}, {}
    for side in sides:
        for f in sorted(glob.glob(f"{log}/ab-{side}-*.log")):
            for line in open(f):
                w = line.split()
                if len(w) > 10 and w[0].isdigit() and w[1].isdigit():
                    try:
                        t, pr = float(w[col]), float(w[9])
                    except ValueError:
                        continue
                    k = (int(w[0]), int(w[1]))
                    bad = "" if line.rstrip().split("(")[0].split()[-1] == "ok" else " FAIL"
                    o = best.get((k, side))
                    if o is None or t < o[0]:
                        best[(k, side)] = (t, (w[plancol] if plancol else "") + bad)
                    pair[k] = min(pair.get(k, pr), pr)
    keys = sorted({k for (k, s) in best})
    print("  hidden x tokens | pair | " + " | ".join(sides))
    for k in keys:
        b = best.get((k, "base"))
        cells = []
        for s in sides:
            v = best.get((k, s))
            if v is None:
                cells.append("-")
            else:
                cells.append(f"{v[0]:.2f} {v[1]}".rstrip() + (f" {b[0]/v[0]:.2f}x" if b and s != "base" else ""))
        print(f"  {k[0]} x {k[1]} | {pair[k]:.2f} | " + " | ".join(cells))
# The hand-written one-shot, a block a row (hand) and in the generated
# one-shot's shape (hand_l: 16 blocks a rank), from the bench of this tree.
hand = {}
for f in sorted(glob.glob(f"{log}/ab-new-*.log")):
    for line in open(f):
        w = line.split()
        if len(w) > 18 and w[0].isdigit() and w[1].isdigit():
            try:
                t = (float(w[15]), float(w[17]))
            except ValueError:
                continue
            k = (int(w[0]), int(w[1]))
            o = hand.get(k, t)
            hand[k] = (min(o[0], t[0]), min(o[1], t[1]))
if hand:
    print("== the hand-written one-shot, us: a block a row (hand) | 16 blocks a rank (hand_l)")
    for k in sorted(hand):
        print(f"  {k[0]} x {k[1]} | {hand[k][0]:.2f} | {hand[k][1]:.2f}")
PY
  ;;
timing)
  # A measurement build (-DPURLIN_EPI_TIMING, exec/Epilogue.h): the cycles
  # lane 0 of rank 0 spends between the register row's steps, printed by
  # the bench's kernels in about one launch of 512. EPI_TOKENS (default
  # 1,8,16,128), EPI_HIDDEN (default 4096,8192); EPI_BENCH_ARGS more bench
  # options (e.g. "--inplace 1": the copy plans' start->rows mark holds
  # their copy and their wait).
  LOG=${OUT:-build-gpu-epi-t/logs}
  B=build-gpu-epi-t
  mkdir -p "$LOG"
  cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    -DCMAKE_CUDA_FLAGS=-DPURLIN_EPI_TIMING -DPURLIN_GEN_DIR="$PWD/$DIR" \
    >"$LOG/configure.log" 2>&1 || { tail -30 "$LOG/configure.log"; exit 1; }
  ninja -C "$B" -j"$(nproc)" purlin-epilogue-bench >"$LOG/build.log" 2>&1 \
    || { grep -E "error|Error" "$LOG/build.log" | head -40; exit 1; }
  $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 50 --hidden "${EPI_HIDDEN:-4096,8192}" \
    --tokens "${EPI_TOKENS:-1,8,16,128}" ${EPI_BENCH_ARGS:-} >"$LOG/timing.log" 2>&1
  grep -v "^epi-timing" "$LOG/timing.log" | tail -12
  echo "== cycles between the register row's steps (lane 0 of rank 0; a lane without a row prints stale marks)"
  grep "^epi-timing" "$LOG/timing.log" | sort -V | head -60
  ;;
rows)
  # The chooser's rows bands (spec/Plan.h, kDefaultEpilogueWideRows and
  # kDefaultEpilogueUnfusedRows) on the GPU: one build of this tree
  # (BENCH_GEN with the unfused copies), the tests of the chooser's plans
  # at the sizes they move (hidden 12288 and 16384 at 1-128 tokens, 4096
  # and 8192 at 128-255, bf16 and f32; out of place, in place and res_out at
  # res; each "ok" line names the plan that ran), then the bench
  # EPI_ROUNDS times (default 3) at EPI_HIDDEN x EPI_TOKENS: its "fused"
  # column is the chooser's, beside every plan forced, in the same run.
  LOG=${OUT:-build-gpu-epi-rows/logs}
  B=build-gpu-epi-rows
  mkdir -p "$LOG"
  BENCH_GEN="$BENCH_GEN;all_reduce_rmsnorm_direct_unfused;all_reduce_rmsnorm_two_shot_unfused;all_reduce_rmsnorm_two_shot_gather"
  t0=$(date +%s)
  benchBuild rows "$PWD" "" "$(nproc)" purlin-epilogue-test purlin-epilogue-bench
  [ -x "build-gpu-epi-rows/tools/purlin-bench/purlin-epilogue-bench" ] || exit 1
  echo "== build: $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$LOG/gpu.txt"
  export PURLIN_CACHE_DIR=${PURLIN_CACHE_DIR:-$PWD/$B/cubin-cache}
  T=$B/test/gpu/purlin-epilogue-test
  t0=$(date +%s)
  # EPI_ROWS_TEST=0: the bench alone (a second call on a warm machine)
  [ "${EPI_ROWS_TEST:-1}" = 0 ] && T=true
  # EPI_ROWS_TEST=quick: the edges alone (bf16 and f32 at 1, 16, 17 rows
  # of 12288 and 128, 129 rows of 4096 and 8192)
  if [ "${EPI_ROWS_TEST:-1}" = quick ]; then
    { $T --only all_reduce_rmsnorm --dtypes bf16,f32 --tokens 1,16,17 --hidden 12288
      $T --only all_reduce_rmsnorm --dtypes bf16,f32 --tokens 128,129 --hidden 4096,8192
    } >"$LOG/rows-test.log" 2>&1
  else
  { $T --only all_reduce_rmsnorm --dtypes bf16,f32 --tokens 1,2,16,17,64,128 --hidden 12288,16384
    $T --only all_reduce_rmsnorm --dtypes bf16,f32 --tokens 128,129,255 --hidden 4096,8192
    $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,7,128 --hidden 1024,8192
    PURLIN_ONE_LAUNCH=0 $T --only all_reduce_rmsnorm --dtypes bf16 --tokens 1,16,129 --hidden 4096,12288
  } >"$LOG/rows-test.log" 2>&1
  fi
  grep -E "FAIL|FATAL" "$LOG/rows-test.log" | head -20
  echo "== tests ($(( $(date +%s) - t0 )) s): $(grep -E '^[0-9]+ passed' "$LOG/rows-test.log" | awk '{p+=$1; f+=$3} END {print p " passed, " f " failed"}')"
  echo "== the plans the chooser took (out of place, one launch; the rest in $LOG/rows-test.log):"
  grep -E "^ok +all_reduce_rmsnorm .* hidden=(4096|12288|16384) out of place" "$LOG/rows-test.log" |
    head -30 | sed -E 's/^ok +all_reduce_rmsnorm //; s/ R=8//; s/ out of place//; s/ \(first.*//'
  for round in $(seq 1 "${EPI_ROUNDS:-3}"); do
    $B/tools/purlin-bench/purlin-epilogue-bench -g 8 -n 50 --hidden "${EPI_HIDDEN:-4096,8192,12288,16384}" \
      --tokens "${EPI_TOKENS:-1,2,16,17,32,64,128,129,160,255}" >"$LOG/rows-bench-$round.log" 2>&1
    echo "== bench round $round"
    grep -vE "^#|^$" "$LOG/rows-bench-$round.log" | head -60
  done
  ;;
*)
  sed -n '2,/^set -uo/p' "$0" | sed '$d'
  exit 2
  ;;
esac
