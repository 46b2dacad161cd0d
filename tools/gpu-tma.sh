#!/usr/bin/env bash
# Issue 17 on the GPU: the TMA bulk datapath (target sm_90_tma: large
# contiguous moves by cp.async.bulk through shared memory, the SM atoms for
# the rest; docs/runtime.md) against the reference on every example, and
# its bandwidth with few SMs next to the SM datapath's with the same SMs
# and with all of them, and a memcpy of the same bytes. Two steps, as the
# GPU machine has no MLIR:
#
#   tools/gpu-tma.sh gen [DIR]   here, with build/bin/purlinc built: writes
#                                DIR/ (default gen-tma/)
#   tools/gpu-tma.sh stages [DIR]  on the GPU machine: the bench per
#                                PURLIN_TMA_STAGES (TMA_STAGES) at each
#                                PURLIN_TMA_SMEM (TMA_SMEM), L = 2 lanes
#   tools/gpu-tma.sh run [DIR [PHASE]]
#                                on the GPU machine, from the repository
#                                root, DIR carried: builds the runtime, the
#                                GPU test and the benchmark for sm_90
#                                (build-tma/), runs them; logs in $OUT
#                                (default build-tma/logs), summary last.
#                                TMA_ONLY="NAME:[SMEM] ...": the tests of those
#                                cases only (the whole set takes more than
#                                one 600 s call);
#                                TMA_GEN_ONLY="A;B": build those
#                                collectives only (PURLIN_GEN_ONLY: the
#                                tests of a subset build in a third of
#                                the time);
#                                PHASE: all (default), or build, test, bench
#                                alone (a device call has 10 minutes; test
#                                and bench build first if build-tma/ lacks
#                                the binaries)
#
# DIR holds one build's collectives, renamed (the registry is by name):
#  - NAME_tma: every example for sm_90_tma, purlinc's default pairs ahead
#    of time (the others compile at first use through NVRTC, against the
#    tma atoms the runtime embeds: that path is tested too), with the bulk
#    path from 1 KiB per source (PURLIN_TMA_MIN_BYTES, default 16 KiB), so
#    that the test's counts take it;
#  - the bandwidth instances, bf16 (sum) ahead of time, with the lanes of
#    every plan fixed (--lanes: 8 virtual ranks x L lanes = the blocks,
#    one per SM for the TMA kernels, whose 192 KiB of stages fill an SM):
#    all_gather_tma_lL, all_reduce_tma_lL (sm_90_tma) and all_gather_sm_lL,
#    all_reduce_sm_lL (sm_90) for L = 1, 2, 4 (8, 16, 32 SMs); the
#    examples' own all_gather and all_reduce for sm_90 (the chooser's 16
#    lanes: 128 blocks, all SMs). 4 SMs is half a lane per rank at 8 ranks:
#    that row runs the L = 1 instances on 4 ranks (-g 4).
#
# The run:
#  1. purlin-gpu-test --quick --only NAME_tma for every example (those with
#     an epilogue: purlin-epilogue-test, bf16, tokens 1-1000): every rank
#     count, type, count and overlap against the reference, graph replays;
#     all_gather_tma and all_reduce_tma again with PURLIN_TMA_SMEM=0 (no
#     stages: the same kernels on the SM atoms alone) and with
#     PURLIN_TMA_SMEM=32K (small stages: many tiles per move, every stage
#     refilled: the pipeline's wrap-around);
#  2. purlin-bench, 8 virtual ranks, bf16: all_gather at 16 .. 64 MiB of
#     input per rank (128 .. 512 MiB of output) and all_reduce (sum) at 64
#     .. 256 MiB per rank on each instance, the memcpy of the same bytes in
#     each run; the smallest size once more with every result checked; the
#     summary prints busbw per SM count and the ratios TMA / SM (same SMs)
#     and TMA / SM (all SMs) (goal: >= 0.9 of the all-SM figure with <= 16
#     SMs), and memcpy's.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
DIR=${2:-gen-tma}
phase=${3:-all}
lanes=(1 2 4)
case "$mode" in
gen)
  P=${PURLINC:-build/bin/purlinc}
  rm -rf "$DIR" && mkdir -p "$DIR/src"
  # A copy of the source under another collective name.
  renamed() { sed -E "s/collective $1\(/collective $2(/" "examples/$1.purlin" >"$DIR/src/$2.purlin"; }
  for f in examples/*.purlin; do
    n=$(basename "$f" .purlin)
    renamed "$n" "${n}_tma"
    "$P" "$DIR/src/${n}_tma.purlin" --target=sm_90_tma -o "$DIR" 2>/dev/null || { echo "purlinc failed: $n"; exit 1; }
    # The test's counts (up to 100003 elements) cut into lanes' pieces of
    # a few KiB: below the bulk path's default 16 KiB per source. The test
    # instances take it from 1 KiB (the run passes the same to first-use
    # compiles: PURLIN_JIT_OPTIONS), so that the tests go through it.
    sed -i '1i #define PURLIN_TMA_MIN_BYTES 1024 // tools/gpu-tma.sh: the tests take the bulk path' "$DIR/${n}_tma.purlin.cu"
  done
  for c in all_gather all_reduce; do
    aot=bf16:sum
    for l in "${lanes[@]}"; do
      renamed $c ${c}_tma_l$l
      "$P" "$DIR/src/${c}_tma_l$l.purlin" --target=sm_90_tma --lanes=$l --aot=$aot -o "$DIR" || exit 1
      renamed $c ${c}_sm_l$l
      "$P" "$DIR/src/${c}_sm_l$l.purlin" --target=sm_90 --lanes=$l --aot=$aot -o "$DIR" || exit 1
    done
    "$P" examples/$c.purlin --target=sm_90 --aot=$aot -o "$DIR" || exit 1
  done
  rm -f "$DIR/registry.cpp"
  "$P" examples/all_reduce.purlin --emit=snac --target=sm_90_tma >"$DIR/src/all_reduce_tma.snac.mlir"
  echo "$DIR: $(ls "$DIR"/*.purlin.cu | wc -l) collectives ($(grep -l '"tma/sm90.cuh"' "$DIR"/*.purlin.cu | wc -l) sm_90_tma)"
  echo "carry $DIR/ to the GPU machine and run: tools/gpu-tma.sh run $DIR"
  ;;
run)
  LOG=${OUT:-build-tma/logs}
  mkdir -p "$LOG"
  summary=()
  step() { summary+=("$1"); echo "== $1"; }
  B=build-tma
  T=$B/test/gpu/purlin-gpu-test
  BE=$B/tools/purlin-bench/purlin-bench
  t0=$(date +%s)
  if [ "$phase" = all ] || [ "$phase" = build ] || [ ! -x "$T" ] || [ ! -x "$BE" ]; then
  cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "-DPURLIN_GEN_ONLY=${TMA_GEN_ONLY:-}" \
    -DPURLIN_CHECK_ARCHS= -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 ||
    { tail -30 "$LOG/configure.log"; echo "configure FAILED"; exit 1; }
  ninja -C "$B" -j"$(nproc)" purlin-gpu-test purlin-epilogue-test purlin-bench >"$LOG/build.log" 2>&1 ||
    { grep -E "error|Error" "$LOG/build.log" | head -40; echo "build FAILED"; exit 1; }
  step "build: ok in $(( $(date +%s) - t0 )) s"
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$LOG/gpu.txt"

  # 1. correctness on every example, the bulk path off and with small
  # stages: one process a case, PURLIN_GPU_JOBS at once (default nproc / 4:
  # a case spends most of its time on the host and in first-use compiles)
  if [ "$phase" = all ] || [ "$phase" = test ]; then
  t0=$(date +%s)
  export PURLIN_JIT_OPTIONS=-DPURLIN_TMA_MIN_BYTES=1024 # as the test instances (gen)
  jobs=${PURLIN_GPU_JOBS:-$(( $(nproc) / 4 ))}
  [ "$jobs" -ge 1 ] || jobs=1
  cases=()
  if [ -n "${TMA_ONLY:-}" ]; then # a subset, e.g. TMA_ONLY="all_to_all_v_tma: all_reduce_tma:0"
    cases=($TMA_ONLY)
  else
    for f in "$DIR"/src/*_tma.purlin; do cases+=("$(basename "$f" .purlin):"); done
    cases+=(all_gather_tma:0 all_gather_tma:32K all_reduce_tma:0 all_reduce_tma:32K)
  fi
  rm -f "$LOG"/rc-*
  for c in "${cases[@]}"; do
    n=${c%%:*} smem=${c#*:} tag=${c%%:*}${c#*:}
    (
      [ -n "$smem" ] && export PURLIN_TMA_SMEM=$smem
      timeout 480 $T --quick --only "$n" >"$LOG/test-$tag.log" 2>&1
      rc=$?
      # purlin-gpu-test leaves a collective with an epilogue to
      # purlin-epilogue-test (its inputs and the unfused chain's reference)
      if grep -q "has an epilogue" "$LOG/test-$tag.log"; then
        timeout 480 $B/test/gpu/purlin-epilogue-test --only "$n" --dtypes bf16 \
          --tokens 1,7,128,1000 --hidden 1024,4096 >"$LOG/test-$tag.log" 2>&1
        rc=$?
      fi
      last=$(grep -E '^[0-9]+ passed' "$LOG/test-$tag.log" | tail -1)
      [ -n "$last" ] || last=$(tail -1 "$LOG/test-$tag.log")
      echo "gpu test $n${smem:+, PURLIN_TMA_SMEM=$smem}: rc=$rc $last" >"$LOG/rc-$tag"
    ) &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
  done
  wait
  for f in "$LOG"/rc-*; do step "$(cat "$f")"; done
  grep -hE "FAIL|timeout|CRASH|FATAL" "$LOG"/test-*.log | head -20
  step "gpu tests: $(( $(date +%s) - t0 )) s"
  tar czf "$LOG/test-logs.tgz" -C "$LOG" $(cd "$LOG" && ls test-*.log) && rm -f "$LOG"/test-*.log "$LOG"/rc-*
  unset PURLIN_JIT_OPTIONS
  fi

  # 2. bandwidth: TMA vs SM with the same SMs, SM with all SMs, memcpy
  if [ "$phase" = all ] || [ "$phase" = bench ]; then
  t0=$(date +%s)
  {
    for c in all_gather all_reduce; do
      # The size is the largest buffer of a rank: all_gather's output, R x
      # its input, so 512 MiB is 64 MiB of input per rank at 8 ranks.
      op=""; lo=128M; hi=512M
      [ $c = all_reduce ] && op="-o sum" && lo=64M && hi=256M
      range="-b $lo -e $hi"
      run() { # LABEL COLLECTIVE RANKS
        echo "# $c $1"
        timeout 120 $BE -C $2 -g $3 -d bf16 $op $range -f 2 -n 10 -w 3 -c 0
      }
      run "sm all" $c 8
      for l in "${lanes[@]}"; do
        run "tma $((8 * l))" ${c}_tma_l$l 8
        run "sm $((8 * l))" ${c}_sm_l$l 8
      done
      run "tma 4" ${c}_tma_l1 4
      run "sm 4" ${c}_sm_l1 4
      echo "# $c tma 16, PURLIN_TMA_SMEM=0 (the same kernels on the SM atoms alone)"
      PURLIN_TMA_SMEM=0 timeout 120 $BE -C ${c}_tma_l2 -g 8 -d bf16 $op $range -f 2 -n 10 -w 3 -c 0
      echo "# $c tma 16, the smallest size, every result checked"
      timeout 120 $BE -C ${c}_tma_l2 -g 8 -d bf16 $op -b $lo -e $lo -n 3 -w 1 -c 1
    done
  } 2>&1 | tee "$LOG/bench-tma.log" | grep -v "^# size"
  step "bench tma: $(( $(date +%s) - t0 )) s, see $LOG/bench-tma.log"
  fi

  echo "== summary"
  printf '%s\n' "${summary[@]}"
  # Per collective and size: busbw (GB/s) of each row, TMA / SM at the same
  # SMs, TMA / SM with all SMs, and memcpy's ratio (baseline / time).
  [ -f "$LOG/bench-tma.log" ] && awk '
    /^# (all_gather|all_reduce) / {
      kind = ""
      if ($0 ~ /^# (all_gather|all_reduce) (tma|sm) (all|[0-9]+)$/) { c = $2; kind = $3; sms = $4 }
      next
    }
    /^#/ { next }
    kind != "" && $1 ~ /^[0-9]+$/ {
      key = c " " $1; bw[key, kind, sms] = $9; ratio[key, kind, sms] = $18
      if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
      if (!((c, sms) in seenS)) { seenS[c, sms] = 1 }
    }
    END {
      split("4 8 16 32", S, " ")
      printf "%-24s %5s %10s %10s %8s %10s %8s\n", "collective bytes/rank", "SMs",
             "tma busbw", "sm busbw", "tma/sm", "sm(all)", "tma/all"
      for (i = 1; i <= nk; ++i) {
        k = keys[i]; all = bw[k, "sm", "all"]
        for (j = 1; j <= 4; ++j) {
          s = S[j]; t = bw[k, "tma", s]; m = bw[k, "sm", s]
          if (t == "") continue
          printf "%-24s %5s %10s %10s %8s %10s %8s   memcpy ratio tma %s sm %s\n", k, s, t, m,
                 (m > 0 ? sprintf("%.2f", t / m) : "n/a"), all,
                 (all > 0 ? sprintf("%.2f", t / all) : "n/a"), ratio[k, "tma", s], ratio[k, "sm", s]
        }
      }
    }' "$LOG/bench-tma.log"
  ;;
stages)
  # The bulk pipeline's depth: the bench built once per PURLIN_TMA_STAGES
  # (TMA_STAGES, default "2 3 4 6 8"; 4 is the default build), the L = 2
  # instances only (16 SMs at 8 ranks), then all_gather (256 MiB) and
  # all_reduce (128 MiB) per build at each PURLIN_TMA_SMEM (TMA_SMEM,
  # default "96K 192K"): busbw per row, to pick the stages and the tile.
  LOG=${OUT:-build-tma-s/logs}
  mkdir -p "$LOG"
  sel=(${TMA_STAGES:-2 3 4 6 8})
  t0=$(date +%s)
  for k in "${sel[@]}"; do
    (cmake -G Ninja -S . -B "build-tma-s$k" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
       -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_CHECK_ARCHS= \
       "-DPURLIN_GEN_ONLY=all_gather_tma_l2;all_reduce_tma_l2" \
       "-DCMAKE_CUDA_FLAGS=-DPURLIN_TMA_STAGES=$k" -DPURLIN_GEN_DIR="$PWD/$DIR" \
       >"$LOG/configure-$k.log" 2>&1 &&
     ninja -C "build-tma-s$k" -j$(( $(nproc) / ${#sel[@]} + 1 )) purlin-bench \
       >"$LOG/build-$k.log" 2>&1 || echo "stages $k: build FAILED") &
  done
  wait
  echo "== builds: $(( $(date +%s) - t0 )) s"
  for k in "${sel[@]}"; do
    BE=build-tma-s$k/tools/purlin-bench/purlin-bench
    [ -x "$BE" ] || continue
    for m in ${TMA_SMEM:-96K 192K}; do
      for c in all_gather all_reduce; do
        op=""; sz=256M
        [ $c = all_reduce ] && op="-o sum" && sz=128M
        PURLIN_TMA_SMEM=$m timeout 60 $BE -C ${c}_tma_l2 -g 8 -d bf16 $op -b $sz -e $sz -n 10 -w 3 -c 0 \
          >"$LOG/s$k-$m-$c.log" 2>&1
        echo "stages $k smem $m $c: $(grep -E '^ +[0-9]' "$LOG/s$k-$m-$c.log" | awk '{print $7 " us, busbw " $9 " GB/s"}')"
      done
    done
  done
  ;;
*)
  sed -n '2,50p' "$0"
  exit 2
  ;;
esac
