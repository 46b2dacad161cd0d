// Round trip of every snac op form: custom syntax, re-parsed, and through
// the generic form and back.
// RUN: purlin-opt %s -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file | purlin-opt -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file -mlir-print-op-generic | purlin-opt -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A one-shot program in a band, set in-place safe, with every stage mode,
// every peer set of notify and wait, and wait all_lanes.
// CHECK-LABEL: snac.program @one_shot of @all_reduce "direct" lanes 2 chunks 1 band[0, 262144) inplace_safe {
// CHECK-NEXT:    snac.signal @ready
// CHECK-NEXT:    snac.signal @done
// CHECK-NEXT:    snac.stage expose clause 0
// CHECK-NEXT:    snac.stage copy clause 0
// CHECK-NEXT:    snac.stage push clause 0
// CHECK-NEXT:    snac.notify @ready to dsts clause 0
// CHECK-NEXT:    snac.notify @ready to srcs clause 0
// CHECK-NEXT:    snac.notify @ready to all clause 0
// CHECK-NEXT:    snac.notify @ready to group clause 0
// CHECK-NEXT:    snac.notify @ready to self clause 0
// CHECK-NEXT:    snac.wait @ready from group clause 0
// CHECK-NEXT:    snac.wait @ready from self clause 0 all_lanes
// CHECK-NEXT:    snac.wait @ready from srcs clause 0
// CHECK-NEXT:    snac.wait @ready from dsts clause 0
// CHECK-NEXT:    snac.wait @ready from all clause 0
// CHECK-NEXT:    snac.wait @done from srcs clause 0 all_lanes
// CHECK-NEXT:    snac.wait @done from dsts clause 0 all_lanes
// CHECK-NEXT:    snac.wait @done from all clause 0 all_lanes
// CHECK-NEXT:    snac.notify @done to srcs clause 0 boundary
// CHECK-NEXT:    snac.wait @done from dsts clause 0 boundary
// CHECK-NEXT:    snac.wait @done from all clause 0 all_lanes boundary
// CHECK-NEXT:    snac.stage push clause 0 flagged
// CHECK-NEXT:    snac.consume mine from staging to self clause 0 flagged
// CHECK-NEXT:    snac.stage push clause 0 flagged ll128
// CHECK-NEXT:    snac.consume mine from staging to self clause 0 flagged ll128
// CHECK-NEXT:    snac.stage push clause 0 flagged
// CHECK-NEXT:    snac.stage push clause 0 flagged parity
// CHECK-NEXT:    snac.consume mine from staging to self clause 0 flagged parity
// CHECK-NEXT:    snac.stage push clause 0 flagged ll128 parity
// CHECK-NEXT:    snac.consume mine from staging to self clause 0 flagged ll128 parity
// CHECK-NEXT:  }
// GENERIC-LABEL: "snac.program"() <{chunks = 1 : i64, collective = @all_reduce, inplace_safe, lanes = 2 : i64, max_bytes = 262144 : i64, min_bytes = 0 : i64, strategy = "direct", sym_name = "one_shot"}>
// GENERIC:         "snac.stage"() <{clause = 0 : i64, mode = 0 : i32}>
// GENERIC:         "snac.wait"() <{all_lanes, clause = 0 : i64, peers = 1 : i32, signal = @done}>
// GENERIC:         "snac.notify"() <{boundary, clause = 0 : i64, peers = 1 : i32, signal = @done}>
// GENERIC:         "snac.stage"() <{clause = 0 : i64, flagged = 1 : i32, mode = 2 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, flagged = 1 : i32, sel = 0 : i32, src = 2 : i32}>
// GENERIC:         "snac.stage"() <{clause = 0 : i64, flagged = 2 : i32, mode = 2 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, flagged = 2 : i32, sel = 0 : i32, src = 2 : i32}>
// GENERIC:         "snac.stage"() <{clause = 0 : i64, flagged = 1 : i32, mode = 2 : i32, parity}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, flagged = 1 : i32, parity, sel = 0 : i32, src = 2 : i32}>
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @one_shot of @all_reduce "direct" lanes 2 chunks 1 band [0, 262144) inplace_safe {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.stage copy clause 0
  snac.stage push clause 0
  snac.notify @ready to dsts clause 0
  snac.notify @ready to srcs clause 0
  snac.notify @ready to all clause 0
  snac.notify @ready to group clause 0
  snac.notify @ready to self clause 0
  snac.wait @ready from group clause 0
  snac.wait @ready from self clause 0 all_lanes
  snac.wait @ready from srcs clause 0
  snac.wait @ready from dsts clause 0
  snac.wait @ready from all clause 0
  snac.wait @done from srcs clause 0 all_lanes
  snac.wait @done from dsts clause 0 all_lanes
  snac.wait @done from all clause 0 all_lanes
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
  snac.wait @done from all clause 0 all_lanes boundary
  snac.stage push clause 0 flagged
  snac.consume mine from staging to self clause 0 flagged
  // The line formats: `flagged` alone is ll (the format it always meant),
  // so `flagged ll` reads back as `flagged`.
  snac.stage push clause 0 flagged ll128
  snac.consume mine from staging to self clause 0 flagged ll128
  snac.stage push clause 0 flagged ll
  // Staging by launch parity (doubled slots, half e & 1), after the format.
  snac.stage push clause 0 flagged ll parity
  snac.consume mine from staging to self clause 0 flagged parity
  snac.stage push clause 0 flagged ll128 parity
  snac.consume mine from staging to self clause 0 flagged ll128 parity
}

// -----

// Every legal consume: 'mine' from input, scratch, staging or partial
// results to self or partial results, and from owners' outputs to self;
// 'owned' from input, scratch or partial results to all, self or partial
// results; a contributor range (`R`: every rank above lo). An open band,
// inplace_same with inplace_max_ranks, and an extra attribute kept by
// attr-dict-with-keyword.
// CHECK-LABEL: snac.program @consumes of @all_reduce "two_shot" lanes 1024 chunks 1 band[262144, -1) inplace_same inplace_max_ranks 8 attributes {note = "kept"} {
// CHECK-NEXT:    snac.consume mine from input to self clause 0
// CHECK-NEXT:    snac.consume mine from scratch to self clause 0
// CHECK-NEXT:    snac.consume mine from staging to self clause 0
// CHECK-NEXT:    snac.consume owned from input to all clause 0
// CHECK-NEXT:    snac.consume owned from scratch to all clause 0
// CHECK-NEXT:    snac.consume mine from input to partial clause 0 ranks[0, 4)
// CHECK-NEXT:    snac.consume mine from partial to self clause 0 ranks[4, R)
// CHECK-NEXT:    snac.consume owned from partial to all clause 0 ranks[1, 3)
// CHECK-NEXT:    snac.consume owned from input to self clause 0
// CHECK-NEXT:    snac.consume mine from output to self clause 0
// CHECK-NEXT:    snac.consume mine from staging to self clause 0 ranks[0, 2) flagged
// CHECK-NEXT:  }
// GENERIC-LABEL: "snac.program"() <{chunks = 1 : i64, collective = @all_reduce, inplace_max_ranks = 8 : i64, inplace_same, lanes = 1024 : i64, max_bytes = -1 : i64, min_bytes = 262144 : i64, strategy = "two_shot", sym_name = "consumes"}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, sel = 0 : i32, src = 2 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 1 : i32, sel = 1 : i32, src = 1 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 2 : i32, ranks_hi = 4 : i64, ranks_lo = 0 : i64, sel = 0 : i32, src = 0 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, ranks_hi = -1 : i64, ranks_lo = 4 : i64, sel = 0 : i32, src = 3 : i32}>
// GENERIC:         "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, sel = 0 : i32, src = 4 : i32}>
// GENERIC:       }) {note = "kept"}
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @consumes of @all_reduce "two_shot" lanes 1024 chunks 1 band [262144, -1) inplace_same inplace_max_ranks 8 attributes {note = "kept"} {
  snac.consume mine from input to self clause 0
  snac.consume mine from scratch to self clause 0
  snac.consume mine from staging to self clause 0
  snac.consume owned from input to all clause 0
  snac.consume owned from scratch to all clause 0
  snac.consume mine from input to partial clause 0 ranks [0, 4)
  snac.consume mine from partial to self clause 0 ranks [4, R)
  snac.consume owned from partial to all clause 0 ranks [1, 3)
  snac.consume owned from input to self clause 0
  snac.consume mine from output to self clause 0
  snac.consume mine from staging to self clause 0 ranks [0, 2) flagged
}

// -----

// Chunk loops, two of them, with steps between and after; a second
// clause; signals may be declared anywhere in the program.
// CHECK-LABEL: snac.program @pipelined of @two "staged" lanes 1 chunks 64 band[0, -1) {
// CHECK-NEXT:    snac.signal @data0
// CHECK-NEXT:    snac.chunks {
// CHECK-NEXT:      snac.stage push clause 0
// CHECK-NEXT:      snac.notify @data0 to dsts clause 0
// CHECK-NEXT:      snac.wait @data0 from srcs clause 0
// CHECK-NEXT:      snac.consume mine from staging to self clause 0
// CHECK-NEXT:    }
// CHECK-NEXT:    snac.signal @data1
// CHECK-NEXT:    snac.notify @data1 to srcs clause 1
// CHECK-NEXT:    snac.chunks {
// CHECK-NEXT:      snac.wait @data1 from dsts clause 1 all_lanes
// CHECK-NEXT:    }
// CHECK-NEXT:    snac.chunks {
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// GENERIC-LABEL: "snac.program"() <{chunks = 64 : i64
// GENERIC:         "snac.chunks"() ({
// GENERIC-NEXT:      "snac.stage"() <{clause = 0 : i64, mode = 2 : i32}> : () -> ()
layout.collective @two {
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
snac.program @pipelined of @two "staged" lanes 1 chunks 64 band [0, -1) {
  snac.signal @data0
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data0 to dsts clause 0
    snac.wait @data0 from srcs clause 0
    snac.consume mine from staging to self clause 0
  }
  snac.signal @data1
  snac.notify @data1 to srcs clause 1
  snac.chunks {
    snac.wait @data1 from dsts clause 1 all_lanes
  }
  snac.chunks {
  }
}

// -----

// A rows band (a collective with an epilogue: purlinc's default chooser
// gives one where the row's width moves an edge), bounded and open.
// CHECK-LABEL: snac.program @wide of @rows "direct" lanes 16 chunks 1 band[0, 262145) rows[2, 17) elems[8193, -1) {
// CHECK-LABEL: snac.program @many of @rows "two_shot_unfused" lanes 16 chunks 1 band[4194304, -1) rows[129, -1) elems[4096, 8193) {
// CHECK-LABEL: snac.program @apart of @rows "direct_unfused" lanes 8 chunks 1 band[0, 524288) rows[0, 2) elems[8193, -1) in_place_rows 33 inplace_safe {
snac.program @wide of @rows "direct" lanes 16 chunks 1 band [0, 262145) rows [2, 17) elems [8193, -1) {
}
snac.program @many of @rows "two_shot_unfused" lanes 16 chunks 1 band [4194304, -1) rows [129, -1) elems [4096, 8193) {
}
snac.program @apart of @rows "direct_unfused" lanes 8 chunks 1 band [0, 524288) rows [0, 2) elems [8193, -1) in_place_rows 33 inplace_safe {
}
layout.collective @rows {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// A program may come before its collective, and an empty program is legal.
// CHECK-LABEL: snac.program @empty of @later "direct" lanes 1 chunks 1 band[5, 6) {
// CHECK-NEXT:  }
// CHECK-LABEL: layout.collective @later
snac.program @empty of @later "direct" lanes 1 chunks 1 band [5, 6) {
}
layout.collective @later {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// Epilogues (issue 16): the one-shot consume ('mine' to 'self') and the
// owned form with row-aligned owners ('owned' to 'all'), from input and
// from scratch.
// CHECK-LABEL: snac.program @epi of @rms "two_shot" lanes 2 chunks 1 band[0, -1) {
// CHECK-NEXT:    snac.consume mine from input to self clause 0 epilogue
// CHECK-NEXT:    snac.consume mine from scratch to self clause 0 epilogue
// CHECK-NEXT:    snac.consume owned from input to all clause 0 epilogue
// CHECK-NEXT:    snac.consume owned from scratch to all clause 0 epilogue
// CHECK-NEXT:  }
// GENERIC: "snac.consume"() <{clause = 0 : i64, dst = 1 : i32, epilogue, sel = 1 : i32, src = 0 : i32}> : () -> ()
layout.collective @rms {
  layout.param @R : ranks
  layout.buffer @x : in f32 [8]
  layout.buffer @y : out f32 [8]
  layout.names (n, i) in [2, 4] from @x[*][n*4 + i] to @y[*][n*4 + i] reduce<sum>
  layout.epilogue rows n [store @y[n*4 + i] = recv]
}
snac.program @epi of @rms "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.consume mine from input to self clause 0 epilogue
  snac.consume mine from scratch to self clause 0 epilogue
  snac.consume owned from input to all clause 0 epilogue
  snac.consume owned from scratch to all clause 0 epilogue
}

// -----

// The unfused plans (issue 16): rows kept as received ('to received',
// mine or owned, from input or scratch), and the epilogue applied to them
// later ('mine from received to self ... epilogue', or by their owners:
// 'owned from received to all ... epilogue'), or each rank's rows read
// from their owners' areas ('mine from owners to self ... epilogue':
// two_shot_gather).
// CHECK-LABEL: snac.program @unf of @rms2 "two_shot_unfused" lanes 2 chunks 1 band[0, -1) {
// CHECK-NEXT:    snac.consume mine from input to received clause 0
// CHECK-NEXT:    snac.consume mine from scratch to received clause 0
// CHECK-NEXT:    snac.consume owned from input to received clause 0
// CHECK-NEXT:    snac.consume mine from received to self clause 0 epilogue
// CHECK-NEXT:    snac.consume owned from received to all clause 0 epilogue
// CHECK-NEXT:    snac.consume mine from owners to self clause 0 epilogue
// CHECK-NEXT:  }
// GENERIC: "snac.consume"() <{clause = 0 : i64, dst = 3 : i32, sel = 1 : i32, src = 0 : i32}> : () -> ()
// GENERIC: "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, epilogue, sel = 0 : i32, src = 5 : i32}> : () -> ()
// GENERIC: "snac.consume"() <{clause = 0 : i64, dst = 1 : i32, epilogue, sel = 1 : i32, src = 5 : i32}> : () -> ()
// GENERIC: "snac.consume"() <{clause = 0 : i64, dst = 0 : i32, epilogue, sel = 0 : i32, src = 6 : i32}> : () -> ()
layout.collective @rms2 {
  layout.param @R : ranks
  layout.buffer @x : in f32 [8]
  layout.buffer @y : out f32 [8]
  layout.names (n, i) in [2, 4] from @x[*][n*4 + i] to @y[*][n*4 + i] reduce<sum>
  layout.epilogue rows n [store @y[n*4 + i] = recv]
}
snac.program @unf of @rms2 "two_shot_unfused" lanes 2 chunks 1 band [0, -1) {
  snac.consume mine from input to received clause 0
  snac.consume mine from scratch to received clause 0
  snac.consume owned from input to received clause 0
  snac.consume mine from received to self clause 0 epilogue
  snac.consume owned from received to all clause 0 epilogue
  snac.consume mine from owners to self clause 0 epilogue
}
