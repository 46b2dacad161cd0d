// The snac dialect: per-rank orchestration (see SnacDialect.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "purlin/Dialect/Snac/SnacEnums.h.inc"

#include "purlin/Dialect/Snac/SnacDialect.h.inc"

#define GET_OP_CLASSES
#include "purlin/Dialect/Snac/Snac.h.inc"
