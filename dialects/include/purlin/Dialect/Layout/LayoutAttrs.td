#ifndef PURLIN_DIALECT_LAYOUT_ATTRS_TD
#define PURLIN_DIALECT_LAYOUT_ATTRS_TD

include "purlin/Dialect/Layout/LayoutDialect.td"

//===----------------------------------------------------------------------===//
// #layout.expr
//===----------------------------------------------------------------------===//
def Layout_ExprAttr : Layout_Attr<"Expr", "expr"> {
  let summary = "an integer expression of parameters and coordinates";
  let description = [{
    An extent, a size, an index or a rank expression: the spec's expression
    tree (`purlin::Expr`: constants, names, table lookups, `+ - * / mod`,
    negation), uniqued by structure. It parses with the spec's one parser
    of the grammar (`purlin/spec/ExprParse.h`: the depth limit, the range
    of literals and the messages of the language) and prints canonically,
    with `mod` for the floor modulo. Names are not resolved here: the
    collective's verifier checks that each one is a coordinate, a scalar
    parameter or a table of the right rank.

    ```mlir
    #layout.expr<d*M + i>
    #layout.expr<cnt[s][d]>
    #layout.expr<(C + 1) mod 2>
    ```
  }];
  let parameters = (ins AttrParameter<"::purlin::Expr", "the expression">:$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  // Op getters return the expression itself (`getSize()`), the attribute
  // through `get...Attr()`; builders take an Expr.
  let returnType = "::purlin::Expr";
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall =
      "::purlin::layout::ExprAttr::get($_builder.getContext(), $0)";
}

def Layout_ExprArrayAttr : TypedArrayAttrBase<Layout_ExprAttr,
                                              "an array of expressions">;

//===----------------------------------------------------------------------===//
// #layout.rank
//===----------------------------------------------------------------------===//
def Layout_RankAttr : Layout_Attr<"Rank", "rank"> {
  let summary = "which ranks a name is read from or written to";
  let description = [{
    A rank selector of a name clause: `every` rank, the rank given by the
    clause's coordinate number `coord`, an expression of parameters and
    coordinates (`expr`, such as `root`, `R - 1` or `(r + 1) mod R`), or a
    set of ranks (`set {e | v in [E]}`: the ranks e for v = 0 .. E - 1, E an
    expression of parameters). In a `layout.names` op they print as `*`,
    the coordinate's name, the expression and the set in braces. The
    collective's verifier checks the language's rules (quasi-affine in the
    coordinates, the names each may use).

    ```mlir
    #layout.rank<every>
    #layout.rank<coord 0>
    #layout.rank<expr R - 1>
    #layout.rank<set {g*G + j | j in [G]}>
    ```
  }];
  let parameters = (ins "::purlin::layout::RankKind":$kind, "int64_t":$coord,
                        AttrParameter<"::purlin::Expr", "">:$expr,
                        StringRefParameter<"a set's variable">:$var,
                        AttrParameter<"::purlin::Expr", "">:$extent);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static RankAttr getEvery(::mlir::MLIRContext *ctx);
    static RankAttr getCoordinate(::mlir::MLIRContext *ctx, int64_t coord);
    static RankAttr getExpression(::mlir::MLIRContext *ctx,
                                  const ::purlin::Expr &e);
    static RankAttr getSet(::mlir::MLIRContext *ctx, const ::purlin::Expr &e,
                           ::llvm::StringRef var,
                           const ::purlin::Expr &extent);
    bool isEvery() const { return getKind() == RankKind::every; }
    bool isCoord() const { return getKind() == RankKind::coord; }
    bool isSet() const { return getKind() == RankKind::set; }
  }];
}

//===----------------------------------------------------------------------===//
// #layout.combine
//===----------------------------------------------------------------------===//
def Layout_CombineAttr : Layout_Attr<"Combine", "combine"> {
  let summary = "how the contributions of a name combine";
  let description = [{
    `copy` (a name has exactly one contributor), a reduction op (`sum`,
    `prod`, `min`, `max`, `avg`: contributions combined in ascending rank
    order) or a reference to a `redop` parameter, whose value decides. In a
    `layout.names` op they print as `copy`, `reduce<sum>`, `reduce<@op>`.

    ```mlir
    #layout.combine<copy>
    #layout.combine<max>
    #layout.combine<@op>
    ```
  }];
  let parameters = (ins "::purlin::layout::RedOp":$op,
                        "::mlir::FlatSymbolRefAttr":$param);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static CombineAttr getFor(::mlir::MLIRContext *ctx, RedOp op);
    static CombineAttr getForParam(::mlir::MLIRContext *ctx,
                                   ::llvm::StringRef name);
  }];
}

#endif // PURLIN_DIALECT_LAYOUT_ATTRS_TD
