// A binding as the executor's launch parameters (Exec.h Params).
#include "purlin/spec/Params.h"

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

} // namespace purlin
