#!/usr/bin/env bash
# The open GPU work of issues 16 and 17 in as few device calls as the
# machine allows (docs/performance.md, "Eighteenth session": the machine
# came after seven refused starts, so a session may get one call). Two
# steps, as the GPU machine has no MLIR:
#
#   tools/gpu-next.sh gen         here, with build/bin/purlinc built: every
#                                 folder the steps carry (gen-epi, gen-dp,
#                                 gen-mp-ll with the three-clause
#                                 collective as staged, staged_ll and
#                                 staged_ll128, gen-tma, and gen-base:
#                                 HEAD's tree, the ab step's baseline)
#   tools/gpu-next.sh run [STEPS] on the GPU machine (carry gen-epi gen-dp
#                                 gen-mp-ll gen-tma gen-base): builds what the steps
#                                 need in parallel first (about 200 s on 16
#                                 cores), then runs the steps in order while
#                                 time is left (GPU_NEXT_BUDGET, default 560
#                                 s from the start: a step that would not
#                                 end in time is skipped and named), and
#                                 prints a summary last. Logs go to
#                                 $OUT/gpu-next-logs.tgz (one file: the
#                                 device tool brings back 8 at most).
#
# STEPS (default "ab ll epi mp"), each one of the scripts:
#   ab        tools/gpu-epilogue.sh ab gen-epi: the bench of this tree against
#             the committed code's (gen-base) and the measurement builds
#             NEXT_AB_VARIANTS ("F1|F2": the flags of each; default none,
#             the two trees alone) at NEXT_AB_TOKENS (default
#             1,16,32,64,128,1024); five builds take most of a call's
#             builds alone: run it by itself first ("ab"). EPI_AB_TEST
#             (=1 or quick) runs this tree's GPU tests first, and with
#             EPI_AB_TEST_VARIANTS=1 each variant's too
#   ll        tools/gpu-datapaths.sh run gen-dp ll (staged_ll checked and
#             timed with PURLIN_ONE_LAUNCH=0, the latency probe's LL rows)
#   epi       EPI_QUICK=1 tools/gpu-epilogue.sh run gen-epi (the hand2s and
#             d_wide columns)
#   mp        MP_ONLY=${NEXT_MP_ONLY:-sizes} tools/gpu-mp.sh run
#             ${NEXT_MP_DIR:-gen-mp-ll} (traced; NEXT_MP_DIR=gen-mp: the
#             default chooser's build, tools/gpu-mp.sh gen gen-mp)
#   tma       the TMA pipeline's depth (tools/gpu-tma.sh stages gen-tma: the
#             bench per PURLIN_TMA_STAGES x PURLIN_TMA_SMEM, 16 SMs); every
#             example's TMA tests passed in the twenty-sixth session
#   variants  EPI_VARIANTS="${NEXT_VARIANTS:-0 12}" tools/gpu-epilogue.sh
#             variants gen-epi at NEXT_TOKENS (default 1,16,32,64,128,256); its
#             builds start with the others
#   inplace   the epilogue bench in place at 1-128 tokens (with ab and
#             without epi and probe: ab's build of this tree): y at x's address
#             (--inplace 1: the in-place plans, direct_unfused and two_shot
#             since the twenty-fourth session), then the residual updated in
#             place (--inplace 2: res_out at res, no overlap for any plan
#             since the twenty-fifth); builds what epi builds
#   probe     tools/gpu-epilogue.sh probe gen-epi (each kernel's own time
#             under ncu: the fused kernel, the unfused plans' two kernels,
#             the pair's two; PROBE_TOKENS, default "1 32"); builds what
#             epi builds
#   timing    tools/gpu-epilogue.sh timing gen-epi (the fused row's cycle
#             table, 4096 x 1 and 16; a build of its own; EPI_BENCH_ARGS=
#             "--inplace 1" times the in-place plans' rows)
#   py        tools/python-gpu.sh run (carry .pycache-gpu: tools/python-gpu.sh
#             gen): torch's tests, virtual ranks and processes under MPS
#   gen-all   PURLIN_GPU_QUICK=1 tools/gpu.sh gen-all (needs gen-all:
#             tools/gpu-mp.sh gen gen-all)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in
gen)
  export PATH=$PWD/build/bin:$PATH
  bash tools/gpu-epilogue.sh gen gen-epi | tail -1 || exit 1
  bash tools/gpu-datapaths.sh gen gen-dp | tail -1 || exit 1
  bash tools/gpu-tma.sh gen gen-tma | tail -1 || exit 1
  bash tools/gpu-epilogue.sh base HEAD gen-epi | tail -1 || exit 1
  PURLINC_FLAGS=--strategy=staged_ll bash tools/gpu-mp.sh gen gen-mp-ll | tail -1 || exit 1
  # The collective of the seventeenth session's areas bug, on the three
  # staged plans (its plain staged plan gave wrong results before the fix).
  tmp=$(mktemp -d)
  for s in staged staged_ll staged_ll128; do
    sed "s/collective three_clauses(/collective three_clauses_$s(/" \
      test/Host/Inputs/sizes/three_clauses.purlin >"$tmp/three_clauses_$s.purlin"
    purlinc "$tmp/three_clauses_$s.purlin" --target=sm_90 --strategy=$s --lanes=5 \
      --chunks=3 --aot=bf16,f32,i32,u8:sum,max -o gen-mp-ll || exit 1
  done
  # The chooser's plans with a low-latency band (--ll-bytes, twentieth
  # session), for the sizes test in processes: its LL plan below 64 KiB,
  # the barrier plans above, for a call that does not fit the band's
  # binding and for the partial parity calls (count 0) of self_and_exchange.
  sed "s/collective all_reduce(/collective all_reduce_band(/" examples/all_reduce.purlin \
    >"$tmp/all_reduce_band.purlin"
  sed "s/collective self_and_exchange(/collective self_and_exchange_band(/" \
    test/Host/Inputs/sizes/self_and_exchange.purlin >"$tmp/self_and_exchange_band.purlin"
  for n in all_reduce_band self_and_exchange_band; do
    purlinc "$tmp/$n.purlin" --target=sm_90 --ll-bytes=65536 \
      --aot=bf16,f32,i32,u8:sum,max -o gen-mp-ll || exit 1
  done
  rm -rf "$tmp" gen-mp-ll/registry.cpp
  echo "carry gen-epi gen-dp gen-mp-ll gen-tma gen-base; there: bash tools/gpu-next.sh run"
  ;;
run)
  steps=(${2:-ab ll epi mp})
  # The variants step's builds (started with the others) and its grid.
  variants=${NEXT_VARIANTS:-0 12} vtokens=${NEXT_TOKENS:-1,16,32,64,128,256}
  T0=$(date +%s)
  budget=${GPU_NEXT_BUDGET:-560}
  el() { echo $(( $(date +%s) - T0 )); }
  L=$(mktemp -d /tmp/gpu-next-XXXXXX)
  summary=()
  note() { summary+=("$1"); echo "== $1"; }
  C="-DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_CHECK_ARCHS="
  # The builds the steps' scripts would make one after another, at once
  # (the same folders and options, so each script's own build is then a
  # no-op); a step whose build failed says so itself.
  has() { [[ " ${steps[*]} " == *" $1 "* ]]; }
  has ll && {
    (cmake -G Ninja -S . -B build-dp $C -DCMAKE_BUILD_TYPE=Release -DPURLIN_GEN_ONLY= \
       -DPURLIN_GEN_DIR="$PWD/gen-dp" && ninja -C build-dp -j16 purlin-gpu-test purlin-bench \
       purlin-latency-probe) >"$L/build-dp.log" 2>&1 &
    (cmake -G Ninja -S . -B build-dp-ll512 $C -DCMAKE_BUILD_TYPE=Release \
       -DPURLIN_GEN_ONLY=all_reduce_ll -DCMAKE_CUDA_FLAGS=-DPURLIN_SM_LL_THREADS=512 \
       -DPURLIN_GEN_DIR="$PWD/gen-dp" && ninja -C build-dp-ll512 -j4 purlin-bench) \
      >"$L/build-ll512.log" 2>&1 &
  }
  # The inplace step beside ab runs ab's build of this tree (the same
  # bench and collectives, no flags) instead of a build of its own: with
  # both, the first call of the thirty-seventh session spent 468 s
  # building and skipped ab.
  export NEXT_EPI_BENCH=build-gpu-epi/tools/purlin-bench/purlin-epilogue-bench
  has ab && ! has epi && ! has probe &&
    NEXT_EPI_BENCH=build-gpu-epi-ab-new/tools/purlin-bench/purlin-epilogue-bench
  { has epi || has probe || { has inplace && ! has ab; }; } &&
             (cmake -G Ninja -S . -B build-gpu-epi $C -DPURLIN_GEN_ONLY= \
                -DPURLIN_GEN_DIR="$PWD/gen-epi" &&
              ninja -C build-gpu-epi -j16 purlin-epilogue-test purlin-epilogue-bench) \
                >"$L/build-epi.log" 2>&1 &
  has timing && (cmake -G Ninja -S . -B build-gpu-epi-t $C -DPURLIN_GEN_ONLY= \
                  -DCMAKE_CUDA_FLAGS=-DPURLIN_EPI_TIMING -DPURLIN_GEN_DIR="$PWD/gen-epi" &&
                ninja -C build-gpu-epi-t -j16 purlin-epilogue-bench) >"$L/build-timing.log" 2>&1 &
  abv=${NEXT_AB_VARIANTS:-}
  has ab && EPI_AB_VARIANTS="$abv" EPI_BUILD_ONLY=1 OUT="$L/ab-build" \
    bash tools/gpu-epilogue.sh ab gen-epi >"$L/build-ab.log" 2>&1 &
  has variants && EPI_VARIANTS="$variants" EPI_BUILD_ONLY=1 OUT="$L/variants-build" \
    bash tools/gpu-epilogue.sh variants gen-epi >"$L/build-variants.log" 2>&1 &
  has py && (cmake -G Ninja -S . -B build-gpu $C -DPURLIN_GEN_ONLY= &&
             ninja -C build-gpu -j16 purlin_cuda_api purlin_host_api purlin-bench) \
               >"$L/build-py.log" 2>&1 &
  has mp && (cmake -G Ninja -S . -B build-gpu-mp $C -DPURLIN_GEN_ONLY= \
               -DPURLIN_GEN_DIR="$PWD/${NEXT_MP_DIR:-gen-mp-ll}" &&
             ninja -C build-gpu-mp -j16 purlin-mp-test purlin-unit_bootstrap) \
               >"$L/build-mp.log" 2>&1 &
  wait
  note "parallel builds: $(el) s"
  left() { echo $(( budget - $(el) )); }
  # STEP NEED COMMAND...: runs COMMAND (its output in $L/STEP.txt, its
  # summary printed) when NEED seconds are left, with the time left as its
  # limit; else skipped and named.
  step() {
    local name=$1 need=$2
    shift 2
    if [ "$(left)" -lt "$need" ]; then
      note "$name: SKIPPED ($(left) s left, needs about $need)"
      return
    fi
    mkdir -p "$L/$name"
    local s=$(date +%s)
    OUT="$L/$name" timeout -k 5 "$(left)" "$@" >"$L/$name.txt" 2>&1
    local rc=$?
    note "$name: rc=$rc in $(( $(date +%s) - s )) s"
    sed -n '/== summary/,$p' "$L/$name.txt" | head -40
    # Each step's log as it ends (a call cut short by the device's time
    # limit still brings back the steps that ended).
    [ -n "${OUT:-}" ] && tar czf "$OUT/gpu-next-logs.tgz" -C "$L" . 2>/dev/null
  }
  for s in "${steps[@]}"; do
    case "$s" in
    ll) step ll 150 bash tools/gpu-datapaths.sh run gen-dp ll
        grep -hE "^#|^ +[0-9]" "$L/ll/bench-ll.log" 2>/dev/null | grep -v "^# size" | cut -c1-150
        grep -hE "^#|lines|LL|empty" "$L/ll"/probe-*.log 2>/dev/null ;;
    epi) step epi 200 env EPI_QUICK=1 bash tools/gpu-epilogue.sh run gen-epi
         grep -hE "^ +[0-9]|left out" "$L/epi/epilogue-bench.log" 2>/dev/null | head -30 ;;
    mp) step mp 60 env MP_ONLY="${NEXT_MP_ONLY:-sizes}" MP_BUDGET=$(( $(left) - 20 )) \
          bash tools/gpu-mp.sh run "${NEXT_MP_DIR:-gen-mp-ll}" ;;
    ab) step ab 150 env EPI_AB_VARIANTS="$abv" \
          EPI_TOKENS="${NEXT_AB_TOKENS:-1,16,32,64,128,1024}" bash tools/gpu-epilogue.sh ab gen-epi
        sed -n '/^== builds/,$p' "$L/ab.txt" | head -50 ;;
    tma) step tma 250 bash tools/gpu-tma.sh stages gen-tma ;;
    variants) step variants 120 env EPI_VARIANTS="$variants" EPI_TOKENS="$vtokens" \
                bash tools/gpu-epilogue.sh variants gen-epi ;;
    inplace) step inplace 60 bash -c 'B=$NEXT_EPI_BENCH
               for m in 1 2; do
                 echo "== --inplace $m"
                 $B -g 8 -n 50 --hidden 4096,8192 --inplace $m \
                   --tokens ${NEXT_INPLACE_TOKENS:-1,4,16,32,64,128} | cut -c1-200
               done'
             grep -hE "^==|^ +[0-9]" "$L/inplace.txt" | head -30 ;;
    timing) step timing 90 env EPI_TOKENS=${NEXT_TIMING_TOKENS:-1,16} EPI_HIDDEN=4096 \
              bash tools/gpu-epilogue.sh timing gen-epi
            # one line a form and row shape (the marks of a sampled call)
            sed -n '/== cycles/,$p' "$L/timing.txt" | sort -u -t: -k1,1 | head -24 ;;
    probe) step probe 60 env PROBE_TOKENS="${PROBE_TOKENS:-1 32}" PROBE_TIMEOUT=100 \
             bash tools/gpu-epilogue.sh probe gen-epi
           grep -hE "^==|^  " "$L/probe.txt" | head -40 ;;
    py) step py 200 env PYTEST_TIMEOUT=150 PYTEST_MP_TIMEOUT=200 bash tools/python-gpu.sh run
        grep -hE "passed|failed|error|==" "$L/py.txt" | head -20 ;;
    gen-all) step gen-all 400 env PURLIN_GPU_QUICK=1 bash tools/gpu.sh gen-all ;;
    *) note "$s: unknown step" ;;
    esac
  done
  if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/gpu-next-logs.tgz" -C "$L" . 2>/dev/null
  fi
  echo "== summary ($(el) s; logs: ${OUT:+$OUT/gpu-next-logs.tgz, }$L)"
  printf '%s\n' "${summary[@]}"
  ;;
*)
  sed -n '2,/^set -uo/p' "$0" | sed '$d'
  exit 2
  ;;
esac
