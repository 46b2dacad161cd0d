#include "purlin/Dialect/Layout/LayoutOps.h"

using namespace mlir;
using namespace purlin::layout;

#include "purlin/Dialect/Layout/LayoutDialect.cpp.inc"

void LayoutDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "purlin/Dialect/Layout/Layout.cpp.inc"
      >();
}
