// The passes of purlin; declared in Passes.td.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "purlin/Dialect/Snac/SnacOps.h"
#include "purlin/spec/Plan.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace purlin {
#define GEN_PASS_DECL
#include "purlin/Passes/Passes.h.inc"

/// purlin-emit printing to `os` rather than stdout when `out` is "-" (what
/// purlinc --emit=atom uses to honour -o FILE).
std::unique_ptr<mlir::Pass> createSnacEmit(const SnacEmitOptions &options,
                                           llvm::raw_ostream *os);

#define GEN_PASS_REGISTRATION
#include "purlin/Passes/Passes.h.inc"
} // namespace purlin
