#ifndef PURLIN_DIALECT_LAYOUT_OPS_TD
#define PURLIN_DIALECT_LAYOUT_OPS_TD

include "purlin/Dialect/Layout/LayoutAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// layout.collective
//===----------------------------------------------------------------------===//
def Layout_CollectiveOp : Layout_Op<"collective", [
    Symbol, SingleBlock, NoTerminator, IsolatedFromAbove]> {
  let summary = "a collective: its parameters, buffers and name clauses";
  let description = [{
    The collective `@name`. Its single block holds `layout.param`,
    `layout.buffer` and `layout.names` ops, in source order. The verifier
    views the body as the spec's `purlin::Collective` (a lossless
    conversion of the typed attributes) and runs `checkStructure`, then
    `checkBinding` under the sample bindings of `sampleBindings` (values
    bound with `= ...` are kept); each problem is reported at the op it
    comes from.

    ```mlir
    layout.collective @all_reduce {
      layout.param @R : ranks
      layout.param @C : count
      layout.param @T : type
      layout.param @op : redop
      layout.buffer @x : in @T [C]
      layout.buffer @y : out @T [C]
      layout.names i in [C] from @x[*][i] to @y[*][i] reduce<@op>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
  }];
}

//===----------------------------------------------------------------------===//
// layout.param
//===----------------------------------------------------------------------===//
def Layout_ParamOp : Layout_Op<"param", [HasParent<"CollectiveOp">]> {
  let summary = "a parameter of the collective";
  let description = [{
    A parameter: the rank count (`ranks`, exactly one per collective), an
    element count (`count`), a root rank (`root`), an element type (`type`),
    a reduction op (`redop`) or a table of counts (`table`, with its extents
    and an inclusive upper bound of its entries). A value bound at compile
    time follows `=`, typed by the kind: an integer (`ranks`, `count`,
    `root`), an MLIR element type (`type`), a reduction op (`redop`), or the
    table's entries in row-major order (`table`).

    ```mlir
    layout.param @R : ranks = 8
    layout.param @M : count
    layout.param @T : type = bf16
    layout.param @op : redop = max
    layout.param @cnt : table [R, R] max M
    layout.param @lens : table [2] max 9 = [3, 9]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Layout_ParamKindAttr:$kind,
                       OptionalAttr<Layout_ExprArrayAttr>:$dims,
                       OptionalAttr<Layout_ExprAttr>:$max,
                       OptionalAttr<AnyAttrOf<[I64Attr, TypeAttr,
                           Layout_RedOpAttr, DenseI64ArrayAttr]>>:$bound);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// layout.buffer
//===----------------------------------------------------------------------===//
def Layout_BufferOp : Layout_Op<"buffer", [HasParent<"CollectiveOp">]> {
  let summary = "an input or output buffer, with its size per rank";
  let description = [{
    A buffer of every rank: its role (`in` or `out`), its element type (a
    reference to a `type` parameter, or one of the MLIR types purlin
    supports: `f32`, `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`, `i8`, `ui8`, `i32`,
    `i64`, `f64`) and its number of elements per rank.

    ```mlir
    layout.buffer @x : in @T [C]
    layout.buffer @y : out bf16 [R*C]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Layout_BufferRoleAttr:$role,
                       AnyAttrOf<[TypeAttr, FlatSymbolRefAttr]>:$elem_type,
                       Layout_ExprAttr:$size);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// layout.names
//===----------------------------------------------------------------------===//
def Layout_NamesOp : Layout_Op<"names", [HasParent<"CollectiveOp">]> {
  let summary = "a name clause: an index space, where each name comes from "
                "and where it goes";
  let description = [{
    The names `(c0, c1, ...)` range over `[E0, E1, ...]` (an extent may use
    earlier coordinates). Each name is read `from` a buffer at a rank and an
    index, and written `to` a buffer at a rank and an index. A rank is `*`
    (every rank), a coordinate ranging over the ranks, or an expression of
    parameters (`#layout.rank`); indexes are affine in the coordinates. The
    combine (`#layout.combine`) is `copy` (one contributor), `reduce<op>`
    with op sum, prod, min, max or avg, or `reduce<@p>` for a `redop`
    parameter `p`.

    ```mlir
    layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
    layout.names i in [C] from @x[*][i] to @y[root][i] reduce<sum>
    layout.names (s, d, i) in [R, R, cnt[s][d]] from @x[s][d*M + i] to @y[d][s*M + i] copy
    ```
  }];
  let arguments = (ins StrArrayAttr:$coords, Layout_ExprArrayAttr:$extents,
                       FlatSymbolRefAttr:$from_buffer,
                       Layout_RankAttr:$from_rank, Layout_ExprAttr:$from_index,
                       FlatSymbolRefAttr:$to_buffer,
                       Layout_RankAttr:$to_rank, Layout_ExprAttr:$to_index,
                       Layout_CombineAttr:$combine);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Layout_EpilogueOp : Layout_Op<"epilogue", [HasParent<"CollectiveOp">]> {
  let summary = "the epilogue of the name clause before it: row-wise f32 "
                "work on what a rank receives, before it is stored";
  let description = [{
    Belongs to the `layout.names` op just before it (a reduce clause). The
    clause's leading coordinates `rows` are the row coordinates; the others
    range over one row. The statements run in order for every name the
    rank receives: `let NAME = VALUE` binds an f32 value, `store @B[INDEX]
    = VALUE` rounds a value once to output B's element type and writes it
    on this rank. In a value, `recv` is the received value (the
    contributions combined in f32, not rounded), `B[i]` an element of this
    rank's input B, `/` a true division; `sqrt`, `abs`, `min`, `max` and
    the row reductions `rowsum`, `rowmax` are functions
    (`docs/language.md`, "Epilogues"). The collective's verifier checks the
    rules (`spec/lib/Epilogue.cpp`).

    ```mlir
    layout.names (n, i) in [N, H] from @x[*][n*H + i] to @y[*][n*H + i] reduce<sum>
    layout.epilogue rows (n) [let h = recv + res[n*H + i],
                              store @res_out[n*H + i] = h,
                              store @y[n*H + i] = h/sqrt(rowsum(h*h)/H + eps[0])*w[i]]
    ```
  }];
  let arguments = (ins StrArrayAttr:$rows, StrArrayAttr:$targets,
                       DenseBoolArrayAttr:$stores,
                       Layout_ExprArrayAttr:$indexes,
                       Layout_ExprArrayAttr:$values);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // PURLIN_DIALECT_LAYOUT_OPS_TD
