// Bindings: parameter values, the sample bindings a symbolic collective is
// verified under, the bound collective that visits names fast, and the
// "R=8,C=1024" binding lists (checkBinding: CheckBinding.cpp).
#include "purlin/spec/Collective.h"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

namespace purlin {

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

bool clauseBuffer(const Collective &c, const std::string &name) {
  for (const Clause &cl : c.clauses)
    if (cl.from.buffer == name || cl.to.buffer == name)
      return true;
  return false;
}

bool declaredDType(const Collective &c, const Buffer &b, DType &t) {
  const Param *p = c.param(b.dtype);
  return !(p && p->kind == ParamKind::Type) && parseDType(b.dtype, t);
}

bool clauseDType(const Collective &c, DType &t, const Buffer **which) {
  for (const Buffer &buf : c.buffers)
    if (clauseBuffer(c, buf.name) && declaredDType(c, buf, t)) {
      if (which)
        *which = &buf;
      return true;
    }
  return false;
}

DType bufferDType(const Collective &c, const Binding &b, int i) {
  DType t;
  return declaredDType(c, c.buffers[i], t) ? t : b.dtype;
}

bool BoundCollective::init(const Collective &c, const Binding &b,
                           std::string &error) {
  coll = &c;
  binding = b;
  R = b.ranks(c);
  dtype = b.dtype;
  bufDType.clear();
  for (size_t i = 0; i < c.buffers.size(); ++i)
    bufDType.push_back(bufferDType(c, b, (int)i));
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
  varSlot = dimSlot0 + (int)maxDims;
  slots.resize(varSlot + 2, 0);

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
    // A set's variable is its own slot (it may not hide a coordinate or a
    // parameter: checkStructure).
    std::string var;
    int varAt = -1;
    auto slot = [&](const std::string &n) -> int {
      if (!var.empty() && n == var)
        return varAt;
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
    bc.fromSet = cl.from.rank.isSet();
    bc.toSet = cl.to.rank.isSet();
    auto rank = [&](const RankSel &sel, int at, CompiledExpr &r, CompiledExpr &n) {
      if (sel.every)
        return true;
      var = sel.var;
      varAt = varSlot + at;
      bool ok = CompiledExpr::compile(sel.rank, slot, table, r, error) &&
                (!sel.isSet() || CompiledExpr::compile(sel.extent, slot, table, n, error));
      var.clear();
      return ok;
    };
    if (!rank(cl.from.rank, 0, bc.fromRank, bc.fromCount) ||
        !rank(cl.to.rank, 1, bc.toRank, bc.toCount) ||
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

bool BoundCollective::ranksOf(int ci, bool from, const int64_t *s,
                              std::vector<int64_t> &out) const {
  const BoundClause &k = clauses[ci];
  out.clear();
  if (from ? k.fromEvery : k.toEvery) {
    for (int64_t r = 0; r < R; ++r)
      out.push_back(r);
    return true;
  }
  const CompiledExpr &rank = from ? k.fromRank : k.toRank;
  if (!(from ? k.fromSet : k.toSet)) {
    int64_t r;
    if (!rank.eval(s, r))
      return false;
    out.push_back(r);
    return true;
  }
  tmp_.assign(s, s + slots.size());
  int64_t n;
  if (!(from ? k.fromCount : k.toCount).eval(tmp_.data(), n))
    return false;
  for (int64_t v = 0; v < n; ++v) {
    tmp_[varSlot + (from ? 0 : 1)] = v;
    int64_t r;
    if (!rank.eval(tmp_.data(), r))
      return false;
    out.push_back(r);
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

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0)
      d.push_back(i);
  return d;
}

std::vector<Binding> sampleBindings(const Collective &c) {
  std::vector<Binding> out;
  bool hasGroup = false;
  for (auto &p : c.params)
    hasGroup |= p.kind == ParamKind::Group;
  // Group sizes divide R: 4 and 6 give them something to divide.
  std::vector<int64_t> Rs = {1, 2, 3, 5};
  if (hasGroup)
    Rs = {1, 2, 3, 4, 5, 6};
  int salt = 0;
  for (int64_t R : Rs)
    for (int gi = 0; gi < (hasGroup ? 4 : 1); ++gi)
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
        const std::vector<int64_t> ds = divisors(std::max<int64_t>(effR, 1));
        for (auto &p : c.params)
          if (p.kind == ParamKind::Root && p.bound.empty()) {
            b.scalars[p.name] = rootEnd ? std::max<int64_t>(effR - 1, 0) : 0;
            hasRoot = true;
          } else if (p.kind == ParamKind::Group && p.bound.empty()) {
            b.scalars[p.name] = ds[gi % ds.size()]; // every divisor of R
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
