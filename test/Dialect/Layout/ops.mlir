// RUN: purlin-opt %s -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file | purlin-opt -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file -mlir-print-op-generic | purlin-opt -split-input-file | FileCheck %s
// RUN: purlin-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: layout.collective @all_reduce {
// CHECK-NEXT:    layout.param @R : ranks
// CHECK-NEXT:    layout.param @C : count
// CHECK-NEXT:    layout.param @T : type
// CHECK-NEXT:    layout.param @op : redop
// CHECK-NEXT:    layout.buffer @x : in @T [C]
// CHECK-NEXT:    layout.buffer @y : out @T [C]
// CHECK-NEXT:    layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
// CHECK-NEXT:  }
layout.collective @all_reduce {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
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
// CHECK-NEXT:    layout.buffer @x : in @T [1]
// CHECK-NEXT:    layout.buffer @y : out @T [1]
// CHECK-NEXT:    layout.names i in [1] from @x[*][i] to @y[*][i] reduce<@op>
layout.collective @types {
  layout.param @R : ranks
  layout.param @T : type = bf16
  layout.param @op : redop = sum
  layout.buffer @x : in @T [1]
  layout.buffer @y : out @T [1]
  layout.names i in [1] from @x[*][i] to @y[*][i] reduce<@op>
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

// -----

// Every element type purlin supports, as MLIR types, and a type parameter by
// reference; bound types print as MLIR types too.
// CHECK-LABEL: layout.collective @elem_types {
// CHECK-NEXT:    layout.param @R : ranks
// CHECK-NEXT:    layout.param @T : type = f8E5M2
// CHECK-NEXT:    layout.buffer @x0 : in f32 [1]
// CHECK-NEXT:    layout.buffer @y0 : out f32 [1]
// CHECK-NEXT:    layout.buffer @x1 : in f16 [1]
// CHECK-NEXT:    layout.buffer @y1 : out f16 [1]
// CHECK-NEXT:    layout.buffer @x2 : in bf16 [1]
// CHECK-NEXT:    layout.buffer @y2 : out bf16 [1]
// CHECK-NEXT:    layout.buffer @x3 : in f8E4M3FN [1]
// CHECK-NEXT:    layout.buffer @y3 : out f8E4M3FN [1]
// CHECK-NEXT:    layout.buffer @x4 : in f8E5M2 [1]
// CHECK-NEXT:    layout.buffer @y4 : out f8E5M2 [1]
// CHECK-NEXT:    layout.buffer @x5 : in i8 [1]
// CHECK-NEXT:    layout.buffer @y5 : out i8 [1]
// CHECK-NEXT:    layout.buffer @x6 : in ui8 [1]
// CHECK-NEXT:    layout.buffer @y6 : out ui8 [1]
// CHECK-NEXT:    layout.buffer @x7 : in i32 [1]
// CHECK-NEXT:    layout.buffer @y7 : out i32 [1]
// CHECK-NEXT:    layout.buffer @x8 : in i64 [1]
// CHECK-NEXT:    layout.buffer @y8 : out i64 [1]
// CHECK-NEXT:    layout.buffer @x9 : in f64 [1]
// CHECK-NEXT:    layout.buffer @y9 : out f64 [1]
// CHECK-NEXT:    layout.buffer @xT : in @T [1]
// CHECK-NEXT:    layout.buffer @yT : out @T [1]
layout.collective @elem_types {
  layout.param @R : ranks
  layout.param @T : type = f8E5M2
  layout.buffer @x0 : in f32 [1]
  layout.buffer @y0 : out f32 [1]
  layout.buffer @x1 : in f16 [1]
  layout.buffer @y1 : out f16 [1]
  layout.buffer @x2 : in bf16 [1]
  layout.buffer @y2 : out bf16 [1]
  layout.buffer @x3 : in f8E4M3FN [1]
  layout.buffer @y3 : out f8E4M3FN [1]
  layout.buffer @x4 : in f8E5M2 [1]
  layout.buffer @y4 : out f8E5M2 [1]
  layout.buffer @x5 : in i8 [1]
  layout.buffer @y5 : out i8 [1]
  layout.buffer @x6 : in ui8 [1]
  layout.buffer @y6 : out ui8 [1]
  layout.buffer @x7 : in i32 [1]
  layout.buffer @y7 : out i32 [1]
  layout.buffer @x8 : in i64 [1]
  layout.buffer @y8 : out i64 [1]
  layout.buffer @x9 : in f64 [1]
  layout.buffer @y9 : out f64 [1]
  layout.buffer @xT : in @T [1]
  layout.buffer @yT : out @T [1]
  layout.names n in [1] from @x0[0][n] to @y0[0][n] copy
  layout.names n in [1] from @x1[0][n] to @y1[0][n] copy
  layout.names n in [1] from @x2[0][n] to @y2[0][n] copy
  layout.names n in [1] from @x3[0][n] to @y3[0][n] copy
  layout.names n in [1] from @x4[0][n] to @y4[0][n] copy
  layout.names n in [1] from @x5[0][n] to @y5[0][n] copy
  layout.names n in [1] from @x6[0][n] to @y6[0][n] copy
  layout.names n in [1] from @x7[0][n] to @y7[0][n] copy
  layout.names n in [1] from @x8[0][n] to @y8[0][n] copy
  layout.names n in [1] from @x9[0][n] to @y9[0][n] copy
  layout.names n in [1] from @xT[0][n] to @yT[0][n] copy
}

// -----

// The typed attributes in the generic form: #layout.expr, #layout.rank
// (every, a coordinate by number, an expression), #layout.combine (an op or
// a redop parameter), enums, element types and typed bounds.
// GENERIC-LABEL: "layout.collective"() <{sym_name = "generic"}>
// GENERIC:       "layout.param"() <{bound = 4 : i64, kind = #layout.param_kind<ranks>, sym_name = "R"}>
// GENERIC:       "layout.param"() <{bound = bf16, kind = #layout.param_kind<type>, sym_name = "T"}>
// GENERIC:       "layout.param"() <{bound = #layout.redop<max>, kind = #layout.param_kind<redop>, sym_name = "op"}>
// GENERIC:       "layout.param"() <{bound = array<i64: 1, 2, 0, 2, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2>, dims = [#layout.expr<R>, #layout.expr<R>], kind = #layout.param_kind<table>, max = #layout.expr<C>, sym_name = "cnt"}>
// GENERIC:       "layout.buffer"() <{elem_type = @T, role = #layout.role<in>, size = #layout.expr<R*C>, sym_name = "x"}>
// GENERIC:       "layout.buffer"() <{elem_type = f32, role = #layout.role<out>, size = #layout.expr<C>, sym_name = "z"}>
// GENERIC:       "layout.names"() <{combine = #layout.combine<@op>, coords = ["r", "i"], extents = [#layout.expr<R>, #layout.expr<cnt[r][0]>], from_buffer = @x, from_index = #layout.expr<r*C + i>, from_rank = #layout.rank<coord 0>, to_buffer = @y, to_index = #layout.expr<r*C + i>, to_rank = #layout.rank<every>}>
// GENERIC:       "layout.names"() <{combine = #layout.combine<copy>, coords = ["i"], extents = [#layout.expr<C>], from_buffer = @w, from_index = #layout.expr<i>, from_rank = #layout.rank<expr R - 1>, to_buffer = @z, to_index = #layout.expr<i>, to_rank = #layout.rank<expr 0>}>
// CHECK-LABEL: layout.collective @generic {
// CHECK:         layout.names (r, i) in [R, cnt[r][0]] from @x[r][r*C + i] to @y[*][r*C + i] reduce<@op>
// CHECK:         layout.names i in [C] from @w[R - 1][i] to @z[0][i] copy
layout.collective @generic {
  layout.param @R : ranks = 4
  layout.param @C : count = 2
  layout.param @T : type = bf16
  layout.param @op : redop = max
  layout.param @cnt : table [R, R] max C = [1, 2, 0, 2, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2]
  layout.buffer @x : in @T [R * C]
  layout.buffer @y : out @T [R * C]
  layout.buffer @w : in f32 [C]
  layout.buffer @z : out f32 [C]
  layout.names (r, i) in [R, cnt[r][0]] from @x[r][r*C + i] to @y[*][r*C + i] reduce<@op>
  layout.names i in [C] from @w[R - 1][i] to @z[0][i] copy
}

// -----

// Rank maps and sets (issue 13): a group size parameter, a map of the
// coordinates (`(r + 1) mod R`), sets over a bound variable, and a step (a
// clause that reads the output earlier clauses wrote), in both forms.
// GENERIC-LABEL: "layout.collective"() <{sym_name = "grid"}>
// GENERIC:       "layout.param"() <{kind = #layout.param_kind<group>, sym_name = "G"}>
// GENERIC:       "layout.names"() <{combine = #layout.combine<sum>, coords = ["g", "j", "i"], extents = [#layout.expr<R/G>, #layout.expr<G>, #layout.expr<C>], from_buffer = @x, from_index = #layout.expr<j*C + i>, from_rank = #layout.rank<set {g*G + k | k in [G]}>, to_buffer = @y, to_index = #layout.expr<j*C + i>, to_rank = #layout.rank<expr g*G + j>}>
// GENERIC:       "layout.names"() <{combine = #layout.combine<sum>, coords = ["j", "i"], extents = [#layout.expr<G>, #layout.expr<C>], from_buffer = @y, from_index = #layout.expr<j*C + i>, from_rank = #layout.rank<set {h*G + j | h in [R/G]}>, to_buffer = @y, to_index = #layout.expr<j*C + i>, to_rank = #layout.rank<set {h*G + j | h in [R/G]}>}>
// GENERIC:       "layout.names"() <{combine = #layout.combine<copy>, coords = ["r", "i"], extents = [#layout.expr<R>, #layout.expr<C>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<coord 0>, to_buffer = @z, to_index = #layout.expr<i>, to_rank = #layout.rank<expr (r + 1) mod R>}>
// CHECK-LABEL: layout.collective @grid {
// CHECK-NEXT:    layout.param @R : ranks
// CHECK-NEXT:    layout.param @G : group
// CHECK:         layout.names (g, j, i) in [R/G, G, C] from @x[{g*G + k | k in [G]}][j*C + i] to @y[g*G + j][j*C + i] reduce<sum>
// CHECK-NEXT:    layout.names (j, i) in [G, C] from @y[{h*G + j | h in [R/G]}][j*C + i] to @y[{h*G + j | h in [R/G]}][j*C + i] reduce<sum>
// CHECK-NEXT:    layout.names (r, i) in [R, C] from @x[r][i] to @z[(r + 1) mod R][i] copy
layout.collective @grid {
  layout.param @R : ranks
  layout.param @G : group
  layout.param @C : count
  layout.buffer @x : in f32 [G * C]
  layout.buffer @y : out f32 [G * C]
  layout.buffer @z : out f32 [C]
  layout.names (g, j, i) in [R/G, G, C] from @x[{g*G + k | k in [G]}][j*C + i] to @y[g*G + j][j*C + i] reduce<sum>
  layout.names (j, i) in [G, C] from @y[{h*G + j | h in [R/G]}][j*C + i] to @y[{h*G + j | h in [R/G]}][j*C + i] reduce<sum>
  layout.names (r, i) in [R, C] from @x[r][i] to @z[(r + 1) mod R][i] copy
}
