// RUN: purlin-opt %s --purlin-snac-check | FileCheck %s

// Programs that use partial results, contributor ranges and owners'
// outputs, which purlin-snac-check proves right (by running exec.h's steps
// on its symbolic target). No strategy infers them yet; the postcondition
// tests (snac-check-postcondition.mlir) show the wrong ones.

layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// A reduction split over groups of ranks: ranks 0 and 1 into this rank's
// partial result, then the rest on top of it. Exact for f32 sums (the
// accumulator is f32): right for every rank count. It reads the inputs in
// place, so not in place.
// CHECK-LABEL: snac.program @split of @all_reduce "direct" lanes 2 chunks 1 band[0, -1) {
snac.program @split of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to partial clause 0 ranks [0, 2)
  snac.consume mine from partial to self clause 0 ranks [2, R)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// Two-shot pulling: each owner keeps its part in its own output, then
// every rank copies the other parts from their owners' outputs. Right at
// the same address too: an owner reads part r of every input before it
// writes part r, and a rank overwrites part p of its input only after
// owner p has read it ('parts').
// CHECK-LABEL: snac.program @pull of @all_reduce "two_shot" lanes 2 chunks 1 band[0, -1) inplace_same inplace_max_ranks 8 {
snac.program @pull of @all_reduce "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @parts
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to self clause 0
  snac.notify @parts to all clause 0
  snac.wait @parts from all clause 0
  snac.consume mine from output to self clause 0
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// Two-shot with the owner's partial result: ranks 0-2 first, the rest on
// top, written to every destination.
// CHECK-LABEL: snac.program @owned_split of @all_reduce "two_shot" lanes 3 chunks 1 band[0, -1) inplace_same inplace_max_ranks 8 {
snac.program @owned_split of @all_reduce "two_shot" lanes 3 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to partial clause 0 ranks [0, 3)
  snac.consume owned from partial to all clause 0 ranks [3, R)
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}
