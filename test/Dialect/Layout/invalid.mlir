// RUN: purlin-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the layout dialect: the rules of checkStructure
// and checkBinding (under the sample bindings, or the bound values), then the
// ops' own verifiers and syntax.

layout.collective @copy_several {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{a copy name has exactly one contributor, but 'x@*' gives every rank; use reduce(op) or name one rank}}
  layout.names i in [C] from @x[*][i] to @y[*][i] copy
}

// -----

layout.collective @unknown_name {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{unknown name 'K' in the index of 'x'}}
  layout.names i in [C] from @x[*][i + K] to @y[*][i] reduce<sum>
}

// -----

layout.collective @type_as_value {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'T' is an element type, not a value, in the index of 'x'}}
  layout.names i in [C] from @x[*][i + T] to @y[*][i] reduce<sum>
}

// -----

layout.collective @op_as_value {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'op' is a reduction op, not a value, in the extent of coordinate 'i'}}
  layout.names i in [op] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_no_subscript {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [R] max C
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{table 'cnt' needs 1 subscript(s) in the extent of coordinate 'i'}}
  layout.names i in [cnt] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @not_a_table {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'C' is not a table, in the extent of coordinate 'i'}}
  layout.names i in [C[0]] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_subscripts {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [R, R] max C
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{table 'cnt' needs 2 subscript(s), got 1, in the extent of coordinate 'i'}}
  layout.names i in [cnt[0]] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @param_twice {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{'C' is defined more than once}}
  layout.param @C : count
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @buffer_twice {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'x' is defined more than once}}
  layout.buffer @x : in @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @buffer_shadows_param {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+2 {{'C' is defined more than once}}
  // expected-error @+1 {{input 'C' is never read: no name clause reads it}}
  layout.buffer @C : in @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_no_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{table 'cnt' needs at least one extent}}
  layout.param @cnt : table [] max C
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bad_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the extent of table 'cnt'}}
  layout.param @cnt : table [K] max C
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bad_bound {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the bound of table 'cnt'}}
  layout.param @cnt : table [R] max K
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'no_ranks' has no rank-count parameter (add 'R: ranks')}}
layout.collective @no_ranks {
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'two_ranks' has more than one rank-count parameter}}
layout.collective @two_ranks {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @S : ranks
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_type {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown element type 'f7' of buffer 'x'}}
  layout.buffer @x : in @f7 [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{element types differ: 'x' is f7, 'y' is T}}
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_size {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the size of buffer 'x'}}
  layout.buffer @x : in @T [C + K]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'no_names' names nothing (no 'name' clause)}}
layout.collective @no_names {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{input 'x' is never read}}
  layout.buffer @x : in @T [C]
  // expected-error @+1 {{output 'y' is never written}}
  layout.buffer @y : out @T [C]
}

// -----

layout.collective @unknown_buffer {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{input 'x' is never read: no name clause reads it}}
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{unknown buffer 'z'}}
  layout.names i in [C] from @z[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @read_output {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{input 'x' is never read}}
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'y' is an output buffer; names are read from inputs (or from outputs that earlier clauses write)}}
  layout.names i in [C] from @y[0][i] to @y[*][i] copy
}

// -----

layout.collective @write_input {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  // expected-error @+1 {{output 'y' is never written: no name clause writes it}}
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'x' is an input buffer; names are written to outputs}}
  layout.names i in [C] from @x[0][i] to @x[*][i] copy
}

// -----

layout.collective @rank_coord_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the extent of rank coordinate 'r' may use parameters only, not 'k'}}
  layout.names (k, r, i) in [2, k + 1, C] from @x[r][i] to @y[*][i] copy
}

// -----

layout.collective @bad_rank {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the contributor rank must be quasi-affine in (r, i): sums, products with a factor free of them, '/' and '%' by divisors free of them; 'r*r' is not}}
  layout.names (r, i) in [R, C] from @x[r*r][i] to @y[r][i] copy
}

// -----

layout.collective @bad_dest_rank {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the set variable 'i' hides the coordinate of that name; pick another name}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[{r + i | i in [2]}][i] copy
}

// -----

layout.collective @non_affine {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the index of 'x' must be affine in the coordinates (r, i): 'i*i'}}
  layout.names (r, i) in [R, C] from @x[r][i*i] to @y[r][i] copy
}

// -----

layout.collective @coord_twice {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{coordinate 'i' is defined more than once}}
  layout.names (i, i) in [C, C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @coord_shadows_param {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{coordinate 'C' is defined more than once}}
  layout.names C in [C] from @x[0][C] to @y[0][C] copy
}

// -----

layout.collective @no_coords {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{a name space needs at least one coordinate}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = [], extents = [], from_buffer = @x, from_index = #layout.expr<0>, from_rank = #layout.rank<expr 0>, to_buffer = @y, to_index = #layout.expr<0>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @not_an_op {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{'C' is not a reduction op parameter}}
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@C>
}

// -----

layout.collective @types_differ {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{element types differ: 'x' is T, 'y' is f32}}
  layout.names i in [C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @no_contributor {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{contributor rank out of range: name (i=0) under R=1, C=1 has no contributor}}
  layout.names i in [C] from @x[R][i] to @y[0][i] copy
}

// -----

layout.collective @no_destination {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{destination rank out of range: name (i=0) under R=1, C=1 has no destination}}
  layout.names i in [C] from @x[0][i] to @y[R - 2][i] copy
}

// -----

layout.collective @read_out_of_bounds {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the index of 'x' is out of bounds: name (i=0) under R=1, C=1 reads 1, size 1}}
  layout.names i in [C] from @x[0][i + 1] to @y[0][i] copy
}

// -----

layout.collective @write_out_of_bounds {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [R*C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the index of 'y' is out of bounds: name (r=1, i=0) under R=2, C=2 writes 2, size 2}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
}

// -----

layout.collective @two_writers {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{two names write one place: name (r=1, i=0) under R=2, C=2 and name (r=0, i=0) both write 'y@0[0]'}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][i] copy
}

// -----

layout.collective @two_clauses_one_place {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[0][i] to @y[*][i] copy
  // expected-error @+1 {{two names write one place: name (j=0) under R=1, C=1 and name (i=0) both write 'y@0[0]'}}
  layout.names j in [C] from @x[0][j] to @y[*][j] copy
}

// -----

layout.collective @negative_size {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{buffer 'x' has a negative size under R=1, C=1}}
  layout.buffer @x : in @T [C - 2]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @bad_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  // expected-error @+1 {{the extent of coordinate 'j' cannot be evaluated (division by zero or table index out of range)}}
  layout.names (i, j) in [C, C / (C - C)] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @ranks_bound_zero {
  // expected-error @+1 {{the rank count 'R' must be at least 1}}
  layout.param @R : ranks = 0
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @count_bound_negative {
  layout.param @R : ranks
  // expected-error @+1 {{count 'C' must not be negative}}
  layout.param @C : count = -1
  layout.param @T : type
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @root_out_of_range {
  layout.param @R : ranks = 4
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{root 'root' = 4 must lie in [0, 4)}}
  layout.param @root : root = 4
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[root][i] to @y[*][i] copy
}

// -----

layout.collective @table_value_out_of_range {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{table 'cnt' has the value 9, outside [0, C = 1]}}
  layout.param @cnt : table [2] max C = [1, 9]
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{table 'cnt' needs 2 values, got 3}}
layout.collective @table_bound_shape {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [2] max 9 = [1, 2, 3]
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bound_unknown {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{division by zero}}
  layout.param @cnt : table [2] max C / 0
  layout.buffer @x : in @T [C]
  layout.buffer @y : out @T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_kind {
  // expected-error @+1 {{expected a parameter kind (ranks, count, root, type, redop, table or group), got 'rank'}}
  layout.param @R : rank
}

// -----

layout.collective @bad_role {
  // expected-error @+1 {{expected 'in' or 'out', got 'inout'}}
  layout.buffer @x : inout f32 [4]
}

// -----

// The ops' own verifiers and syntax: what the typed attributes do not rule
// out by construction.

layout.collective @bad_bound_type {
  // expected-error @+1 {{expected non-function type}}
  layout.param @T : type = f7
}

// -----

layout.collective @unsupported_bound_type {
  // expected-error @+1 {{'layout.param' op binds 'i16', not an element type purlin supports (f32, f16, bf16, f8E4M3FN, f8E5M2, i8, ui8, i32, i64, f64)}}
  layout.param @T : type = i16
}

// -----

layout.collective @bad_bound_op {
  // expected-error @+1 {{'layout.param' op binds 'copy', not a reduction op (sum, prod, min, max or avg)}}
  layout.param @op : redop = copy
}

// -----

layout.collective @unknown_bound_op {
  // expected-error @+1 {{expected a reduction op (sum, prod, min, max or avg), got 'mean'}}
  layout.param @op : redop = mean
}

// -----

layout.collective @redop_bound_not_op {
  // expected-error @+1 {{'layout.param' op binds 4 : i64, not a reduction op (sum, prod, min, max or avg)}}
  "layout.param"() <{kind = #layout.param_kind<redop>, sym_name = "op", bound = 4}> : () -> ()
}

// -----

layout.collective @bound_of_other_kind {
  // expected-error @+1 {{'layout.param' op binds f32, not an integer}}
  "layout.param"() <{kind = #layout.param_kind<count>, sym_name = "C", bound = f32}> : () -> ()
}

// -----

layout.collective @table_bound_not_entries {
  // expected-error @+1 {{'layout.param' op binds 4 : i64, not the table's entries (array<i64: ...>)}}
  "layout.param"() <{kind = #layout.param_kind<table>, sym_name = "t", dims = [#layout.expr<2>], max = #layout.expr<9>, bound = 4}> : () -> ()
}

// -----

layout.collective @type_bound_not_type {
  // expected-error @+1 {{'layout.param' op binds 4 : i64, not an element type}}
  "layout.param"() <{kind = #layout.param_kind<type>, sym_name = "T", bound = 4}> : () -> ()
}

// -----

layout.collective @max_on_scalar {
  // expected-error @+1 {{'layout.param' op only a table has a bound ('max')}}
  "layout.param"() <{kind = #layout.param_kind<count>, sym_name = "C", max = #layout.expr<4>}> : () -> ()
}

// -----

layout.collective @dims_on_scalar {
  // expected-error @+1 {{'layout.param' op only a table has extents}}
  "layout.param"() <{kind = #layout.param_kind<count>, sym_name = "C", dims = [#layout.expr<4>]}> : () -> ()
}

// -----

layout.collective @table_without_max {
  // expected-error @+1 {{'layout.param' op 'table' needs a bound ('max')}}
  "layout.param"() <{kind = #layout.param_kind<table>, sym_name = "t", dims = [#layout.expr<4>]}> : () -> ()
}

// -----

layout.collective @table_without_dims {
  // expected-error @+1 {{'layout.param' op 'table' needs its extents ('dims')}}
  "layout.param"() <{kind = #layout.param_kind<table>, sym_name = "t", max = #layout.expr<4>}> : () -> ()
}

// -----

layout.collective @unknown_kind_generic {
  // expected-error @+2 {{expected ::purlin::layout::ParamKind to be one of: ranks, count, root, type, redop, table}}
  // expected-error @+1 {{failed to parse Layout_ParamKindAttr parameter 'value' which is to be a `::purlin::layout::ParamKind`}}
  "layout.param"() <{kind = #layout.param_kind<size>, sym_name = "C"}> : () -> ()
}

// -----

layout.collective @bad_kind {
  // expected-error @+1 {{expected a parameter kind (ranks, count, root, type, redop, table or group), got 'rank'}}
  layout.param @R : rank
}

// -----

layout.collective @bad_role {
  // expected-error @+1 {{expected 'in' or 'out', got 'inout'}}
  layout.buffer @x : inout f32 [4]
}

// -----

layout.collective @unsupported_type {
  // expected-error @+1 {{'layout.buffer' op has the element type 'i16', which purlin does not support (f32, f16, bf16, f8E4M3FN, f8E5M2, i8, ui8, i32, i64, f64)}}
  layout.buffer @x : in i16 [4]
}

// -----

layout.collective @type_not_a_type_param {
  layout.param @R : ranks
  layout.param @C : count
  // expected-error @+1 {{unknown element type 'C' of buffer 'x'}}
  layout.buffer @x : in @C [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{element types differ: 'x' is C, 'y' is f32}}
  layout.names i in [C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @bare_type_param {
  layout.param @T : type
  // expected-error @+1 {{expected an element type or a type parameter (@name), got 'T'}}
  layout.buffer @x : in T [4]
}

// -----

layout.collective @malformed_size {
  // expected-error @+1 {{expected an expression}}
  "layout.buffer"() <{sym_name = "x", role = #layout.role<in>, elem_type = f32, size = #layout.expr<C +>}> : () -> ()
}

// -----

layout.collective @coords_extents {
  // expected-error @+1 {{'layout.names' op has 2 coordinate(s) but 1 extent(s)}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["i", "j"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<expr 0>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @coord_not_a_name {
  // expected-error @+1 {{'layout.names' op has the coordinate 'i.j', which is not a name}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["i.j"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<0>, from_rank = #layout.rank<expr 0>, to_buffer = @y, to_index = #layout.expr<0>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @custom_coord_not_a_name {
  layout.param @R : ranks
  // expected-error @+1 {{'i.j' is not a name}}
  layout.names i.j in [R] from @x[0][0] to @y[0][0] copy
}

// -----

layout.collective @rank_coord_out_of_range {
  // expected-error @+1 {{'layout.names' op 'from' rank is coordinate 3, but the clause has 1}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["i"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<coord 3>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @rank_expr_is_coord {
  // expected-error @+1 {{'layout.names' op 'to' rank 'r' is coordinate 0: write #layout.rank<coord 0>}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["r"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<r>, from_rank = #layout.rank<expr 0>, to_buffer = @y, to_index = #layout.expr<0>, to_rank = #layout.rank<expr r>}> : () -> ()
}

// -----

layout.collective @malformed_rank {
  // expected-error @+1 {{expected 'every', 'coord', 'expr' or 'set', got 'star'}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["i"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<star>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @negative_coord {
  // expected-error @+1 {{a coordinate rank needs a coordinate number >= 0, got -1}}
  "layout.names"() <{combine = #layout.combine<copy>, coords = ["i"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<coord -1>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<expr 0>}> : () -> ()
}

// -----

layout.collective @bad_combine {
  // expected-error @+1 {{expected copy, sum, prod, min, max, avg or a redop parameter (@name), got 'mean'}}
  "layout.names"() <{combine = #layout.combine<mean>, coords = ["i"], extents = [#layout.expr<4>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<every>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<every>}> : () -> ()
}

// -----

layout.collective @reduce_copy {
  layout.param @R : ranks
  // expected-error @+1 {{expected a reduction op (sum, prod, min, max, avg) or a redop parameter (@name), got 'copy'}}
  layout.names i in [R] from @x[*][i] to @y[*][i] reduce<copy>
}

// -----

layout.collective @outside {
}
// expected-error @+1 {{'layout.buffer' op expects parent op 'layout.collective'}}
layout.buffer @x : in f32 [4]

// -----

layout.collective @foreign_op {
  layout.param @R : ranks
  // expected-error @+1 {{'builtin.module' op is not allowed in a 'layout.collective'}}
  builtin.module {}
}

// -----

// Expressions parse with the spec's parser: its messages and limits.

layout.collective @deep {
  layout.param @R : ranks
  // expected-error @+1 {{expected an expression}}
  layout.buffer @x : in f32 [R + ]
}

// -----

layout.collective @unclosed_paren {
  layout.param @R : ranks
  // expected-error @+1 {{expected ')' to close '('}}
  layout.buffer @x : in f32 [(R + 1]
}

// -----

layout.collective @unclosed_subscript {
  layout.param @R : ranks
  // expected-error @+1 {{expected ']' after the table subscript}}
  layout.names i in [t[R) from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @literal_too_large {
  // expected-error @+1 {{integer literal too large (the limit is 2^40)}}
  layout.buffer @x : in f32 [1099511627777]
}

// -----

layout.collective @name_with_dot {
  // expected-error @+1 {{'a.b' is not a name (a letter or '_', then letters, digits or '_')}}
  layout.buffer @x : in f32 [a.b + 1]
}

// -----

layout.collective @too_deep {
  // expected-error @+1 {{expression too deep (more than 128 levels)}}
  layout.buffer @x : in f32 [((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))]
}

// -----

layout.collective @chain_too_deep {
  // expected-error @+1 {{expression too deep (more than 128 levels)}}
  layout.buffer @x : in f32 [1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1]
}

// -----

// A floor modulo is `mod` in MLIR text: '%' starts an SSA name there.
layout.collective @percent {
  // expected-error @+1 {{invalid SSA name}}
  layout.buffer @x : in f32 [4 % 2]
}

// -----

// Rank sets (issue 13): the set's syntax is the spec's parser's, in a
// `layout.names` op and in #layout.rank alike.
layout.collective @set_in {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{expected 'in' after the set's variable 'j'}}
  layout.names i in [C] from @x[{j | j of [R]}][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @set_attr_braces {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{expected a set '{' expr '|' name 'in' '[' expr ']' '}'}}
  "layout.names"() <{combine = #layout.combine<sum>, coords = ["i"], extents = [#layout.expr<C>], from_buffer = @x, from_index = #layout.expr<i>, from_rank = #layout.rank<set j>, to_buffer = @y, to_index = #layout.expr<i>, to_rank = #layout.rank<every>}> : () -> ()
}

// -----

layout.collective @set_copy {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{a copy name has exactly one contributor, but 'x@{j | j in [R]}' gives a set of ranks; use reduce(op) or name one rank}}
  layout.names i in [C] from @x[{j | j in [R]}][i] to @y[0][i] copy
}

// -----

layout.collective @set_extent_coord {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{unknown name 'i' in the extent of the set variable 'j' (parameters only)}}
  layout.names i in [C] from @x[{j | j in [i + 1]}][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @set_duplicate {
  layout.param @R : ranks = 3
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{a rank twice in a contributor set: name (i=0) under R=3, C=1 lists rank 0 twice}}
  layout.names i in [C] from @x[{j mod 2 | j in [R]}][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @map_out_of_range {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{destination rank out of range: name (r=0, i=0) under R=1, C=1 has no destination}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[r + 1][i] copy
}

// -----

layout.collective @group_divides {
  // expected-error @+1 {{group size 'G' = 3 must divide the rank count 4}}
  layout.param @G : group = 3
  layout.param @R : ranks = 4
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [C]
  layout.names (g, i) in [R/G, C] from @x[{g*G + j | j in [G]}][i] to @y[{g*G + j | j in [G]}][i] reduce<sum>
}

// -----

layout.collective @step_reads_unwritten {
  layout.param @R : ranks
  layout.param @C : count
  layout.buffer @x : in f32 [C]
  layout.buffer @y : out f32 [2 * C]
  layout.names (r, i) in [R, C] from @x[r][i] to @y[r][i] copy
  // expected-error @+1 {{name (i=0) under R=1, C=1 reads 'y@0[1]', which no earlier clause writes}}
  layout.names i in [C] from @y[*][C + i] to @y[*][i] reduce<sum>
}

// -----

// Epilogues (issue 16): the op's own verifier, then a rule of
// checkEpilogue reported at the epilogue op.
layout.collective @epi_first {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  // expected-error @+1 {{'layout.epilogue' op must follow the 'layout.names' op whose names it applies to}}
  layout.epilogue rows n [store @y[i] = recv]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @epi_arrays {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  // expected-error @+1 {{'layout.epilogue' op has 1 targets, 2 store marks, 1 indexes and 1 values; they must agree}}
  "layout.epilogue"() <{rows = ["n"], targets = ["y"], stores = array<i1: true, true>, indexes = [#layout.expr<i>], values = [#layout.expr<recv>]}> : () -> ()
}

// -----

layout.collective @epi_no_rows {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  // expected-error @+1 {{'layout.epilogue' op needs at least one row coordinate}}
  "layout.epilogue"() <{rows = [], targets = ["y"], stores = array<i1: true>, indexes = [#layout.expr<i>], values = [#layout.expr<recv>]}> : () -> ()
}

// -----

layout.collective @epi_mod {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  // expected-error @+1 {{'%' is not defined on an epilogue's f32 values}}
  layout.epilogue rows n [store @y[i] = recv mod 2]
}

// -----

layout.collective @epi_syntax {
  layout.param @R : ranks
  layout.buffer @x : in f32 [4]
  layout.buffer @y : out f32 [4]
  layout.names (n, i) in [1, 4] from @x[*][i] to @y[*][i] reduce<sum>
  // expected-error @+1 {{expected 'store'}}
  layout.epilogue rows n [keep @y[i] = recv]
}
