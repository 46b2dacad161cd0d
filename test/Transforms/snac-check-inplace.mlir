// RUN: purlin-opt %s --purlin-snac-check | FileCheck %s
// RUN: purlin-opt %s --purlin-snac-check="max-ranks=2" | FileCheck %s

// purlin-snac-check owns inplace_safe and inplace_same: it sets
// inplace_safe on a program that stays right with outputs overlapping
// inputs anyhow, inplace_same on one right (only) with each output at its
// input's address, and removes a wrong claim.

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
// CHECK-LABEL: snac.program @direct_copy of @all_reduce "direct_copy" lanes 2 chunks 1 band[0, -1) inplace_safe {
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
// CHECK-LABEL: snac.program @two_shot_copy of @all_reduce "two_shot_copy" lanes 3 chunks 1 band[0, -1) inplace_safe {
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
// CHECK-LABEL: snac.program @staged of @all_reduce "staged" lanes 2 chunks 3 band[0, -1) inplace_same {
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
// CHECK-LABEL: snac.program @two_shot of @all_reduce "two_shot" lanes 2 chunks 1 band[0, -1) inplace_same {
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
// address, rank 0's block of y is every rank's x, read by other names while
// it is written. The check proves inplace_same only where a name reads and
// writes one offset (the same from and to maps): the claim is removed.
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
