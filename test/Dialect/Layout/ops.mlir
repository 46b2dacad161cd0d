// RUN: purlin-opt %s -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file | purlin-opt -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file -mlir-print-op-generic | purlin-opt -split-input-file | FileCheck %s

// CHECK-LABEL: layout.collective @all_reduce {
// CHECK-NEXT:    layout.param @R : ranks
// CHECK-NEXT:    layout.param @C : count
// CHECK-NEXT:    layout.param @T : type
// CHECK-NEXT:    layout.param @op : redop
// CHECK-NEXT:    layout.buffer @x : in T [C]
// CHECK-NEXT:    layout.buffer @y : out T [C]
// CHECK-NEXT:    layout.names i in [C] from @x[*][i] to @y[*][i] reduce<op>
// CHECK-NEXT:  }
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<op>
}

// -----

// Bound values of every kind, and a concrete element type that MLIR lexes
// as an integer type.
// CHECK-LABEL: layout.collective @bound {
// CHECK-NEXT:    layout.param @R : ranks = 4
// CHECK-NEXT:    layout.param @C : count = 3
// CHECK-NEXT:    layout.param @root : root = 2
// CHECK-NEXT:    layout.buffer @x : in i32 [C]
// CHECK-NEXT:    layout.buffer @y : out i32 [C]
// CHECK-NEXT:    layout.names i in [C] from @x[*][i] to @y[root][i] reduce<max>
layout.collective @bound {
  layout.param @R : ranks = 4
  layout.param @C : count = 3
  layout.param @root : root = 2
  layout.buffer @x : in i32 [C]
  layout.buffer @y : out i32 [C]
  layout.names i in [C] from @x[*][i] to @y[root][i] reduce<max>
}

// -----

// CHECK-LABEL: layout.collective @types {
// CHECK-NEXT:    layout.param @R : ranks
// CHECK-NEXT:    layout.param @T : type = bf16
// CHECK-NEXT:    layout.param @op : redop = sum
// CHECK-NEXT:    layout.buffer @x : in T [1]
// CHECK-NEXT:    layout.buffer @y : out T [1]
// CHECK-NEXT:    layout.names i in [1] from @x[*][i] to @y[*][i] reduce<op>
layout.collective @types {
  layout.param @R : ranks
  layout.param @T : type = bf16
  layout.param @op : redop = sum
  layout.buffer @x : in T [1]
  layout.buffer @y : out T [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<op>
}

// -----

// Tables, with and without bound entries.
// CHECK-LABEL: layout.collective @all_to_all_v {
// CHECK-NEXT:    layout.param @R : ranks = 2
// CHECK-NEXT:    layout.param @M : count
// CHECK-NEXT:    layout.param @cnt : table [R, R] max M
// CHECK-NEXT:    layout.param @len : table [2] max 9 = [3, 0]
// CHECK-NEXT:    layout.buffer @x : in f32 [R*M]
// CHECK-NEXT:    layout.buffer @y : out f32 [R*M]
// CHECK-NEXT:    layout.names (s, d, i) in [R, R, cnt[s][d]] from @x[s][d*M + i] to @y[d][s*M + i] copy
layout.collective @all_to_all_v {
  layout.param @R : ranks = 2
  layout.param @M : count
  layout.param @cnt : table [R, R] max M
  layout.param @len : table [2] max 9 = [3, 0]
  layout.buffer @x : in f32 [R * M]
  layout.buffer @y : out f32 [R * M]
  layout.names (s, d, i) in [R, R, cnt[s][d]] from @x[s][d * M + i] to @y[d][s * M + i] copy
}

// -----

// Expressions print canonically: minimal parentheses, `/` for floor
// division and `mod` for the floor modulo. Coordinates may be spelled like
// integer types (i1).
// CHECK-LABEL: layout.collective @exprs {
// CHECK:         layout.buffer @x : in f32 [2*C]
// CHECK:         layout.buffer @y : out f32 [(C + 1)*2]
// CHECK:         layout.names (i0, i1) in [2, C mod 2 + C - C mod 2] from @x[R - 1][i1*2 + i0] to @y[R - 1][(i1 - -1)*2 + i0 - 2] copy
// CHECK:         layout.names j in [C/C] from @x[R - 1][j] to @y[0][2*C + j + 1] copy
layout.collective @exprs {
  layout.param @R : ranks = 2
  layout.param @C : count
  layout.buffer @x : in f32 [2 * C]
  layout.buffer @y : out f32 [((C + 1) * 2)]
  layout.names (i0, i1) in [2, (C mod 2) + C - C mod 2] from @x[R - 1][i1 * 2 + i0] to @y[(R - 1)][(i1 - -1) * 2 + i0 - 2] copy
  layout.names j in [C / C] from @x[R - 1][j] to @y[0][2 * C + j + 1] copy
}
