#!/usr/bin/env bash
# The low-latency plan's time, this tree against another commit's, built
# and timed side by side in one device call: the bisection of a latency
# regression (issue 17; docs/performance.md, thirtieth session: staged_ll
# at 8 KiB 4.05-4.08 us against 3.79 at 975e244). Two steps, as the GPU
# machine has no MLIR:
#
#   tools/gpu-ll-ab.sh gen REV PURLINC_REV
#       here: gen-ll-ab/rev (REV's tree, git archive), gen-ll-ab/rev-gen
#       (all_reduce_ll as staged_ll by PURLINC_REV, a purlinc built from
#       REV: git worktree add W REV; cmake -G Ninja -S W -B W/build
#       -DPURLIN_CUDA=OFF; ninja -C W/build purlinc) and gen-ll-ab/new-gen
#       (the same by this tree's build/bin/purlinc)
#   tools/gpu-ll-ab.sh run
#       on the GPU machine (carry gen-ll-ab): REV's bench, this tree's,
#       and this tree's measurement builds LL_AB_FLAGS ("F1|F2": the CUDA
#       flags of each, v1, v2, ...; default -DPURLIN_LL_NO_MISMATCH=1, the
#       floor without the mismatch check; empty: none) built in parallel
#       (all_reduce_ll only), then timed alternately, three rounds,
#       PURLIN_ONE_LAUNCH=0 (barriers kept), 8 B .. 32 KiB; a table of the
#       best of the rounds per size last. Logs in $OUT (default
#       build-ll-ab/logs).
set -uo pipefail
cd "$(dirname "$0")/.."
G=gen-ll-ab
case "${1:-}" in
gen)
  rev=${2:?REV}
  prev=${3:?PURLINC_REV (a purlinc built from REV)}
  P=${PURLINC:-build/bin/purlinc}
  rm -rf "$G" && mkdir -p "$G/rev" "$G/src/rev" "$G/src/new"
  git archive "$rev" | tar -x -C "$G/rev" || exit 1
  git rev-parse "$rev" >"$G/rev/REV"
  # Each tree's all_reduce source under the name the datapath tools give it.
  for side in rev new; do
    root=. pc=$P
    [ $side = rev ] && root=$G/rev pc=$prev
    sed -E "s/collective all_reduce\(/collective all_reduce_ll(/" \
      "$root/examples/all_reduce.purlin" >"$G/src/$side/all_reduce_ll.purlin"
    "$pc" "$G/src/$side/all_reduce_ll.purlin" --target=sm_90 --strategy=staged_ll --lanes=8 \
      --chunks=1 --aot=bf16:sum -o "$G/$side-gen" || exit 1
    rm -f "$G/$side-gen/registry.cpp"
  done
  echo "$G: $(cat "$G/rev/REV") against this tree; carry $G and run: tools/gpu-ll-ab.sh run"
  ;;
run)
  [ -d "$G/rev" ] || { echo "no $G: tools/gpu-ll-ab.sh gen REV PURLINC_REV first (here), carry it"; exit 1; }
  LOG=${OUT:-build-ll-ab/logs}
  mkdir -p "$LOG"
  t0=$(date +%s)
  IFS='|' read -r -a vflags <<<"${LL_AB_FLAGS--DPURLIN_LL_NO_MISMATCH=1}"
  sides=(rev new)
  for i in "${!vflags[@]}"; do sides+=("v$((i + 1))"); done
  for side in "${sides[@]}"; do
    root=$PWD gen=$side cf=
    [ $side = rev ] && root=$PWD/$G/rev
    case $side in v*) gen=new cf=${vflags[$(( ${side#v} - 1 ))]} ;; esac
    (cmake -G Ninja -S "$root" -B "build-ll-ab-$side" -DPURLIN_BUILD_COMPILER=OFF \
       -DPURLIN_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
       -DPURLIN_GEN_ONLY=all_reduce_ll -DPURLIN_CHECK_ARCHS= \
       "-DCMAKE_CUDA_FLAGS=$cf" -DPURLIN_GEN_DIR="$PWD/$G/$gen-gen" \
       >"$LOG/configure-$side.log" 2>&1 &&
     ninja -C "build-ll-ab-$side" -j"$(( $(nproc) / ${#sides[@]} ))" purlin-bench >"$LOG/build-$side.log" 2>&1 ||
       echo "build of $side FAILED (logs: $LOG/build-$side.log)") &
  done
  wait
  echo "== builds: $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  for round in 1 2 3; do
    for side in "${sides[@]}"; do
      B=build-ll-ab-$side/tools/purlin-bench/purlin-bench
      [ -x "$B" ] || continue
      PURLIN_ONE_LAUNCH=0 timeout 60 "$B" -C all_reduce_ll -g 8 -d bf16 -o sum -b 8 -e 32K \
        -f 4 -n 1000 -w 100 -c 1 >"$LOG/$side-$round.log" 2>&1 || echo "$side round $round: rc $?"
    done
  done
  echo "== staged_ll, PURLIN_ONE_LAUNCH=0, us (the best of three rounds); rev: $(cut -c1-10 "$G/rev/REV"); x: this tree / each"
  for i in "${!vflags[@]}"; do echo "   v$((i + 1)): ${vflags[$i]}"; done
  python3 - "$LOG" "${sides[@]}" <<'PY'
import sys, glob
log, sides = sys.argv[1], sys.argv[2:]
best = {}
for side in sides:
    for f in glob.glob(f"{log}/{side}-*.log"):
        for line in open(f):
            w = line.split()
            if len(w) > 6 and w[0].isdigit() and w[1].isdigit():
                try:
                    t = float(w[6])
                except ValueError:
                    continue
                k = (int(w[0]), side)
                best[k] = min(best.get(k, t), t)
print("   bytes | " + " | ".join(sides))
for n in sorted({k[0] for k in best}):
    t = best.get((n, "new"))
    cells = []
    for side in sides:
        v = best.get((n, side))
        cells.append("-" if v is None else f"{v:.2f}" + (f" {t / v:.2f}x" if t and side != "new" else ""))
    print(f"  {n:>6} | " + " | ".join(cells))
PY
  ;;
*)
  sed -n 2,20p "$0"
  exit 2
  ;;
esac
