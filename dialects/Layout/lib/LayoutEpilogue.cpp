// Custom assembly and verifier of the layout dialect's epilogue op (the
// rest: LayoutOps.cpp). Expressions parse with the spec's parser and print
// canonically, as there.
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/spec/ExprParse.h"
#include "purlin/spec/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace purlin;
using namespace purlin::layout;

//===----------------------------------------------------------------------===//
// EpilogueOp: rows (n, ...) [let NAME = VALUE, store @B[INDEX] = VALUE, ...]
//===----------------------------------------------------------------------===//
ParseResult EpilogueOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  MLIRContext *ctx = p.getContext();
  SmallVector<Attribute> rows, targets, indexes, values;
  SmallVector<bool> stores;
  auto row = [&]() -> ParseResult {
    StringRef c;
    if (failed(p.parseKeyword(&c)))
      return failure();
    rows.push_back(b.getStringAttr(c));
    return success();
  };
  if (failed(p.parseKeyword("rows")))
    return failure();
  if (succeeded(p.parseOptionalLParen())) {
    if (failed(p.parseCommaSeparatedList(row)) || failed(p.parseRParen()))
      return failure();
  } else if (failed(row())) {
    return failure();
  }
  auto stmt = [&]() -> ParseResult {
    Expr index = Expr::constant(0), value;
    if (succeeded(p.parseOptionalKeyword("let"))) {
      StringRef n;
      if (failed(p.parseKeyword(&n)))
        return failure();
      targets.push_back(b.getStringAttr(n));
      stores.push_back(false);
    } else {
      StringAttr buf;
      if (failed(p.parseKeyword("store")) || failed(p.parseSymbolName(buf)) ||
          failed(p.parseLSquare()) || failed(parseExpr(p, index)) ||
          failed(p.parseRSquare()))
        return failure();
      targets.push_back(buf);
      stores.push_back(true);
    }
    if (failed(p.parseEqual()) || failed(parseExpr(p, value)))
      return failure();
    indexes.push_back(ExprAttr::get(ctx, index));
    values.push_back(ExprAttr::get(ctx, value));
    return success();
  };
  if (failed(p.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, stmt)) ||
      failed(p.parseOptionalAttrDict(result.attributes)))
    return failure();
  result.addAttribute("rows", b.getArrayAttr(rows));
  result.addAttribute("targets", b.getArrayAttr(targets));
  result.addAttribute("stores", DenseBoolArrayAttr::get(ctx, stores));
  result.addAttribute("indexes", b.getArrayAttr(indexes));
  result.addAttribute("values", b.getArrayAttr(values));
  return success();
}

void EpilogueOp::print(OpAsmPrinter &p) {
  ArrayAttr rows = getRows();
  p << " rows " << (rows.size() != 1 ? "(" : "");
  llvm::interleaveComma(
      rows, p, [&](Attribute a) { p << cast<StringAttr>(a).getValue(); });
  p << (rows.size() != 1 ? ")" : "") << " [";
  ArrayRef<bool> stores = getStores();
  for (size_t i = 0; i < stores.size(); ++i) {
    p << (i ? ", " : "");
    StringRef t = cast<StringAttr>(getTargets()[i]).getValue();
    if (stores[i])
      p << "store @" << t << "["
        << exprText(cast<ExprAttr>(getIndexes()[i]).getValue()) << "]";
    else
      p << "let " << t;
    p << " = " << exprText(cast<ExprAttr>(getValues()[i]).getValue());
  }
  p << "]";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"rows", "targets", "stores", "indexes", "values"});
}

LogicalResult EpilogueOp::verify() {
  size_t n = getStores().size();
  if (getTargets().size() != n || getIndexes().size() != n ||
      getValues().size() != n)
    return emitOpError() << "has " << getTargets().size() << " targets, "
                         << n << " store marks, " << getIndexes().size()
                         << " indexes and " << getValues().size()
                         << " values; they must agree";
  if (getRows().empty())
    return emitOpError() << "needs at least one row coordinate";
  Operation *prev = (*this)->getPrevNode();
  if (!prev || !isa<NamesOp>(prev))
    return emitOpError() << "must follow the 'layout.names' op whose names "
                            "it applies to";
  // The rules of the statements are the collective's (checkEpilogue).
  return success();
}
