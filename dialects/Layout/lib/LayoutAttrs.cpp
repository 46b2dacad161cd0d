// The layout dialect's attributes (LayoutAttrs.td) and the spec's expression
// parser over MLIR's assembly parser.
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/ExprParse.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace purlin;
using namespace purlin::layout;

//===----------------------------------------------------------------------===//
// Expressions in the custom syntax
//===----------------------------------------------------------------------===//
namespace {
// MLIR's tokens as the spec's parser sees them. The grammar, the limits and
// the messages stay the spec's; positions are MLIR locations. MLIR has no
// '%' token: the floor modulo is the keyword `mod` (any other word is a
// name, `mod` included where a name is expected).
class AsmTokens : public ExprTokens {
public:
  explicit AsmTokens(AsmParser &p) : p(p) {}

  bool accept(ExprPunct k) override {
    switch (k) {
    case ExprPunct::Plus:
      return succeeded(p.parseOptionalPlus());
    case ExprPunct::Minus:
      return succeeded(p.parseOptionalMinus());
    case ExprPunct::Star:
      return succeeded(p.parseOptionalStar());
    case ExprPunct::Slash:
      return succeeded(p.parseOptionalSlash());
    case ExprPunct::Percent:
      return succeeded(p.parseOptionalKeyword("mod"));
    case ExprPunct::LParen:
      return succeeded(p.parseOptionalLParen());
    case ExprPunct::RParen:
      return succeeded(p.parseOptionalRParen());
    case ExprPunct::LSquare:
      return succeeded(p.parseOptionalLSquare());
    case ExprPunct::RSquare:
      return succeeded(p.parseOptionalRSquare());
    case ExprPunct::LBrace:
      return succeeded(p.parseOptionalLBrace());
    case ExprPunct::RBrace:
      return succeeded(p.parseOptionalRBrace());
    case ExprPunct::Bar:
      return succeeded(p.parseOptionalVerticalBar());
    case ExprPunct::Comma:
      return succeeded(p.parseOptionalComma());
    }
    return false;
  }
  bool acceptInt(int64_t &v) override {
    // The parser takes every '-' as an operator first, so no sign reaches
    // MLIR's integer parser; APInt keeps literals beyond int64 for the
    // spec's range check.
    APInt a;
    OptionalParseResult r = p.parseOptionalInteger(a);
    if (!r.has_value())
      return false;
    if (failed(*r)) {
      reported = true;
      v = INT64_MAX;
      return true;
    }
    v = a.getActiveBits() > 63 ? INT64_MAX : (int64_t)a.getZExtValue();
    return true;
  }
  bool acceptIdent(std::string &name) override {
    StringRef w;
    if (failed(p.parseOptionalKeyword(&w)))
      return false;
    name = w.str();
    return true;
  }
  ExprPos here() override {
    return ExprPos{(int64_t)(intptr_t)p.getCurrentLocation().getPointer(), 0};
  }
  void expected(const std::string &what) override {
    if (!reported)
      p.emitError(p.getCurrentLocation(), "expected " + what);
    reported = true;
  }
  void error(ExprPos at, const std::string &message) override {
    if (!reported)
      p.emitError(SMLoc::getFromPointer((const char *)(intptr_t)at.a), message);
    reported = true;
  }

private:
  AsmParser &p;
  bool reported = false;
};
} // namespace

ParseResult purlin::layout::parseExpr(AsmParser &p, Expr &out) {
  AsmTokens in(p);
  return success(purlin::parseExpr(in, out));
}

std::string purlin::layout::exprText(const Expr &e) { return e.str(" mod "); }

ParseResult purlin::layout::parseRankSel(AsmParser &p, RankSel &out) {
  AsmTokens in(p);
  return success(purlin::parseRankSel(in, out, true));
}

//===----------------------------------------------------------------------===//
// #layout.expr<...>
//===----------------------------------------------------------------------===//
Attribute ExprAttr::parse(AsmParser &p, Type) {
  Expr e;
  if (failed(p.parseLess()) || failed(parseExpr(p, e)) ||
      failed(p.parseGreater()))
    return {};
  return ExprAttr::get(p.getContext(), e);
}

void ExprAttr::print(AsmPrinter &p) const {
  p << "<" << exprText(getValue()) << ">";
}

LogicalResult ExprAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               Expr value) {
  if (value.isNull())
    return emitError() << "an expression attribute needs an expression";
  return success();
}

//===----------------------------------------------------------------------===//
// #layout.rank<every | coord N | expr E | set {E | v in [N]}>
//===----------------------------------------------------------------------===//
RankAttr RankAttr::getEvery(MLIRContext *ctx) {
  return get(ctx, RankKind::every, -1, Expr(), "", Expr());
}
RankAttr RankAttr::getCoordinate(MLIRContext *ctx, int64_t coord) {
  return get(ctx, RankKind::coord, coord, Expr(), "", Expr());
}
RankAttr RankAttr::getExpression(MLIRContext *ctx, const Expr &e) {
  return get(ctx, RankKind::expr, -1, e, "", Expr());
}
RankAttr RankAttr::getSet(MLIRContext *ctx, const Expr &e, StringRef var,
                          const Expr &extent) {
  return get(ctx, RankKind::set, -1, e, var, extent);
}

Attribute RankAttr::parse(AsmParser &p, Type) {
  MLIRContext *ctx = p.getContext();
  SMLoc loc = p.getCurrentLocation();
  StringRef kind;
  if (failed(p.parseLess()) || failed(p.parseKeyword(&kind)))
    return {};
  RankAttr r;
  if (kind == "every") {
    r = getEvery(ctx);
  } else if (kind == "coord") {
    int64_t c = 0; // set by parseInteger (gcc -Wmaybe-uninitialized)
    if (failed(p.parseInteger(c)))
      return {};
    r = getChecked([&] { return p.emitError(loc); }, ctx, RankKind::coord, c,
                   Expr(), "", Expr());
  } else if (kind == "expr") {
    Expr e;
    if (failed(parseExpr(p, e)))
      return {};
    r = getExpression(ctx, e);
  } else if (kind == "set") {
    SMLoc at = p.getCurrentLocation();
    RankSel s;
    if (failed(parseRankSel(p, s)))
      return {};
    if (!s.isSet()) {
      p.emitError(at, "expected a set '{' expr '|' name 'in' '[' expr ']' '}'");
      return {};
    }
    r = getSet(ctx, s.rank, s.var, s.extent);
  } else {
    p.emitError(loc, "expected 'every', 'coord', 'expr' or 'set', got '")
        << kind << "'";
    return {};
  }
  if (!r || failed(p.parseGreater()))
    return {};
  return r;
}

void RankAttr::print(AsmPrinter &p) const {
  p << "<" << stringifyRankKind(getKind());
  if (isCoord())
    p << " " << getCoord();
  else if (getKind() == RankKind::expr)
    p << " " << exprText(getExpr());
  else if (isSet())
    p << " {" << exprText(getExpr()) << " | " << getVar() << " in ["
      << exprText(getExtent()) << "]}";
  p << ">";
}

LogicalResult RankAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               RankKind kind, int64_t coord, Expr e,
                               StringRef var, Expr extent) {
  if (kind == RankKind::coord && coord < 0)
    return emitError() << "a coordinate rank needs a coordinate number >= 0, "
                          "got "
                       << coord;
  if (kind != RankKind::coord && coord != -1)
    return emitError() << "only a coordinate rank has a coordinate number";
  const bool hasExpr = kind == RankKind::expr || kind == RankKind::set;
  if (hasExpr == e.isNull())
    return emitError() << (hasExpr ? "an expression or set rank needs an expression"
                                   : "only an expression or set rank has an expression");
  if ((kind == RankKind::set) != (!var.empty() && !extent.isNull()))
    return emitError() << (kind == RankKind::set
                               ? "a set rank needs a variable and its extent"
                               : "only a set rank has a variable and an extent");
  if (kind == RankKind::set && !isExprName(var.str()))
    return emitError() << "a set's variable '" << var << "' is not a name";
  return success();
}

//===----------------------------------------------------------------------===//
// #layout.combine<copy | sum | ... | @param>
//===----------------------------------------------------------------------===//
CombineAttr CombineAttr::getFor(MLIRContext *ctx, RedOp op) {
  return get(ctx, op, FlatSymbolRefAttr());
}
// A reduction by a parameter's op keeps `sum` as its op: one canonical
// attribute per parameter (the spec's Clause does the same).
CombineAttr CombineAttr::getForParam(MLIRContext *ctx, StringRef name) {
  return get(ctx, RedOp::sum, FlatSymbolRefAttr::get(ctx, name));
}

Attribute CombineAttr::parse(AsmParser &p, Type) {
  MLIRContext *ctx = p.getContext();
  if (failed(p.parseLess()))
    return {};
  StringAttr param;
  CombineAttr c;
  if (succeeded(p.parseOptionalSymbolName(param))) {
    c = getForParam(ctx, param.getValue());
  } else {
    SMLoc loc = p.getCurrentLocation();
    StringRef w;
    if (failed(p.parseKeyword(&w)))
      return {};
    std::optional<RedOp> op = symbolizeRedOp(w);
    if (!op) {
      p.emitError(loc, "expected copy, sum, prod, min, max, avg or a redop "
                       "parameter (@name), got '")
          << w << "'";
      return {};
    }
    c = getFor(ctx, *op);
  }
  if (failed(p.parseGreater()))
    return {};
  return c;
}

void CombineAttr::print(AsmPrinter &p) const {
  p << "<";
  if (getParam())
    p.printAttribute(getParam());
  else
    p << stringifyRedOp(getOp());
  p << ">";
}

LogicalResult CombineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  RedOp op, FlatSymbolRefAttr param) {
  if (param && op != RedOp::sum)
    return emitError() << "a combine by a redop parameter keeps 'sum' as its "
                          "op";
  return success();
}

#define GET_ATTRDEF_CLASSES
#include "purlin/Dialect/Layout/LayoutAttrs.cpp.inc"

void LayoutDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "purlin/Dialect/Layout/LayoutAttrs.cpp.inc"
      >();
}
