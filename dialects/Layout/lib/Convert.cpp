#include "purlin/Dialect/Layout/Convert.h"

using namespace mlir;

namespace purlin {
namespace layout {

namespace {
std::string rankText(const RankSel &r) { return r.every ? "*" : r.rank.str(); }

/// The line and column of `loc`, tagged with the op it belongs to.
SrcLoc srcLoc(Location loc, int tag) {
  SrcLoc s;
  s.tag = tag;
  if (auto fl = loc->findInstanceOf<FileLineColLoc>()) {
    s.line = (int)fl.getLine();
    s.col = (int)fl.getColumn();
  }
  return s;
}
} // namespace

CollectiveOp importCollective(OpBuilder &b, const Collective &c,
                              StringRef filename) {
  MLIRContext *ctx = b.getContext();
  auto loc = [&](const SrcLoc &l) -> Location {
    if (l.line <= 0)
      return UnknownLoc::get(ctx);
    return FileLineColLoc::get(ctx, filename, l.line, l.col);
  };
  auto str = [&](const std::string &s) { return b.getStringAttr(s); };
  auto exprs = [&](const std::vector<Expr> &es) {
    SmallVector<Attribute> a;
    for (const Expr &e : es)
      a.push_back(str(e.str()));
    return b.getArrayAttr(a);
  };

  auto op = CollectiveOp::create(b, loc(c.loc), c.name);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&op.getBodyBlock());
  for (const Param &p : c.params) {
    bool table = p.kind == ParamKind::Table;
    ParamOp::create(b, loc(p.loc), str(p.name), str(paramKindName(p.kind)),
                    exprs(p.dims),
                    table && !p.max.isNull() ? str(p.max.str()) : StringAttr(),
                    p.bound.empty() ? StringAttr() : str(p.bound));
  }
  for (const Buffer &buf : c.buffers)
    BufferOp::create(b, loc(buf.loc), str(buf.name),
                     str(buf.role == BufferRole::In ? "in" : "out"),
                     str(buf.dtype), str(buf.size.str()));
  for (const Clause &cl : c.clauses) {
    SmallVector<Attribute> coords;
    std::vector<Expr> extents;
    for (const Dim &d : cl.dims) {
      coords.push_back(str(d.name));
      extents.push_back(d.extent);
    }
    std::string combine =
        cl.opParam.empty() ? std::string(redOpName(cl.op)) : cl.opParam;
    NamesOp::create(b, loc(cl.loc), b.getArrayAttr(coords), exprs(extents),
                    FlatSymbolRefAttr::get(ctx, cl.from.buffer),
                    str(rankText(cl.from.rank)), str(cl.from.index.str()),
                    FlatSymbolRefAttr::get(ctx, cl.to.buffer),
                    str(rankText(cl.to.rank)), str(cl.to.index.str()),
                    str(combine));
  }
  return op;
}

Operation *opForTag(CollectiveOp op, int tag) {
  if (tag < 0)
    return op;
  int i = 0;
  for (Operation &o : op.getBodyBlock())
    if (i++ == tag)
      return &o;
  return op;
}

LogicalResult exportCollective(CollectiveOp op, Collective &out) {
  out = Collective();
  out.name = op.getSymName().str();
  out.loc = srcLoc(op.getLoc(), -1);
  auto expr = [](Operation *o, StringRef text, Expr &e) -> LogicalResult {
    std::string err;
    e = parseExprAttr(text, err);
    if (e.isNull())
      return o->emitOpError() << "has a malformed expression '" << text
                              << "': " << err;
    return success();
  };
  int tag = 0;
  for (Operation &o : op.getBodyBlock()) {
    SrcLoc loc = srcLoc(o.getLoc(), tag++);
    if (auto p = dyn_cast<ParamOp>(o)) {
      Param q;
      q.name = p.getSymName().str();
      q.loc = loc;
      StringRef k = p.getKind();
      q.kind = k == "ranks"   ? ParamKind::Ranks
               : k == "count" ? ParamKind::Count
               : k == "root"  ? ParamKind::Root
               : k == "type"  ? ParamKind::Type
               : k == "redop" ? ParamKind::Op
                              : ParamKind::Table;
      for (Attribute d : p.getDims()) {
        Expr e;
        if (failed(expr(p, cast<StringAttr>(d).getValue(), e)))
          return failure();
        q.dims.push_back(e);
      }
      if (auto m = p.getMax())
        if (failed(expr(p, *m, q.max)))
          return failure();
      if (auto bound = p.getBound())
        q.bound = bound->str();
      out.params.push_back(std::move(q));
    } else if (auto bo = dyn_cast<BufferOp>(o)) {
      Buffer buf;
      buf.name = bo.getSymName().str();
      buf.role = bo.getRole() == "out" ? BufferRole::Out : BufferRole::In;
      buf.dtype = bo.getElemType().str();
      buf.loc = loc;
      if (failed(expr(bo, bo.getSize(), buf.size)))
        return failure();
      out.buffers.push_back(std::move(buf));
    } else if (auto n = dyn_cast<NamesOp>(o)) {
      Clause cl;
      cl.loc = cl.opLoc = loc;
      auto coords = n.getCoords();
      auto extents = n.getExtents();
      for (size_t i = 0; i < coords.size() && i < extents.size(); ++i) {
        Dim d;
        d.name = cast<StringAttr>(coords[i]).getValue().str();
        d.loc = loc;
        if (failed(expr(n, cast<StringAttr>(extents[i]).getValue(), d.extent)))
          return failure();
        cl.dims.push_back(std::move(d));
      }
      auto access = [&](StringRef buffer, StringRef rank, StringRef index,
                        Access &a) -> LogicalResult {
        a.buffer = buffer.str();
        a.loc = a.rankLoc = a.indexLoc = loc;
        a.rank.every = rank == "*";
        if (!a.rank.every && failed(expr(n, rank, a.rank.rank)))
          return failure();
        return expr(n, index, a.index);
      };
      if (failed(access(n.getFromBuffer(), n.getFromRank(), n.getFromIndex(),
                        cl.from)) ||
          failed(access(n.getToBuffer(), n.getToRank(), n.getToIndex(), cl.to)))
        return failure();
      std::string combine = n.getCombine().str();
      if (!parseRedOp(combine, cl.op)) {
        cl.op = RedOp::Sum;
        cl.opParam = combine;
      }
      out.clauses.push_back(std::move(cl));
    } else {
      return o.emitOpError() << "is not allowed in a 'layout.collective'";
    }
  }
  return success();
}

} // namespace layout
} // namespace purlin
