#include "purlin/spec/Verify.h"

#include <algorithm>
#include <limits>

namespace purlin {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;

int64_t sat(__int128 v) {
  return v > kInf ? kInf : v < -kInf ? -kInf : (int64_t)v;
}

/// An interval [lo, hi] containing every value `e` takes over the scalar
/// values sampleBindings() uses (R in [1, 5], counts in [1, 4], roots in
/// [0, 4]). Anything unknown (a table entry, a division) widens to "any".
struct Interval {
  int64_t lo, hi;
};
Interval sampleRange(const Collective &c, const Expr &e) {
  const Interval any{-kInf, kInf};
  switch (e.kind()) {
  case Expr::Kind::Const:
    return {e.constValue(), e.constValue()};
  case Expr::Kind::Var: {
    const Param *p = c.param(e.name());
    if (!p)
      return any;
    switch (p->kind) {
    case ParamKind::Ranks:
      return {1, 5};
    case ParamKind::Count:
      return {1, 4};
    case ParamKind::Root:
      return {0, 4};
    default:
      return any;
    }
  }
  case Expr::Kind::Neg: {
    Interval a = sampleRange(c, e.operands()[0]);
    return {-a.hi, -a.lo};
  }
  case Expr::Kind::Add:
  case Expr::Kind::Sub:
  case Expr::Kind::Mul: {
    Interval a = sampleRange(c, e.operands()[0]);
    Interval b = sampleRange(c, e.operands()[1]);
    if (e.kind() == Expr::Kind::Add)
      return {sat((__int128)a.lo + b.lo), sat((__int128)a.hi + b.hi)};
    if (e.kind() == Expr::Kind::Sub)
      return {sat((__int128)a.lo - b.hi), sat((__int128)a.hi - b.lo)};
    __int128 p[] = {(__int128)a.lo * b.lo, (__int128)a.lo * b.hi,
                    (__int128)a.hi * b.lo, (__int128)a.hi * b.hi};
    return {sat(*std::min_element(p, p + 4)), sat(*std::max_element(p, p + 4))};
  }
  default:
    return any;
  }
}

std::string bindingText(const Collective &c, const Binding &b) {
  std::string s;
  for (auto &p : c.params) {
    auto it = b.scalars.find(p.name);
    if (it != b.scalars.end())
      s += (s.empty() ? "" : ", ") + p.name + "=" + std::to_string(it->second);
  }
  return s;
}

/// The elements checkBinding would allocate, and the coordinates it would
/// visit, under `b` (saturating; coordinate-dependent extents count as 1,
/// which is safe because each visited name writes a distinct element).
int64_t enumerationSize(const Collective &c, const Binding &b) {
  int64_t R = std::max<int64_t>(b.ranks(c), 1);
  __int128 total = 0;
  std::string err;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    int64_t n = 0;
    if (!bufferElems(c, b, (int)i, n, err))
      continue; // checkBinding reports it
    total += (__int128)R * std::max<int64_t>(n, 0);
    if (total > kInf)
      return kInf;
  }
  for (auto &cl : c.clauses) {
    __int128 loops = 1;
    for (size_t d = 0; d + 1 < cl.dims.size(); ++d) {
      bool dependent = false;
      for (size_t e = 0; e < d; ++e)
        dependent |= cl.dims[d].extent.mentions(cl.dims[e].name);
      int64_t n = 0;
      if (dependent || !evalParamExpr(c, b, cl.dims[d].extent, n, err))
        continue;
      loops *= std::max<int64_t>(n, 1);
      if (loops > kInf)
        return kInf;
    }
    total += loops;
    if (total > kInf)
      return kInf;
  }
  return (int64_t)total;
}

} // namespace

bool verifyCollective(const Collective &c, std::vector<Diag> &errors,
                      std::vector<Diag> &warnings) {
  if (!checkStructure(c, errors))
    return false;
  // sampleBindings fills tables with sample values: keep their size sane
  // before asking for them.
  for (auto &p : c.params) {
    if (p.kind != ParamKind::Table)
      continue;
    __int128 entries = 1;
    for (auto &d : p.dims) {
      entries *= std::max<int64_t>(sampleRange(c, d).hi, 0);
      if (entries > kMaxVerifyElements)
        break;
    }
    if (entries > kMaxVerifyElements) {
      errors.push_back({p.loc, "table '" + p.name +
                                   "' is too large to verify: its extents "
                                   "must stay small for small parameters"});
      return false;
    }
  }
  std::vector<Binding> samples = sampleBindings(c);
  // A root bound at compile time fits only the rank counts above it.
  std::vector<Binding> usable;
  for (auto &b : samples) {
    bool fits = true;
    for (auto &p : c.params)
      if (p.kind == ParamKind::Root && !p.bound.empty()) {
        auto it = b.scalars.find(p.name);
        fits &= it == b.scalars.end() || it->second < b.ranks(c);
      }
    if (fits)
      usable.push_back(b);
  }
  if (usable.empty() && !samples.empty())
    usable.push_back(samples.back());
  bool warned = false;
  for (auto &b : usable) {
    int64_t size = enumerationSize(c, b);
    if (size > kMaxVerifyElements) {
      if (!warned)
        warnings.push_back(
            {c.loc, "not verified under " + bindingText(c, b) +
                        ": more than " + std::to_string(kMaxVerifyElements) +
                        " elements to enumerate"});
      warned = true;
      continue;
    }
    if (!checkBinding(c, b, errors))
      return false;
  }
  return true;
}

} // namespace purlin
