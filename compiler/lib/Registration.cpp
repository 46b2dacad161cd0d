#include "purlin/Registration.h"

#include "purlin/Dialect/Layout/LayoutOps.h"

#include "mlir/IR/DialectRegistry.h"

namespace purlin {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<layout::LayoutDialect>();
  // Add the snac dialect here.
}

void registerAllPasses() {
  // Add the generated registerPasses() of each pass library here.
}

} // namespace purlin
