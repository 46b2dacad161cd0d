// purlin-snac-infer's diagnostics, at the collective they are about.
// RUN: purlin-opt %s -split-input-file --purlin-snac-infer -verify-diagnostics -o /dev/null
//
// Options it refuses, reported at each collective:
// RUN: not purlin-opt %s -split-input-file --purlin-snac-infer="strategy=ring" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: unknown strategy 'ring' (direct, direct_copy, two_shot, two_shot_copy, staged, staged_ll, staged_ll128, auto)
// RUN: not purlin-opt %s -split-input-file --purlin-snac-infer="small-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: small-bytes must not be negative, got -1

// One clause: every option above is refused here.
layout.collective @one {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names i in [4] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// More clauses than the executor holds (spec's limits::kMaxClauses).
// expected-error @+1 {{at most 4 clauses per collective are supported}}
layout.collective @five {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @a : out f32 [4]
  layout.buffer @b : out f32 [4]
  layout.buffer @c : out f32 [4]
  layout.buffer @d : out f32 [8]
  layout.names i in [4] from @x[0][i] to @a[*][i] copy
  layout.names i in [4] from @x[0][i] to @b[*][i] copy
  layout.names i in [4] from @x[0][i] to @c[*][i] copy
  layout.names i in [4] from @x[0][i] to @d[*][i] copy
  layout.names i in [4] from @x[0][i] to @d[*][i + 4] copy
}
