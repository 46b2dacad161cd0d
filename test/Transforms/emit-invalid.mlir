// purlin-emit's diagnostics, each at the op it is about.
// RUN: purlin-opt %s -split-input-file --purlin-emit="target=host" -verify-diagnostics -o /dev/null
//
// A target that is not a row of the target table
// (spec/include/purlin/spec/Targets.def); the message lists the rows:
// RUN: not purlin-opt %s -split-input-file --purlin-emit="target=sm_70" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: unknown target 'sm_70' (host, {{.*}})
//
// A folder that cannot be created:
// RUN: touch %t.file && not purlin-opt %s -split-input-file --purlin-emit="out=%t.file/sub" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FOLDER
// FOLDER: error: cannot create '{{.*}}.file/sub': Not a directory

// Nothing to lower: inference has not run.
// expected-error @+1 {{no snac.program of @bare to lower: run --purlin-snac-infer first}}
layout.collective @bare {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names i in [4] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// More buffers than the executor's tables hold (spec's limits::kMaxBuffers).
// expected-error @+1 {{the executor supports at most 4 clauses and 8 buffers}}
layout.collective @wide {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @x1 : in f32 [4]
  layout.buffer @x2 : in f32 [4]
  layout.buffer @x3 : in f32 [4]
  layout.buffer @x4 : in f32 [4]
  layout.buffer @x5 : in f32 [4]
  layout.buffer @x6 : in f32 [4]
  layout.buffer @x7 : in f32 [4]
  layout.buffer @a : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @a[*][i] reduce<sum>
  layout.epilogue rows n [store @a[i] = recv + x1[i] + x2[i] + x3[i] + x4[i] + x5[i] + x6[i] + x7[i]]
}
snac.program @wide_direct of @wide "direct" lanes 1 chunks 1 band [0, -1) {
}
