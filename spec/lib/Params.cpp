// A binding as the executor's launch parameters (Exec.h Params).
#include "purlin/spec/Params.h"

namespace purlin {

bool planShared(const Collective &c, const Binding &b,
                const purlin_plan_info &plan, int R, int elemSize,
                exec::Shared &S, std::string &error) {
  S.R = R;
  S.L = plan.lanes;
  S.K = plan.chunks;
  S.op = (int)b.redop;
  S.elemSize = elemSize;
  S.nsignals = plan.nsignals;
  for (size_t i = 0; i < c.buffers.size() && i < (size_t)exec::kMaxBuffers; ++i) {
    const DType t = bufferDType(c, b, (int)i);
    S.bufDType[i] = t == b.dtype ? -1 : (int8_t)t;
  }
  if (!fillParams(c, b, S.P, error))
    return false;
  S.liveLanes = liveLanes(plan, S);
  return true;
}

int liveLanes(const purlin_plan_info &plan, const exec::Shared &S) {
  if (!plan.rows || S.L <= 1)
    return 0;
  const int64_t K = S.K > 0 ? S.K : 1;
  const int64_t rows = plan.rows(&S), need = rows <= 0 ? 1 : (rows + K - 1) / K;
  return need < S.L ? (int)need : 0;
}

bool fillParams(const Collective &c, const Binding &b, exec::Params &P,
                std::string &error) {
  P = exec::Params();
  int ns = 0, nt = 0;
  int64_t words = 0;
  for (auto &p : c.params) {
    if (isScalarParam(p.kind)) {
      auto it = b.scalars.find(p.name);
      if (it == b.scalars.end()) {
        error = "parameter '" + p.name + "' is not bound";
        return false;
      }
      if (ns >= exec::kMaxScalars) {
        error = "too many scalar parameters for the executor";
        return false;
      }
      P.s[ns++] = it->second;
    } else if (p.kind == ParamKind::Table) {
      auto it = b.tables.find(p.name);
      if (it == b.tables.end()) {
        error = "table '" + p.name + "' is not bound";
        return false;
      }
      if (nt >= exec::kMaxTables || p.dims.size() > 3 ||
          words + (int64_t)it->second.size() > exec::kMaxTableWords) {
        error = "table '" + p.name + "' exceeds the executor's table limits";
        return false;
      }
      P.tabOff[nt] = words;
      for (size_t d = 0; d < 3; ++d) {
        int64_t e = 1;
        if (d < p.dims.size() && !evalParamExpr(c, b, p.dims[d], e, error))
          return false;
        P.tabExt[nt][d] = e;
      }
      for (int64_t v : it->second)
        P.tab[words++] = v;
      ++nt;
    }
  }
  return true;
}

int64_t tableEntries(const Collective &c, const Binding &b,
                     std::string &error) {
  int64_t words = 0;
  for (auto &p : c.params) {
    if (p.kind != ParamKind::Table)
      continue;
    int64_t n = 1;
    for (const Expr &d : p.dims) {
      int64_t e = 0;
      if (!evalParamExpr(c, b, d, e, error))
        return -1;
      n *= e > 0 ? e : 0;
    }
    words += n;
  }
  return words;
}

int maxRanksForTables(const Collective &c, std::string &why) {
  const Param *rp = c.ranksParam();
  int best = 0;
  for (int R = 1; R <= exec::kMaxRanks; ++R) {
    Binding b;
    if (rp)
      b.scalars[rp->name] = R;
    std::string err;
    const int64_t words = tableEntries(c, b, err);
    if (words < 0)
      return exec::kMaxRanks; // extents of other parameters too
    if (words > exec::kMaxTableWords)
      break;
    best = R;
  }
  if (best == exec::kMaxRanks)
    return best;
  why.clear();
  for (auto &p : c.params)
    if (p.kind == ParamKind::Table) {
      std::string shape, count;
      for (const Expr &d : p.dims) {
        shape += "[" + d.str() + "]";
        count += (count.empty() ? "" : "*") + d.str();
      }
      why += (why.empty() ? "" : ", ") + std::string("table ") + p.name +
             shape + " has " + count + " entries";
    }
  why += " at R ranks, and the executor holds " +
         std::to_string(exec::kMaxTableWords) + " table entries in all";
  return best;
}

} // namespace purlin
