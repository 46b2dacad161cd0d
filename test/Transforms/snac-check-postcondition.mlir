// RUN: purlin-opt %s --purlin-snac-check -split-input-file -verify-diagnostics

// The postcondition rule of purlin-snac-check: after each launch, every
// output element holds exactly its name's contributions, combined in
// ascending rank order (computed from the collective's reference
// semantics, not from the executor), no other output element is written,
// and inputs stay intact. Each program below is deliberately wrong in one
// way; the error is at the step that wrote the element, with the
// configuration (in brackets) where it shows. The programs use partial
// results and contributor ranges (snac.consume ... to partial / from
// partial / ranks [lo, hi)), and an owner keeping its part (owned ... to
// self): exec.h runs each step right, so only such steps can put a wrong
// combination together.

// A missing contribution: the consume combines ranks 1 and up only.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{wrong result: 'y' element 0 of rank 0 holds sum() after launch 1, where its name gives x@0[0]: the contribution x@0[0] is missing [R = 1, count 1, f32, 2 lanes, 1 chunk]}}
  snac.consume mine from input to self clause 0 ranks [1, R)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// A doubled contribution: the partial result covers ranks 0 and 1, the
// second step adds rank 1 again.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to partial clause 0 ranks [0, 2)
  // expected-error @+1 {{wrong result: 'y' element 0 of rank 0 holds sum(x@0[0], x@1[0], x@1[0]) after launch 1, where its name gives sum(x@0[0], x@1[0]): the contribution x@1[0] is combined more than once [R = 2, count 1, f32, 2 lanes, 1 chunk]}}
  snac.consume mine from partial to self clause 0 ranks [1, R)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// A wrong order: ranks 1 and up first, then rank 0 (a float sum depends on
// the order: the contract is ascending rank).
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to partial clause 0 ranks [1, R)
  // expected-error @+1 {{wrong result: 'y' element 0 of rank 0 holds sum(x@1[0], x@0[0]) after launch 1, where its name gives sum(x@0[0], x@1[0]): its contributions are combined out of ascending rank order [R = 2, count 1, f32, 2 lanes, 1 chunk]}}
  snac.consume mine from partial to self clause 0 ranks [0, 1)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// A write outside the output's names: a reduce to the root (two-shot),
// whose owners then also keep their parts, as a reduce-scatter would; but
// only the root receives the names, so rank 1 writes its own y.
layout.collective @reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @root : root
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[root][i] reduce<sum>
}
snac.program @p of @reduce "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to all clause 0
  // expected-error @+1 {{rank 1 lane 1 (consume) writes 'y' element 0 of rank 1 in launch 1, which no name of the collective writes [R = 2, count 1, root 0, f32, 2 lanes, 1 chunk]}}
  snac.consume owned from input to self clause 0
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// A partial result continues a fold exactly only where the element type
// holds the accumulator: f16 or f8 sums accumulate in f32 and round once,
// so a sum split over groups of ranks differs in the last bits (a partial
// of one contribution is exact: it shows from 3 ranks). The same program
// is right for f32 (snac-check-extension.mlir).
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to partial clause 0 ranks [0, 2)
  // expected-error @+1 {{wrong result: 'y' element 0 of rank 1 holds sum(sum(x@0[0], x@1[0]), x@2[0]) after launch 1, where its name gives sum(x@0[0], x@1[0], x@2[0]): a partial result stored as f8e4m3 is combined further, which is not exact for sum (exact: min and max; sum and prod of f32, f64 and integers) [R = 3, count 1, f8e4m3, 2 lanes, 1 chunk]}}
  snac.consume mine from partial to self clause 0 ranks [2, R)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}
