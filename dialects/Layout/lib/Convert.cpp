// The layout dialect as a view of the spec's model, both ways. Export is a
// field-by-field reading of typed attributes (expressions are the spec's own
// trees): nothing is re-parsed. Import turns the spec's text forms of bound
// values (Param::bound) into typed attributes.
#include "purlin/Dialect/Layout/Convert.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace purlin {
namespace layout {

namespace {
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

/// Param::bound (text) as the typed attribute of its kind; null with
/// `error` set when the text does not fit the kind.
Attribute boundAttr(Builder &b, const Param &p, std::string &error) {
  auto integer = [&](const std::string &s, int64_t &v) {
    if (StringRef(s).getAsInteger(10, v)) {
      error = "'" + p.name + "' binds '" + s + "', not an integer";
      return false;
    }
    return true;
  };
  switch (p.kind) {
  case purlin::ParamKind::Type: {
    DType t;
    if (!parseDType(p.bound, t)) {
      error = "'" + p.name + "' binds '" + p.bound + "', not an element type";
      return {};
    }
    return TypeAttr::get(elementType(b.getContext(), t));
  }
  case purlin::ParamKind::Op: {
    purlin::RedOp r;
    if (!parseRedOp(p.bound, r) || r == purlin::RedOp::Copy) {
      error = "'" + p.name + "' binds '" + p.bound + "', not a reduction op";
      return {};
    }
    return RedOpAttr::get(b.getContext(), (RedOp)r);
  }
  case purlin::ParamKind::Table: {
    SmallVector<int64_t> values;
    SmallVector<StringRef> parts;
    StringRef(p.bound).split(parts, ':');
    for (StringRef s : parts)
      if (!integer(s.str(), values.emplace_back()))
        return {};
    return b.getDenseI64ArrayAttr(values);
  }
  default: {
    int64_t v;
    if (!integer(p.bound, v))
      return {};
    return b.getI64IntegerAttr(v);
  }
  }
}

/// The typed bound as the spec's text (Param::bound).
std::string boundText(Attribute a) {
  if (auto i = dyn_cast<IntegerAttr>(a))
    return std::to_string(i.getInt());
  if (auto t = dyn_cast<TypeAttr>(a)) {
    std::optional<DType> dt = elementDType(t.getValue());
    return dt ? dtypeName(*dt) : "?";
  }
  if (auto r = dyn_cast<RedOpAttr>(a))
    return redOpName((purlin::RedOp)r.getValue());
  std::string s;
  if (auto arr = dyn_cast<DenseI64ArrayAttr>(a))
    for (int64_t v : arr.asArrayRef())
      s += (s.empty() ? "" : ":") + std::to_string(v);
  return s;
}

RankAttr rankAttr(MLIRContext *ctx, const Clause &cl, const RankSel &r) {
  if (r.every)
    return RankAttr::getEvery(ctx);
  if (r.isSet())
    return RankAttr::getSet(ctx, r.rank, r.var, r.extent);
  if (r.rank.kind() == Expr::Kind::Var)
    for (size_t d = 0; d < cl.dims.size(); ++d)
      if (cl.dims[d].name == r.rank.name())
        return RankAttr::getCoordinate(ctx, (int64_t)d);
  return RankAttr::getExpression(ctx, r.rank);
}

RankSel rankSel(NamesOp n, RankAttr r) {
  RankSel s;
  s.every = r.isEvery();
  if (r.isCoord())
    s.rank = Expr::var(
        cast<StringAttr>(n.getCoords()[r.getCoord()]).getValue().str());
  else if (!s.every)
    s.rank = r.getExpr();
  if (r.isSet()) {
    s.var = r.getVar().str();
    s.extent = r.getExtent();
  }
  return s;
}

ArrayAttr exprArray(MLIRContext *ctx, const std::vector<Expr> &es) {
  SmallVector<Attribute> a;
  for (const Expr &e : es)
    a.push_back(ExprAttr::get(ctx, e));
  return ArrayAttr::get(ctx, a);
}
} // namespace

FailureOr<CollectiveOp> importCollective(OpBuilder &b, const Collective &c,
                                         StringRef filename) {
  MLIRContext *ctx = b.getContext();
  auto loc = [&](const SrcLoc &l) -> Location {
    if (l.line <= 0)
      return UnknownLoc::get(ctx);
    return FileLineColLoc::get(ctx, filename, l.line, l.col);
  };
  auto op = CollectiveOp::create(b, loc(c.loc), c.name);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&op.getBodyBlock());
  for (const Param &p : c.params) {
    bool table = p.kind == purlin::ParamKind::Table;
    Attribute bound;
    if (!p.bound.empty()) {
      std::string error;
      bound = boundAttr(b, p, error);
      if (!bound) {
        mlir::emitError(loc(p.loc)) << error;
        op->erase();
        return failure();
      }
    }
    ParamOp::create(b, loc(p.loc), b.getStringAttr(p.name),
                    ParamKindAttr::get(ctx, (ParamKind)p.kind),
                    table ? exprArray(ctx, p.dims) : ArrayAttr(),
                    table && !p.max.isNull() ? ExprAttr::get(ctx, p.max)
                                             : ExprAttr(),
                    bound);
  }
  for (const Buffer &buf : c.buffers) {
    // A `type` parameter by reference; else a concrete type; a name that is
    // neither stays a reference, which the verifier reports.
    DType t;
    Attribute elem =
        declaredDType(c, buf, t)
            ? Attribute(TypeAttr::get(elementType(ctx, t)))
            : Attribute(FlatSymbolRefAttr::get(ctx, buf.dtype));
    BufferOp::create(b, loc(buf.loc), b.getStringAttr(buf.name),
                     BufferRoleAttr::get(ctx, (BufferRole)buf.role), elem,
                     ExprAttr::get(ctx, buf.size));
  }
  for (const Clause &cl : c.clauses) {
    SmallVector<Attribute> coords;
    std::vector<Expr> extents;
    for (const Dim &d : cl.dims) {
      coords.push_back(b.getStringAttr(d.name));
      extents.push_back(d.extent);
    }
    CombineAttr combine = cl.opParam.empty()
                              ? CombineAttr::getFor(ctx, (RedOp)cl.op)
                              : CombineAttr::getForParam(ctx, cl.opParam);
    NamesOp::create(
        b, loc(cl.loc), b.getArrayAttr(coords), exprArray(ctx, extents),
        FlatSymbolRefAttr::get(ctx, cl.from.buffer),
        rankAttr(ctx, cl, cl.from.rank), ExprAttr::get(ctx, cl.from.index),
        FlatSymbolRefAttr::get(ctx, cl.to.buffer),
        rankAttr(ctx, cl, cl.to.rank), ExprAttr::get(ctx, cl.to.index),
        combine);
    if (cl.epilogue.empty())
      continue;
    SmallVector<Attribute> rows, targets;
    SmallVector<bool> stores;
    std::vector<Expr> indexes, values;
    for (const std::string &r : cl.epilogue.rows)
      rows.push_back(b.getStringAttr(r));
    for (const EpiStmt &st : cl.epilogue.stmts) {
      targets.push_back(b.getStringAttr(st.let.empty() ? st.buffer : st.let));
      stores.push_back(st.let.empty());
      indexes.push_back(st.let.empty() ? st.index : Expr::constant(0));
      values.push_back(st.value);
    }
    EpilogueOp::create(b, loc(cl.epilogue.loc), b.getArrayAttr(rows),
                       b.getArrayAttr(targets),
                       DenseBoolArrayAttr::get(ctx, stores),
                       exprArray(ctx, indexes), exprArray(ctx, values));
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
  int tag = 0;
  for (Operation &o : op.getBodyBlock()) {
    SrcLoc loc = srcLoc(o.getLoc(), tag++);
    if (auto p = dyn_cast<ParamOp>(o)) {
      Param q;
      q.name = p.getSymName().str();
      q.kind = (purlin::ParamKind)p.getKind();
      q.loc = loc;
      if (auto dims = p.getDims())
        for (Attribute d : *dims)
          q.dims.push_back(cast<ExprAttr>(d).getValue());
      if (auto m = p.getMax())
        q.max = *m;
      if (Attribute bound = p.getBoundAttr())
        q.bound = boundText(bound);
      out.params.push_back(std::move(q));
    } else if (auto bo = dyn_cast<BufferOp>(o)) {
      Buffer buf;
      buf.name = bo.getSymName().str();
      buf.role = (purlin::BufferRole)bo.getRole();
      if (auto t = dyn_cast<TypeAttr>(bo.getElemType())) {
        std::optional<DType> dt = elementDType(t.getValue());
        if (!dt)
          return bo.emitOpError() << "has an unsupported element type";
        buf.dtype = dtypeName(*dt);
      } else {
        buf.dtype = cast<FlatSymbolRefAttr>(bo.getElemType()).getValue().str();
      }
      buf.size = bo.getSize();
      buf.loc = loc;
      out.buffers.push_back(std::move(buf));
    } else if (auto n = dyn_cast<NamesOp>(o)) {
      Clause cl;
      cl.loc = cl.opLoc = loc;
      ArrayAttr coords = n.getCoords(), extents = n.getExtents();
      // Verified ops never fail here; an op the verifier has not seen yet
      // (export runs inside the collective's own verifier) must not crash.
      if (coords.size() != extents.size() ||
          (n.getFromRank().isCoord() &&
           n.getFromRank().getCoord() >= (int64_t)coords.size()) ||
          (n.getToRank().isCoord() &&
           n.getToRank().getCoord() >= (int64_t)coords.size()))
        return failure();
      for (size_t i = 0; i < coords.size(); ++i) {
        Dim d;
        d.name = cast<StringAttr>(coords[i]).getValue().str();
        d.extent = cast<ExprAttr>(extents[i]).getValue();
        d.loc = loc;
        cl.dims.push_back(std::move(d));
      }
      auto access = [&](FlatSymbolRefAttr buffer, RankAttr rank,
                        const Expr &index, Access &a) {
        a.buffer = buffer.getValue().str();
        a.rank = rankSel(n, rank);
        a.index = index;
        a.loc = a.rankLoc = a.indexLoc = loc;
      };
      access(n.getFromBufferAttr(), n.getFromRank(), n.getFromIndex(), cl.from);
      access(n.getToBufferAttr(), n.getToRank(), n.getToIndex(), cl.to);
      CombineAttr combine = n.getCombine();
      cl.op = (purlin::RedOp)combine.getOp();
      if (combine.getParam())
        cl.opParam = combine.getParam().getValue().str();
      out.clauses.push_back(std::move(cl));
    } else if (auto e = dyn_cast<EpilogueOp>(o)) {
      if (out.clauses.empty())
        return e.emitOpError() << "must follow a 'layout.names' op";
      Epilogue &ep = out.clauses.back().epilogue;
      ep.loc = loc;
      for (Attribute r : e.getRows())
        ep.rows.push_back(cast<StringAttr>(r).getValue().str());
      ArrayRef<bool> stores = e.getStores();
      if (e.getTargets().size() != stores.size() ||
          e.getIndexes().size() != stores.size() ||
          e.getValues().size() != stores.size())
        return failure(); // the op's verifier reports it
      for (size_t i = 0; i < stores.size(); ++i) {
        EpiStmt st;
        std::string t = cast<StringAttr>(e.getTargets()[i]).getValue().str();
        (stores[i] ? st.buffer : st.let) = t;
        if (stores[i])
          st.index = cast<ExprAttr>(e.getIndexes()[i]).getValue();
        st.value = cast<ExprAttr>(e.getValues()[i]).getValue();
        st.loc = st.valueLoc = loc;
        ep.stmts.push_back(std::move(st));
      }
    } else {
      return o.emitOpError() << "is not allowed in a 'layout.collective'";
    }
  }
  return success();
}

} // namespace layout
} // namespace purlin
