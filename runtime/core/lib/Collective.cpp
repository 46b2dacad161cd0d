#include "purlin/core/Collective.h"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

namespace purlin {

const char *paramKindName(ParamKind k) {
  switch (k) {
  case ParamKind::Ranks:
    return "ranks";
  case ParamKind::Count:
    return "count";
  case ParamKind::Root:
    return "root";
  case ParamKind::Type:
    return "type";
  case ParamKind::Op:
    return "redop";
  case ParamKind::Table:
    return "table";
  }
  return "?";
}

bool parseParamKind(const std::string &s, ParamKind &out) {
  for (ParamKind k : {ParamKind::Ranks, ParamKind::Count, ParamKind::Root,
                      ParamKind::Type, ParamKind::Op, ParamKind::Table})
    if (s == paramKindName(k)) {
      out = k;
      return true;
    }
  return false;
}

const Param *Collective::param(const std::string &n) const {
  for (auto &p : params)
    if (p.name == n)
      return &p;
  return nullptr;
}
const Buffer *Collective::buffer(const std::string &n) const {
  int i = bufferIndex(n);
  return i < 0 ? nullptr : &buffers[i];
}
int Collective::bufferIndex(const std::string &n) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == n)
      return (int)i;
  return -1;
}
const Param *Collective::ranksParam() const {
  for (auto &p : params)
    if (p.kind == ParamKind::Ranks)
      return &p;
  return nullptr;
}

RankRole rankRole(const Clause &c, const RankSel &sel) {
  RankRole r;
  if (sel.every)
    return r;
  if (sel.rank.kind() == Expr::Kind::Var)
    for (size_t d = 0; d < c.dims.size(); ++d)
      if (c.dims[d].name == sel.rank.name()) {
        r.kind = RankRole::Coord;
        r.dim = (int)d;
        return r;
      }
  r.kind = RankRole::Fixed;
  r.fixed = sel.rank;
  return r;
}

//===----------------------------------------------------------------------===//
// Structural checks
//===----------------------------------------------------------------------===//
namespace {
struct StructureChecker {
  const Collective &c;
  std::vector<Diag> &diags;
  bool ok = true;

  void error(SrcLoc loc, const std::string &msg) {
    diags.push_back({loc, msg});
    ok = false;
  }

  // Checks that `e` names only scalar parameters, tables (with the right
  // number of subscripts) and the coordinates in `coords`.
  void checkNames(const Expr &e, const std::vector<std::string> &coords,
                  SrcLoc loc, const std::string &what) {
    if (e.isNull())
      return;
    if (e.kind() == Expr::Kind::Var) {
      if (std::find(coords.begin(), coords.end(), e.name()) != coords.end())
        return;
      const Param *p = c.param(e.name());
      if (!p)
        error(loc, "unknown name '" + e.name() + "' in " + what);
      else if (p->kind == ParamKind::Type || p->kind == ParamKind::Op)
        error(loc, "'" + e.name() + "' is " +
                       (p->kind == ParamKind::Type ? "an element type"
                                                   : "a reduction op") +
                       ", not a value, in " + what);
      else if (p->kind == ParamKind::Table)
        error(loc, "table '" + e.name() + "' needs " +
                       std::to_string(p->dims.size()) + " subscript(s) in " +
                       what);
      return;
    }
    if (e.kind() == Expr::Kind::Table) {
      const Param *p = c.param(e.name());
      if (!p || p->kind != ParamKind::Table)
        error(loc, "'" + e.name() + "' is not a table, in " + what);
      else if (p->dims.size() != e.operands().size())
        error(loc, "table '" + e.name() + "' needs " +
                       std::to_string(p->dims.size()) + " subscript(s), got " +
                       std::to_string(e.operands().size()) + ", in " + what);
    }
    for (auto &o : e.operands())
      checkNames(o, coords, loc, what);
  }

  void run() {
    std::set<std::string> seen;
    int ranks = 0;
    for (auto &p : c.params) {
      if (!seen.insert(p.name).second)
        error(p.loc, "'" + p.name + "' is defined more than once");
      if (p.kind == ParamKind::Ranks)
        ++ranks;
      if (p.kind == ParamKind::Table) {
        if (p.dims.empty())
          error(p.loc, "table '" + p.name + "' needs at least one extent");
        for (auto &d : p.dims)
          checkNames(d, {}, p.loc, "the extent of table '" + p.name + "'");
        if (p.max.isNull())
          error(p.loc, "table '" + p.name + "' needs a bound ('<= expr')");
        else
          checkNames(p.max, {}, p.loc, "the bound of table '" + p.name + "'");
      }
    }
    if (ranks == 0)
      error(c.loc, "collective '" + c.name +
                       "' has no rank-count parameter (add 'R: ranks')");
    else if (ranks > 1)
      error(c.loc, "collective '" + c.name +
                       "' has more than one rank-count parameter");
    for (auto &b : c.buffers) {
      if (!seen.insert(b.name).second)
        error(b.loc, "'" + b.name + "' is defined more than once");
      DType t;
      const Param *tp = c.param(b.dtype);
      if (!(tp && tp->kind == ParamKind::Type) && !parseDType(b.dtype, t))
        error(b.loc, "unknown element type '" + b.dtype + "' of buffer '" +
                         b.name + "'");
      checkNames(b.size, {}, b.loc, "the size of buffer '" + b.name + "'");
    }
    if (c.clauses.empty())
      error(c.loc, "collective '" + c.name + "' names nothing (no 'name' clause)");
    for (auto &cl : c.clauses)
      clause(cl, seen);
  }

  void access(const Clause &cl, const Access &a, bool isFrom,
              const std::vector<std::string> &coords) {
    const Buffer *b = c.buffer(a.buffer);
    const char *side = isFrom ? "contributor" : "destination";
    if (!b) {
      error(a.loc, "unknown buffer '" + a.buffer + "'");
      return;
    }
    if (isFrom && b->role != BufferRole::In)
      error(a.loc, "'" + a.buffer +
                       "' is an output buffer; names are read from inputs");
    if (!isFrom && b->role != BufferRole::Out)
      error(a.loc, "'" + a.buffer +
                       "' is an input buffer; names are written to outputs");
    if (!a.rank.every) {
      checkNames(a.rank.rank, coords, a.rankLoc,
                 std::string("the ") + side + " rank");
      RankRole role = rankRole(cl, a.rank);
      if (role.kind == RankRole::Coord) {
        const Expr &ext = cl.dims[role.dim].extent;
        const Param *rp = c.ranksParam();
        if (!rp || ext.kind() != Expr::Kind::Var || ext.name() != rp->name)
          error(a.rankLoc, "rank coordinate '" + cl.dims[role.dim].name +
                               "' must range over [" +
                               (rp ? rp->name : std::string("R")) + "]");
      } else {
        for (auto &co : coords)
          if (a.rank.rank.mentions(co)) {
            error(a.rankLoc,
                  std::string("a ") + side +
                      " rank is '*', a coordinate ranging over the ranks, or "
                      "an expression of parameters; '" +
                      a.rank.rank.str() + "' is none of these");
            break;
          }
      }
    }
    checkNames(a.index, coords, a.indexLoc,
               "the index of '" + a.buffer + "'");
    // Rank coordinates select the rank; the index is affine in the others
    // (rank coordinates may appear too, like r in y[r*C + i]).
    if (!a.index.isLinearIn(coords)) {
      std::string list;
      for (auto &co : coords)
        list += (list.empty() ? "" : ", ") + co;
      error(a.indexLoc, "the index of '" + a.buffer +
                            "' must be affine in the coordinates (" + list +
                            "): '" + a.index.str() + "'");
    }
  }

  void clause(const Clause &cl, const std::set<std::string> &globals) {
    std::vector<std::string> coords;
    for (auto &d : cl.dims) {
      if (globals.count(d.name) ||
          std::find(coords.begin(), coords.end(), d.name) != coords.end())
        error(d.loc, "coordinate '" + d.name + "' is defined more than once");
      checkNames(d.extent, coords, d.loc,
                 "the extent of coordinate '" + d.name + "'");
      coords.push_back(d.name);
    }
    if (cl.dims.empty())
      error(cl.loc, "a name space needs at least one coordinate");
    access(cl, cl.from, true, coords);
    access(cl, cl.to, false, coords);
    // Fixing the rank coordinates leaves a box: the extent of every other
    // coordinate may use rank coordinates and parameters, nothing else.
    RankRole fr = rankRole(cl, cl.from.rank), tr = rankRole(cl, cl.to.rank);
    auto isRankDim = [&](int d) {
      return (fr.kind == RankRole::Coord && fr.dim == d) ||
             (tr.kind == RankRole::Coord && tr.dim == d);
    };
    for (size_t d = 0; d < cl.dims.size(); ++d)
      for (size_t e = 0; e < d; ++e)
        if (!isRankDim((int)e) && cl.dims[d].extent.mentions(cl.dims[e].name))
          error(cl.dims[d].loc, "the extent of '" + cl.dims[d].name +
                                    "' may use rank coordinates and "
                                    "parameters only, not '" +
                                    cl.dims[e].name + "'");
    if (!cl.opParam.empty()) {
      const Param *op = c.param(cl.opParam);
      if (!op || op->kind != ParamKind::Op)
        error(cl.opLoc.line ? cl.opLoc : cl.loc,
              "'" + cl.opParam + "' is not a reduction op parameter");
    }
    if (cl.opParam.empty() && cl.op == RedOp::Copy && cl.from.rank.every)
      error(cl.opLoc.line ? cl.opLoc : cl.loc,
            "a copy name has exactly one contributor, but '" + cl.from.buffer +
                "@*' gives every rank; use reduce(op) or name one rank");
    const Buffer *f = c.buffer(cl.from.buffer), *t = c.buffer(cl.to.buffer);
    if (f && t && f->dtype != t->dtype)
      error(cl.loc, "element types differ: '" + f->name + "' is " + f->dtype +
                        ", '" + t->name + "' is " + t->dtype);
  }
};
} // namespace

bool checkStructure(const Collective &c, std::vector<Diag> &diags) {
  StructureChecker sc{c, diags};
  sc.run();
  return sc.ok;
}

//===----------------------------------------------------------------------===//
// Bindings
//===----------------------------------------------------------------------===//
int64_t Binding::ranks(const Collective &c) const {
  const Param *p = c.ranksParam();
  if (!p)
    return 0;
  auto it = scalars.find(p->name);
  return it == scalars.end() ? 0 : it->second;
}

namespace {
EvalEnv paramEnv(const Collective &c, const Binding &b) {
  EvalEnv env;
  env.var = [&b](const std::string &n, int64_t &v) {
    auto it = b.scalars.find(n);
    if (it == b.scalars.end())
      return false;
    v = it->second;
    return true;
  };
  env.table = [&c, &b](const std::string &n, const std::vector<int64_t> &idx,
                       int64_t &v) {
    const Param *p = c.param(n);
    auto it = b.tables.find(n);
    if (!p || it == b.tables.end() || idx.size() != p->dims.size())
      return false;
    int64_t lin = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      int64_t ext;
      std::string err;
      if (!evaluate(p->dims[i], paramEnv(c, b), ext, err))
        return false;
      if (idx[i] < 0 || idx[i] >= ext)
        return false;
      lin = lin * ext + idx[i];
    }
    if (lin >= (int64_t)it->second.size())
      return false;
    v = it->second[lin];
    return true;
  };
  return env;
}
} // namespace

bool evalParamExpr(const Collective &c, const Binding &b, const Expr &e,
                   int64_t &out, std::string &error) {
  return evaluate(e, paramEnv(c, b), out, error);
}

bool bufferElems(const Collective &c, const Binding &b, int i, int64_t &out,
                 std::string &error) {
  return evalParamExpr(c, b, c.buffers[i].size, out, error);
}

bool BoundCollective::init(const Collective &c, const Binding &b,
                           std::string &error) {
  coll = &c;
  binding = b;
  R = b.ranks(c);
  dtype = b.dtype;
  std::vector<std::string> scalarNames;
  slots.clear();
  for (auto &p : c.params)
    if (isScalarParam(p.kind)) {
      auto it = b.scalars.find(p.name);
      if (it == b.scalars.end()) {
        error = "parameter '" + p.name + "' is not bound";
        return false;
      }
      scalarNames.push_back(p.name);
      slots.push_back(it->second);
    }
  tables_.clear();
  tableIndex_.clear();
  tables_.reserve(c.params.size());
  for (auto &p : c.params)
    if (p.kind == ParamKind::Table) {
      auto it = b.tables.find(p.name);
      if (it == b.tables.end()) {
        error = "table '" + p.name + "' is not bound";
        return false;
      }
      CompiledExpr::Table t;
      int64_t total = 1;
      for (auto &d : p.dims) {
        int64_t ext;
        if (!evalParamExpr(c, b, d, ext, error))
          return false;
        t.extents.push_back(ext);
        total *= ext;
      }
      if ((int64_t)it->second.size() != total) {
        error = "table '" + p.name + "' needs " + std::to_string(total) +
                " values, got " + std::to_string(it->second.size());
        return false;
      }
      t.data = it->second.data();
      tableIndex_[p.name] = (int)tables_.size();
      tables_.push_back(t);
    }
  // Table data must outlive us: point into our own copy of the binding.
  for (auto &kv : tableIndex_)
    tables_[kv.second].data = binding.tables[kv.first].data();
  dimSlot0 = (int)slots.size();
  size_t maxDims = 0;
  for (auto &cl : c.clauses)
    maxDims = std::max(maxDims, cl.dims.size());
  slots.resize(dimSlot0 + maxDims, 0);

  bufElems.clear();
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    int64_t n;
    if (!bufferElems(c, b, (int)i, n, error))
      return false;
    bufElems.push_back(n);
  }
  clauses.clear();
  for (auto &cl : c.clauses) {
    BoundClause bc;
    bc.ndims = (int)cl.dims.size();
    auto slot = [&](const std::string &n) -> int {
      for (size_t d = 0; d < cl.dims.size(); ++d)
        if (cl.dims[d].name == n)
          return dimSlot0 + (int)d;
      for (size_t i = 0; i < scalarNames.size(); ++i)
        if (scalarNames[i] == n)
          return (int)i;
      return -1;
    };
    auto table = [&](const std::string &n) -> const CompiledExpr::Table * {
      auto it = tableIndex_.find(n);
      return it == tableIndex_.end() ? nullptr : &tables_[it->second];
    };
    for (auto &d : cl.dims) {
      bc.extent.emplace_back();
      if (!CompiledExpr::compile(d.extent, slot, table, bc.extent.back(), error))
        return false;
    }
    bc.fromEvery = cl.from.rank.every;
    bc.toEvery = cl.to.rank.every;
    if ((!bc.fromEvery &&
         !CompiledExpr::compile(cl.from.rank.rank, slot, table, bc.fromRank,
                                error)) ||
        (!bc.toEvery && !CompiledExpr::compile(cl.to.rank.rank, slot, table,
                                               bc.toRank, error)) ||
        !CompiledExpr::compile(cl.from.index, slot, table, bc.fromIndex, error) ||
        !CompiledExpr::compile(cl.to.index, slot, table, bc.toIndex, error))
      return false;
    bc.fromBuf = c.bufferIndex(cl.from.buffer);
    bc.toBuf = c.bufferIndex(cl.to.buffer);
    bc.op = clauseOp(cl, b);
    clauses.push_back(std::move(bc));
  }
  return true;
}

bool BoundCollective::visit(int ci,
                            const std::function<bool(const int64_t *)> &f,
                            std::string &error) {
  const BoundClause &bc = clauses[ci];
  int64_t *s = slots.data();
  std::function<bool(int)> rec = [&](int d) -> bool {
    if (d == bc.ndims)
      return f(s);
    int64_t ext;
    if (!bc.extent[d].eval(s, ext)) {
      error = "the extent of coordinate '" + coll->clauses[ci].dims[d].name +
              "' cannot be evaluated (division by zero or table index out of "
              "range)";
      return false;
    }
    for (int64_t v = 0; v < ext; ++v) {
      s[dimSlot0 + d] = v;
      if (!rec(d + 1))
        return false;
    }
    return true;
  };
  return rec(0);
}

namespace {
std::string bindingText(const Collective &c, const Binding &b) {
  std::string s;
  for (auto &p : c.params) {
    if (p.kind == ParamKind::Table || p.kind == ParamKind::Type ||
        p.kind == ParamKind::Op)
      continue;
    auto it = b.scalars.find(p.name);
    if (it != b.scalars.end())
      s += (s.empty() ? "" : ", ") + p.name + "=" + std::to_string(it->second);
  }
  return s;
}
std::string nameText(const Clause &cl, const int64_t *coords) {
  std::string s = "(";
  for (size_t d = 0; d < cl.dims.size(); ++d)
    s += (d ? ", " : "") + cl.dims[d].name + "=" + std::to_string(coords[d]);
  return s + ")";
}
} // namespace

bool checkBinding(const Collective &c, const Binding &b,
                  std::vector<Diag> &diags, int64_t maxNames) {
  auto fail = [&](SrcLoc loc, const std::string &m) {
    diags.push_back({loc, m});
    return false;
  };
  for (auto &p : c.params) {
    if (p.kind == ParamKind::Type || p.kind == ParamKind::Op)
      continue;
    if (p.kind == ParamKind::Table) {
      auto it = b.tables.find(p.name);
      if (it == b.tables.end())
        return fail(p.loc, "table '" + p.name + "' is not bound");
      int64_t mx;
      std::string err;
      if (!evalParamExpr(c, b, p.max, mx, err))
        return fail(p.loc, err);
      for (int64_t v : it->second)
        if (v < 0 || v > mx)
          return fail(p.loc, "table '" + p.name + "' has the value " +
                                 std::to_string(v) + ", outside [0, " +
                                 p.max.str() + " = " + std::to_string(mx) +
                                 "]");
      continue;
    }
    auto it = b.scalars.find(p.name);
    if (it == b.scalars.end())
      return fail(p.loc, "parameter '" + p.name + "' is not bound");
    if (p.kind == ParamKind::Ranks && it->second < 1)
      return fail(p.loc, "the rank count '" + p.name + "' must be at least 1");
    if (p.kind == ParamKind::Count && it->second < 0)
      return fail(p.loc, "count '" + p.name + "' must not be negative");
  }
  int64_t R = b.ranks(c);
  for (auto &p : c.params)
    if (p.kind == ParamKind::Root) {
      int64_t v = b.scalars.at(p.name);
      if (v < 0 || v >= R)
        return fail(p.loc, "root '" + p.name + "' = " + std::to_string(v) +
                               " must lie in [0, " + std::to_string(R) + ")");
    }
  BoundCollective bc;
  std::string err;
  if (!bc.init(c, b, err))
    return fail(c.loc, err);
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (bc.bufElems[i] < 0)
      return fail(c.buffers[i].loc, "buffer '" + c.buffers[i].name +
                                        "' has a negative size under " +
                                        bindingText(c, b));
  // written[out buffer][rank] marks each element once.
  std::vector<std::vector<std::vector<int32_t>>> writer(c.buffers.size());
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == BufferRole::Out)
      writer[i].assign(R, std::vector<int32_t>(bc.bufElems[i], -1));
  int64_t visited = 0;
  std::vector<std::vector<int64_t>> firstWriter; // names by id, for messages
  for (size_t ci = 0; ci < c.clauses.size(); ++ci) {
    const Clause &cl = c.clauses[ci];
    const auto &k = bc.clauses[ci];
    bool ok = bc.visit(
        (int)ci,
        [&](const int64_t *s) -> bool {
          if (maxNames && visited >= maxNames)
            return false;
          ++visited;
          const int64_t *coords = s + bc.dimSlot0;
          auto where = [&]() {
            return "name " + nameText(cl, coords) + " under " +
                   bindingText(c, b);
          };
          int64_t fr = 0, tr = 0, fi, ti;
          if (!k.fromEvery && (!k.fromRank.eval(s, fr) || fr < 0 || fr >= R))
            return fail(cl.from.rankLoc.line ? cl.from.rankLoc : cl.from.loc,
                        "contributor rank out of range: " + where() +
                            " has no contributor");
          if (!k.toEvery && (!k.toRank.eval(s, tr) || tr < 0 || tr >= R))
            return fail(cl.to.rankLoc.line ? cl.to.rankLoc : cl.to.loc,
                        "destination rank out of range: " + where() +
                            " has no destination");
          if (!k.fromIndex.eval(s, fi) || fi < 0 ||
              fi >= bc.bufElems[k.fromBuf])
            return fail(cl.from.indexLoc.line ? cl.from.indexLoc : cl.from.loc,
                        "the index of '" + cl.from.buffer +
                            "' is out of bounds: " + where() + " reads " +
                            std::to_string(fi) + ", size " +
                            std::to_string(bc.bufElems[k.fromBuf]));
          if (!k.toIndex.eval(s, ti) || ti < 0 || ti >= bc.bufElems[k.toBuf])
            return fail(cl.to.indexLoc.line ? cl.to.indexLoc : cl.to.loc,
                        "the index of '" + cl.to.buffer +
                            "' is out of bounds: " + where() + " writes " +
                            std::to_string(ti) + ", size " +
                            std::to_string(bc.bufElems[k.toBuf]));
          int64_t r0 = k.toEvery ? 0 : tr, r1 = k.toEvery ? R : tr + 1;
          for (int64_t r = r0; r < r1; ++r) {
            int32_t &w = writer[k.toBuf][r][ti];
            if (w >= 0) {
              const auto &fw = firstWriter[w];
              const Clause &ocl = c.clauses[fw[0]];
              std::string other = "name " + nameText(ocl, fw.data() + 1);
              return fail(cl.to.loc, "two names write one place: " + where() +
                                         " and " + other + " both write '" +
                                         cl.to.buffer + "@" +
                                         std::to_string(r) + "[" +
                                         std::to_string(ti) + "]'");
            }
            if (r == r0) {
              std::vector<int64_t> rec{(int64_t)ci};
              rec.insert(rec.end(), coords, coords + k.ndims);
              firstWriter.push_back(rec);
            }
            w = (int32_t)firstWriter.size() - 1;
          }
          return true;
        },
        err);
    if (!ok) {
      if (!err.empty())
        return fail(cl.loc, err);
      if (maxNames && visited >= maxNames)
        return true;
      return false;
    }
  }
  return true;
}

RedOp clauseOp(const Clause &cl, const Binding &b) {
  return cl.opParam.empty() ? cl.op : b.redop;
}

bool applyBoundParams(const Collective &c, Binding &b, std::string &error) {
  std::string list;
  for (auto &p : c.params)
    if (!p.bound.empty())
      list += (list.empty() ? "" : ",") + p.name + "=" + p.bound;
  return parseBindingList(c, list, b, error);
}

std::vector<Binding> sampleBindings(const Collective &c) {
  std::vector<Binding> out;
  const int64_t Rs[] = {1, 2, 3, 5};
  int salt = 0;
  for (int64_t R : Rs)
    for (int64_t cnt = 1; cnt <= 3; ++cnt)
      for (int rootEnd = 0; rootEnd < 2; ++rootEnd) {
        Binding b;
        bool hasRoot = false;
        for (auto &p : c.params) {
          if (p.kind == ParamKind::Ranks)
            b.scalars[p.name] = R;
          else if (p.kind == ParamKind::Count)
            b.scalars[p.name] = cnt + (salt++ % 2); // counts differ a little
        }
        // Values bound at compile time first (R among them): the roots and
        // the tables' sizes depend on them.
        std::string err;
        applyBoundParams(c, b, err);
        int64_t effR = b.ranks(c);
        for (auto &p : c.params)
          if (p.kind == ParamKind::Root && p.bound.empty()) {
            b.scalars[p.name] = rootEnd ? std::max<int64_t>(effR - 1, 0) : 0;
            hasRoot = true;
          }
        std::mt19937 rng((unsigned)(R * 97 + cnt * 13 + rootEnd));
        for (auto &p : c.params) {
          if (p.kind != ParamKind::Table || !p.bound.empty())
            continue;
          int64_t total = 1, mx = 0;
          for (auto &d : p.dims) {
            int64_t e = 0;
            evalParamExpr(c, b, d, e, err);
            total *= std::max<int64_t>(e, 0);
          }
          evalParamExpr(c, b, p.max, mx, err);
          std::vector<int64_t> v(total);
          for (auto &x : v)
            x = mx > 0 ? (int64_t)(rng() % (mx + 1)) : 0;
          b.tables[p.name] = v;
        }
        bool dup = false;
        for (auto &o : out)
          dup |= o.scalars == b.scalars && o.tables == b.tables;
        if (!dup)
          out.push_back(b);
        if (!hasRoot)
          break;
      }
  return out;
}

//===----------------------------------------------------------------------===//
// The plain description
//===----------------------------------------------------------------------===//
namespace {
std::string rankText(const RankSel &r) { return r.every ? "*" : r.rank.str(); }
} // namespace

std::string writeDesc(const Collective &c) {
  std::ostringstream os;
  os << "purlin-desc 1\n";
  os << "collective " << c.name << "\n";
  for (auto &p : c.params) {
    os << "param " << p.name << " " << paramKindName(p.kind);
    if (p.kind == ParamKind::Table) {
      for (auto &d : p.dims)
        os << " [" << d.str() << "]";
      os << " max [" << p.max.str() << "]";
    }
    if (!p.bound.empty())
      os << " = " << p.bound;
    os << "\n";
  }
  for (auto &b : c.buffers)
    os << "buffer " << (b.role == BufferRole::In ? "in" : "out") << " "
       << b.name << " " << b.dtype << " [" << b.size.str() << "]\n";
  for (auto &cl : c.clauses) {
    os << "clause " << (cl.opParam.empty() ? redOpName(cl.op) : cl.opParam)
       << "\n";
    for (auto &d : cl.dims)
      os << "  dim " << d.name << " [" << d.extent.str() << "]\n";
    os << "  from " << cl.from.buffer << " @ [" << rankText(cl.from.rank)
       << "] [" << cl.from.index.str() << "]\n";
    os << "  to " << cl.to.buffer << " @ [" << rankText(cl.to.rank) << "] ["
       << cl.to.index.str() << "]\n";
    os << "end\n";
  }
  return os.str();
}

namespace {
// Splits "a b [expr] c [expr]" into words, keeping bracketed text whole
// (without the outer brackets).
bool splitWords(const std::string &line, std::vector<std::string> &out,
                std::vector<bool> &bracketed) {
  size_t i = 0;
  while (i < line.size()) {
    if (std::isspace((unsigned char)line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '[') {
      int depth = 0;
      size_t b = i;
      for (; i < line.size(); ++i) {
        if (line[i] == '[')
          ++depth;
        else if (line[i] == ']' && --depth == 0)
          break;
      }
      if (i >= line.size())
        return false;
      out.push_back(line.substr(b + 1, i - b - 1));
      bracketed.push_back(true);
      ++i;
      continue;
    }
    size_t b = i;
    while (i < line.size() && !std::isspace((unsigned char)line[i]))
      ++i;
    out.push_back(line.substr(b, i - b));
    bracketed.push_back(false);
  }
  return true;
}
} // namespace

bool readDesc(const std::string &text, Collective &out, std::string &error) {
  out = Collective();
  std::istringstream is(text);
  std::string line;
  int lineNo = 0;
  Clause *cur = nullptr;
  bool header = false;
  std::string pendingBound;
  auto fail = [&](const std::string &m) {
    error = "desc line " + std::to_string(lineNo) + ": " + m;
    return false;
  };
  auto expr = [&](const std::string &s, Expr &e) {
    std::string err;
    e = Expr::parse(s, err);
    if (e.isNull())
      return fail("bad expression '" + s + "': " + err);
    return true;
  };
  auto access = [&](const std::vector<std::string> &w,
                    const std::vector<bool> &br, Access &a) {
    if (w.size() != 5 || w[2] != "@" || !br[3] || !br[4])
      return fail("expected 'BUFFER @ [RANK] [INDEX]'");
    a.buffer = w[1];
    if (w[3] == "*")
      a.rank.every = true;
    else if (!expr(w[3], a.rank.rank))
      return false;
    return expr(w[4], a.index);
  };
  while (std::getline(is, line)) {
    ++lineNo;
    std::vector<std::string> w;
    std::vector<bool> br;
    if (!splitWords(line, w, br))
      return fail("unbalanced '['");
    if (w.empty() || w[0][0] == '#')
      continue;
    const std::string &k = w[0];
    SrcLoc loc{lineNo, 1};
    if (!header) {
      if (k != "purlin-desc" || w.size() != 2 || w[1] != "1")
        return fail("expected 'purlin-desc 1'");
      header = true;
    } else if (k == "collective" && w.size() == 2) {
      out.name = w[1];
      out.loc = loc;
    } else if (k == "param" && w.size() >= 3) {
      if (w.size() >= 5 && w[w.size() - 2] == "=" && !br.back()) {
        pendingBound = w.back();
        w.resize(w.size() - 2);
        br.resize(br.size() - 2);
      } else
        pendingBound.clear();
      Param p;
      p.bound = pendingBound;
      p.name = w[1];
      p.loc = loc;
      const std::string &kind = w[2];
      if (!parseParamKind(kind, p.kind))
        return fail("unknown parameter kind '" + kind + "'");
      if (p.kind == ParamKind::Table) {
        size_t i = 3;
        for (; i < w.size() && br[i]; ++i) {
          Expr e;
          if (!expr(w[i], e))
            return false;
          p.dims.push_back(e);
        }
        if (i + 2 != w.size() || w[i] != "max" || !br[i + 1])
          return fail("expected 'param NAME table [EXT]... max [EXPR]'");
        if (!expr(w[i + 1], p.max))
          return false;
      }
      out.params.push_back(p);
    } else if (k == "buffer" && w.size() == 5 && br[4]) {
      Buffer b;
      if (w[1] == "in")
        b.role = BufferRole::In;
      else if (w[1] == "out")
        b.role = BufferRole::Out;
      else
        return fail("expected 'in' or 'out'");
      b.name = w[2];
      b.dtype = w[3];
      b.loc = loc;
      if (!expr(w[4], b.size))
        return false;
      out.buffers.push_back(b);
    } else if (k == "clause" && w.size() == 2) {
      out.clauses.emplace_back();
      cur = &out.clauses.back();
      cur->loc = loc;
      if (!parseRedOp(w[1], cur->op))
        cur->opParam = w[1]; // an Op parameter; checkStructure verifies it
    } else if (k == "dim" && cur && w.size() == 3 && br[2]) {
      Dim d;
      d.name = w[1];
      d.loc = loc;
      if (!expr(w[2], d.extent))
        return false;
      cur->dims.push_back(d);
    } else if (k == "from" && cur) {
      if (!access(w, br, cur->from))
        return false;
      cur->from.loc = loc;
    } else if (k == "to" && cur) {
      if (!access(w, br, cur->to))
        return false;
      cur->to.loc = loc;
    } else if (k == "end" && cur) {
      cur = nullptr;
    } else {
      return fail("unexpected '" + line + "'");
    }
  }
  if (!header)
    return fail("empty description");
  if (cur)
    return fail("clause without 'end'");
  return true;
}

namespace {
bool parseInt(const std::string &s, int64_t &out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+'))
    neg = s[i++] == '-';
  if (i == s.size())
    return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (s[i] - '0');
  }
  out = neg ? -v : v;
  return true;
}
} // namespace

bool parseBindingList(const Collective &c, const std::string &text, Binding &b,
                      std::string &error) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      error = "expected NAME=VALUE, got '" + item + "'";
      return false;
    }
    std::string n = item.substr(0, eq), v = item.substr(eq + 1);
    const Param *p = c.param(n);
    if (!p) {
      error = "collective '" + c.name + "' has no parameter '" + n + "'";
      return false;
    }
    if (p->kind == ParamKind::Type) {
      if (!parseDType(v, b.dtype)) {
        error = "unknown element type '" + v + "'";
        return false;
      }
    } else if (p->kind == ParamKind::Op) {
      if (!parseRedOp(v, b.redop) || b.redop == RedOp::Copy) {
        error = "unknown reduction op '" + v + "' (sum, prod, min, max or avg)";
        return false;
      }
    } else if (p->kind == ParamKind::Table) {
      std::vector<int64_t> vals;
      std::stringstream vs(v);
      std::string x;
      while (std::getline(vs, x, ':')) {
        int64_t iv;
        if (!parseInt(x, iv)) {
          error = "bad value '" + x + "' in table '" + n + "'";
          return false;
        }
        vals.push_back(iv);
      }
      b.tables[n] = vals;
    } else {
      int64_t iv;
      if (!parseInt(v, iv)) {
        error = "bad value '" + v + "' for parameter '" + n + "'";
        return false;
      }
      b.scalars[n] = iv;
    }
  }
  return true;
}

} // namespace purlin
