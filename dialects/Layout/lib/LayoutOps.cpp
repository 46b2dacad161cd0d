// Custom assembly and verifiers of the layout dialect's ops. Expressions
// parse with the spec's parser (parseExpr over MLIR's tokens) and print
// canonically with `mod` for the floor modulo; everything else is a typed
// attribute (LayoutAttrs.td).
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/spec/ExprParse.h"
#include "purlin/spec/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace purlin;
using namespace purlin::layout;

namespace {
/// `[` expr (`,` expr)* `]` into an array of #layout.expr.
ParseResult parseExprList(OpAsmParser &p, ArrayAttr &out) {
  SmallVector<Attribute> items;
  if (failed(p.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            Expr e;
            if (failed(parseExpr(p, e)))
              return failure();
            items.push_back(ExprAttr::get(p.getContext(), e));
            return success();
          })))
    return failure();
  out = p.getBuilder().getArrayAttr(items);
  return success();
}

void printExprList(OpAsmPrinter &p, ArrayAttr list) {
  p << "[";
  llvm::interleaveComma(list, p, [&](Attribute a) {
    p << exprText(cast<ExprAttr>(a).getValue());
  });
  p << "]";
}

/// The element types purlin supports, for messages.
const char *const kTypeList =
    "f32, f16, bf16, f8E4M3FN, f8E5M2, i8, ui8, i32, i64, f64";
} // namespace

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//
void CollectiveOp::build(OpBuilder &b, OperationState &state, StringRef name) {
  state.addAttribute(getSymNameAttrName(state.name), b.getStringAttr(name));
  Region *body = state.addRegion();
  body->push_back(new Block());
}

LogicalResult CollectiveOp::verifyRegions() {
  Collective c;
  if (failed(exportCollective(*this, c)))
    return failure();
  std::vector<Diag> errors, warnings;
  bool ok = verifyCollective(c, errors, warnings);
  // Warnings go to the location alone: attaching the op would print it, and
  // printing verifies it again.
  for (const Diag &d : warnings)
    mlir::emitWarning(opForTag(*this, d.loc.tag)->getLoc()) << d.message;
  for (const Diag &d : errors)
    opForTag(*this, d.loc.tag)->emitError(d.message);
  return success(ok && errors.empty());
}

//===----------------------------------------------------------------------===//
// ParamOp: @name : kind ([dims] max expr)? (= bound)?
//===----------------------------------------------------------------------===//
ParseResult ParamOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  MLIRContext *ctx = p.getContext();
  StringAttr name;
  StringRef kindWord;
  if (failed(p.parseSymbolName(name)) || failed(p.parseColon()))
    return failure();
  SMLoc kindLoc = p.getCurrentLocation();
  if (failed(p.parseKeyword(&kindWord)))
    return failure();
  std::optional<ParamKind> kind = symbolizeParamKind(kindWord);
  if (!kind)
    return p.emitError(kindLoc, "expected a parameter kind (ranks, count, "
                                "root, type, redop, table or group), got '")
           << kindWord << "'";
  result.addAttribute("sym_name", name);
  result.addAttribute("kind", ParamKindAttr::get(ctx, *kind));
  if (*kind == ParamKind::table) {
    ArrayAttr dims;
    Expr max;
    if (failed(parseExprList(p, dims)) || failed(p.parseKeyword("max")) ||
        failed(parseExpr(p, max)))
      return failure();
    result.addAttribute("dims", dims);
    result.addAttribute("max", ExprAttr::get(ctx, max));
  }
  if (succeeded(p.parseOptionalEqual())) {
    Attribute bound;
    switch (*kind) {
    case ParamKind::table: {
      SmallVector<int64_t> values;
      if (failed(p.parseCommaSeparatedList(
              OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
                return p.parseInteger(values.emplace_back());
              })))
        return failure();
      bound = b.getDenseI64ArrayAttr(values);
      break;
    }
    case ParamKind::type: {
      Type t;
      if (failed(p.parseType(t)))
        return failure();
      bound = TypeAttr::get(t);
      break;
    }
    case ParamKind::redop: {
      SMLoc at = p.getCurrentLocation();
      StringRef w;
      if (failed(p.parseKeyword(&w)))
        return failure();
      std::optional<RedOp> op = symbolizeRedOp(w);
      if (!op)
        return p.emitError(at, "expected a reduction op (sum, prod, min, "
                               "max or avg), got '")
               << w << "'";
      bound = RedOpAttr::get(ctx, *op);
      break;
    }
    default: {
      int64_t v;
      if (failed(p.parseInteger(v)))
        return failure();
      bound = b.getI64IntegerAttr(v);
    }
    }
    result.addAttribute("bound", bound);
  }
  return p.parseOptionalAttrDict(result.attributes);
}

void ParamOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " : " << stringifyParamKind(getKind());
  if (getKind() == ParamKind::table && getDims() && getMax()) {
    p << " ";
    printExprList(p, *getDims());
    p << " max " << exprText(*getMax());
  }
  if (Attribute bound = getBoundAttr()) {
    p << " = ";
    if (auto i = dyn_cast<IntegerAttr>(bound))
      p << i.getInt();
    else if (auto t = dyn_cast<TypeAttr>(bound))
      p.printType(t.getValue());
    else if (auto r = dyn_cast<RedOpAttr>(bound))
      p << stringifyRedOp(r.getValue());
    else if (auto a = dyn_cast<DenseI64ArrayAttr>(bound)) {
      p << "[";
      llvm::interleaveComma(a.asArrayRef(), p);
      p << "]";
    }
  }
  SmallVector<StringRef> elided = {"sym_name", "kind", "bound"};
  // Dims and max print in the custom form only for a table (the verifier
  // rejects them elsewhere; the generic form shows what is wrong).
  if (getKind() == ParamKind::table && getDims() && getMax())
    elided.append({"dims", "max"});
  p.printOptionalAttrDict((*this)->getAttrs(), elided);
}

LogicalResult ParamOp::verify() {
  ParamKind kind = getKind();
  bool table = kind == ParamKind::table;
  if (table != getMax().has_value())
    return emitOpError() << (table ? "'table' needs a bound ('max')"
                                   : "only a table has a bound ('max')");
  if (!table && getDims())
    return emitOpError() << "only a table has extents";
  if (table && !getDims())
    return emitOpError() << "'table' needs its extents ('dims')";
  Attribute bound = getBoundAttr();
  if (!bound)
    return success();
  switch (kind) {
  case ParamKind::type: {
    auto t = dyn_cast<TypeAttr>(bound);
    if (!t)
      return emitOpError() << "binds " << bound << ", not an element type";
    if (!elementDType(t.getValue()))
      return emitOpError() << "binds " << t.getValue()
                           << ", not an element type purlin supports ("
                           << kTypeList << ")";
    return success();
  }
  case ParamKind::redop: {
    auto r = dyn_cast<RedOpAttr>(bound);
    if (!r || r.getValue() == RedOp::copy) {
      InFlightDiagnostic d = emitOpError() << "binds ";
      if (r)
        d << "'" << stringifyRedOp(r.getValue()) << "'";
      else
        d << bound;
      return d << ", not a reduction op (sum, prod, min, max or avg)";
    }
    return success();
  }
  case ParamKind::table:
    if (!isa<DenseI64ArrayAttr>(bound))
      return emitOpError() << "binds " << bound
                           << ", not the table's entries (array<i64: ...>)";
    return success();
  default:
    if (!isa<IntegerAttr>(bound))
      return emitOpError() << "binds " << bound << ", not an integer";
    return success();
  }
}

//===----------------------------------------------------------------------===//
// BufferOp: @name : in|out (@T | type) [size]
//===----------------------------------------------------------------------===//
ParseResult BufferOp::parse(OpAsmParser &p, OperationState &result) {
  MLIRContext *ctx = p.getContext();
  StringAttr name;
  StringRef roleWord;
  if (failed(p.parseSymbolName(name)) || failed(p.parseColon()))
    return failure();
  SMLoc roleLoc = p.getCurrentLocation();
  if (failed(p.parseKeyword(&roleWord)))
    return failure();
  std::optional<BufferRole> role = symbolizeBufferRole(roleWord);
  if (!role)
    return p.emitError(roleLoc, "expected 'in' or 'out', got '")
           << roleWord << "'";
  // A `type` parameter by reference, or an MLIR type.
  Attribute elem;
  StringAttr param;
  if (succeeded(p.parseOptionalSymbolName(param))) {
    elem = FlatSymbolRefAttr::get(param);
  } else {
    SMLoc at = p.getCurrentLocation();
    Type t;
    OptionalParseResult r = p.parseOptionalType(t);
    if (!r.has_value()) {
      StringRef w;
      (void)p.parseOptionalKeyword(&w);
      return p.emitError(at, "expected an element type or a type parameter "
                             "(@name), got '")
             << w << "'";
    }
    if (failed(*r))
      return failure();
    elem = TypeAttr::get(t);
  }
  Expr size;
  if (failed(p.parseLSquare()) || failed(parseExpr(p, size)) ||
      failed(p.parseRSquare()))
    return failure();
  result.addAttribute("sym_name", name);
  result.addAttribute("role", BufferRoleAttr::get(ctx, *role));
  result.addAttribute("elem_type", elem);
  result.addAttribute("size", ExprAttr::get(ctx, size));
  return p.parseOptionalAttrDict(result.attributes);
}

void BufferOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " : " << stringifyBufferRole(getRole()) << " ";
  if (auto t = dyn_cast<TypeAttr>(getElemType()))
    p.printType(t.getValue());
  else
    p.printAttribute(getElemType());
  p << " [" << exprText(getSize()) << "]";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"sym_name", "role", "elem_type", "size"});
}

LogicalResult BufferOp::verify() {
  if (auto t = dyn_cast<TypeAttr>(getElemType()))
    if (!elementDType(t.getValue()))
      return emitOpError() << "has the element type " << t.getValue()
                           << ", which purlin does not support (" << kTypeList
                           << ")";
  // A reference must name a `type` parameter: the collective's verifier
  // (checkStructure) says so at this op.
  return success();
}

//===----------------------------------------------------------------------===//
// NamesOp: (c, ...) in [E, ...] from @x[rank][index] to @y[rank][index] op
//===----------------------------------------------------------------------===//
namespace {
/// `@buffer [rank] [index]`; a rank that is one of `coords` is that
/// coordinate.
ParseResult parseAccess(OpAsmParser &p, OperationState &result,
                        StringRef prefix, ArrayRef<std::string> coords) {
  MLIRContext *ctx = p.getContext();
  StringAttr buffer;
  if (failed(p.parseKeyword(prefix)) || failed(p.parseSymbolName(buffer)) ||
      failed(p.parseLSquare()))
    return failure();
  RankAttr rank;
  RankSel sel;
  if (failed(parseRankSel(p, sel)))
    return failure();
  if (sel.every) {
    rank = RankAttr::getEvery(ctx);
  } else if (sel.isSet()) {
    rank = RankAttr::getSet(ctx, sel.rank, sel.var, sel.extent);
  } else {
    const Expr &e = sel.rank;
    auto it = e.kind() == Expr::Kind::Var ? llvm::find(coords, e.name())
                                          : coords.end();
    rank = it != coords.end()
               ? RankAttr::getCoordinate(ctx, it - coords.begin())
               : RankAttr::getExpression(ctx, e);
  }
  Expr index;
  if (failed(p.parseRSquare()) || failed(p.parseLSquare()) ||
      failed(parseExpr(p, index)) || failed(p.parseRSquare()))
    return failure();
  result.addAttribute((prefix + "_buffer").str(),
                      FlatSymbolRefAttr::get(buffer));
  result.addAttribute((prefix + "_rank").str(), rank);
  result.addAttribute((prefix + "_index").str(), ExprAttr::get(ctx, index));
  return success();
}

void printAccess(OpAsmPrinter &p, StringRef prefix, FlatSymbolRefAttr buffer,
                 RankAttr rank, const Expr &index, ArrayAttr coords) {
  p << " " << prefix << " ";
  p.printAttribute(buffer);
  p << "[";
  if (rank.isEvery())
    p << "*";
  else if (rank.isCoord() && rank.getCoord() < (int64_t)coords.size())
    p << cast<StringAttr>(coords[rank.getCoord()]).getValue();
  else if (rank.isCoord())
    p << "<coordinate " << rank.getCoord() << ">"; // rejected by the verifier
  else if (rank.isSet())
    p << "{" << exprText(rank.getExpr()) << " | " << rank.getVar() << " in ["
      << exprText(rank.getExtent()) << "]}";
  else
    p << exprText(rank.getExpr());
  p << "][" << exprText(index) << "]";
}
} // namespace

ParseResult NamesOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  MLIRContext *ctx = p.getContext();
  SmallVector<std::string> coords;
  auto coord = [&]() -> ParseResult {
    SMLoc at = p.getCurrentLocation();
    StringRef c;
    if (failed(p.parseKeyword(&c)))
      return failure();
    if (!isExprName(c.str()))
      return p.emitError(at, "'") << c << "' is not a name";
    coords.push_back(c.str());
    return success();
  };
  if (succeeded(p.parseOptionalLParen())) {
    if (failed(p.parseCommaSeparatedList(coord)) || failed(p.parseRParen()))
      return failure();
  } else if (failed(coord())) {
    return failure();
  }
  ArrayAttr extents;
  if (failed(p.parseKeyword("in")) || failed(parseExprList(p, extents)) ||
      failed(parseAccess(p, result, "from", coords)) ||
      failed(parseAccess(p, result, "to", coords)))
    return failure();
  CombineAttr combine;
  if (succeeded(p.parseOptionalKeyword("copy"))) {
    combine = CombineAttr::getFor(ctx, RedOp::copy);
  } else {
    if (failed(p.parseKeyword("reduce")) || failed(p.parseLess()))
      return failure();
    StringAttr param;
    if (succeeded(p.parseOptionalSymbolName(param))) {
      combine = CombineAttr::getForParam(ctx, param.getValue());
    } else {
      SMLoc at = p.getCurrentLocation();
      StringRef w;
      if (failed(p.parseKeyword(&w)))
        return failure();
      std::optional<RedOp> op = symbolizeRedOp(w);
      if (!op || *op == RedOp::copy)
        return p.emitError(at, "expected a reduction op (sum, prod, min, max, "
                               "avg) or a redop parameter (@name), got '")
               << w << "'";
      combine = CombineAttr::getFor(ctx, *op);
    }
    if (failed(p.parseGreater()))
      return failure();
  }
  SmallVector<Attribute> coordAttrs;
  for (auto &c : coords)
    coordAttrs.push_back(b.getStringAttr(c));
  result.addAttribute("coords", b.getArrayAttr(coordAttrs));
  result.addAttribute("extents", extents);
  result.addAttribute("combine", combine);
  return p.parseOptionalAttrDict(result.attributes);
}

void NamesOp::print(OpAsmPrinter &p) {
  p << " ";
  ArrayAttr coords = getCoords();
  if (coords.size() != 1)
    p << "(";
  llvm::interleaveComma(
      coords, p, [&](Attribute a) { p << cast<StringAttr>(a).getValue(); });
  if (coords.size() != 1)
    p << ")";
  p << " in ";
  printExprList(p, getExtents());
  printAccess(p, "from", getFromBufferAttr(), getFromRank(), getFromIndex(),
              coords);
  printAccess(p, "to", getToBufferAttr(), getToRank(), getToIndex(), coords);
  CombineAttr c = getCombine();
  if (!c.getParam() && c.getOp() == RedOp::copy) {
    p << " copy";
  } else {
    p << " reduce<";
    if (c.getParam())
      p.printAttribute(c.getParam());
    else
      p << stringifyRedOp(c.getOp());
    p << ">";
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"coords", "extents", "from_buffer", "from_rank",
                           "from_index", "to_buffer", "to_rank", "to_index",
                           "combine"});
}

LogicalResult NamesOp::verify() {
  ArrayAttr coords = getCoords();
  if (coords.size() != getExtents().size())
    return emitOpError() << "has " << coords.size() << " coordinate(s) but "
                         << getExtents().size() << " extent(s)";
  for (Attribute c : coords) {
    StringRef name = cast<StringAttr>(c).getValue();
    if (!isExprName(name.str()))
      return emitOpError() << "has the coordinate '" << name
                           << "', which is not a name";
  }
  for (auto [what, rank] : {std::make_pair("from", getFromRank()),
                            std::make_pair("to", getToRank())}) {
    if (rank.isCoord() && rank.getCoord() >= (int64_t)coords.size())
      return emitOpError() << "'" << what << "' rank is coordinate "
                           << rank.getCoord() << ", but the clause has "
                           << coords.size();
    // One spelling per rank: a coordinate is #layout.rank<coord N>, so that
    // the custom syntax, which prints both alike, reads back the same.
    if (rank.getKind() == RankKind::expr &&
        rank.getExpr().kind() == Expr::Kind::Var)
      for (size_t i = 0; i < coords.size(); ++i)
        if (cast<StringAttr>(coords[i]).getValue() == rank.getExpr().name())
          return emitOpError()
                 << "'" << what << "' rank '" << rank.getExpr().name()
                 << "' is coordinate " << i << ": write #layout.rank<coord "
                 << i << ">";
  }
  // Which parameter a combine names, and whether it is a redop, is the
  // collective's rule (checkStructure reports it at this op).
  return success();
}

#define GET_OP_CLASSES
#include "purlin/Dialect/Layout/Layout.cpp.inc"
