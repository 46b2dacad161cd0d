// Between the layout dialect and the core model (purlin::Collective): the
// frontend imports a parsed collective, and every pass that needs the
// semantics (the verifier, SNAC inference) exports it back.
#pragma once

#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/Collective.h"

#include "mlir/IR/Builders.h"

namespace purlin {
namespace layout {

/// Builds a `layout.collective` for `c` at the builder's insertion point.
/// Locations are FileLineColLoc(filename, line, col) from each SrcLoc
/// (UnknownLoc where a SrcLoc has no line).
CollectiveOp importCollective(mlir::OpBuilder &b, const Collective &c,
                              llvm::StringRef filename);

/// Converts `op` to the core model. Every SrcLoc carries the line and column
/// of its op's FileLineColLoc (0 when there is none) and, as its tag, the
/// position of that op in the body (-1 for the collective op itself);
/// opForTag maps a tag back. Fails, with a diagnostic on the offending op,
/// only on an expression that does not parse (ops that passed their own
/// verifiers never fail).
mlir::LogicalResult exportCollective(CollectiveOp op, Collective &out);

/// The op a SrcLoc::tag set by exportCollective refers to.
mlir::Operation *opForTag(CollectiveOp op, int tag);

/// Parses an expression stored in an attribute of the layout dialect.
/// Returns a null Expr and sets `error` on failure.
Expr parseExprAttr(llvm::StringRef text, std::string &error);

} // namespace layout
} // namespace purlin
