// Epilogues (Collective.h): their rules (checkEpilogue, part of
// checkStructure) and their meaning for the reference evaluator, computed
// straight from the statements, one row at a time.
#include "purlin/spec/Epilogue.h"
#include "purlin/spec/exec/Epilogue.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace purlin {

const EpiFunction *epiFunction(const std::string &name) {
  static const EpiFunction kFunctions[] = {
      {"sqrt", 1, false}, {"abs", 1, false},   {"min", 2, false},
      {"max", 2, false},  {"rowsum", 1, true}, {"rowmax", 1, true}};
  for (const EpiFunction &f : kFunctions)
    if (name == f.name)
      return &f;
  return nullptr;
}

namespace {
const char *const kFunctionList = "sqrt, abs, min, max, rowsum, rowmax";

struct EpiChecker {
  const Collective &c;
  const Clause &cl;
  std::vector<Diag> &diags;
  std::vector<std::string> coords, inner;
  std::set<std::string> lets, uniformLets;
  bool ok = true;

  void error(SrcLoc loc, const std::string &m) {
    diags.push_back({loc.line ? loc : cl.epilogue.loc, m});
    ok = false;
  }
  // A communicated buffer has the clause's element type (Structure.cpp
  // checks the clause's own); a buffer only the epilogue reads or stores
  // (a residual, a weight, a scale, a quantized output) may declare its own
  // floating type: its elements widen to f32 and narrow from it like any
  // other (docs/language.md, "Epilogues"). A `type` parameter other than
  // the clause's has nothing to bind it.
  void sameType(const Buffer &b, SrcLoc loc) {
    const Buffer *f = c.buffer(cl.from.buffer);
    if (!f || b.dtype == f->dtype)
      return;
    DType t;
    const bool concrete = declaredDType(c, b, t);
    if (clauseBuffer(c, b.name))
      error(loc, "buffer '" + b.name + "' is " + b.dtype + ", but the clause "
                 "reduces " + f->dtype + "; a buffer that a clause "
                 "communicates has the clause's element type");
    else if (!concrete)
      error(loc, "buffer '" + b.name + "' is " + b.dtype + ", but the clause "
                 "reduces " + f->dtype + "; an epilogue's own buffer has the "
                 "clause's type or a concrete floating type");
    else if (t != DType::F32 && t != DType::F16 && t != DType::BF16 &&
             t != DType::F8E4M3 && t != DType::F8E5M2)
      error(loc, "buffer '" + b.name + "' is " + b.dtype + "; an epilogue's "
                 "own buffer of another type than the clause's is f32, f16, "
                 "bf16, f8e4m3 or f8e5m2");
  }
  bool isCoord(const std::string &n) const {
    return std::find(coords.begin(), coords.end(), n) != coords.end();
  }
  bool isScalar(const std::string &n) const {
    const Param *p = c.param(n);
    return p && isScalarParam(p->kind);
  }
  // An index: coordinates and scalar parameters, affine in the coordinates.
  void index(const Expr &e, SrcLoc loc, const std::string &what) {
    std::vector<std::string> names;
    e.names(names);
    for (auto &n : names)
      if (!isCoord(n) && !isScalar(n)) {
        error(loc, "unknown name '" + n + "' in " + what +
                       " (an index uses the clause's coordinates and "
                       "integer parameters)");
        return;
      }
    if (!e.isLinearIn(coords))
      error(loc, what + " must be affine in the coordinates, got '" +
                     e.str() + "'");
  }
  // A value; returns whether it is the same for every element of a row.
  bool value(const Expr &e, SrcLoc loc) {
    switch (e.kind()) {
    case Expr::Kind::Const:
      return true;
    case Expr::Kind::Var: {
      const std::string &n = e.name();
      if (n == kEpiRecv)
        return false;
      if (lets.count(n))
        return uniformLets.count(n) != 0;
      if (isCoord(n))
        return std::find(inner.begin(), inner.end(), n) == inner.end();
      if (isScalar(n))
        return true;
      if (const Param *p = c.param(n))
        error(loc, "'" + n + "' is a " + paramKindName(p->kind) +
                       " parameter, not a value, in the epilogue");
      else if (c.buffer(n))
        error(loc, "buffer '" + n + "' needs an index in the epilogue ('" +
                       n + "[...]')");
      else
        error(loc, "unknown name '" + n + "' in the epilogue");
      return true;
    }
    case Expr::Kind::Table: {
      const Buffer *b = c.buffer(e.name());
      if (!b) {
        error(loc, "unknown buffer '" + e.name() + "' in the epilogue");
        return true;
      }
      if (b->role != BufferRole::In) {
        error(loc, "output '" + e.name() +
                       "' cannot be read in an epilogue; read an input or "
                       "a 'let'");
        return true;
      }
      if (e.operands().size() != 1) {
        error(loc, "buffer '" + e.name() + "' takes one index, got " +
                       std::to_string(e.operands().size()));
        return true;
      }
      index(e.operands()[0], loc, "the index of '" + e.name() + "'");
      sameType(*b, loc);
      for (auto &n : inner)
        if (e.operands()[0].mentions(n))
          return false;
      return true;
    }
    case Expr::Kind::Call: {
      const EpiFunction *f = epiFunction(e.name());
      if (!f) {
        error(loc, "unknown function '" + e.name() + "' (the functions are " +
                       kFunctionList + ")");
        return true;
      }
      if ((int)e.operands().size() != f->args) {
        error(loc, "'" + e.name() + "' takes " + std::to_string(f->args) +
                       " argument(s), got " +
                       std::to_string(e.operands().size()));
        return true;
      }
      bool u = true;
      for (auto &o : e.operands())
        u &= value(o, loc);
      return f->rowReduction || u;
    }
    case Expr::Kind::Mod:
      error(loc, "'%' is not defined on an epilogue's f32 values");
      return true;
    default: {
      bool u = true;
      for (auto &o : e.operands())
        u &= value(o, loc);
      return u;
    }
    }
  }

  void run() {
    const Epilogue &ep = cl.epilogue;
    for (auto &d : cl.dims)
      coords.push_back(d.name);
    if (cl.op == RedOp::Copy && cl.opParam.empty())
      error(ep.loc, "an epilogue needs a reduce clause ('copy' names are "
                    "moved, not computed)");
    if (!cl.from.rank.every || !cl.to.rank.every)
      error(ep.loc, "an epilogue's clause must read and write every rank "
                    "('x@*[...] -> y@*[...]')");
    bool rowsOk = ep.rows.size() < cl.dims.size();
    for (size_t k = 0; rowsOk && k < ep.rows.size(); ++k)
      rowsOk = ep.rows[k] == cl.dims[k].name;
    if (!rowsOk)
      error(ep.loc, "the row coordinates must be the clause's first "
                    "coordinates, in order, with at least one after them "
                    "('rows (n)' for 'name (n, i)')");
    for (size_t k = ep.rows.size(); k < cl.dims.size(); ++k)
      inner.push_back(cl.dims[k].name);
    for (auto &d : cl.dims)
      for (auto &n : coords)
        if (d.extent.mentions(n))
          error(d.loc, "an epilogue's clause needs extents of parameters "
                       "only; '" + d.extent.str() + "' uses '" + n + "'");
    std::set<std::string> stored;
    bool storesDest = false;
    for (const EpiStmt &st : ep.stmts) {
      bool uniform = value(st.value, st.valueLoc);
      if (!st.let.empty()) {
        if (lets.count(st.let) || isCoord(st.let) || c.param(st.let) ||
            c.buffer(st.let) || st.let == kEpiRecv || epiFunction(st.let))
          error(st.loc, "'" + st.let + "' is already defined; a let needs a "
                        "new name");
        lets.insert(st.let);
        if (uniform)
          uniformLets.insert(st.let);
        continue;
      }
      const Buffer *b = c.buffer(st.buffer);
      if (!b || b->role != BufferRole::Out) {
        error(st.loc, b ? "'" + st.buffer + "' is an input; an epilogue "
                          "stores only to outputs"
                        : "unknown buffer '" + st.buffer + "'");
        continue;
      }
      if (!stored.insert(st.buffer).second)
        error(st.loc, "output '" + st.buffer + "' is stored twice in the "
                      "epilogue");
      for (auto &o : c.clauses)
        if (&o != &cl && o.to.buffer == st.buffer)
          error(st.loc, "output '" + st.buffer + "' is written by another "
                        "clause; an epilogue's outputs are its own");
      index(st.index, st.loc, "the index of the store to '" + st.buffer + "'");
      sameType(*b, st.loc);
      bool perRow = true;
      for (auto &n : inner)
        perRow &= !st.index.mentions(n);
      if (perRow && !uniform)
        error(st.valueLoc, "'" + st.buffer + "[" + st.index.str() +
                               "]' is stored once per row, but its value "
                               "varies along the row");
      if (st.buffer == cl.to.buffer) {
        storesDest = true;
        if (st.index != cl.to.index)
          error(st.loc, "the epilogue stores '" + st.buffer + "' at '" +
                            st.index.str() + "', but the clause writes it "
                            "at '" + cl.to.index.str() + "'");
      }
    }
    if (!storesDest)
      error(ep.loc, "the epilogue must store the clause's destination ('" +
                        cl.to.buffer + "[" + cl.to.index.str() + "] = ...')");
  }
};
} // namespace

bool checkEpilogue(const Collective &c, const Clause &cl,
                   std::vector<Diag> &diags) {
  if (cl.epilogue.empty())
    return true;
  EpiChecker k{c, cl, diags};
  k.run();
  return k.ok;
}

bool epilogueReads(const Clause &cl, const std::string &buffer) {
  for (const EpiStmt &st : cl.epilogue.stmts) {
    std::vector<std::string> names;
    st.value.names(names);
    if (std::find(names.begin(), names.end(), buffer) != names.end())
      return true;
  }
  return false;
}

bool epilogueStores(const Clause &cl, const std::string &buffer) {
  for (const EpiStmt &st : cl.epilogue.stmts)
    if (st.let.empty() && st.buffer == buffer)
      return true;
  return false;
}

namespace {
/// Whether `e` reads buffer `in` only at `at` (a single subscript equal to
/// it); `reads` is set where it reads `in` at all.
bool readsOnlyAt(const Expr &e, const std::string &in, const Expr &at, bool &reads) {
  if (e.isNull())
    return true;
  if (e.kind() == Expr::Kind::Table && e.name() == in) {
    reads = true;
    if (e.operands().size() != 1 || e.operands()[0] != at)
      return false;
  }
  for (const Expr &o : e.operands())
    if (!readsOnlyAt(o, in, at, reads))
      return false;
  return true;
}
} // namespace

bool epilogueLocalPair(const Collective &c, int in, int out) {
  if (in < 0 || out < 0 || in >= (int)c.buffers.size() || out >= (int)c.buffers.size())
    return false;
  const Buffer &bi = c.buffers[in], &bo = c.buffers[out];
  if (bi.role != BufferRole::In || bo.role != BufferRole::Out || bi.dtype != bo.dtype)
    return false;
  // One clause's epilogue reads `in` and stores `out`; no clause moves
  // either, and no other epilogue touches them.
  const Clause *owner = nullptr;
  for (const Clause &cl : c.clauses) {
    if (cl.from.buffer == bi.name || cl.to.buffer == bo.name)
      return false;
    const bool r = epilogueReads(cl, bi.name), st = epilogueStores(cl, bo.name);
    if (!r && !st)
      continue;
    if (!r || !st || owner)
      return false;
    owner = &cl;
  }
  if (!owner)
    return false;
  // One store of `out`, at the clause's destination index (one element a
  // name: one thread stores it); every read of `in` at that index, none in
  // a statement after the store.
  const std::vector<EpiStmt> &stmts = owner->epilogue.stmts;
  size_t at = stmts.size();
  for (size_t k = 0; k < stmts.size(); ++k)
    if (stmts[k].let.empty() && stmts[k].buffer == bo.name) {
      if (at != stmts.size())
        return false;
      at = k;
    }
  if (at == stmts.size() || stmts[at].index != owner->to.index)
    return false;
  // An index that varies along the row (an inner coordinate, one after the
  // row coordinates, in it): a row-uniform read is hoisted into the row's
  // uniform values, which every thread of the lane computes.
  bool inner = false;
  for (size_t d = owner->epilogue.rows.size(); d < owner->dims.size(); ++d)
    inner = inner || owner->to.index.mentions(owner->dims[d].name);
  if (!inner)
    return false;
  for (size_t k = 0; k < stmts.size(); ++k) {
    bool reads = false;
    if (!readsOnlyAt(stmts[k].value, bi.name, owner->to.index, reads) ||
        !readsOnlyAt(stmts[k].index, bi.name, owner->to.index, reads) || (reads && k > at))
      return false;
  }
  return true;
}

uint64_t epilogueLocalPairs(const Collective &c) {
  uint64_t mask = 0;
  const int nb = (int)c.buffers.size() < 8 ? (int)c.buffers.size() : 8;
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j)
      if (epilogueLocalPair(c, i, j))
        mask |= 1ull << (i * 8 + j);
  return mask;
}

//===----------------------------------------------------------------------===//
// The reference: one row at a time, every statement over the row's elements.
//===----------------------------------------------------------------------===//
namespace {
struct RowEval {
  const Collective &c;
  BoundCollective &bc;
  const Clause &cl;
  int ci;
  const std::vector<std::vector<uint8_t>> &in; // this rank's buffers
  std::vector<std::vector<uint8_t>> &out;      // this rank's outputs
  const std::vector<float> &recv;
  const std::vector<std::vector<int64_t>> &slots; // per element
  bool unfused;
  std::string &error;
  std::map<std::string, std::vector<float>> lets;
  size_t m() const { return slots.size(); }

  float round(float v) const { // the unfused chain stores every value in T
    uint8_t b[8];
    floatToElement(bc.dtype, v, b);
    return elementToFloat(bc.dtype, b);
  }
  bool index(const Expr &e, std::vector<int64_t> &idx) {
    CompiledExpr ce;
    auto slot = [&](const std::string &n) -> int {
      for (size_t d = 0; d < cl.dims.size(); ++d)
        if (cl.dims[d].name == n)
          return bc.dimSlot0 + (int)d;
      int s = 0;
      for (auto &p : c.params)
        if (isScalarParam(p.kind)) {
          if (p.name == n)
            return s;
          ++s;
        }
      return -1;
    };
    if (!CompiledExpr::compile(e, slot, [](const std::string &) {
          return (const CompiledExpr::Table *)nullptr; }, ce, error))
      return false;
    idx.resize(m());
    for (size_t k = 0; k < m(); ++k)
      if (!ce.eval(slots[k].data(), idx[k])) {
        error = "reference: the index '" + e.str() + "' cannot be evaluated";
        return false;
      }
    return true;
  }
  bool eval(const Expr &e, std::vector<float> &v) {
    v.assign(m(), 0.0f);
    switch (e.kind()) {
    case Expr::Kind::Const:
      std::fill(v.begin(), v.end(), (float)e.constValue());
      return true;
    case Expr::Kind::Var: {
      if (e.name() == kEpiRecv) {
        v = recv;
        return true;
      }
      auto it = lets.find(e.name());
      if (it != lets.end()) {
        v = it->second;
        return true;
      }
      std::vector<int64_t> x;
      if (!index(e, x))
        return false;
      for (size_t k = 0; k < m(); ++k)
        v[k] = (float)x[k];
      return true;
    }
    case Expr::Kind::Table: {
      const int b = c.bufferIndex(e.name());
      std::vector<int64_t> x;
      if (b < 0 || !index(e.operands()[0], x))
        return false;
      const DType t = bc.bufDType[b];
      const int sz = dtypeSize(t);
      for (size_t k = 0; k < m(); ++k) {
        if (x[k] < 0 || x[k] >= bc.bufElems[b]) {
          error = "reference: '" + e.str() + "' reads outside '" + e.name() + "'";
          return false;
        }
        v[k] = elementToFloat(t, in[b].data() + x[k] * sz);
      }
      return true;
    }
    case Expr::Kind::Call: {
      std::vector<float> a, b;
      if (!eval(e.operands()[0], a) ||
          (e.operands().size() > 1 && !eval(e.operands()[1], b)))
        return false;
      const std::string &f = e.name();
      if (f == "rowsum" || f == "rowmax") {
        const int op = f == "rowsum" ? exec::kEpiRowSum : exec::kEpiRowMax;
        float acc = purlin_epi_identity(op);
        for (float x : a) // element order: the host target's fold
          acc = purlin_epi_fold(op, acc, x);
        std::fill(v.begin(), v.end(), acc);
        return true;
      }
      for (size_t k = 0; k < m(); ++k)
        v[k] = f == "sqrt"  ? purlin_epi_sqrt(a[k])
               : f == "abs" ? purlin_epi_abs(a[k])
               : f == "min" ? purlin_epi_min(a[k], b[k])
                            : purlin_epi_max(a[k], b[k]);
      return true;
    }
    case Expr::Kind::Neg:
      if (!eval(e.operands()[0], v))
        return false;
      for (float &x : v)
        x = -x;
      return true;
    default: {
      std::vector<float> a, b;
      if (!eval(e.operands()[0], a) || !eval(e.operands()[1], b))
        return false;
      for (size_t k = 0; k < m(); ++k)
        switch (e.kind()) {
        case Expr::Kind::Add: v[k] = a[k] + b[k]; break;
        case Expr::Kind::Sub: v[k] = a[k] - b[k]; break;
        case Expr::Kind::Mul: v[k] = a[k] * b[k]; break;
        default: v[k] = a[k] / b[k]; break;
        }
      return true;
    }
    }
  }
  bool run() {
    for (const EpiStmt &st : cl.epilogue.stmts) {
      std::vector<float> v;
      if (!eval(st.value, v))
        return false;
      if (!st.let.empty()) {
        if (unfused)
          for (float &x : v)
            x = round(x);
        lets[st.let] = std::move(v);
        continue;
      }
      const int b = c.bufferIndex(st.buffer);
      std::vector<int64_t> x;
      if (!index(st.index, x))
        return false;
      for (size_t k = 0; k < m(); ++k) {
        if (x[k] < 0 || x[k] >= bc.bufElems[b]) {
          error = "reference: a store maps outside '" + st.buffer + "'";
          return false;
        }
        floatToElement(bc.bufDType[b], v[k],
                       out[b].data() + x[k] * dtypeSize(bc.bufDType[b]));
      }
    }
    return true;
  }
};
} // namespace

bool evaluateEpilogue(const Collective &c, BoundCollective &bc, int ci,
                      const RankBuffers &in, RankBuffers &out, bool unfused,
                      std::string &error) {
  const Clause &cl = c.clauses[ci];
  const auto &k = bc.clauses[ci];
  const size_t rowDims = cl.epilogue.rows.size();
  const int sz = dtypeSize(bc.dtype);
  // The names in row-major order, cut into rows.
  std::vector<std::vector<int64_t>> names;
  if (!bc.visit(ci, [&](const int64_t *s) {
        names.emplace_back(s, s + bc.dimSlot0 + k.ndims);
        return true;
      }, error))
    return false;
  size_t a = 0;
  while (a < names.size()) {
    size_t b = a + 1;
    auto sameRow = [&](size_t x) {
      for (size_t d = 0; d < rowDims; ++d)
        if (names[x][bc.dimSlot0 + d] != names[a][bc.dimSlot0 + d])
          return false;
      return true;
    };
    while (b < names.size() && sameRow(b))
      ++b;
    std::vector<std::vector<int64_t>> row(names.begin() + a, names.begin() + b);
    // The received values: every rank's contribution, ascending.
    std::vector<float> recv(row.size());
    for (size_t e = 0; e < row.size(); ++e) {
      int64_t fi;
      if (!k.fromIndex.eval(row[e].data(), fi) || fi < 0 ||
          fi >= bc.bufElems[k.fromBuf]) {
        error = "reference: a name maps outside its buffers";
        return false;
      }
      const int op = (int)k.op;
      float acc = elementToFloat(bc.dtype, in[0][k.fromBuf].data() + fi * sz);
      for (int64_t p = 1; p < bc.R; ++p)
        acc = purlin_epi_combine(op, acc, elementToFloat(bc.dtype, in[p][k.fromBuf].data() + fi * sz));
      recv[e] = k.op == RedOp::Avg ? acc / (float)bc.R : acc;
      if (unfused) {
        uint8_t t[8];
        floatToElement(bc.dtype, recv[e], t);
        recv[e] = elementToFloat(bc.dtype, t);
      }
    }
    for (int64_t q = 0; q < bc.R; ++q) {
      RowEval ev{c, bc, cl, ci, in[q], out[q], recv, row, unfused, error, {}};
      if (!ev.run())
        return false;
    }
    a = b;
  }
  return true;
}

} // namespace purlin
