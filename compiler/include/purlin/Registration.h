// The one place that lists purlin's dialects, passes and pipelines, for
// purlin-opt, purlinc and tests alike (compiled into PurlinPipeline).
#pragma once

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace purlin {

/// Adds every purlin dialect (and the upstream dialects they need).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every purlin pass and pipeline with the global registry.
void registerAllPasses();

} // namespace purlin
