#ifndef PURLIN_DIALECT_LAYOUT_DIALECT_TD
#define PURLIN_DIALECT_LAYOUT_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Layout_Dialect : Dialect {
  let name = "layout";
  let cppNamespace = "::purlin::layout";
  let summary = "A collective as named layouts: what moves, not how";
  let description = [{
    The layout dialect is the first IR of the purlin compiler and mirrors the
    `.purlin` language one to one. A `layout.collective` holds the
    collective's parameters (`layout.param`), its buffers (`layout.buffer`)
    and its name clauses (`layout.names`). A name clause enumerates the
    points of a small index space and maps each one to its contributors and
    its destinations, with `copy` or `reduce<op>`.

    Every operand of the language is a typed attribute:

    - extents, sizes, indexes and rank expressions: `#layout.expr`, whose
      storage is the spec's expression tree (`purlin::Expr`), parsed by the
      spec's one parser of the grammar and printed canonically, with `mod`
      for the floor modulo (`%` in `.purlin`: MLIR has no `%` token). Not
      affine maps: an extent may be a table lookup (`cnt[s][d]`), `/` and
      `mod` are floor division and modulo for any sign of the divisor (an
      affine map's are defined for positive divisors only), and parameters
      and coordinates keep their names, so the IR reads like the source
      and converts to the spec's model without a rename table. Affinity in
      the coordinates is a rule the verifier checks instead;
    - element types: MLIR types (`f32`, `f16`, `bf16`, `f8E4M3FN`,
      `f8E5M2`, `i8`, `ui8`, `i32`, `i64`, `f64`) or a reference to a
      `type` parameter (`@T`);
    - rank selectors: `#layout.rank` (every rank, a coordinate of the
      clause, an expression of parameters and coordinates, or a set of
      ranks over a bound variable);
    - the combine: `#layout.combine` (`copy`, a reduction op, or a `redop`
      parameter);
    - parameter kinds, buffer roles and reduction ops: enum attributes.

    The rules (one contributor per copy name, every name has a contributor
    and a destination in range, no two names write one place, maps inside
    their buffers, matching element types, ...) are the spec's
    `checkStructure` and `checkBinding`; the `layout.collective` verifier
    runs them under small sample bindings and reports each problem at the op
    it comes from.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Layout_Op<string mnemonic, list<Trait> traits = []>
    : Op<Layout_Dialect, mnemonic, traits>;

class Layout_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Layout_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums. Their values are the spec's (purlin/spec/Collective.h, DType.h),
// tied by static_asserts in LayoutDialect.cpp.
//===----------------------------------------------------------------------===//
def Layout_ParamKind : I32EnumAttr<"ParamKind", "the kind of a parameter", [
    I32EnumAttrCase<"ranks", 0>, I32EnumAttrCase<"count", 1>,
    I32EnumAttrCase<"root", 2>, I32EnumAttrCase<"type", 3>,
    I32EnumAttrCase<"redop", 4>, I32EnumAttrCase<"table", 5>,
    I32EnumAttrCase<"group", 6>]> {
  let cppNamespace = "::purlin::layout";
  let genSpecializedAttr = 0;
}
def Layout_ParamKindAttr : EnumAttr<Layout_Dialect, Layout_ParamKind,
                                    "param_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def Layout_BufferRole : I32EnumAttr<"BufferRole",
    "whether a buffer is read (in) or written (out)", [
    I32EnumAttrCase<"in", 0>, I32EnumAttrCase<"out", 1>]> {
  let cppNamespace = "::purlin::layout";
  let genSpecializedAttr = 0;
}
def Layout_BufferRoleAttr : EnumAttr<Layout_Dialect, Layout_BufferRole,
                                     "role"> {
  let assemblyFormat = "`<` $value `>`";
}

def Layout_RedOp : I32EnumAttr<"RedOp",
    "how the contributions of a name combine", [
    I32EnumAttrCase<"copy", 0>, I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"prod", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"max", 4>, I32EnumAttrCase<"avg", 5>]> {
  let cppNamespace = "::purlin::layout";
  let genSpecializedAttr = 0;
}
def Layout_RedOpAttr : EnumAttr<Layout_Dialect, Layout_RedOp, "redop"> {
  let assemblyFormat = "`<` $value `>`";
}

def Layout_RankKind : I32EnumAttr<"RankKind",
    "how a rank selector picks ranks", [
    I32EnumAttrCase<"every", 0>, I32EnumAttrCase<"coord", 1>,
    I32EnumAttrCase<"expr", 2>, I32EnumAttrCase<"set", 3>]> {
  let cppNamespace = "::purlin::layout";
  let genSpecializedAttr = 0;
}

#endif // PURLIN_DIALECT_LAYOUT_DIALECT_TD
