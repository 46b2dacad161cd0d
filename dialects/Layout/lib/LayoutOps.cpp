// Custom assembly and verifiers of the layout dialect's ops.
//
// Expressions are stored as their canonical text (Expr::str()) in string
// attributes and printed as MLIR tokens. MLIR has no '%' token, so the floor
// modulo prints as the keyword `mod`; everything else prints as in
// `.purlin`.
#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace purlin;
using namespace purlin::layout;

namespace {

constexpr int kMaxAsmExprDepth = 128;

//===----------------------------------------------------------------------===//
// Expressions in custom assembly
//===----------------------------------------------------------------------===//
struct ExprAsmParser {
  OpAsmParser &p;
  int depth = 0;

  ParseResult expr(Expr &out) {
    if (++depth > kMaxAsmExprDepth)
      return p.emitError(p.getCurrentLocation(), "expression too deep");
    auto leave = llvm::make_scope_exit([&] { --depth; });
    if (failed(term(out)))
      return failure();
    for (;;) {
      Expr::Kind k;
      if (succeeded(p.parseOptionalPlus()))
        k = Expr::Kind::Add;
      else if (succeeded(p.parseOptionalMinus()))
        k = Expr::Kind::Sub;
      else
        return success();
      Expr rhs;
      if (failed(term(rhs)))
        return failure();
      out = Expr::binary(k, out, rhs);
    }
  }
  ParseResult term(Expr &out) {
    if (failed(unary(out)))
      return failure();
    for (;;) {
      Expr::Kind k;
      if (succeeded(p.parseOptionalStar()))
        k = Expr::Kind::Mul;
      else if (succeeded(p.parseOptionalSlash()))
        k = Expr::Kind::Div;
      else if (succeeded(p.parseOptionalKeyword("mod")))
        k = Expr::Kind::Mod;
      else
        return success();
      Expr rhs;
      if (failed(unary(rhs)))
        return failure();
      out = Expr::binary(k, out, rhs);
    }
  }
  ParseResult unary(Expr &out) {
    int n = 0;
    while (succeeded(p.parseOptionalMinus()))
      ++n;
    if (n > kMaxAsmExprDepth)
      return p.emitError(p.getCurrentLocation(), "expression too deep");
    if (failed(primary(out)))
      return failure();
    while (n--)
      out = Expr::neg(out);
    return success();
  }
  ParseResult primary(Expr &out) {
    int64_t v;
    OptionalParseResult ir = p.parseOptionalInteger(v);
    if (ir.has_value()) {
      if (failed(*ir))
        return failure();
      out = Expr::constant(v);
      return success();
    }
    if (succeeded(p.parseOptionalLParen()))
      return failure(failed(expr(out)) || failed(p.parseRParen()));
    StringRef name;
    if (failed(p.parseOptionalKeyword(&name)))
      return p.emitError(p.getCurrentLocation(), "expected an expression");
    std::vector<Expr> index;
    while (succeeded(p.parseOptionalLSquare())) {
      Expr i;
      if (failed(expr(i)) || failed(p.parseRSquare()))
        return failure();
      index.push_back(i);
    }
    out = index.empty() ? Expr::var(name.str())
                        : Expr::table(name.str(), std::move(index));
    return success();
  }
};

ParseResult parseExpr(OpAsmParser &p, StringAttr &out) {
  Expr e;
  ExprAsmParser ep{p};
  if (failed(ep.expr(e)))
    return failure();
  out = p.getBuilder().getStringAttr(e.str());
  return success();
}

/// `[` expr (`,` expr)* `]` into an array of string attributes.
ParseResult parseExprList(OpAsmParser &p, ArrayAttr &out) {
  SmallVector<Attribute> items;
  if (failed(p.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            StringAttr s;
            if (failed(parseExpr(p, s)))
              return failure();
            items.push_back(s);
            return success();
          })))
    return failure();
  out = p.getBuilder().getArrayAttr(items);
  return success();
}

std::string asmText(StringRef exprText) {
  std::string s;
  for (char c : exprText) {
    if (c == '%')
      s += " mod ";
    else
      s += c;
  }
  return s;
}

void printExprList(OpAsmPrinter &p, ArrayAttr list) {
  p << "[";
  llvm::interleaveComma(list, p, [&](Attribute a) {
    p << asmText(cast<StringAttr>(a).getValue());
  });
  p << "]";
}

LogicalResult checkExpr(Operation *op, StringRef text, StringRef what) {
  std::string err;
  if (parseExprAttr(text, err).isNull())
    return op->emitOpError() << "has a malformed " << what << " '" << text
                             << "': " << err;
  return success();
}

bool isParamKind(StringRef k) {
  return k == "ranks" || k == "count" || k == "root" || k == "type" ||
         k == "redop" || k == "table";
}

} // namespace

Expr purlin::layout::parseExprAttr(StringRef text, std::string &error) {
  return Expr::parse(text.str(), error);
}

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
// ParamOp: @name : kind [dims] max expr = bound
//===----------------------------------------------------------------------===//
ParseResult ParamOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  StringAttr name;
  StringRef kind;
  if (failed(p.parseSymbolName(name)) || failed(p.parseColon()))
    return failure();
  SMLoc kindLoc = p.getCurrentLocation();
  if (failed(p.parseKeyword(&kind)))
    return failure();
  if (!isParamKind(kind))
    return p.emitError(kindLoc, "expected a parameter kind (ranks, count, "
                                "root, type, redop or table), got '")
           << kind << "'";
  result.addAttribute("sym_name", name);
  result.addAttribute("kind", b.getStringAttr(kind));
  if (kind == "table") {
    ArrayAttr dims;
    StringAttr max;
    if (failed(parseExprList(p, dims)) || failed(p.parseKeyword("max")) ||
        failed(parseExpr(p, max)))
      return failure();
    result.addAttribute("dims", dims);
    result.addAttribute("max", max);
  }
  if (succeeded(p.parseOptionalEqual())) {
    std::string bound;
    if (kind == "table") {
      if (failed(p.parseCommaSeparatedList(
              OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
                int64_t v;
                if (failed(p.parseInteger(v)))
                  return failure();
                bound += (bound.empty() ? "" : ":") + std::to_string(v);
                return success();
              })))
        return failure();
    } else if (kind == "type" || kind == "redop") {
      StringRef v;
      if (failed(p.parseKeyword(&v)))
        return failure();
      bound = v.str();
    } else {
      int64_t v;
      if (failed(p.parseInteger(v)))
        return failure();
      bound = std::to_string(v);
    }
    result.addAttribute("bound", b.getStringAttr(bound));
  }
  return p.parseOptionalAttrDict(result.attributes);
}

void ParamOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " : " << getKind();
  if (getKind() == "table") {
    p << " ";
    printExprList(p, getDims());
    p << " max " << asmText(getMax().value_or(""));
  }
  if (auto bound = getBound()) {
    p << " = ";
    if (getKind() == "table") {
      SmallVector<StringRef> parts;
      bound->split(parts, ':');
      p << "[";
      llvm::interleaveComma(parts, p);
      p << "]";
    } else {
      p << *bound;
    }
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"sym_name", "kind", "dims", "max", "bound"});
}

LogicalResult ParamOp::verify() {
  StringRef kind = getKind();
  if (!isParamKind(kind))
    return emitOpError() << "has an unknown kind '" << kind << "'";
  bool table = kind == "table";
  if (table != getMax().has_value())
    return emitOpError() << (table ? "'table' needs a bound ('max')"
                                   : "only a table has a bound ('max')");
  if (!table && !getDims().empty())
    return emitOpError() << "only a table has extents";
  for (Attribute d : getDims())
    if (failed(checkExpr(*this, cast<StringAttr>(d).getValue(), "extent")))
      return failure();
  if (table && failed(checkExpr(*this, *getMax(), "bound")))
    return failure();
  if (auto bound = getBound()) {
    std::string v = bound->str();
    DType t;
    RedOp r;
    if (kind == "type") {
      if (!parseDType(v, t))
        return emitOpError() << "binds an unknown element type '" << v << "'";
    } else if (kind == "redop") {
      if (!parseRedOp(v, r) || r == RedOp::Copy)
        return emitOpError() << "binds an unknown reduction op '" << v
                             << "' (sum, prod, min, max or avg)";
    } else {
      SmallVector<StringRef> parts;
      StringRef(v).split(parts, ':');
      if (!table && parts.size() != 1)
        return emitOpError() << "binds '" << v << "', not an integer";
      for (StringRef s : parts) {
        int64_t x;
        if (s.getAsInteger(10, x))
          return emitOpError() << "binds '" << v << "', not "
                               << (table ? "integers" : "an integer");
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BufferOp: @name : in|out type [size]
//===----------------------------------------------------------------------===//
ParseResult BufferOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  StringAttr name;
  StringRef role, type;
  SMLoc roleLoc;
  if (failed(p.parseSymbolName(name)) || failed(p.parseColon()))
    return failure();
  roleLoc = p.getCurrentLocation();
  if (failed(p.parseKeyword(&role)))
    return failure();
  if (role != "in" && role != "out")
    return p.emitError(roleLoc, "expected 'in' or 'out', got '") << role << "'";
  if (failed(p.parseKeyword(&type)))
    return failure();
  StringAttr size;
  if (failed(p.parseLSquare()) || failed(parseExpr(p, size)) ||
      failed(p.parseRSquare()))
    return failure();
  result.addAttribute("sym_name", name);
  result.addAttribute("role", b.getStringAttr(role));
  result.addAttribute("elem_type", b.getStringAttr(type));
  result.addAttribute("size", size);
  return p.parseOptionalAttrDict(result.attributes);
}

void BufferOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " : " << getRole() << " " << getElemType() << " ["
    << asmText(getSize()) << "]";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"sym_name", "role", "elem_type", "size"});
}

LogicalResult BufferOp::verify() {
  if (getRole() != "in" && getRole() != "out")
    return emitOpError() << "has role '" << getRole()
                         << "'; expected 'in' or 'out'";
  if (getElemType().empty())
    return emitOpError() << "needs an element type";
  return checkExpr(*this, getSize(), "size");
}

//===----------------------------------------------------------------------===//
// NamesOp: (c, ...) in [E, ...] from @x[rank][index] to @y[rank][index] op
//===----------------------------------------------------------------------===//
namespace {
ParseResult parseAccess(OpAsmParser &p, OperationState &result,
                        StringRef prefix) {
  Builder &b = p.getBuilder();
  FlatSymbolRefAttr buffer;
  StringAttr rank, index;
  if (failed(p.parseKeyword(prefix)) ||
      failed(p.parseAttribute(buffer)) || failed(p.parseLSquare()))
    return failure();
  if (succeeded(p.parseOptionalStar()))
    rank = b.getStringAttr("*");
  else if (failed(parseExpr(p, rank)))
    return failure();
  if (failed(p.parseRSquare()) || failed(p.parseLSquare()) ||
      failed(parseExpr(p, index)) || failed(p.parseRSquare()))
    return failure();
  result.addAttribute((prefix + "_buffer").str(), buffer);
  result.addAttribute((prefix + "_rank").str(), rank);
  result.addAttribute((prefix + "_index").str(), index);
  return success();
}

void printAccess(OpAsmPrinter &p, StringRef prefix, FlatSymbolRefAttr buffer,
                 StringRef rank, StringRef index) {
  p << " " << prefix << " ";
  p.printAttribute(buffer);
  p << "[" << asmText(rank) << "][" << asmText(index) << "]";
}
} // namespace

ParseResult NamesOp::parse(OpAsmParser &p, OperationState &result) {
  Builder &b = p.getBuilder();
  SmallVector<Attribute> coords;
  auto coord = [&]() -> ParseResult {
    StringRef c;
    if (failed(p.parseKeyword(&c)))
      return failure();
    coords.push_back(b.getStringAttr(c));
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
      failed(parseAccess(p, result, "from")) ||
      failed(parseAccess(p, result, "to")))
    return failure();
  std::string combine;
  if (succeeded(p.parseOptionalKeyword("copy"))) {
    combine = "copy";
  } else {
    StringRef op;
    if (failed(p.parseKeyword("reduce")) || failed(p.parseLess()) ||
        failed(p.parseKeyword(&op)) || failed(p.parseGreater()))
      return failure();
    combine = op.str();
  }
  result.addAttribute("coords", b.getArrayAttr(coords));
  result.addAttribute("extents", extents);
  result.addAttribute("combine", b.getStringAttr(combine));
  return p.parseOptionalAttrDict(result.attributes);
}

void NamesOp::print(OpAsmPrinter &p) {
  p << " ";
  ArrayAttr coords = getCoords();
  if (coords.size() != 1)
    p << "(";
  llvm::interleaveComma(coords, p, [&](Attribute a) {
    p << cast<StringAttr>(a).getValue();
  });
  if (coords.size() != 1)
    p << ")";
  p << " in ";
  printExprList(p, getExtents());
  printAccess(p, "from", getFromBufferAttr(), getFromRank(), getFromIndex());
  printAccess(p, "to", getToBufferAttr(), getToRank(), getToIndex());
  if (getCombine() == "copy")
    p << " copy";
  else
    p << " reduce<" << getCombine() << ">";
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {"coords", "extents", "from_buffer", "from_rank", "from_index",
       "to_buffer", "to_rank", "to_index", "combine"});
}

LogicalResult NamesOp::verify() {
  if (getCoords().size() != getExtents().size())
    return emitOpError() << "has " << getCoords().size()
                         << " coordinate(s) but " << getExtents().size()
                         << " extent(s)";
  for (Attribute e : getExtents())
    if (failed(checkExpr(*this, cast<StringAttr>(e).getValue(), "extent")))
      return failure();
  for (StringRef r : {getFromRank(), getToRank()})
    if (r != "*" && failed(checkExpr(*this, r, "rank")))
      return failure();
  if (failed(checkExpr(*this, getFromIndex(), "index")) ||
      failed(checkExpr(*this, getToIndex(), "index")))
    return failure();
  if (getCombine().empty())
    return emitOpError() << "needs 'copy' or 'reduce<op>'";
  // Any other word is a reduction op or a redop parameter; the parent's
  // verifier (checkStructure) tells them apart.
  return success();
}

#define GET_OP_CLASSES
#include "purlin/Dialect/Layout/Layout.cpp.inc"
