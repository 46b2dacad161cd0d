// Between the snac dialect and the plain plan (purlin/Plan/Plan.h):
// inference builds programs from plans, the checker and the targets read
// plans back from programs.
#pragma once

#include "purlin/Dialect/Snac/SnacOps.h"
#include "purlin/spec/Plan.h"

#include "mlir/IR/Builders.h"

namespace purlin {
namespace snac {

/// Builds `snac.program @name of @collective` for `p` at the insertion point.
ProgramOp importPlan(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef name, llvm::StringRef collective,
                     const Plan &p);

/// Reads a program back. Each Step's SrcLoc::tag is the position of its op
/// in `steps` (the program's step ops in order, chunk loops flattened).
mlir::LogicalResult exportPlan(ProgramOp op, Plan &out,
                               llvm::SmallVectorImpl<mlir::Operation *> &steps);

} // namespace snac
} // namespace purlin
