#!/usr/bin/env bash
# Issue 11 on the GPU: the in-place cases with 1 lane and with 8 through
# purlin-gpu-test (every collective at 2, 4 and 8 ranks, out of place, in
# place under NCCL's offsets and at the same address, against the
# reference; a plan the checker did not prove for an overlap must be
# refused: PURLIN_ERR_NO_PLAN). Two steps, as the GPU machine has no MLIR:
#
#   tools/gpu-inplace.sh gen [DIR]   here, with build/bin/purlinc built:
#                                    writes DIR/<variant>/ (default
#                                    gen-inplace/), one folder per variant
#   tools/gpu-inplace.sh run [DIR]   on the GPU machine, DIR carried: builds
#                                    purlin-gpu-test per variant (sm_90),
#                                    runs it (--quick), prints a summary
#
# Variants (each collective has only that variant's plans, so the runtime
# runs them or refuses them in place):
#   auto_l1, auto_l8   the chooser's plans at 1 and 8 lanes (gather,
#                      all_gather_interleaved, reduce_scatter_columns,
#                      all_reduce, and `two`: two clauses over one input);
#   staged_l1          staged, 1 lane, 1 chunk; staged_l8: 8 lanes, 5 chunks
#                      (all_gather_interleaved, reduce_scatter_columns,
#                      all_reduce, and `rev`: a reversed reduce);
#   direct_l1          direct, 1 lane (gather: refused in place now).
# The permutation case (R bound to 4) stays on the host
# (test/Host/inplace-issue11.test): purlin-gpu-test runs 2, 4 and 8 ranks.
# PURLINC_FLAGS: more purlinc flags for gen (e.g. --dtype=bf16: one type,
# few kernels). Expect `0 failed` per variant. Build cost: ~14 plans of sm_90 kernels per
# variant (the auto ones: 4 plans x every type and op).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
DIR=${2:-gen-inplace}
I=test/Host/Inputs/issue11
variants=(
  "auto_l1|--lanes=1|examples/gather examples/all_gather_interleaved examples/reduce_scatter_columns examples/all_reduce $I/two"
  "auto_l8|--lanes=8|examples/gather examples/all_gather_interleaved examples/reduce_scatter_columns examples/all_reduce $I/two"
  "staged_l1|--strategy=staged --lanes=1 --chunks=1|examples/all_gather_interleaved examples/reduce_scatter_columns examples/all_reduce $I/rev"
  "staged_l8|--strategy=staged --lanes=8 --chunks=5|examples/all_gather_interleaved examples/reduce_scatter_columns examples/all_reduce $I/rev"
  "direct_l1|--strategy=direct --lanes=1|examples/gather"
)
case "$mode" in
gen)
  P=${PURLINC:-build/bin/purlinc}
  for v in "${variants[@]}"; do
    IFS='|' read -r name flags files <<<"$v"
    rm -rf "$DIR/$name" && mkdir -p "$DIR/$name"
    for f in $files; do
      # shellcheck disable=SC2086
      "$P" "$f.purlin" --target=sm_90 $flags ${PURLINC_FLAGS:-} -o "$DIR/$name" || exit 1
    done
    rm -f "$DIR/$name/registry.cpp"
    echo "$name: $(ls "$DIR/$name"/*.purlin.cu | wc -l) collectives ($flags)"
  done
  echo "carry $DIR/ to the GPU machine and run: tools/gpu-inplace.sh run $DIR"
  ;;
run)
  summary=()
  for v in "${variants[@]}"; do
    IFS='|' read -r name flags files <<<"$v"
    B=build-gpu-inplace-$name
    cmake -G Ninja -S . -B "$B" -DPURLIN_BUILD_COMPILER=OFF -DPURLIN_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DPURLIN_GEN_ONLY= -DPURLIN_CHECK_ARCHS= \
      -DPURLIN_GEN_DIR="$PWD/$DIR/$name" >"$B.configure.log" 2>&1 &&
      ninja -C "$B" -j"$(nproc)" purlin-gpu-test >"$B.build.log" 2>&1 ||
      { summary+=("$name: build FAILED (see $B.build.log)"); continue; }
    "$B/test/gpu/purlin-gpu-test" --quick 2>&1 | tee "$B.test.log" |
      grep -E "FAIL|passed|SKIPPED|timeout" | head -40
    summary+=("$name ($flags): $(tail -1 "$B.test.log")")
  done
  echo "== summary"
  printf '%s\n' "${summary[@]}"
  ;;
*)
  sed -n '2,30p' "$0"
  exit 2
  ;;
esac
