#ifndef PURLIN_DIALECT_LAYOUT_OPS_TD
#define PURLIN_DIALECT_LAYOUT_OPS_TD

include "purlin/Dialect/Layout/LayoutDialect.td"
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
    converts the body to a `purlin::Collective` and runs the core's
    `checkStructure`, then `checkBinding` under the sample bindings of
    `sampleBindings` (values bound with `= ...` are kept); each problem is
    reported at the op it comes from.

    ```mlir
    layout.collective @all_reduce {
      layout.param @R : ranks
      layout.param @C : count
      layout.param @T : type
      layout.param @op : redop
      layout.buffer @x : in T [C]
      layout.buffer @y : out T [C]
      layout.names i in [C] from @x[*][i] to @y[*][i] reduce<op>
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
    time follows `=`: an integer, an element type, an op, or the table's
    entries in row-major order.

    ```mlir
    layout.param @R : ranks = 8
    layout.param @M : count
    layout.param @T : type = bf16
    layout.param @op : redop = max
    layout.param @cnt : table [R, R] max M
    layout.param @lens : table [2] max 9 = [3, 9]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kind,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$dims,
                       OptionalAttr<StrAttr>:$max,
                       OptionalAttr<StrAttr>:$bound);
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
    `type` parameter or a concrete type: f32, f16, bf16, f8e4m3, f8e5m2, i8,
    u8, i32, i64, f64) and its number of elements per rank.

    ```mlir
    layout.buffer @x : in T [C]
    layout.buffer @y : out T [R*C]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$role,
                       StrAttr:$elem_type, StrAttr:$size);
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
    parameters; indexes are affine in the coordinates. The op is `copy` (one
    contributor) or `reduce<op>` where op is sum, prod, min, max, avg or a
    `redop` parameter.

    ```mlir
    layout.names (r, i) in [R, C] from @x[r][i] to @y[*][r*C + i] copy
    layout.names i in [C] from @x[*][i] to @y[root][i] reduce<sum>
    ```
  }];
  let arguments = (ins StrArrayAttr:$coords, StrArrayAttr:$extents,
                       FlatSymbolRefAttr:$from_buffer, StrAttr:$from_rank,
                       StrAttr:$from_index,
                       FlatSymbolRefAttr:$to_buffer, StrAttr:$to_rank,
                       StrAttr:$to_index,
                       StrAttr:$combine);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // PURLIN_DIALECT_LAYOUT_OPS_TD
