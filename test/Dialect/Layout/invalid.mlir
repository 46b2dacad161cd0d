// RUN: purlin-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the layout dialect: the rules of checkStructure
// and checkBinding (under the sample bindings, or the bound values), then the
// ops' own verifiers and syntax.

layout.collective @copy_several {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{a copy name has exactly one contributor, but 'x@*' gives every rank; use reduce(op) or name one rank}}
  layout.names i in [C] from @x[*][i] to @y[*][i] copy
}

// -----

layout.collective @unknown_name {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{unknown name 'K' in the index of 'x'}}
  layout.names i in [C] from @x[*][i + K] to @y[*][i] reduce<sum>
}

// -----

layout.collective @type_as_value {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'T' is an element type, not a value, in the index of 'x'}}
  layout.names i in [C] from @x[*][i + T] to @y[*][i] reduce<sum>
}

// -----

layout.collective @op_as_value {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @op : redop
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'op' is a reduction op, not a value, in the extent of coordinate 'i'}}
  layout.names i in [op] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_no_subscript {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [R] max C
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{table 'cnt' needs 1 subscript(s) in the extent of coordinate 'i'}}
  layout.names i in [cnt] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @not_a_table {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'C' is not a table, in the extent of coordinate 'i'}}
  layout.names i in [C[0]] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_subscripts {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [R, R] max C
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
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
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @buffer_twice {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'x' is defined more than once}}
  layout.buffer @x : in T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @buffer_shadows_param {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'C' is defined more than once}}
  layout.buffer @C : in T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_no_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{table 'cnt' needs at least one extent}}
  layout.param @cnt : table [] max C
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bad_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the extent of table 'cnt'}}
  layout.param @cnt : table [K] max C
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bad_bound {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the bound of table 'cnt'}}
  layout.param @cnt : table [R] max K
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'no_ranks' has no rank-count parameter (add 'R: ranks')}}
layout.collective @no_ranks {
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'two_ranks' has more than one rank-count parameter}}
layout.collective @two_ranks {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @S : ranks
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_type {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown element type 'f7' of buffer 'x'}}
  layout.buffer @x : in f7 [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{element types differ: 'x' is f7, 'y' is T}}
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_size {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{unknown name 'K' in the size of buffer 'x'}}
  layout.buffer @x : in T [C + K]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{collective 'no_names' names nothing (no 'name' clause)}}
layout.collective @no_names {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
}

// -----

layout.collective @unknown_buffer {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{unknown buffer 'z'}}
  layout.names i in [C] from @z[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @read_output {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'y' is an output buffer; names are read from inputs}}
  layout.names i in [C] from @y[0][i] to @y[*][i] copy
}

// -----

layout.collective @write_input {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'x' is an input buffer; names are written to outputs}}
  layout.names i in [C] from @x[0][i] to @x[*][i] copy
}

// -----

layout.collective @rank_coord_range {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{rank coordinate 'r' must range over [R]}}
  layout.names (r, i) in [C, C] from @x[r][i] to @y[*][r] copy
}

// -----

layout.collective @bad_rank {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{a contributor rank is '*', a coordinate ranging over the ranks, or an expression of parameters; 'r + 1' is none of these}}
  layout.names (r, i) in [R, C] from @x[r + 1][i] to @y[r][i] copy
}

// -----

layout.collective @bad_dest_rank {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{a destination rank is '*', a coordinate ranging over the ranks, or an expression of parameters; 'r%2' is none of these}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[r mod 2][i] copy
}

// -----

layout.collective @non_affine {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{the index of 'x' must be affine in the coordinates (r, i): 'i*i'}}
  layout.names (r, i) in [R, C] from @x[r][i*i] to @y[r][i] copy
}

// -----

layout.collective @coord_twice {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{coordinate 'i' is defined more than once}}
  layout.names (i, i) in [C, C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @coord_shadows_param {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
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
  "layout.names"() <{combine = "copy", coords = [], extents = [], from_buffer = @x, from_index = "0", from_rank = "0", to_buffer = @y, to_index = "0", to_rank = "0"}> : () -> ()
}

// -----

layout.collective @not_an_op {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{'C' is not a reduction op parameter}}
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<C>
}

// -----

layout.collective @types_differ {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out f32 [C]
  // expected-error @+1 {{element types differ: 'x' is T, 'y' is f32}}
  layout.names i in [C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @no_contributor {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{contributor rank out of range: name (i=0) under R=1, C=1 has no contributor}}
  layout.names i in [C] from @x[R][i] to @y[0][i] copy
}

// -----

layout.collective @no_destination {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{destination rank out of range: name (i=0) under R=1, C=1 has no destination}}
  layout.names i in [C] from @x[0][i] to @y[R - 2][i] copy
}

// -----

layout.collective @read_out_of_bounds {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{the index of 'x' is out of bounds: name (i=0) under R=1, C=1 reads 1, size 1}}
  layout.names i in [C] from @x[0][i + 1] to @y[0][i] copy
}

// -----

layout.collective @write_out_of_bounds {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [R*C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{the index of 'y' is out of bounds: name (r=1, i=0) under R=2, C=2 writes 2, size 2}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
}

// -----

layout.collective @two_writers {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{two names write one place: name (r=1, i=0) under R=2, C=2 and name (r=0, i=0) both write 'y@0[0]'}}
  layout.names (r, i) in [R, C] from @x[r][i] to @y[*][i] copy
}

// -----

layout.collective @two_clauses_one_place {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
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
  layout.buffer @x : in T [C - 2]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @bad_extent {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  // expected-error @+1 {{the extent of coordinate 'j' cannot be evaluated (division by zero or table index out of range)}}
  layout.names (i, j) in [C, C / (C - C)] from @x[0][i] to @y[0][i] copy
}

// -----

layout.collective @ranks_bound_zero {
  // expected-error @+1 {{the rank count 'R' must be at least 1}}
  layout.param @R : ranks = 0
  layout.param @C : count
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @count_bound_negative {
  layout.param @R : ranks
  // expected-error @+1 {{count 'C' must not be negative}}
  layout.param @C : count = -1
  layout.param @T : type
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @root_out_of_range {
  layout.param @R : ranks = 4
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{root 'root' = 4 must lie in [0, 4)}}
  layout.param @root : root = 4
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[root][i] to @y[*][i] copy
}

// -----

layout.collective @table_value_out_of_range {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{table 'cnt' has the value 9, outside [0, C = 1]}}
  layout.param @cnt : table [2] max C = [1, 9]
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

// expected-error @+1 {{table 'cnt' needs 2 values, got 3}}
layout.collective @table_bound_shape {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  layout.param @cnt : table [2] max 9 = [1, 2, 3]
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @table_bound_unknown {
  layout.param @R : ranks
  layout.param @C : count
  layout.param @T : type
  // expected-error @+1 {{division by zero}}
  layout.param @cnt : table [2] max C / 0
  layout.buffer @x : in T [C]
  layout.buffer @y : out T [C]
  layout.names i in [C] from @x[*][i] to @y[*][i] reduce<sum>
}

// -----

layout.collective @bad_kind {
  // expected-error @+1 {{expected a parameter kind (ranks, count, root, type, redop or table), got 'rank'}}
  layout.param @R : rank
}

// -----

layout.collective @bad_role {
  // expected-error @+1 {{expected 'in' or 'out', got 'inout'}}
  layout.buffer @x : inout f32 [4]
}

// -----

layout.collective @bad_bound_type {
  // expected-error @+1 {{'layout.param' op binds an unknown element type 'f7'}}
  layout.param @T : type = f7
}

// -----

layout.collective @bad_bound_op {
  // expected-error @+1 {{'layout.param' op binds an unknown reduction op 'copy' (sum, prod, min, max or avg)}}
  layout.param @op : redop = copy
}

// -----

layout.collective @bad_bound_int {
  // expected-error @+1 {{'layout.param' op binds 'x', not an integer}}
  "layout.param"() <{kind = "count", sym_name = "C", bound = "x"}> : () -> ()
}

// -----

layout.collective @max_on_scalar {
  // expected-error @+1 {{'layout.param' op only a table has a bound ('max')}}
  "layout.param"() <{kind = "count", sym_name = "C", max = "4"}> : () -> ()
}

// -----

layout.collective @table_without_max {
  // expected-error @+1 {{'layout.param' op 'table' needs a bound ('max')}}
  "layout.param"() <{kind = "table", sym_name = "t", dims = ["4"]}> : () -> ()
}

// -----

layout.collective @unknown_kind_generic {
  // expected-error @+1 {{'layout.param' op has an unknown kind 'size'}}
  "layout.param"() <{kind = "size", sym_name = "C"}> : () -> ()
}

// -----

layout.collective @malformed_size {
  // expected-error @+1 {{'layout.buffer' op has a malformed size 'C +'}}
  "layout.buffer"() <{sym_name = "x", role = "in", elem_type = "f32", size = "C +"}> : () -> ()
}

// -----

layout.collective @coords_extents {
  // expected-error @+1 {{'layout.names' op has 2 coordinate(s) but 1 extent(s)}}
  "layout.names"() <{combine = "copy", coords = ["i", "j"], extents = ["4"], from_buffer = @x, from_index = "i", from_rank = "0", to_buffer = @y, to_index = "i", to_rank = "0"}> : () -> ()
}

// -----

layout.collective @malformed_rank {
  // expected-error @+1 {{'layout.names' op has a malformed rank '**'}}
  "layout.names"() <{combine = "copy", coords = ["i"], extents = ["4"], from_buffer = @x, from_index = "i", from_rank = "**", to_buffer = @y, to_index = "i", to_rank = "0"}> : () -> ()
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

layout.collective @deep {
  layout.param @R : ranks
  // expected-error @+1 {{expected an expression}}
  layout.buffer @x : in f32 [R + ]
}
