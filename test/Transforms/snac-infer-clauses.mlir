// SNAC inference on a collective of two name clauses (an all-gather and an
// all-reduce of one input): each clause gets its own signals (suffixed
// with the clause) and its own steps, in clause order, except that the copy
// plans copy the input both clauses read once, before any clause writes (in
// place, clause 0's writes may overwrite what clause 1 reads); the options
// reach the programs (lanes, chunks, small-bytes); every program passes
// the check.
// RUN: purlin-opt %s --purlin-snac-infer="strategy=direct" --purlin-snac-check | FileCheck %s --match-full-lines --check-prefix=DIRECT
// RUN: purlin-opt %s --purlin-snac-infer="strategy=staged chunks=2 lanes=3" --purlin-snac-check | FileCheck %s --match-full-lines --check-prefix=STAGED
// RUN: purlin-opt %s --purlin-snac-infer="strategy=two_shot_copy lanes=1" --purlin-snac-check | FileCheck %s --match-full-lines --check-prefix=TWOCOPY
// RUN: purlin-opt %s --purlin-snac-infer="small-bytes=1024" --purlin-snac-check | FileCheck %s --match-full-lines --check-prefix=AUTO
// small-bytes=0: no size is small, so no one-shot band; the large plans
// cover every size.
// RUN: purlin-opt %s --purlin-snac-infer="small-bytes=0" --purlin-snac-check | FileCheck %s --check-prefix=NEVER

layout.collective @gather_both {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R*C]
  layout.buffer @z : out @T [C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
  layout.names i in [C] from @x[*][i] to @z[*][i] reduce<@op>
}

// DIRECT-LABEL: snac.program @gather_both_direct of @gather_both "direct" lanes 4 chunks 1 band[0, -1) {
// DIRECT-NEXT:  snac.signal @ready0
// DIRECT-NEXT:  snac.signal @done0
// DIRECT-NEXT:  snac.signal @ready1
// DIRECT-NEXT:  snac.signal @done1
// DIRECT-NEXT:  snac.stage expose clause 0
// DIRECT-NEXT:  snac.notify @ready0 to dsts clause 0 boundary
// DIRECT-NEXT:  snac.wait @ready0 from srcs clause 0 boundary
// DIRECT-NEXT:  snac.consume mine from input to self clause 0
// DIRECT-NEXT:  snac.notify @done0 to srcs clause 0
// DIRECT-NEXT:  snac.wait @done0 from dsts clause 0
// DIRECT-NEXT:  snac.stage expose clause 1
// DIRECT-NEXT:  snac.notify @ready1 to dsts clause 1 boundary
// DIRECT-NEXT:  snac.wait @ready1 from srcs clause 1 boundary
// DIRECT-NEXT:  snac.consume mine from input to self clause 1
// DIRECT-NEXT:  snac.notify @done1 to srcs clause 1 boundary
// DIRECT-NEXT:  snac.wait @done1 from dsts clause 1 boundary
// DIRECT-NEXT:  }
// DIRECT-NOT: snac.program

// STAGED-LABEL: snac.program @gather_both_staged of @gather_both "staged" lanes 3 chunks 2 band[0, -1) {
// STAGED-NEXT:  snac.signal @data0
// STAGED-NEXT:  snac.signal @free0
// STAGED-NEXT:  snac.signal @data1
// STAGED-NEXT:  snac.signal @free1
// STAGED-NEXT:  snac.chunks {
// STAGED-NEXT:    snac.stage push clause 0
// STAGED-NEXT:    snac.notify @data0 to dsts clause 0
// STAGED-NEXT:    snac.wait @data0 from srcs clause 0
// STAGED-NEXT:    snac.consume mine from staging to self clause 0
// STAGED-NEXT:  }
// STAGED-NEXT:  snac.notify @free0 to srcs clause 0
// STAGED-NEXT:  snac.wait @free0 from dsts clause 0
// STAGED-NEXT:  snac.chunks {
// STAGED-NEXT:    snac.stage push clause 1
// STAGED-NEXT:    snac.notify @data1 to dsts clause 1
// STAGED-NEXT:    snac.wait @data1 from srcs clause 1
// STAGED-NEXT:    snac.consume mine from staging to self clause 1
// STAGED-NEXT:  }
// STAGED-NEXT:  snac.notify @free1 to srcs clause 1 boundary
// STAGED-NEXT:  snac.wait @free1 from dsts clause 1 boundary
// STAGED-NEXT:  }
// STAGED-NOT: snac.program

// TWOCOPY-LABEL: snac.program @gather_both_two_shot_copy of @gather_both "two_shot_copy" lanes 1 chunks 1 band[0, -1) inplace_safe inplace_max_ranks 8 {
// TWOCOPY-NEXT:  snac.signal @ready0
// TWOCOPY-NEXT:  snac.signal @done0
// TWOCOPY-NEXT:  snac.signal @ready1
// TWOCOPY-NEXT:  snac.signal @done1
// TWOCOPY-NEXT:  snac.stage copy clause 0
// TWOCOPY-NEXT:  snac.notify @ready0 to all clause 0
// TWOCOPY-NEXT:  snac.wait @ready0 from all clause 0 all_lanes
// TWOCOPY-NEXT:  snac.consume owned from scratch to all clause 0
// TWOCOPY-NEXT:  snac.notify @done0 to all clause 0 boundary
// TWOCOPY-NEXT:  snac.wait @done0 from all clause 0 all_lanes boundary
// TWOCOPY-NEXT:  snac.notify @ready1 to all clause 1
// TWOCOPY-NEXT:  snac.wait @ready1 from all clause 1 all_lanes
// TWOCOPY-NEXT:  snac.consume owned from scratch to all clause 1
// TWOCOPY-NEXT:  snac.notify @done1 to all clause 1 boundary
// TWOCOPY-NEXT:  snac.wait @done1 from all clause 1 all_lanes boundary
// TWOCOPY-NEXT:  }
// TWOCOPY-NOT: snac.program

// AUTO-LABEL: snac.program @gather_both_direct_0 of @gather_both "direct" lanes 8 chunks 1 band[0, 1024) {
// AUTO-NEXT:  snac.signal @ready0
// AUTO-NEXT:  snac.signal @done0
// AUTO-NEXT:  snac.signal @ready1
// AUTO-NEXT:  snac.signal @done1
// AUTO-NEXT:  snac.stage expose clause 0
// AUTO-NEXT:  snac.notify @ready0 to dsts clause 0 boundary
// AUTO-NEXT:  snac.wait @ready0 from srcs clause 0 boundary
// AUTO-NEXT:  snac.consume mine from input to self clause 0
// AUTO-NEXT:  snac.notify @done0 to srcs clause 0
// AUTO-NEXT:  snac.wait @done0 from dsts clause 0
// AUTO-NEXT:  snac.stage expose clause 1
// AUTO-NEXT:  snac.notify @ready1 to dsts clause 1 boundary
// AUTO-NEXT:  snac.wait @ready1 from srcs clause 1 boundary
// AUTO-NEXT:  snac.consume mine from input to self clause 1
// AUTO-NEXT:  snac.notify @done1 to srcs clause 1 boundary
// AUTO-NEXT:  snac.wait @done1 from dsts clause 1 boundary
// AUTO-NEXT:  }
// AUTO-LABEL: snac.program @gather_both_two_shot_1 of @gather_both "two_shot" lanes 16 chunks 1 band[1024, -1) {
// AUTO-NEXT:  snac.signal @ready0
// AUTO-NEXT:  snac.signal @done0
// AUTO-NEXT:  snac.signal @ready1
// AUTO-NEXT:  snac.signal @done1
// AUTO-NEXT:  snac.stage expose clause 0
// AUTO-NEXT:  snac.notify @ready0 to all clause 0 boundary
// AUTO-NEXT:  snac.wait @ready0 from all clause 0 boundary
// AUTO-NEXT:  snac.consume owned from input to all clause 0
// AUTO-NEXT:  snac.notify @done0 to all clause 0
// AUTO-NEXT:  snac.wait @done0 from all clause 0
// AUTO-NEXT:  snac.stage expose clause 1
// AUTO-NEXT:  snac.notify @ready1 to all clause 1 boundary
// AUTO-NEXT:  snac.wait @ready1 from all clause 1 boundary
// AUTO-NEXT:  snac.consume owned from input to all clause 1
// AUTO-NEXT:  snac.notify @done1 to all clause 1 boundary
// AUTO-NEXT:  snac.wait @done1 from all clause 1 boundary
// AUTO-NEXT:  }
// AUTO-LABEL: snac.program @gather_both_direct_copy_2 of @gather_both "direct_copy" lanes 8 chunks 1 band[0, 1024) inplace_safe inplace_max_ranks 8 {
// AUTO-NEXT:  snac.signal @ready0
// AUTO-NEXT:  snac.signal @done0
// AUTO-NEXT:  snac.signal @ready1
// AUTO-NEXT:  snac.signal @done1
// AUTO-NEXT:  snac.stage copy clause 0
// AUTO-NEXT:  snac.notify @ready0 to dsts clause 0
// AUTO-NEXT:  snac.wait @ready0 from srcs clause 0 all_lanes
// AUTO-NEXT:  snac.consume mine from scratch to self clause 0
// AUTO-NEXT:  snac.notify @done0 to srcs clause 0 boundary
// AUTO-NEXT:  snac.wait @done0 from dsts clause 0 all_lanes boundary
// AUTO-NEXT:  snac.notify @ready1 to dsts clause 1
// AUTO-NEXT:  snac.wait @ready1 from srcs clause 1 all_lanes
// AUTO-NEXT:  snac.consume mine from scratch to self clause 1
// AUTO-NEXT:  snac.notify @done1 to srcs clause 1 boundary
// AUTO-NEXT:  snac.wait @done1 from dsts clause 1 all_lanes boundary
// AUTO-NEXT:  }
// AUTO-LABEL: snac.program @gather_both_two_shot_copy_3 of @gather_both "two_shot_copy" lanes 16 chunks 1 band[1024, -1) inplace_safe inplace_max_ranks 8 {
// AUTO-NEXT:  snac.signal @ready0
// AUTO-NEXT:  snac.signal @done0
// AUTO-NEXT:  snac.signal @ready1
// AUTO-NEXT:  snac.signal @done1
// AUTO-NEXT:  snac.stage copy clause 0
// AUTO-NEXT:  snac.notify @ready0 to all clause 0
// AUTO-NEXT:  snac.wait @ready0 from all clause 0 all_lanes
// AUTO-NEXT:  snac.consume owned from scratch to all clause 0
// AUTO-NEXT:  snac.notify @done0 to all clause 0 boundary
// AUTO-NEXT:  snac.wait @done0 from all clause 0 all_lanes boundary
// AUTO-NEXT:  snac.notify @ready1 to all clause 1
// AUTO-NEXT:  snac.wait @ready1 from all clause 1 all_lanes
// AUTO-NEXT:  snac.consume owned from scratch to all clause 1
// AUTO-NEXT:  snac.notify @done1 to all clause 1 boundary
// AUTO-NEXT:  snac.wait @done1 from all clause 1 all_lanes boundary
// AUTO-NEXT:  }
// AUTO-NOT: snac.program

// NEVER-NOT:   "direct"
// NEVER-LABEL: snac.program @gather_both_two_shot of @gather_both "two_shot" lanes 16 chunks 1 band[0, -1) {
// NEVER-LABEL: snac.program @gather_both_two_shot_copy of @gather_both "two_shot_copy" lanes 16 chunks 1 band[0, -1) inplace_safe inplace_max_ranks 8 {
// NEVER-NOT:   snac.program
