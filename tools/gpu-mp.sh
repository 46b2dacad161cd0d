#!/usr/bin/env bash
# Issue 14 on the GPU: one process per rank, N = 2, 4, 8 processes sharing
# the one GPU under MPS (a daemon of its own, private pipe and log folders,
# stopped on exit), through test/gpu/mp_test.cu's cases. Two steps, as the
# GPU machine has no MLIR:
#
#   tools/gpu-mp.sh gen [DIR]   here, with build/bin/purlinc built: the
#                               example collectives for sm_90, kernels of
#                               bf16/f32/i32 with sum/max ahead of time
#                               (default DIR gen-mp/); PURLINC_FLAGS adds
#                               purlinc options, e.g. "--ll-bytes 65536
#                               --ll128-bytes 4194304" (the chooser's LL and
#                               LL128 bands) or --strategy=staged_ll
#   tools/gpu-mp.sh run [DIR]   on the GPU machine, DIR carried: builds
#                               purlin-mp-test (sm_90), runs the cases, a
#                               summary last. Logs in $OUT (or build-gpu-mp/logs)
#
# Cases (each one line in the summary; "N passed, 0 failed" = every process
# passed): coll (every collective, 3 types, counts 0 .. 1M, in and out of
# place, purlinMemAlloc and registered buffers, against the reference) with
# VMM memory at 2, 4, 8 processes and with cudaIpc at 4; all_reduce up to
# 64 MiB (--large) at 2; graph (1000 replays) at 2 and 8; graphbuf (graphs
# on buffers registered after the capture) at 2 and 8; kill -9 of one
# process at 4 and 8; a rank that never starts; the callbacks bootstrap;
# a rank that stages its buffers where its peers do not (stagemix, at 2);
# split of 8 into 2 x 4; bench at 8 (setup costs, launch overhead, 8 KiB
# all_reduce); sizes (calls of other sizes and of count 0 back to back on
# one instance, unsynchronized, at 2 and 8: the parity halves of staged_ll
# and staged_ll128 where PURLINC_FLAGS gave them, test/gpu/mp_sizes.cu). Without MPS (nvidia-cuda-mps-control missing or failing) the
# cases still run, time-sliced and slower. MP_ONLY=REGEX runs only the cases
# whose name matches (the argument checks always run), e.g. MP_ONLY=graph.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
DIR=${2:-gen-mp}
# Every example but all_to_all_v (tables: purlin-gpu-test covers them) and
# the fused epilogues (not bitwise on a GPU: tools/gpu-epilogue.sh).
COLLS="all_reduce all_gather reduce_scatter all_to_all broadcast reduce gather scatter
  all_gather_interleaved reduce_scatter_columns shift halo all_reduce_groups all_reduce_2d"
case "$mode" in
gen)
  P=${PURLINC:-build/bin/purlinc}
  rm -rf "$DIR" && mkdir -p "$DIR"
  # u8 ahead of time too: the sizes case runs f32, bf16 and u8, and a u8
  # kernel compiled at first use (NVRTC) takes 5-45 s a collective with
  # the staged_ll plans (nineteenth session: the cold compiles, not a hang,
  # were what stopped sizes-2 at its time limit in the eighteenth session).
  for c in $COLLS; do
    "$P" "examples/$c.purlin" --target=sm_90 --aot=bf16,f32,i32,u8:sum,max \
      ${PURLINC_FLAGS:-} -o "$DIR" || exit 1
  done
  rm -f "$DIR/registry.cpp"
  echo "$(ls "$DIR"/*.purlin.cu | wc -l) collectives in $DIR; carry it and run: tools/gpu-mp.sh run $DIR"
  ;;
run)
  # Per-case logs in build-gpu-mp/logs; with $OUT (the device tool's
  # folder), every log is appended to $OUT/mp.log and the summary kept in
  # $OUT/summary.txt as the cases go. MP_BUDGET (s, default 530): cases that
  # would start later are skipped, so the summary comes before any outer
  # time limit.
  LOG=build-gpu-mp/logs
  mkdir -p "$LOG"
  start=$(date +%s)
  budget=${MP_BUDGET:-530}
  B=build-gpu-mp
  summary=()
  note() {
    summary+=("$1")
    [ -n "${OUT:-}" ] && echo "$1" >>"$OUT/summary.txt"
  }
  t0=$(date +%s)
  cmake -G Ninja -S . -B $B -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
    -DPURLIN_GEN_DIR="$PWD/$DIR" >"$LOG/configure.log" 2>&1 &&
    ninja -C $B -j"$(nproc)" purlin-mp-test purlin-unit_bootstrap >"$LOG/build.log" 2>&1 ||
    { grep -E "error" "$LOG/build.log" | head -30; tail -20 "$LOG/configure.log"; echo "build FAILED"; exit 1; }
  note "build: ok in $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$LOG/gpu.txt"
  T=$B/test/gpu/purlin-mp-test
  # MPS: a daemon of our own, stopped however this script ends.
  tmp=$(mktemp -d /tmp/purlin-mps-XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$tmp/pipe CUDA_MPS_LOG_DIRECTORY=$tmp/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  mps=off
  stop_mps() {
    if [ "$mps" = on ]; then
      echo quit | nvidia-cuda-mps-control
      sleep 1
      cp "$CUDA_MPS_LOG_DIRECTORY"/*.log "$LOG/" 2>/dev/null
      [ -n "${OUT:-}" ] && cat "$CUDA_MPS_LOG_DIRECTORY"/control.log >"$OUT/mps-control.log" 2>/dev/null
    fi
    rm -rf "$tmp"
  }
  trap stop_mps EXIT
  if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d; then
    mps=on
  fi
  note "MPS: $mps"
  export PURLIN_CACHE_DIR=$tmp/cache
  run() { # name, timeout, command...
    local name=$1 lim=$2
    shift 2
    if [ -n "${MP_ONLY:-}" ] && [ "$name" != args ] && ! [[ $name =~ $MP_ONLY ]]; then
      return
    fi
    local s=$(date +%s)
    if [ $(( s - start + lim / 3 )) -gt "$budget" ]; then
      note "$name: SKIPPED (time budget)"
      return
    fi
    timeout -k 5 "$lim" "$@" >"$LOG/$name.log" 2>&1
    local rc=$?
    grep -E "FAIL|hung" "$LOG/$name.log" | head -8
    [ -n "${OUT:-}" ] && { echo "=== $name"; cat "$LOG/$name.log"; } >>"$OUT/mp.log"
    note "$name (rc=$rc, $(( $(date +%s) - s )) s): $(tail -1 "$LOG/$name.log")"
  }
  run args 120 $T
  $B/test/unit/purlin-unit_bootstrap >"$LOG/unit-bootstrap.log" 2>&1
  note "unit_bootstrap: $(tail -1 "$LOG/unit-bootstrap.log")"
  # Most telling first: a time limit cuts the tail.
  PURLIN_MP_MEMORY=vmm run coll-vmm-2 200 $T --ranks 2 --case coll
  run kill-4 45 $T --ranks 4 --case kill
  run absent-4 30 $T --ranks 4 --case absent
  run graph-2 45 $T --ranks 2 --case graph
  run graphbuf-2 150 $T --ranks 2 --case graphbuf
  run split-8 60 $T --ranks 8 --case split
  run graphbuf-8 90 $T --ranks 8 --case graphbuf --quick
  run callbacks-4 45 $T --ranks 4 --case callbacks
  run mismatch-4 45 $T --ranks 4 --case mismatch
  run stagemix-2 45 $T --ranks 2 --case stagemix
  # Traced (a line before each step that waits on the peers or the GPU) and
  # with the test's own deadline inside the time limit, so that a stall
  # names the rank and the step: the eighteenth session saw one run of
  # sizes-2 of seven stop at 120 s with no line printed (the others 11-13 s);
  # the nineteenth's trace showed why: each u8 launch waited 7-44 s for its
  # first-use compile, with an empty cubin cache (gen now builds u8 ahead).
  PURLIN_MP_TRACE=1 PURLIN_MP_DEADLINE=100 run sizes-2 120 $T --ranks 2 --case sizes
  PURLIN_MP_TRACE=1 PURLIN_MP_DEADLINE=150 run sizes-8 160 $T --ranks 8 --case sizes --quick
  for i in 2 3 4; do
    PURLIN_MP_TRACE=1 PURLIN_MP_DEADLINE=50 run sizes-2-again$i 60 $T --ranks 2 --case sizes
  done
  PURLIN_MP_MEMORY=vmm run coll-vmm-4 200 $T --ranks 4 --case coll --quick
  PURLIN_MP_MEMORY=vmm run coll-vmm-8 200 $T --ranks 8 --case coll --quick
  run bench-8 60 $T --ranks 8 --case bench
  run graph-8 60 $T --ranks 8 --case graph
  run kill-8 45 $T --ranks 8 --case kill
  PURLIN_MP_MEMORY=ipc run coll-ipc-4 200 $T --ranks 4 --case coll --quick
  PURLIN_MP_MEMORY=ipc run kill-ipc-4 45 $T --ranks 4 --case kill
  PURLIN_MP_MEMORY=ipc run bench-ipc-8 60 $T --ranks 8 --case bench
  run coll-large-2 120 $T --ranks 2 --case coll --large
  # Every element type and op (the pairs not built ahead compiled first,
  # NVRTC, into one cache the processes share), last: on an H100 its
  # compiles ran out the 300 s (all_reduce's pairs alone 83 s; twenty-seventh
  # session), and the cases above it were then past the budget.
  PURLIN_CACHE_DIR=$B/cubin-cache run coll-types-2 300 $T --ranks 2 --case coll --quick --all-types
  grep -h "^bench" "$LOG"/bench-8.log "$LOG"/bench-ipc-8.log 2>/dev/null
  grep -h "graph all_reduce" "$LOG"/graph-*.log 2>/dev/null | head -4
  grep -h "graphbuf" "$LOG"/graphbuf-2.log 2>/dev/null | head -12
  grep -h "after launch\|Abort" "$LOG"/kill-*.log 2>/dev/null | head -6
  if [ "$mps" = on ]; then
    srv=$(echo get_server_list | nvidia-cuda-mps-control 2>&1 | head -1)
    note "MPS server(s): ${srv:-none}; clients left: $(echo "get_client_list $srv" | nvidia-cuda-mps-control 2>&1 | tr '\n' ' ')"
  fi
  echo "== summary"
  printf '%s\n' "${summary[@]}"
  ;;
*)
  sed -n '2,26p' "$0"
  exit 2
  ;;
esac
