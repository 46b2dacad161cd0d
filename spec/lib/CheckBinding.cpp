// checkBinding: the rules of a collective that need parameter values,
// visited name by name (ranks in range, sets without repeats, indexes in
// bounds, no two names to one place, steps reading what earlier clauses
// wrote).
#include "purlin/spec/Collective.h"

#include <algorithm>

namespace purlin {

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
    } else if (p.kind == ParamKind::Group) {
      int64_t v = b.scalars.at(p.name);
      if (v < 1 || R % v != 0)
        return fail(p.loc, "group size '" + p.name + "' = " + std::to_string(v) +
                               " must divide the rank count " + std::to_string(R));
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
  // writer[out buffer][rank][element]: the last name that writes it (an
  // index into `names`), -1 while none has.
  std::vector<std::vector<std::vector<int32_t>>> writer(c.buffers.size());
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role == BufferRole::Out)
      writer[i].assign(R, std::vector<int32_t>(bc.bufElems[i], -1));
  int64_t visited = 0;
  std::vector<std::vector<int64_t>> names; // (clause, coordinates...) by id
  std::vector<int64_t> F, D, sorted;
  for (size_t ci = 0; ci < c.clauses.size(); ++ci) {
    const Clause &cl = c.clauses[ci];
    const auto &k = bc.clauses[ci];
    // A step (a clause that reads an output) reads places that earlier
    // clauses wrote, and may write over them.
    const bool step = readsOutput(c, ci);
    auto where = [&](const int64_t *coords) {
      return "name " + nameText(cl, coords) + " under " + bindingText(c, b);
    };
    auto place = [&](const std::string &buf, int64_t r, int64_t i) {
      return "'" + buf + "@" + std::to_string(r) + "[" + std::to_string(i) + "]'";
    };
    // Reads of a step, before its own writes.
    auto reads = [&](const int64_t *s) -> bool {
      int64_t fi;
      if (!bc.ranksOf((int)ci, true, s, F) || !k.fromIndex.eval(s, fi) || fi < 0 ||
          fi >= bc.bufElems[k.fromBuf])
        return true; // reported below
      for (int64_t p : F)
        if (p >= 0 && p < R && writer[k.fromBuf][p][fi] < 0)
          return fail(cl.from.loc, where(s + bc.dimSlot0) + " reads " +
                                       place(cl.from.buffer, p, fi) +
                                       ", which no earlier clause writes");
      return true;
    };
    // A rank selector's ranks: in [0, R), none twice, at least one.
    auto ranks = [&](const int64_t *coords, bool from, std::vector<int64_t> &v) -> bool {
      const Access &a = from ? cl.from : cl.to;
      const SrcLoc at = a.rankLoc.line ? a.rankLoc : a.loc;
      const std::string side = from ? "contributor" : "destination";
      if (!a.rank.every && !a.rank.isSet() && (v.size() != 1 || v[0] < 0 || v[0] >= R))
        return fail(at, side + " rank out of range: " + where(coords) + " has no " + side);
      if (v.empty())
        return fail(at, "empty " + side + " set: " + where(coords) + " has no " + side);
      sorted = v;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] < 0 || sorted[i] >= R)
          return fail(at, side + " rank out of range: " + where(coords) + " lists rank " +
                              std::to_string(sorted[i]) + ", outside [0, " +
                              std::to_string(R) + ")");
        if (i && sorted[i] == sorted[i - 1])
          return fail(at, "a rank twice in a " + side + " set: " + where(coords) +
                              " lists rank " + std::to_string(sorted[i]) + " twice");
      }
      return true;
    };
    auto check = [&](const int64_t *s) -> bool {
      if (maxNames && visited >= maxNames)
        return false;
      ++visited;
      const int64_t *coords = s + bc.dimSlot0;
      int64_t fi, ti;
      if (!bc.ranksOf((int)ci, true, s, F))
        F.assign(1, -1);
      if (!bc.ranksOf((int)ci, false, s, D))
        D.assign(1, -1);
      if (!ranks(coords, true, F) || !ranks(coords, false, D))
        return false;
      if (!k.fromIndex.eval(s, fi) || fi < 0 || fi >= bc.bufElems[k.fromBuf])
        return fail(cl.from.indexLoc.line ? cl.from.indexLoc : cl.from.loc,
                    "the index of '" + cl.from.buffer + "' is out of bounds: " +
                        where(coords) + " reads " + std::to_string(fi) + ", size " +
                        std::to_string(bc.bufElems[k.fromBuf]));
      if (!k.toIndex.eval(s, ti) || ti < 0 || ti >= bc.bufElems[k.toBuf])
        return fail(cl.to.indexLoc.line ? cl.to.indexLoc : cl.to.loc,
                    "the index of '" + cl.to.buffer + "' is out of bounds: " +
                        where(coords) + " writes " + std::to_string(ti) + ", size " +
                        std::to_string(bc.bufElems[k.toBuf]));
      std::vector<int64_t> rec{(int64_t)ci};
      rec.insert(rec.end(), coords, coords + k.ndims);
      names.push_back(rec);
      for (int64_t r : D) {
        int32_t &w = writer[k.toBuf][r][ti];
        if (w >= 0 && (names[w][0] == (int64_t)ci || !step)) {
          const auto &fw = names[w];
          const Clause &ocl = c.clauses[fw[0]];
          return fail(cl.to.loc, "two names write one place: " + where(coords) +
                                     " and name " + nameText(ocl, fw.data() + 1) +
                                     " both write " + place(cl.to.buffer, r, ti));
        }
        w = (int32_t)names.size() - 1;
      }
      return true;
    };
    bool ok = (!step || bc.visit((int)ci, reads, err)) && bc.visit((int)ci, check, err);
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

} // namespace purlin
