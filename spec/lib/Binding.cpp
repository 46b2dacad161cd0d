// Bindings: parameter values, their checks (checkBinding), the sample
// bindings a symbolic collective is verified under, the bound collective
// that visits names fast, and the "R=8,C=1024" binding lists.
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
