#!/usr/bin/env bash
# Issue 17 on the GPU: the copy-engine datapath (target "ce": no kernel,
# copies and stream memory operations) against the reference and under
# graph replay, and its bandwidth next to the SM datapath's and a memcpy of
# the same bytes; the low-latency baseline with the barriers kept. Two
# steps, as the GPU machine has no MLIR:
#
#   tools/gpu-datapaths.sh gen [DIR]  here, with build/bin/purlinc built:
#                                     writes DIR/ (default gen-dp/)
#   tools/gpu-datapaths.sh run [DIR [ll]]
#                                     on the GPU machine, from the repository
#                                     root, DIR carried: builds the runtime,
#                                     the GPU test and the benchmark for
#                                     sm_90 (build-dp/), runs them; logs in
#                                     $OUT (default build-dp/logs), summary
#                                     printed last; DP_ONLY="a;b" builds
#                                     those collectives only, DP_LL512=0
#                                     skips the LL measurement build (a
#                                     short device call: the changed LL
#                                     kernels alone), DP_LL_VARIANT its
#                                     CUDA flags (default
#                                     -DPURLIN_SM_LL_THREADS=512)
#
# DIR holds one build's collectives, renamed where two targets of one
# example share a build (the registry is by name): every copy example for
# the copy engine as NAME_ce (host code, .cpp: it records the schedules);
# all_gather, all_to_all and all_reduce for sm_90 (kernels of bf16 only,
# built ahead of time: no first-use compile in the timed part), and
# all_reduce_ll, the all_reduce source with --strategy=staged_ll (8 lanes,
# 1 chunk), the low-latency baseline, and all_reduce_ll128, with
# --strategy=staged_ll128 (LL128 lines, 16 lanes, 1 chunk: not run on a GPU
# before). Reductions have no _ce: the copy engine refuses them
# (test/Host/copy-engine.test).
#
# The run (about 400 s on the 16-core H200 machine, the build included):
#  1. purlin-gpu-test --quick --only NAME_ce for every copy example: every
#     rank count, type, count and overlap against the reference, then 1000
#     graph replays (8 ranks) and 100 (4 ranks, 400 KB) checked on the
#     device, with the kernel nodes of the collective in the graph (0);
#     all_gather_ce again with PURLIN_CE_BATCH=0 (one cudaMemcpyAsync per
#     copy) and all_to_all_ce with PURLIN_ONE_LAUNCH=0 (boundary syncs kept:
#     the token protocol across launches, ce/schedule.h);
#  2. purlin-bench, 8 virtual ranks, bf16: all_gather and all_to_all at 64 MiB
#     .. 1 GiB per rank on the copy engine (batched, and PURLIN_CE_BATCH=0)
#     and on the SM datapath, each with the memcpy of the same bytes in the
#     same run (ratio; goal >= 0.8) and the kernels per call (0: no SM);
#     64 MiB once more with every result checked;
#  2b. purlin-gemm-overlap: a bf16 8192^3 GEMM (cuBLAS) alone and beside
#     all_gather / all_to_all (256 MiB per rank) on each datapath: the
#     GEMM's slowdown (the copy engine's should be near zero);
#  3. the low-latency baseline: all_reduce 8 B .. 256 KiB with
#     PURLIN_ONE_LAUNCH=0, the chooser's plans (its default LL band), the
#     chooser without that band (all_reduce_barriers) and staged_ll, in one run;
#     all_reduce_ll128 checked (purlin-gpu-test --quick) and timed 8 B ..
#     4 MiB, PURLIN_ONE_LAUNCH=0, beside the chooser's plans to 4 MiB.
# `run DIR ll`: the low-latency lines alone: all_reduce_ll and _ll128
# checked in both launch models, timed 8 B .. 256 KiB with
# PURLIN_ONE_LAUNCH=0 (and all_reduce_ll built with the old 512-thread
# bound), then purlin-latency-probe at 8 KiB and 16 B (the generated LL
# steps beside a hand-written LL all-reduce).
#
# The TMA bulk datapath (sm_90_tma) has its own pair of steps, the same
# way: tools/gpu-tma.sh gen / run.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
DIR=${2:-gen-dp}
phase=${3:-all} # all, or ll: the low-latency lines alone (build, tests, timing)
LL_VARIANT=${DP_LL_VARIANT:--DPURLIN_SM_LL_THREADS=512}
copies=(all_gather all_gather_interleaved all_to_all all_to_all_v broadcast gather scatter shift halo)
case "$mode" in
gen)
  P=${PURLINC:-build/bin/purlinc}
  rm -rf "$DIR" && mkdir -p "$DIR/src"
  # A copy of the source under another collective name.
  renamed() { sed -E "s/collective $1\(/collective $2(/" "examples/$1.purlin" >"$DIR/src/$2.purlin"; }
  for n in "${copies[@]}"; do
    renamed "$n" "${n}_ce"
    "$P" "$DIR/src/${n}_ce.purlin" --target=ce -o "$DIR" 2>/dev/null || exit 1
  done
  "$P" examples/all_gather.purlin --target=sm_90 --aot=bf16 -o "$DIR" || exit 1
  "$P" examples/all_to_all.purlin --target=sm_90 --aot=bf16 -o "$DIR" || exit 1
  "$P" examples/all_reduce.purlin --target=sm_90 --aot=bf16:sum -o "$DIR" || exit 1
  # The chooser without its low-latency band (--ll-bytes=0): the barrier
  # plans, the band's baseline in the same run (twenty-first session: the
  # band is on by default for all_reduce's shape).
  renamed all_reduce all_reduce_barriers
  "$P" "$DIR/src/all_reduce_barriers.purlin" --target=sm_90 --ll-bytes=0 --aot=bf16:sum \
    -o "$DIR" || exit 1
  renamed all_reduce all_reduce_ll
  "$P" "$DIR/src/all_reduce_ll.purlin" --target=sm_90 --strategy=staged_ll --lanes=8 \
    --chunks=1 --aot=bf16:sum -o "$DIR" || exit 1
  renamed all_reduce all_reduce_ll128
  "$P" "$DIR/src/all_reduce_ll128.purlin" --target=sm_90 --strategy=staged_ll128 \
    --aot=bf16:sum -o "$DIR" || exit 1
  rm -f "$DIR/registry.cpp"
  "$P" examples/all_gather.purlin --emit=snac --target=ce >"$DIR/src/all_gather_ce.snac.mlir"
  echo "$DIR: $(ls "$DIR"/*.purlin.cpp | wc -l) copy-engine collectives, $(ls "$DIR"/*.purlin.cu | wc -l) sm_90"
  echo "carry $DIR/ to the GPU machine and run: tools/gpu-datapaths.sh run $DIR"
  ;;
run)
  LOG=${OUT:-build-dp/logs}
  mkdir -p "$LOG"
  summary=()
  step() { summary+=("$1"); echo "== $1"; }
  B=build-dp
  t0=$(date +%s)
  cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY="${DP_ONLY:-}" \
    -DPURLIN_CHECK_ARCHS= -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 ||
    { tail -30 "$LOG/configure.log"; echo "configure FAILED"; exit 1; }
  targets="purlin-gpu-test purlin-bench"
  [ "$phase" = ll ] || targets="$targets purlin-gemm-overlap"
  [ "$phase" = ll ] && targets="$targets purlin-latency-probe"
  if [ "$phase" = ll ] && [ "${DP_LL512:-1}" = 1 ]; then
    # Beside it, the bench of a measurement build, all_reduce_ll only,
    # timed in the same run: DP_LL_VARIANT's CUDA flags, by default the LL
    # plans' kernels at the common bound (512 threads, 128 registers: the
    # seventeenth session's change undone, PURLIN_SM_LL_THREADS=512).
    (cmake -G Ninja -S . -B "$B-ll512" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY=all_reduce_ll        -DPURLIN_CHECK_ARCHS= "-DCMAKE_CUDA_FLAGS=$LL_VARIANT"        -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure-ll512.log" 2>&1 &&
     ninja -C "$B-ll512" -j4 purlin-bench >"$LOG/build-ll512.log" 2>&1 ||
       echo "build of the LL measurement bench ($LL_VARIANT) FAILED") &
  fi
  ninja -C "$B" -j"$(nproc)" $targets >"$LOG/build.log" 2>&1 ||
    { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
  wait
  step "build: ok in $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$LOG/gpu.txt"
  T=$B/test/gpu/purlin-gpu-test
  BE=$B/tools/purlin-bench/purlin-bench
  # Whether collective $1 was generated and built (DP_ONLY names it, or
  # DP_ONLY is unset).
  built() {
    [ -f "$DIR/$1.purlin.cu" ] || return 1
    case ";${DP_ONLY:-$1};" in *";$1;"*) return 0 ;; esac
    return 1
  }
  if [ "$phase" = ll ]; then
    # The low-latency lines alone: LL and LL128 checked in both launch
    # models, then timed with the barriers kept beside the chooser's plans.
    # all_reduce (the chooser, its default LL band below 64 KiB) in both
    # launch models too, where DP_ONLY built it.
    # DP_LL_TESTS=0: the timing alone (the tests take most of the step's
    # 150 s; they passed in the twenty-ninth session with the 24-bit flag).
    for n in all_reduce_ll all_reduce_ll128 all_reduce; do
      [ "${DP_LL_TESTS:-1}" = 0 ] && break
      built "$n" || continue
      for one in 0 1; do
        PURLIN_ONE_LAUNCH=$one timeout 120 $T --quick --only $n >"$LOG/test-$n-$one.log" 2>&1
        rc=$?
        grep -E "FAIL|timeout|CRASH|FATAL" "$LOG/test-$n-$one.log" | head -5
        step "gpu test $n, PURLIN_ONE_LAUNCH=$one: rc=$rc $(tail -1 "$LOG/test-$n-$one.log")"
      done
    done
    {
      for c in all_reduce all_reduce_barriers all_reduce_ll all_reduce_ll128; do
        built "$c" || continue
        echo "# $c, PURLIN_ONE_LAUNCH=0"
        PURLIN_ONE_LAUNCH=0 timeout 60 $BE -C $c -g 8 -d bf16 -o sum -b 8 -e 256K -f 4 -n 1000 -w 100 -c 1
      done
      if [ -x "$B-ll512/tools/purlin-bench/purlin-bench" ]; then
        echo "# all_reduce_ll, PURLIN_ONE_LAUNCH=0, the measurement build: $LL_VARIANT"
        PURLIN_ONE_LAUNCH=0 timeout 60 "$B-ll512/tools/purlin-bench/purlin-bench" -C all_reduce_ll -g 8 -d bf16 -o sum -b 8 -e 256K -f 4 -n 1000 -w 100 -c 1
      fi
      echo "# all_reduce, one launch (for the record)"
      timeout 60 $BE -C all_reduce -g 8 -d bf16 -o sum -b 8 -e 256K -f 4 -n 1000 -w 100 -c 1
    } 2>&1 | tee "$LOG/bench-ll.log" | grep -v "^# size"
    # Where the LL plan's time goes (the eighteenth session: 5.23 us at 8 B,
    # 5.49 at 8 KiB, against 1.93 / 2.46 for the one-launch direct plan):
    # the probe's rows at 8 KiB and 16 B, the generated LL steps beside the
    # hand-written LL all-reduce (its floor on this GPU) and the empty kernel.
    for n in 4096 8; do
      PURLIN_PROBE_COUNT=$n timeout 120 "$B/tools/purlin-bench/purlin-latency-probe" 2>&1 |
        tee "$LOG/probe-$n.log"
    done
    echo "== summary"
    printf '%s\n' "${summary[@]}"
    exit 0
  fi

  # 1. correctness, graph replays, kernel nodes
  t0=$(date +%s)
  for n in "${copies[@]}"; do
    timeout 120 $T --quick --only "${n}_ce" >"$LOG/test-${n}_ce.log" 2>&1
    rc=$?
    grep -E "FAIL|graph replays|timeout|CRASH|FATAL" "$LOG/test-${n}_ce.log" | head -8
    step "gpu test ${n}_ce: rc=$rc $(tail -1 "$LOG/test-${n}_ce.log")"
  done
  PURLIN_CE_BATCH=0 timeout 120 $T --quick --only all_gather_ce >"$LOG/test-all_gather_ce-nobatch.log" 2>&1
  step "gpu test all_gather_ce, PURLIN_CE_BATCH=0: rc=$? $(tail -1 "$LOG/test-all_gather_ce-nobatch.log")"
  PURLIN_ONE_LAUNCH=0 timeout 120 $T --quick --only all_to_all_ce >"$LOG/test-all_to_all_ce-barriers.log" 2>&1
  step "gpu test all_to_all_ce, PURLIN_ONE_LAUNCH=0: rc=$? $(tail -1 "$LOG/test-all_to_all_ce-barriers.log")"
  step "gpu tests: $(( $(date +%s) - t0 )) s"
  # One file for the test logs (the device tool returns a bounded number).
  tar czf "$LOG/test-logs.tgz" -C "$LOG" $(cd "$LOG" && ls test-*.log) && rm -f "$LOG"/test-*.log

  # 2. bandwidth: copy engine vs SM vs memcpy (same run per table)
  t0=$(date +%s)
  {
    for c in all_gather all_to_all; do
      echo "# $c: copy engine (cuMemcpyBatchAsync)"
      timeout 90 $BE -C ${c}_ce -g 8 -d bf16 -b 64M -e 1G -f 2 -n 10 -w 3 -c 0
      echo "# $c: copy engine, PURLIN_CE_BATCH=0 (cudaMemcpyAsync per copy)"
      PURLIN_CE_BATCH=0 timeout 90 $BE -C ${c}_ce -g 8 -d bf16 -b 64M -e 1G -f 2 -n 10 -w 3 -c 0
      echo "# $c: SM datapath"
      timeout 90 $BE -C $c -g 8 -d bf16 -b 64M -e 1G -f 2 -n 10 -w 3 -c 0
      echo "# $c: copy engine at 64 MiB, every result checked"
      timeout 90 $BE -C ${c}_ce -g 8 -d bf16 -b 64M -e 64M -n 5 -w 2 -c 1
    done
  } 2>&1 | tee "$LOG/bench-ce.log" | grep -v "^# size"
  step "bench copy engine: $(( $(date +%s) - t0 )) s, see $LOG/bench-ce.log"

  # 2b. a bf16 GEMM beside the all-gather: SM datapath vs copy engine
  t0=$(date +%s)
  timeout 90 $B/tools/purlin-bench/purlin-gemm-overlap -g 8 -m 8192 -s 256M -n 20 \
    all_gather all_gather_ce all_to_all all_to_all_ce 2>&1 | tee "$LOG/gemm-overlap.log"
  step "GEMM beside the collective ($(( $(date +%s) - t0 )) s): $(grep -c slowdown "$LOG/gemm-overlap.log") rows, see $LOG/gemm-overlap.log"

  # 3. low-latency baseline, barriers kept
  t0=$(date +%s)
  {
    echo "# all_reduce, the chooser's plans, PURLIN_ONE_LAUNCH=0"
    PURLIN_ONE_LAUNCH=0 timeout 60 $BE -C all_reduce -g 8 -d bf16 -o sum -b 8 -e 256K -f 4 -n 1000 -w 100 -c 1
    echo "# all_reduce staged_ll (8 lanes, 1 chunk), PURLIN_ONE_LAUNCH=0"
    PURLIN_ONE_LAUNCH=0 timeout 60 $BE -C all_reduce_ll -g 8 -d bf16 -o sum -b 8 -e 256K -f 4 -n 1000 -w 100 -c 1
  } 2>&1 | tee "$LOG/bench-ll.log" | grep -v "^# size"
  step "bench low latency: $(( $(date +%s) - t0 )) s, see $LOG/bench-ll.log"

  # 3b. LL128 lines: checked, then timed to 4 MiB beside the chooser's plans
  PURLIN_ONE_LAUNCH=0 timeout 120 $T --quick --only all_reduce_ll128 >"$LOG/ll128-test.log" 2>&1
  step "gpu test all_reduce_ll128, PURLIN_ONE_LAUNCH=0: rc=$? $(tail -1 "$LOG/ll128-test.log")"
  timeout 120 $T --quick --only all_reduce_ll128 >"$LOG/ll128-test-one.log" 2>&1
  step "gpu test all_reduce_ll128, one launch: rc=$? $(tail -1 "$LOG/ll128-test-one.log")"
  t0=$(date +%s)
  {
    echo "# all_reduce staged_ll128 (16 lanes, 1 chunk), PURLIN_ONE_LAUNCH=0"
    PURLIN_ONE_LAUNCH=0 timeout 90 $BE -C all_reduce_ll128 -g 8 -d bf16 -o sum -b 8 -e 4M -f 4 -n 200 -w 20 -c 1
    echo "# all_reduce, the chooser's plans, PURLIN_ONE_LAUNCH=0, to 4 MiB"
    PURLIN_ONE_LAUNCH=0 timeout 90 $BE -C all_reduce -g 8 -d bf16 -o sum -b 8 -e 4M -f 4 -n 200 -w 20 -c 1
  } 2>&1 | tee "$LOG/bench-ll128.log" | grep -v "^# size"
  step "bench LL128: $(( $(date +%s) - t0 )) s, see $LOG/bench-ll128.log"

  echo "== summary"
  printf '%s\n' "${summary[@]}"
  grep -E "slowdown|alone:" "$LOG/gemm-overlap.log" | sed -E 's/ +/ /g' 
  # The ratio and plan columns of the copy-engine tables, last.
  grep -E "^#|^ +[0-9]" "$LOG/bench-ce.log" | grep -vE "^# (size|purlin-bench)" |
    awk '/^#/ {print; next} {p = ""; for (i = 19; i <= NF; ++i) p = p " " $i;
                             print "  " $1 " B/rank: " $7 " us, memcpy " $17 " us, ratio " $18 ", plan" p}'
  ;;
*)
  sed -n '2,40p' "$0"
  exit 2
  ;;
esac
