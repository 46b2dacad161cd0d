// RUN: purlin-opt %s --purlin-snac-check | FileCheck %s -DMAX=8
// RUN: purlin-opt %s --purlin-snac-check="max-ranks=2" | FileCheck %s -DMAX=2

// purlin-snac-check owns inplace_safe and inplace_same: it sets
// inplace_safe on a program that stays right with outputs overlapping
// inputs anyhow, inplace_same on one right (only) with each output at its
// input's address, inplace_max_ranks to the rank count the proofs reach
// (max-ranks), and removes a wrong claim.

layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}

// Reading peers' inputs in place races with a rank writing its own output
// over its input, at the same address too: the claim is removed.
// CHECK-LABEL: snac.program @direct_claimed of @all_reduce "direct" lanes 2 chunks 1 band[0, -1) {
snac.program @direct_claimed of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) inplace_safe {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// Peers read a scratch copy made before 'ready': set.
// CHECK-LABEL: snac.program @direct_copy of @all_reduce
// CHECK-SAME: "direct_copy" lanes 2 chunks 1 band[0, -1) inplace_safe inplace_max_ranks [[MAX]] {
snac.program @direct_copy of @all_reduce "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0 all_lanes
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0 all_lanes
}

// Two-shot over scratch copies, already claimed: kept.
// CHECK-LABEL: snac.program @two_shot_copy of @all_reduce
// CHECK-SAME: "two_shot_copy" lanes 3 chunks 1 band[0, -1) inplace_safe inplace_max_ranks [[MAX]] {
snac.program @two_shot_copy of @all_reduce "two_shot_copy" lanes 3 chunks 1 band [0, -1) inplace_safe {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to all clause 0
  snac.wait @ready from all clause 0 all_lanes
  snac.consume owned from scratch to all clause 0
  snac.notify @done to all clause 0
  snac.wait @done from all clause 0 all_lanes
}

// Staged pushes from inputs while destinations write outputs: not safe
// under any overlap; at the same address, a lane writes only the names it
// pushed before: inplace_same.
// CHECK-LABEL: snac.program @staged of @all_reduce
// CHECK-SAME: "staged" lanes 2 chunks 3 band[0, -1) inplace_same inplace_max_ranks [[MAX]] {
snac.program @staged of @all_reduce "staged" lanes 2 chunks 3 band [0, -1) inplace_safe {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    snac.consume mine from staging to self clause 0
  }
  snac.notify @free to srcs clause 0
  snac.wait @free from dsts clause 0
}

// Two-shot: the lane that owns a part reads it from every rank, then writes
// it to every rank; no one else touches it: inplace_same (a claimed
// inplace_same that holds is kept).
// CHECK-LABEL: snac.program @two_shot of @all_reduce
// CHECK-SAME: "two_shot" lanes 2 chunks 1 band[0, -1) inplace_same inplace_max_ranks [[MAX]] {
snac.program @two_shot of @all_reduce "two_shot" lanes 2 chunks 1 band [0, -1) inplace_same {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to all clause 0
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R*C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
}

// An all-gather's names read x[i] and write y[r*C + i]: at the same
// address, y[0, C) of every rank is its x, which owners write (rank 0's
// block) while other owners still read it: the claim is removed.
// CHECK-LABEL: snac.program @ag_two_shot of @all_gather "two_shot" lanes 2 chunks 1 band[0, -1) {
snac.program @ag_two_shot of @all_gather "two_shot" lanes 2 chunks 1 band [0, -1) inplace_same {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to all clause 0
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// Staged, the same all-gather: each lane pushes its piece of x (every
// destination's copy) before it consumes that piece, and the consume of
// rank 0's block writes x's elements only where this lane pushed them
// already: right at the same address, though a name reads x[i] and writes
// y[r*C + i].
// CHECK-LABEL: snac.program @ag_staged of @all_gather
// CHECK-SAME: "staged" lanes 2 chunks 2 band[0, -1) inplace_same inplace_max_ranks [[MAX]] {
snac.program @ag_staged of @all_gather "staged" lanes 2 chunks 2 band [0, -1) {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    snac.consume mine from staging to self clause 0
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

layout.collective @epi {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}

// Two-shot with row-aligned owners through an epilogue (issue 16): each
// owner reads every contribution of a name before it stores any rank's
// output at that name's address (exec/Epilogue.h's register row and
// epiRowGeneral alike), as the plain consume does: right with y at
// x's address, so the runtime need not copy x first (two_shot_copy).
// CHECK-LABEL: snac.program @epi_two_shot of @epi
// CHECK-SAME: "two_shot" lanes 2 chunks 1 band[0, -1) inplace_same inplace_max_ranks [[MAX]] {
snac.program @epi_two_shot of @epi "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to all clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// The one-shot through the same epilogue reads its peers' inputs while each
// rank stores over its own: a claim at the same address is removed.
// CHECK-LABEL: snac.program @epi_direct_claimed of @epi "direct" lanes 2 chunks 1 band[0, -1) {
snac.program @epi_direct_claimed of @epi "direct" lanes 2 chunks 1 band [0, -1) inplace_same {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to self clause 0 epilogue
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// The unfused one-shot (issue 16): each rank keeps its received rows, then
// applies the epilogue to its own outputs. With a boundary 'done' (skipped
// where every rank runs in one launch) a rank's apply may store over an
// input a peer still reads: the claim is removed.
// CHECK-LABEL: snac.program @epi_direct_unfused_boundary of @epi "direct_unfused" lanes 2 chunks 1 band[0, -1) {
snac.program @epi_direct_unfused_boundary of @epi "direct_unfused" lanes 2 chunks 1 band [0, -1) inplace_safe {
  snac.signal @ready
  snac.signal @done
  snac.signal @kept
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to received clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
  snac.notify @kept to self clause 0
  snac.wait @kept from self clause 0 all_lanes
  snac.consume mine from received to self clause 0 epilogue
}

// With 'done' a sync of every launch model, as inference builds it: each
// lane waits for its own lane of each peer, and 'kept' (every lane of this
// rank) then covers every lane of every peer, whose first consume cut the
// names otherwise than the apply cuts rows: right in place whatever the
// overlap, without copies.
// CHECK-LABEL: snac.program @epi_direct_unfused of @epi
// CHECK-SAME: "direct_unfused" lanes 2 chunks 1 band[0, -1) inplace_safe inplace_max_ranks [[MAX]] {
snac.program @epi_direct_unfused of @epi "direct_unfused" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.signal @kept
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to received clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
  snac.notify @kept to self clause 0
  snac.wait @kept from self clause 0 all_lanes
  snac.consume mine from received to self clause 0 epilogue
}
