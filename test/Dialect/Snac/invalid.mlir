// RUN: purlin-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the snac dialect: the program's verifier, the
// steps' verifiers (signals, clauses, consume forms) and where each op may
// stand.

// lanes below range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op lanes must lie in [1, 1024], got 0}}
snac.program @p of @c "direct" lanes 0 chunks 1 band [0, -1) {
}

// -----

// lanes above range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op lanes must lie in [1, 1024], got 1025}}
snac.program @p of @c "direct" lanes 1025 chunks 1 band [0, -1) {
}

// -----

// a strategy inference does not know (the runtime and the generated plan
// table name plans by strategy)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op unknown strategy 'ring' (direct, direct_copy, two_shot,}}
snac.program @p of @c "ring" lanes 1 chunks 1 band [0, -1) {
}

// -----

// negative lanes, reported as written (not as a wrapped unsigned value)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op lanes must lie in [1, 1024], got -1}}
snac.program @p of @c "direct" lanes -1 chunks 1 band [0, -1) {
}

// -----

// negative chunks
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op chunks must lie in [1, 64], got -3}}
snac.program @p of @c "direct" lanes 1 chunks -3 band [0, -1) {
}

// -----

// a negative band start with an open end (once accepted)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op band [-5, -1) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [-5, -1) {
}

// -----

// a rows band that ends where it starts
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op rows band [4, 4) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [4, 4) elems [8, -1) {
}

// -----

// a rows band of no rows (0 says "no band": the attributes are left out)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op rows band [0, 0) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, 0) elems [8, -1) {
}

// -----

// a rows band whose end is below -1 (-1: no limit)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op rows band [0, -2) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, -2) elems [8, -1) {
}

// -----

// a rows band for rows of a negative width
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op rows band's elems [-1, -1) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, 2) elems [-1, -1) {
}

// -----

// a rows band for rows no wider than they are narrow
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op rows band's elems [8, 8) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, 2) elems [8, 8) {
}

// -----

// a rows band given in part (generic form: the assembly form gives all three)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op a rows band needs min_rows, max_rows, min_row_elems and max_row_elems}}
"snac.program"() ({
^bb0:
}) {sym_name = "p", collective = @c, strategy = "direct", lanes = 1 : i64, chunks = 1 : i64, min_bytes = 0 : i64, max_bytes = -1 : i64, min_rows = 0 : i64} : () -> ()

// -----

// an in-place end without a rows band
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'in_place_rows' ends a rows band: give 'rows' too}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) in_place_rows 33 {
}

// -----

// an in-place end inside the band (it may only reach further)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'in_place_rows' 2 must exceed the band's end 2 (or be -1: no limit)}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, 2) elems [8, -1) in_place_rows 2 {
}

// -----

// an in-place end of an open band
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'in_place_rows' 40 must exceed the band's end -1 (or be -1: no limit)}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) rows [0, -1) elems [8, -1) in_place_rows 40 {
}

// -----

// both in-place claims (inplace_safe implies inplace_same)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'inplace_same' is implied by 'inplace_safe': give one}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) inplace_safe inplace_same {
}

// -----

// chunks below range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op chunks must lie in [1, 64], got 0}}
snac.program @p of @c "direct" lanes 1 chunks 0 band [0, -1) {
}

// -----

// chunks above range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op chunks must lie in [1, 64], got 65}}
snac.program @p of @c "direct" lanes 1 chunks 65 band [0, -1) {
}

// -----

// a negative band start
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op band [-1, 10) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [-1, 10) {
}

// -----

// an empty band
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op band [10, 10) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [10, 10) {
}

// -----

// a reversed band
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op band [10, 5) is empty}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [10, 5) {
}

// -----

// an unknown collective
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op no layout.collective named @nope}}
snac.program @p of @nope "direct" lanes 1 chunks 1 band [0, -1) {
}

// -----

// a program naming a program, not a collective
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @other of @c "direct" lanes 1 chunks 1 band [0, -1) {
}
// expected-error @+1 {{'snac.program' op no layout.collective named @other}}
snac.program @p of @other "direct" lanes 1 chunks 1 band [0, -1) {
}

// -----

// notify of an unknown signal
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.notify' op unknown signal @nope}}
  snac.notify @nope to dsts clause 0
}

// -----

// wait of an unknown signal
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.wait' op unknown signal @nope}}
  snac.wait @nope from srcs clause 0
}

// -----

// a signal of another program
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @q of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @t
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.wait' op unknown signal @t}}
  snac.wait @t from srcs clause 0
}

// -----

// notify clause out of range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.notify' op clause 1 out of range: @c has 1 name clause(s)}}
  snac.notify @s to dsts clause 1
}

// -----

// wait clause out of range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.wait' op clause 7 out of range: @c has 1 name clause(s)}}
  snac.wait @s from srcs clause 7
}

// -----

// consume clause out of range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op clause 1 out of range: @c has 1 name clause(s)}}
  snac.consume mine from input to self clause 1
}

// -----

// stage clause out of range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.stage' op clause 1 out of range: @c has 1 name clause(s)}}
  snac.stage expose clause 1
}

// -----

// negative notify clause
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.notify' op clause must not be negative}}
  snac.notify @s to dsts clause -1
}

// -----

// negative wait clause
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.wait' op clause must not be negative}}
  snac.wait @s from all clause -2
}

// -----

// negative consume clause
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op clause must not be negative}}
  snac.consume owned from input to all clause -1
}

// -----

// negative stage clause
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.stage' op clause must not be negative}}
  snac.stage push clause -1
}

// -----

// clause out of range inside a chunk loop
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  snac.chunks {
  // expected-error @+1 {{'snac.notify' op clause 3 out of range: @c has 1 name clause(s)}}
  snac.notify @s to dsts clause 3
  }
}

// -----

// consume of 'mine' to all
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op a consume of the names a rank receives ('mine') writes to 'self', 'partial' or 'received'}}
  snac.consume mine from input to all clause 0
}

// -----

// consume of 'mine' from scratch to all
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op a consume of the names a rank receives ('mine') writes to 'self', 'partial' or 'received'}}
  snac.consume mine from scratch to all clause 0
}

// -----

// consume from owners' outputs to partial results
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op a consume from owners' outputs writes to 'self'}}
  snac.consume mine from output to partial clause 0
}

// -----

// an empty contributor range
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op ranks [2, 2) is empty}}
  snac.consume mine from input to self clause 0 ranks [2, 2)
}

// -----

// consume of 'owned' from staging (and from outputs, below)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op a consume of owned parts reads inputs, scratch or partial results}}
  snac.consume owned from staging to all clause 0
}

// -----

layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.signal @s
  // expected-error @+1 {{'snac.consume' op a consume of owned parts reads inputs, scratch or partial results}}
  snac.consume owned from output to self clause 0
}

// -----

// a signal declared twice
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  // expected-note @+1 {{see existing symbol definition here}}
  snac.signal @s
  // expected-error @+1 {{redefinition of symbol named 's'}}
  snac.signal @s
}

// -----

// a stage outside a program
// expected-error @+1 {{'snac.stage' op expects parent op to be one of 'snac.program, snac.chunks'}}
snac.stage expose clause 0

// -----

// a notify outside a program
// expected-error @+1 {{'snac.notify' op expects parent op to be one of 'snac.program, snac.chunks'}}
snac.notify @s to dsts clause 0

// -----

// a wait outside a program
// expected-error @+1 {{'snac.wait' op expects parent op to be one of 'snac.program, snac.chunks'}}
snac.wait @s from srcs clause 0

// -----

// a consume outside a program
// expected-error @+1 {{'snac.consume' op expects parent op to be one of 'snac.program, snac.chunks'}}
snac.consume mine from input to self clause 0

// -----

// a step in a collective
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  // expected-error @+1 {{'snac.stage' op expects parent op to be one of 'snac.program, snac.chunks'}}
  snac.stage expose clause 0
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// a signal outside a program
// expected-error @+1 {{'snac.signal' op expects parent op 'snac.program'}}
snac.signal @s

// -----

// a chunk loop outside a program
// expected-error @+1 {{'snac.chunks' op expects parent op 'snac.program'}}
snac.chunks {
}

// -----

// nested chunk loops
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    // expected-error @+1 {{'snac.chunks' op expects parent op 'snac.program'}}
    snac.chunks {
    }
  }
}

// -----

// a signal in a chunk loop
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  snac.chunks {
    // expected-error @+1 {{'snac.signal' op expects parent op 'snac.program'}}
    snac.signal @s
  }
}

// -----

// a foreign op in a program
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'layout.param' op expects parent op 'layout.collective'}}
  layout.param @R : ranks
}

// -----

// an unknown stage mode
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'mode' [expose, copy, push]}}
  snac.stage send clause 0
}

// -----

// flagged lines on a stage that does not push
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged_ll" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.stage' op only a push stage writes flagged lines}}
  snac.stage copy clause 0 flagged
}

// -----

// ... in either line format
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.stage' op only a push stage writes flagged lines}}
  snac.stage expose clause 0 flagged ll128
}

// -----

// flagged lines read from anything but staging
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged_ll" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op only a consume from staging reads flagged lines}}
  snac.consume mine from input to self clause 0 flagged
}

// -----

// ... in either line format
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged_ll128" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op only a consume from staging reads flagged lines}}
  snac.consume mine from scratch to self clause 0 flagged ll128
}

// -----

// inplace_max_ranks bounds an in-place proof
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'inplace_max_ranks' bounds an in-place proof: give 'inplace_safe' or 'inplace_same'}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) inplace_max_ranks 8 {
}

// -----

layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
// expected-error @+1 {{'snac.program' op 'inplace_max_ranks' must be at least 1, got 0}}
snac.program @p of @c "direct" lanes 1 chunks 1 band [0, -1) inplace_safe inplace_max_ranks 0 {
}

// -----

// an epilogue on an owned consume to 'self' (owners would not store every rank's rows) (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op an epilogue runs in a consume of whole rows: 'mine' to 'self' or 'owned' to 'all', from 'input' or 'scratch', every contributor}}
  snac.consume owned from input to self clause 0 epilogue
}

// -----

// an epilogue on a consume from staging (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op an epilogue runs in a consume of whole rows: 'mine' to 'self' or 'owned' to 'all', from 'input' or 'scratch', every contributor}}
  snac.consume mine from staging to self clause 0 epilogue
}

// -----

// an epilogue on a consume of partial results (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op an epilogue runs in a consume of whole rows: 'mine' to 'self' or 'owned' to 'all', from 'input' or 'scratch', every contributor}}
  snac.consume owned from partial to all clause 0 epilogue
}

// -----

// rows kept as received with an epilogue (issue 16: the unfused plans keep
// them for a later consume through it)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'to received' keeps whole combined rows for a later epilogue: from 'input' or 'scratch', every contributor, without 'epilogue'}}
  snac.consume owned from input to received clause 0 epilogue
}

// -----

// rows kept as received from staging (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "direct_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'to received' keeps whole combined rows for a later epilogue: from 'input' or 'scratch', every contributor, without 'epilogue'}}
  snac.consume mine from staging to received clause 0
}

// -----

// received rows read without the epilogue (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "direct_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from received' runs the epilogue over the rows this rank kept: 'mine' to 'self' or 'owned' to 'all', with 'epilogue', every contributor}}
  snac.consume mine from received to self clause 0
}

// -----

// received rows applied by their owner to its own outputs only: the owned
// apply stores every rank's outputs (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from received' runs the epilogue over the rows this rank kept: 'mine' to 'self' or 'owned' to 'all', with 'epilogue', every contributor}}
  snac.consume owned from received to self clause 0 epilogue
}

// -----

// received rows read by owners without the epilogue (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from received' runs the epilogue over the rows this rank kept: 'mine' to 'self' or 'owned' to 'all', with 'epilogue', every contributor}}
  snac.consume owned from received to all clause 0
}

// -----

// received rows applied by owners over a contributor range (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_unfused" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from received' runs the epilogue over the rows this rank kept: 'mine' to 'self' or 'owned' to 'all', with 'epilogue', every contributor}}
  snac.consume owned from received to all clause 0 ranks [0, 2) epilogue
}

// -----

// rows read from their owners' areas by owners: the gathered apply is each
// rank's own rows (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_gather" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from owners' runs the epilogue over this rank's rows, read from their owners' received areas: 'mine' to 'self', with 'epilogue', every contributor}}
  snac.consume owned from owners to all clause 0 epilogue
}

// -----

// rows read from their owners' areas without the epilogue (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_gather" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from owners' runs the epilogue over this rank's rows, read from their owners' received areas: 'mine' to 'self', with 'epilogue', every contributor}}
  snac.consume mine from owners to self clause 0
}

// -----

// rows read from their owners' areas over a contributor range (issue 16)
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  layout.epilogue rows n [store @y[i] = recv]
}
snac.program @p of @c "two_shot_gather" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op a consume 'from owners' runs the epilogue over this rank's rows, read from their owners' received areas: 'mine' to 'self', with 'epilogue', every contributor}}
  snac.consume mine from owners to self clause 0 ranks [0, 2) epilogue
}

// -----

// staging by launch parity without flagged lines: nothing would tell this
// launch's data from a stale one's in the same half
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.stage' op 'parity' (staging by launch parity) needs flagged lines: only a line's flag tells this launch's data from a stale launch's in the same half}}
  snac.stage push clause 0 parity
}

// -----

// ... on a consume
layout.collective @c {
  layout.param @R : ranks
  layout.buffer @x : in f32 [1]
  layout.buffer @y : out f32 [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<sum>
}
snac.program @p of @c "staged" lanes 1 chunks 1 band [0, -1) {
  // expected-error @+1 {{'snac.consume' op 'parity' (staging by launch parity) needs flagged lines: only a line's flag tells this launch's data from a stale launch's in the same half}}
  snac.consume mine from staging to self clause 0 parity
}
