// RUN: purlin-opt %s --purlin-snac-check | FileCheck %s

// In place with rank maps: a shift's rank is not its own contributor, so
// after copying its input it must wait for its own lanes' copies (a
// barrier of its lanes: `self`) before it writes its output, which may lie
// on that input. Without it the program is right out of place and at the
// same address (each element is read by the copy before a lane writes it),
// but not under any overlap.

layout.collective @shift {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[(r + 1) mod R][i] copy
}

// CHECK-LABEL: snac.program @no_self of @shift
// CHECK-SAME: "direct_copy" lanes 2 chunks 1 band[0, -1) inplace_same inplace_max_ranks 8 {
snac.program @no_self of @shift "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0 all_lanes
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 all_lanes boundary
}

// What inference emits: proved under any overlap.
// CHECK-LABEL: snac.program @with_self of @shift
// CHECK-SAME: "direct_copy" lanes 2 chunks 1 band[0, -1) inplace_safe inplace_max_ranks 8 {
snac.program @with_self of @shift "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0 all_lanes
  snac.notify @ready to self clause 0
  snac.wait @ready from self clause 0 all_lanes
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 all_lanes boundary
}
