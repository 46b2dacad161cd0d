// The layout dialect as a view of the spec's model (purlin::Collective): the
// frontend imports a parsed collective, and every pass that needs the
// semantics (the verifier, SNAC inference, the checker, lowering) exports it.
// Both directions are lossless: every field of the model has a typed
// attribute, and expressions are the spec's own trees.
#pragma once

#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/Collective.h"

#include "mlir/IR/Builders.h"

namespace purlin {
namespace layout {

/// Builds a `layout.collective` for `c` at the builder's insertion point.
/// Locations are FileLineColLoc(filename, line, col) from each SrcLoc
/// (UnknownLoc where a SrcLoc has no line). Fails, with a diagnostic at the
/// parameter, only on a bound value that does not fit its kind.
mlir::FailureOr<CollectiveOp> importCollective(mlir::OpBuilder &b,
                                               const Collective &c,
                                               llvm::StringRef filename);

/// Reads `op` as the spec's model. Every SrcLoc carries the line and column
/// of its op's FileLineColLoc (0 when there is none) and, as its tag, the
/// position of that op in the body (-1 for the collective op itself);
/// opForTag maps a tag back. Fails only on an op that is not verified (an
/// op of another dialect in the body, a coordinate out of range).
mlir::LogicalResult exportCollective(CollectiveOp op, Collective &out);

/// The op a SrcLoc::tag set by exportCollective refers to.
mlir::Operation *opForTag(CollectiveOp op, int tag);

} // namespace layout
} // namespace purlin
