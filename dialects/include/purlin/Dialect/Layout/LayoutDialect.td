#ifndef PURLIN_DIALECT_LAYOUT_DIALECT_TD
#define PURLIN_DIALECT_LAYOUT_DIALECT_TD

include "mlir/IR/OpBase.td"

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

    Index expressions (extents, ranks, indexes, sizes) are stored as their
    canonical text (`purlin::Expr::str()`) and printed as tokens; `/` is
    floor division and `mod` is the floor modulo (`%` in `.purlin`).

    The rules (one contributor per copy name, every name has a contributor
    and a destination in range, no two names write one place, maps inside
    their buffers, matching element types, ...) are the core's
    `checkStructure` and `checkBinding`; the `layout.collective` verifier
    runs them under small sample bindings and reports each problem at the op
    it comes from.
  }];
}

class Layout_Op<string mnemonic, list<Trait> traits = []>
    : Op<Layout_Dialect, mnemonic, traits>;

#endif // PURLIN_DIALECT_LAYOUT_DIALECT_TD
