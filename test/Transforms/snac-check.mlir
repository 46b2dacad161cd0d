// RUN: purlin-opt %s --purlin-snac-check -split-input-file -verify-diagnostics

// Deliberately broken programs, one per rule of purlin-snac-check, each
// with its error at the offending step. The positive cases (every inferred
// program of every example passes; where inplace_safe is set) are in
// snac-check-examples.test and snac-check-inplace.mlir.

// The rule: every consume waits for the notifications of the data it reads.
// No 'wait @ready': rank 0 reads rank 1's input while rank 1's caller may
// still be writing it. Races are found per element; the configuration that
// shows one is given in brackets.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 1 (consume) reads 'x' element 0 of rank 1 in launch 1 while the caller of rank 1 writes 'x' element 0 of rank 1 before launch 1 [R = 2, count 1, f8e4m3, 2 lanes, 1 chunk]}}
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// -----

// The rule: no buffer is reused before its consumer is done. No 'done'
// barrier: rank 1 returns, and its caller overwrites the input that
// rank 0 is still reading.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 1 (consume) reads 'x' element 0 of rank 1 in launch 1 while the caller of rank 1 writes 'x' element 0 of rank 1 before launch 2}}
  snac.consume mine from input to self clause 0
}

// -----

// The rule: programs cannot deadlock. Nobody notifies 'ready'.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  // expected-error @+1 {{deadlock: rank 0 waits for 'ready' from its srcs peers, which never notify it}}
  snac.wait @ready from srcs clause 0
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// -----

// Waits in an order that deadlocks: every rank waits for 'done' before it
// consumes, and notifies 'done' only after it consumed.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  // expected-error @+1 {{deadlock: rank 0 waits for 'done' from its dsts peers, which never notify it}}
  snac.wait @done from dsts clause 0
  snac.wait @ready from srcs clause 0
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
}

// -----

// A wait before the matching notify of the same signal: each rank waits
// for a 'ready' its peers send only after their own wait.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  // expected-error @+1 {{deadlock: rank 0 waits for 'ready' from its srcs peers, which never notify it}}
  snac.wait @ready from srcs clause 0
  snac.notify @ready to dsts clause 0
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// -----

// Coverage: a consume from staging slots that no push stage fills.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged" lanes 2 chunks 2 band [0, -1) {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    // expected-error @+1 {{consume reads staging slots of clause 0 that no earlier push stage fills}}
    snac.consume mine from staging to self clause 0
  }
  snac.notify @free to srcs clause 0
  snac.wait @free from dsts clause 0
}

// -----

// Coverage: a push stage after the consume does not count.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged" lanes 1 chunks 1 band [0, -1) {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    // expected-error @+1 {{consume reads staging slots of clause 0 that no earlier push stage fills}}
    snac.consume mine from staging to self clause 0
    snac.stage push clause 0
  }
  snac.notify @free to srcs clause 0
  snac.wait @free from dsts clause 0
}

// -----

// Coverage: a consume from scratch copies that no copy stage makes (the
// stage exposes the input instead).
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0 all_lanes
  // expected-error @+1 {{consume reads scratch copies of clause 0 that no earlier copy stage makes}}
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0 all_lanes
}

// -----

// Coverage: a clause never consumed; reported at the program.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
// expected-error @+1 {{clause 0 is never consumed: its names reach no destination}}
snac.program @p of @all_reduce "direct" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// -----

// Coverage: the second of two clauses never consumed.
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
// expected-error @+1 {{clause 1 is never consumed: its names reach no destination}}
snac.program @p of @gather_both "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0
}

// -----

// Coverage: with chunks > 1, a consume outside the chunk loop moves chunk 0
// only.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged" lanes 2 chunks 2 band [0, -1) {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
  }
  // expected-error @+1 {{consume outside the chunk loop moves chunk 0 only, but the plan has 2 chunks}}
  snac.consume mine from staging to self clause 0
  snac.notify @free to srcs clause 0
  snac.wait @free from dsts clause 0
}

// -----

// Coverage: so does a push stage outside the chunk loop.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged" lanes 1 chunks 4 band [0, -1) {
  snac.signal @data
  snac.signal @free
  // expected-error @+1 {{stage outside the chunk loop moves chunk 0 only, but the plan has 4 chunks}}
  snac.stage push clause 0
  snac.chunks {
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    snac.consume mine from staging to self clause 0
  }
  snac.notify @free to srcs clause 0
  snac.wait @free from dsts clause 0
}

// -----

// Lanes: a copy stage cuts the input among the contributor's lanes, unlike
// the reads of one consumer lane (here rank r reads part r of every rank's
// x); a 'ready' wait without all_lanes lets a lane read a piece that another
// lane is still copying. (Where the consume's boxes are the whole input, as
// in an all-reduce, the cuts agree and the plan is right.)
layout.collective @reduce_scatter {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [R * C]
  layout.buffer @y : out @T [C]
  layout.names (r, i) in [R, C] from @x[*][r * C + i] to @y[r][i] reduce<@op>
}
snac.program @p of @reduce_scatter "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to dsts clause 0
  snac.wait @ready from srcs clause 0
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 1 lane 0 (consume) reads element 33 of the scratch copy of 'x' of rank 0 in launch 1 while rank 0 lane 1 (stage) writes element 33 of the scratch copy of 'x' of rank 0 in launch 1 [R = 2, count 33, f8e4m3, 2 lanes, 1 chunk]}}
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0
  snac.wait @done from dsts clause 0 all_lanes
}

// -----

// Two-shot without the 'done' barrier: an owner's writes to every
// destination and its reads of every input are not ordered with the next
// launch of the others.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "two_shot" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0
  snac.wait @ready from all clause 0
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 1 lane 1 (consume) writes 'y' element 0 of rank 0 in launch 1 while the caller of rank 0 reads 'y' element 0 of rank 0 after launch 1}}
  snac.consume owned from input to all clause 0
}


// -----

// Two-shot (copy) without the 'done' barrier: owners still write a
// destination's output after that destination returned and its caller reads
// it.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "two_shot_copy" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to all clause 0
  snac.wait @ready from all clause 0 all_lanes
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 1 lane 0 (consume) writes 'y' element 0 of rank 0 in launch 1 while the caller of rank 0 reads 'y' element 0 of rank 0 after launch 1}}
  snac.consume owned from scratch to all clause 0
}

// -----

// The rule: a `boundary` sync only orders against the launch boundary, so
// the checker also proves the plan with every rank in one launch and the
// boundary syncs skipped. Here 'ready' follows a copy stage: skipping it
// lets a lane read the scratch copy that another lane is still writing.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "direct_copy" lanes 2 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage copy clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 all_lanes boundary
  // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 1 (consume) reads element 0 of the scratch copy of 'x' of rank 1 in launch 1 while rank 1 lane 1 (stage) writes element 0 of the scratch copy of 'x' of rank 1 in launch 1 (every rank in one launch, boundary syncs skipped)}}
  snac.consume mine from scratch to self clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 all_lanes boundary
}

// -----

// A staged plan whose 'data' sync is marked `boundary`: in one launch the
// destination reads its staging slot before the push has written it.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged" lanes 1 chunks 1 band [0, -1) {
  snac.signal @data
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data to dsts clause 0 boundary
    snac.wait @data from srcs clause 0 boundary
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads element 0 of staging slot 1 of rank 0 in launch 1 while rank 1 lane 0 (stage) writes element 0 of staging slot 1 of rank 0 in launch 1 (every rank in one launch, boundary syncs skipped)}}
    snac.consume mine from staging to self clause 0
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

// The low-latency protocol: a flagged consume needs a flagged push of its
// clause (the lines' format and their flags).
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    // expected-error @+1 {{a flagged consume reads staging slots of clause 0 that no earlier flagged push stage fills (the push's lines are not flagged)}}
    snac.consume mine from staging to self clause 0 flagged
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

// Flagged lines order the consume after the push of the same launch, but
// not the next launch's push after this consume: without 'free', a
// contributor overwrites a slot its destination is still reading.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads element 0 of staging slot 1 of rank 0 in launch 1 while rank 1 lane 0 (stage) writes element 0 of staging slot 1 of rank 0 in launch 2}}
    snac.consume mine from staging to self clause 0 flagged
  }
}

// -----

// LL128 lines: a flagged consume reads its push's line format; LL lines
// are no LL128 lines.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0 flagged
    // expected-error @+1 {{a flagged ll128 consume reads staging slots of clause 0 that no earlier flagged ll128 push stage fills (the push's lines are flagged ll)}}
    snac.consume mine from staging to self clause 0 flagged ll128
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

// ... nor the reverse.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0 flagged ll128
    // expected-error @+1 {{a flagged consume reads staging slots of clause 0 that no earlier flagged push stage fills (the push's lines are flagged ll128)}}
    snac.consume mine from staging to self clause 0 flagged
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

// A clause's slots have one layout: two pushes of it in two line formats
// (or one flagged and one not) write past each other's lines.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0 flagged ll128
    // expected-error @+1 {{push stage of clause 0 writes flagged ll lines into staging slots that an earlier push of the clause lays out as flagged ll128 lines: a clause's slots have one line format}}
    snac.stage push clause 0 flagged
    snac.consume mine from staging to self clause 0 flagged ll128
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  snac.signal @free
  snac.chunks {
    snac.stage push clause 0
    // expected-error @+1 {{push stage of clause 0 writes flagged ll128 lines into staging slots that an earlier push of the clause lays out as plain data (not flagged): a clause's slots have one line format}}
    snac.stage push clause 0 flagged ll128
    // expected-error @+1 {{a flagged ll128 consume reads staging slots of clause 0 that no earlier flagged ll128 push stage fills (the push's lines are not flagged)}}
    snac.consume mine from staging to self clause 0 flagged ll128
  }
  snac.notify @free to srcs clause 0 boundary
  snac.wait @free from dsts clause 0 boundary
}

// -----

// LL128's flags order a consume after the push of its launch, not the next
// launch's push after the consume: without 'free', a contributor rewrites
// a line (its data, then its flag) that its destination is still reading.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged ll128
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads the flag of line 0 of staging slot 1 of rank 0 in launch 1 while rank 1 lane 0 (stage) writes the flag of line 0 of staging slot 1 of rank 0 in launch 2}}
    snac.consume mine from staging to self clause 0 flagged ll128
  }
}

// -----

// Staging by launch parity and `free`. Without the parity halves, dropping
// `free` from a symmetric all_reduce lets a contributor's next launch
// overwrite the slot its destination still reads (two lanes running freely).
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged_ll" lanes 2 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 1 (consume) reads element 0 of staging slot 1 of rank 0 in launch 1 while rank 1 lane 1 (stage) writes element 0 of staging slot 1 of rank 0 in launch 2 [R = 2, count 1, f8e4m3, 2 lanes, 1 chunk]}}
    snac.consume mine from staging to self clause 0 flagged
  }
}

// -----

// With the halves, a clause that is not symmetric still needs `free`: a
// broadcast's root receives nothing, so nothing orders its launch 3 (half
// 1 again) after a destination's reads of launch 1. The checker runs three
// launches in a row to see a half reused.
layout.collective @broadcast {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @root : root
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[root][i] to @y[*][i] copy
}
snac.program @p of @broadcast "staged_ll" lanes 2 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged parity
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 1 lane 1 (consume) reads element 0 of staging slot 0 (half 1: odd launches) of rank 1 in launch 1 while rank 0 lane 1 (stage) writes element 0 of staging slot 0 (half 1: odd launches) of rank 1 in launch 3 [R = 2, count 1, root 0, f8e4m3, 2 lanes, 1 chunk]}}
    snac.consume mine from staging to self clause 0 flagged parity
  }
}

// -----

// ... a gather in LL128 lines: every rank pushes to the root, which pushes
// to itself only; the flag word of a line is what is rewritten.
layout.collective @gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @root : root
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[root][r * C + i] copy
}
snac.program @p of @gather "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged ll128 parity
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads the flag of line 0 of staging slot 1 (half 1: odd launches) of rank 0 in launch 1 while rank 1 lane 0 (stage) writes the flag of line 0 of staging slot 1 (half 1: odd launches) of rank 0 in launch 3 [R = 2, count 1, root 0, f8e4m3, 1 lane, 1 chunk]}}
    snac.consume mine from staging to self clause 0 flagged ll128 parity
  }
}

// -----

// ... a shift: rank r pushes to r + 1 and reads r - 1 (the same rank for
// R = 2, where it is symmetric: the race shows at R = 3).
layout.collective @shift {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[(r + 1) mod R][i] copy
}
snac.program @p of @shift "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged parity
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads element 0 of staging slot 2 (half 1: odd launches) of rank 0 in launch 1 while rank 2 lane 0 (stage) writes element 0 of staging slot 2 (half 1: odd launches) of rank 0 in launch 3 [R = 3, count 1, f8e4m3, 1 lane, 1 chunk]}}
    snac.consume mine from staging to self clause 0 flagged parity
  }
}

// -----

// A clause's push and consume agree on the halves.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged parity
    // expected-error @+1 {{a flagged consume reads staging slots of clause 0 in one half, but its push stage writes them by launch parity (`parity`)}}
    snac.consume mine from staging to self clause 0 flagged
  }
}

// -----

layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
}
snac.program @p of @all_reduce "staged_ll" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    snac.stage push clause 0 flagged
    // expected-error @+1 {{a flagged parity consume reads staging slots of clause 0 in the half of the launch's parity, but its push stage writes them without launch parity}}
    snac.consume mine from staging to self clause 0 flagged parity
  }
}

// -----

// The same without flags: a wait that passes on the first launch's notify
// orders nothing after the peer's next launch. (The checker once joined the
// clock of the latest notify a word had seen, and missed this.)
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "staged" lanes 1 chunks 1 band [0, -1) {
  snac.signal @data
  snac.chunks {
    snac.stage push clause 0
    snac.notify @data to dsts clause 0
    snac.wait @data from srcs clause 0
    // expected-error @+1 {{unordered access (a missing wait, or a buffer reused before its consumer is done): rank 0 lane 0 (consume) reads element 0 of staging slot 1 of rank 0 in launch 1 while rank 1 lane 0 (stage) writes element 0 of staging slot 1 of rank 0 in launch 2}}
    snac.consume mine from staging to self clause 0
  }
}

// -----

// Coverage: a consume from partial results that no earlier consume to
// partial results makes.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{consume reads partial results of clause 0 that no earlier 'mine' consume to partial makes}}
  snac.consume mine from partial to self clause 0 ranks [1, R)
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// Coverage: a consume from owners' outputs that no owner kept.
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @all_reduce "two_shot" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to all clause 0
  // expected-error @+1 {{consume reads owners' parts of clause 0 that no earlier 'owned ... to self' consume keeps}}
  snac.consume mine from output to self clause 0
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// Partial results need several contributors per name.
layout.collective @all_gather {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [R * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r * C + i] copy
}
snac.program @p of @all_gather "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{partial results combine contributions of every rank: clause 0 has one contributor per name}}
  snac.consume mine from input to partial clause 0
  // expected-error @+1 {{partial results combine contributions of every rank: clause 0 has one contributor per name}}
  snac.consume mine from partial to self clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// The rule: a consume of a clause with an epilogue goes through it (issue
// 16); without the mark the names would be stored unnormalized.
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
snac.program @epi_direct of @epi "direct" lanes 4 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{consume of clause 0 without its epilogue}}
  snac.consume mine from input to self clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// ... and a clause without one has none.
layout.collective @noepi {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @noepi_direct of @noepi "direct" lanes 4 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{consume through an epilogue, but clause 0 has none}}
  snac.consume mine from input to self clause 0 epilogue
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// Two-shot with row-aligned owners through an epilogue (issue 16): the
// owners store every rank's rows, so each rank's caller must wait for the
// other ranks' 'done'. Without that wait the owner's store races the caller.
layout.collective @epi2 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi2_two_shot of @epi2 "two_shot" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  // expected-error @+1 {{unordered access}}
  snac.consume owned from input to all clause 0 epilogue
  snac.notify @done to all clause 0 boundary
}

// -----

// The unfused plans (issue 16): received rows are kept only for a clause
// with an epilogue ...
layout.collective @noepi2 {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @noepi2_direct_unfused of @noepi2 "direct_unfused" lanes 4 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{consume keeps received rows of clause 0, which has no epilogue}}
  snac.consume mine from input to received clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// ... and read only after a consume has kept them.
layout.collective @epi3 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi3_direct_unfused of @epi3 "direct_unfused" lanes 4 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  // expected-error @+1 {{consume reads received rows of clause 0 that no earlier consume to received keeps}}
  snac.consume mine from received to self clause 0 epilogue
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
}

// -----

// two_shot_unfused without 'kept': each owner keeps its rows in its own
// received area, cut among its lanes otherwise than its owned apply cuts
// them (the checker's model gives each lane another lane's piece), so a
// lane would apply the epilogue to rows that other lanes of its rank are
// still combining.
layout.collective @epi4 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi4_two_shot_unfused of @epi4 "two_shot_unfused" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to received clause 0
  // expected-error @+1 {{unordered access}}
  snac.consume owned from received to all clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// The rows an owned consume keeps lie in their owner's area only: a rank
// cannot apply its own rows ('mine from received') from it.
layout.collective @epi4b {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi4b_two_shot_unfused of @epi4b "two_shot_unfused" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @kept
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to received clause 0
  snac.notify @kept to all clause 0
  snac.wait @kept from all clause 0 all_lanes
  // expected-error @+1 {{a 'mine' consume reads received rows of clause 0 that only their owners kept ('owned ... to received': each owner's area holds its own rows)}}
  snac.consume mine from received to self clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// direct_unfused without its lanes' barrier ('kept' to self): the first
// consume cuts names among the lanes, the second rows (exec/Epilogue.h;
// the checker's model gives each lane another lane's piece), so a lane
// would apply the epilogue to rows that other lanes are still combining.
layout.collective @epi5 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi5_direct_unfused of @epi5 "direct_unfused" lanes 4 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to dsts clause 0 boundary
  snac.wait @ready from srcs clause 0 boundary
  snac.consume mine from input to received clause 0
  snac.notify @done to srcs clause 0 boundary
  snac.wait @done from dsts clause 0 boundary
  // expected-error @+1 {{unordered access}}
  snac.consume mine from received to self clause 0 epilogue
}

// -----

// two_shot_gather (issue 16): every rank applies its own rows, each read
// from its owner's received area ('mine from owners'). Without the sync of
// every rank ('gathered'), a rank would read rows that their owners are
// still combining.
layout.collective @epi6 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi6_two_shot_gather of @epi6 "two_shot_gather" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @kept
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to received clause 0
  snac.notify @kept to self clause 0
  snac.wait @kept from self clause 0 all_lanes
  // expected-error @+1 {{unordered access}}
  snac.consume mine from owners to self clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// ... and without the barrier of each owner's lanes ('kept' to self): a
// lane's wait covers only its own lane of each peer, while the apply reads
// the rows of every lane of the owner.
layout.collective @epi7 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi7_two_shot_gather of @epi7 "two_shot_gather" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @gathered
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume owned from input to received clause 0
  snac.notify @gathered to all clause 0
  snac.wait @gathered from all clause 0
  // expected-error @+1 {{unordered access}}
  snac.consume mine from owners to self clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}

// -----

// The owners' areas hold rows only where an owned consume kept them: after
// a 'mine ... to received' each rank's area holds its own names instead.
layout.collective @epi8 {
  layout.param @R : ranks
  layout.param @N : count
  layout.param @H : count
  layout.param @T : type
  layout.buffer @x : in @T [N*H]
  layout.buffer @y : out @T [N*H]
  layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
  layout.epilogue rows n [store @y[n*H + i] = recv/sqrt(rowsum(recv*recv)/H + 1)]
}
snac.program @epi8_two_shot_gather of @epi8 "two_shot_gather" lanes 2 chunks 1 band[0, -1) {
  snac.signal @ready
  snac.signal @kept
  snac.signal @done
  snac.stage expose clause 0
  snac.notify @ready to all clause 0 boundary
  snac.wait @ready from all clause 0 boundary
  snac.consume mine from input to received clause 0
  snac.notify @kept to all clause 0
  snac.wait @kept from all clause 0 all_lanes
  // expected-error @+1 {{consume reads owners' received rows of clause 0 that no earlier 'owned ... to received' consume keeps}}
  snac.consume mine from owners to self clause 0 epilogue
  snac.notify @done to all clause 0 boundary
  snac.wait @done from all clause 0 boundary
}
