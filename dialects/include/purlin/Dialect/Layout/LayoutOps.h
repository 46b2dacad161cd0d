// The layout dialect: a collective as named layouts (see LayoutDialect.td).
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/DType.h"
#include "purlin/spec/Expr.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace purlin {
/// Expression attributes are uniqued on the expression's structure.
inline llvm::hash_code hash_value(const Expr &e) { return e.hash(); }
} // namespace purlin

#include "purlin/Dialect/Layout/LayoutEnums.h.inc"

#include "purlin/Dialect/Layout/LayoutDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "purlin/Dialect/Layout/LayoutAttrs.h.inc"

#define GET_OP_CLASSES
#include "purlin/Dialect/Layout/Layout.h.inc"

namespace purlin {
namespace layout {

/// The MLIR type of an element type, and back (std::nullopt: a type purlin
/// does not support). The one place that pairs the spec's element types
/// with MLIR's.
mlir::Type elementType(mlir::MLIRContext *ctx, DType t);
std::optional<DType> elementDType(mlir::Type t);

/// The spec's expression parser (purlin/spec/ExprParse.h) over MLIR's
/// assembly parser: the token `mod` is the floor modulo; problems are
/// reported at the token.
mlir::ParseResult parseExpr(mlir::AsmParser &p, Expr &out);
/// An expression as the custom syntax prints it (`mod` for '%').
std::string exprText(const Expr &e);
/// The spec's rank-selector parser (ExprParse.h, `*`, an expression or a
/// set in braces) over MLIR's assembly parser.
mlir::ParseResult parseRankSel(mlir::AsmParser &p, RankSel &out);

} // namespace layout
} // namespace purlin
