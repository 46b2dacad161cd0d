#include "purlin/Registration.h"

#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/Dialect/Snac/SnacOps.h"
#include "purlin/Passes/Passes.h"
#include "purlin/Pipeline.h"

#include "mlir/IR/DialectRegistry.h"

namespace purlin {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<layout::LayoutDialect, snac::SnacDialect>();
}

void registerAllPasses() {
  registerPurlinPasses();
  registerPipeline();
}

} // namespace purlin
