// purlin-opt: parses, verifies, transforms and prints the purlin dialects;
// the lit tests drive it. Dialects and passes come from Registration.cpp.
#include "purlin/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  purlin::registerAllDialects(registry);
  purlin::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "purlin optimizer driver\n", registry));
}
