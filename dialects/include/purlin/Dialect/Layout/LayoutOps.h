// The layout dialect: a collective as named layouts (see LayoutDialect.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "purlin/Dialect/Layout/LayoutDialect.h.inc"

#define GET_OP_CLASSES
#include "purlin/Dialect/Layout/Layout.h.inc"
