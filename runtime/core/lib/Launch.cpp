#include "purlin/core/Launch.h"

namespace purlin {

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

int64_t callBytes(const Collective &c, const Binding &b) {
  int64_t m = 0;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    int64_t n = 0;
    std::string err;
    if (bufferElems(c, b, (int)i, n, err) && n * dtypeSize(b.dtype) > m)
      m = n * dtypeSize(b.dtype);
  }
  return m;
}

int choosePlan(const purlin_collective_info *info, int64_t bytes, bool inplace,
               const std::string &strategy) {
  auto fits = [&](const purlin_plan_info &p) {
    return bytes >= p.min_bytes && (p.max_bytes < 0 || bytes < p.max_bytes);
  };
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < info->nplans; ++i) {
      const purlin_plan_info &p = info->plans[i];
      if (!strategy.empty() && strategy != p.strategy)
        continue;
      if (inplace && !p.inplace_safe)
        continue;
      if (pass == 0 && strategy.empty() && !fits(p))
        continue;
      return i;
    }
  return -1;
}

} // namespace purlin
