// RUN: purlin-opt %s --purlin-snac-check -split-input-file -verify-diagnostics

// Broken programs of collectives whose rank selectors are maps or sets, or
// that take steps (clauses that read an output earlier clauses wrote), one
// per hazard that inference guards against; the checker runs the
// executor's general paths (exec/Groups.h) on them. The inferred programs
// of the examples (all_reduce_groups, shift, halo, all_reduce_2d) pass in
// snac-check-examples.test; the in-place proofs are in
// snac-check-inplace-sets.mlir.

// A sub-group's two-shot syncs with the ranks that share its group
// (`group`); `self` leaves an owner reading a peer's input that the peer's
// caller may still be writing. The configuration shows the group size.
layout.collective @groups {
  layout.param @R : ranks
  layout.param @G : group
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names (g, i) in [R/G, C] from @x[{g*G + j | j in [G]}][i] to @y[{g*G + j | j in [G]}][i] reduce<sum>
}
snac.program @p of @groups "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to self clause 0 boundary
  snac.wait @ready from self clause 0 boundary
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 1 lane 1 (consume) reads 'x' element 0 of rank 0 in launch 1 while the caller of rank 0 writes 'x' element 0 of rank 0 before launch 1 [R = 2, count 1, group 2, f8e4m3, 2 lanes, 1 chunk]}}
  snac.consume owned from input to all clause 0
  snac.notify @done to group clause 0 boundary
  snac.wait @done from group clause 0 boundary
}

// -----

// A step that reads the very places it writes (an all-reduce in place)
// cannot read them where they lie: rank 0 reads rank 1's y while rank 1
// writes it. Inference copies a step's source first (`stage copy`).
layout.collective @step {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[r][i] copy
  layout.names i in [C] from @y[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @step "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready0
  snac.signal @done0
  snac.signal @step1
  snac.signal @done1
  snac.stage expose clause 0
  snac.notify @ready0 to dsts clause 0 boundary
  snac.wait @ready0 from srcs clause 0 boundary
  snac.consume mine from input to self clause 0
  snac.notify @done0 to srcs clause 0
  snac.wait @done0 from dsts clause 0
  snac.notify @step1 to all clause 1
  snac.wait @step1 from all clause 1 all_lanes
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 1 (consume) reads 'y' element 0 of rank 1 in launch 1 while rank 1 lane 1 (consume) writes 'y' element 0 of rank 1 in launch 1 [R = 2, count 1, f8e4m3, 2 lanes, 1 chunk]}}
  snac.consume mine from input to self clause 1
  snac.notify @done1 to all clause 1 boundary
  snac.wait @done1 from all clause 1 all_lanes boundary
}

// -----

// The hierarchical all-reduce (examples/all_reduce_2d.purlin) without the
// barrier before its first step: a rank copies its y while another of its
// lanes still writes it (the reduce-scatter cut its block among lanes
// unlike the copy).
layout.collective @all_reduce_2d {
  layout.param @R : ranks
  layout.param @G : group
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [G*C]
  layout.buffer @y : out @T [G*C]
  layout.names (g, j, i) in [R/G, G, C] from @x[{g*G + k | k in [G]}][j*C + i] to @y[g*G + j][j*C + i] reduce<@op>
  layout.names (j, i) in [G, C] from @y[{h*G + j | h in [R/G]}][j*C + i] to @y[{h*G + j | h in [R/G]}][j*C + i] reduce<@op>
  layout.names (g, j, i) in [R/G, G, C] from @y[g*G + j][j*C + i] to @y[{g*G + k | k in [G]}][j*C + i] copy
}
snac.program @p of @all_reduce_2d "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready0
  snac.signal @done0
  snac.signal @ready1
  snac.signal @done1
  snac.signal @step2
  snac.signal @ready2
  snac.signal @done2
  snac.stage expose clause 0
  snac.notify @ready0 to dsts clause 0 boundary
  snac.wait @ready0 from srcs clause 0 boundary
  snac.consume mine from input to self clause 0
  snac.notify @done0 to srcs clause 0
  snac.wait @done0 from dsts clause 0
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (stage) reads 'y' element 0 of rank 0 in launch 1 while rank 0 lane 1 (consume) writes 'y' element 0 of rank 0 in launch 1 [R = 2, count 7, group 2, f32, 2 lanes, 1 chunk]}}
  snac.stage copy clause 1
  snac.notify @ready1 to all clause 1
  snac.wait @ready1 from all clause 1 all_lanes
  snac.consume mine from scratch to self clause 1
  snac.notify @done1 to all clause 1 boundary
  snac.wait @done1 from all clause 1 all_lanes boundary
  snac.notify @step2 to all clause 2
  snac.wait @step2 from all clause 2 all_lanes
  snac.stage copy clause 2
  snac.notify @ready2 to all clause 2
  snac.wait @ready2 from all clause 2 all_lanes
  snac.consume mine from scratch to self clause 2
  snac.notify @done2 to all clause 2 boundary
  snac.wait @done2 from all clause 2 all_lanes boundary
}
