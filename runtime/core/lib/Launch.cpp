#include "purlin/runtime/Launch.h"

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

InPlace classifyOverlap(const Collective &c, void *const *bufs, int R,
                        const int64_t *elems, int elemSize) {
  const size_t nb = c.buffers.size();
  InPlace res = InPlace::No;
  for (int r = 0; r < R; ++r)
    for (size_t i = 0; i < nb; ++i)
      for (size_t j = 0; j < nb; ++j) {
        if (c.buffers[i].role != BufferRole::In ||
            c.buffers[j].role != BufferRole::Out)
          continue;
        const uintptr_t a0 = (uintptr_t)bufs[r * nb + i],
                        a1 = a0 + (uintptr_t)(elems[i] * elemSize);
        const uintptr_t b0 = (uintptr_t)bufs[r * nb + j],
                        b1 = b0 + (uintptr_t)(elems[j] * elemSize);
        if (!(a0 < b1 && b0 < a1))
          continue;
        if (a0 == b0 && c.buffers[i].dtype == c.buffers[j].dtype)
          res = res == InPlace::No ? InPlace::SameStart : res;
        else
          return InPlace::Any;
      }
  return res;
}

int choosePlan(const purlin_collective_info *info, int64_t bytes,
               InPlace inplace, const std::string &strategy) {
  auto fits = [&](const purlin_plan_info &p) {
    return bytes >= p.min_bytes && (p.max_bytes < 0 || bytes < p.max_bytes);
  };
  auto allowed = [&](const purlin_plan_info &p) {
    return inplace == InPlace::No || p.inplace_safe ||
           (inplace == InPlace::SameStart && p.inplace_same);
  };
  // In place, a plan that reads the inputs where they are beats one that
  // copies them first, whatever its band; then the band's; then any.
  // Out of place: the band's plan, else the first.
  for (int pass = 0; pass < 4; ++pass)
    for (int i = 0; i < info->nplans; ++i) {
      const purlin_plan_info &p = info->plans[i];
      if (!strategy.empty() && strategy != p.strategy)
        continue;
      if (!allowed(p))
        continue;
      const bool band = !strategy.empty() || fits(p);
      const bool direct = inplace == InPlace::No || !p.copies_inputs;
      if ((pass == 0 && band && direct) || (pass == 1 && direct) ||
          (pass == 2 && band) || pass == 3)
        return i;
    }
  return -1;
}

} // namespace purlin
