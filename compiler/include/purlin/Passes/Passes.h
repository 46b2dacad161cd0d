// The passes of purlin; declared in Passes.td.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "purlin/Dialect/Snac/SnacOps.h"
#include "purlin/spec/Plan.h"

namespace purlin {
#define GEN_PASS_DECL
#include "purlin/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "purlin/Passes/Passes.h.inc"
} // namespace purlin
