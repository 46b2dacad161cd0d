#include "purlin/runtime/Launch.h"

#include <vector>

namespace purlin {

int64_t callBytes(const Collective &c, const Binding &b) {
  int64_t m = 0;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    int64_t n = 0;
    std::string err;
    const int es = dtypeSize(bufferDType(c, b, (int)i));
    if (bufferElems(c, b, (int)i, n, err) && n * es > m)
      m = n * es;
  }
  return m;
}

InPlace classifyOverlap(const Collective &c, void *const *bufs, int R,
                        const int64_t *elems, const int *elemSizes,
                        uint64_t localPairs) {
  const size_t nb = c.buffers.size();
  InPlace res = InPlace::No;
  for (int r = 0; r < R; ++r) {
    // SameStart pairs outputs with inputs one to one (what the checker
    // proves): an input overlapped by two outputs is another overlap.
    std::vector<int> pairs(nb, 0);
    for (size_t i = 0; i < nb; ++i)
      for (size_t j = 0; j < nb; ++j) {
        if (c.buffers[i].role != BufferRole::In ||
            c.buffers[j].role != BufferRole::Out)
          continue;
        const uintptr_t a0 = (uintptr_t)bufs[r * nb + i],
                        a1 = a0 + (uintptr_t)(elems[i] * elemSizes[i]);
        const uintptr_t b0 = (uintptr_t)bufs[r * nb + j],
                        b1 = b0 + (uintptr_t)(elems[j] * elemSizes[j]);
        if (!(a0 < b1 && b0 < a1))
          continue;
        if (i < 8 && j < 8 && (localPairs >> (i * 8 + j) & 1) && a0 == b0 && a1 == b1)
          continue; // an epilogue's own pair: each element read, then stored, by one thread
        if (a0 != b0 || c.buffers[i].dtype != c.buffers[j].dtype ||
            ++pairs[i] > 1 || ++pairs[j] > 1)
          return InPlace::Any;
        res = InPlace::SameStart;
      }
  }
  return res;
}

bool provedInPlace(const purlin_plan_info &p, InPlace inplace, int ranks) {
  if (inplace == InPlace::No)
    return true;
  return ranks <= p.inplace_max_ranks &&
         (p.inplace_safe || (inplace == InPlace::SameStart && p.inplace_same));
}

bool hasEpilogue(const Collective &c) {
  for (const Clause &cl : c.clauses)
    if (!cl.epilogue.empty())
      return true;
  return false;
}

EpiRows epilogueRows(const Collective &c, const Binding &b) {
  EpiRows out;
  for (const Clause &cl : c.clauses) {
    if (cl.epilogue.empty())
      continue;
    int64_t rows = 1, inner = 1;
    for (const Dim &d : cl.dims) {
      int64_t n = 0;
      std::string err;
      if (!evalParamExpr(c, b, d.extent, n, err))
        return EpiRows();
      bool row = false;
      for (const std::string &r : cl.epilogue.rows)
        row |= r == d.name;
      (row ? rows : inner) *= n;
    }
    if (inner > out.elems || (inner == out.elems && rows > out.rows)) {
      out.rows = rows;
      out.elems = inner;
    }
  }
  return out;
}

bool inRowsBand(const purlin_plan_info &p, EpiRows rows, InPlace inplace) {
  const int64_t hi =
      inplace != InPlace::No && p.max_rows_in_place != 0 ? p.max_rows_in_place : p.max_rows;
  return p.max_rows != 0 && rows.rows >= 0 && rows.rows >= p.min_rows &&
         (hi < 0 || rows.rows < hi) && rows.elems >= p.min_row_elems &&
         (p.max_row_elems < 0 || rows.elems < p.max_row_elems);
}

int choosePlan(const purlin_collective_info *info, int64_t bytes,
               InPlace inplace, int ranks, const std::string &strategy,
               bool severalLaunches, bool bandFirst, EpiRows rows) {
  auto fits = [&](const purlin_plan_info &p) {
    return bytes >= p.min_bytes && (p.max_bytes < 0 || bytes < p.max_bytes);
  };
  auto allowed = [&](const purlin_plan_info &p) {
    return provedInPlace(p, inplace, ranks);
  };
  // In place, a plan that reads the inputs where they are beats one that
  // copies them first, whatever its band; then the band's; then any.
  // Out of place: the band's plan, else the first. A low-latency plan
  // (several_launches) is a choice for its band only (its lines double the
  // bytes staged): out of it, it is the last resort (pass 4), not a
  // "whatever its band" pick. Before all of them, a plan whose rows band
  // holds the call (out of place, or in place without copies).
  if (strategy.empty())
    for (int i = 0; i < info->nplans; ++i) {
      const purlin_plan_info &p = info->plans[i];
      if (inRowsBand(p, rows, inplace) && allowed(p) && !(p.several_launches && !severalLaunches) &&
          (inplace == InPlace::No || !p.copies_inputs))
        return i;
    }
  for (int pass = 0; pass < 5; ++pass)
    for (int i = 0; i < info->nplans; ++i) {
      const purlin_plan_info &p = info->plans[i];
      if (!strategy.empty() && strategy != p.strategy)
        continue;
      if (strategy.empty() && p.several_launches && !severalLaunches)
        continue;
      if (!allowed(p))
        continue;
      const bool band = !strategy.empty() || fits(p);
      if (pass < 4 && strategy.empty() && p.several_launches && !band)
        continue;
      const bool direct = inplace == InPlace::No || !p.copies_inputs;
      // bandFirst: the band's plan that copies before another band's that
      // does not (passes 1 and 2 swapped).
      const bool second = bandFirst ? band : direct, third = bandFirst ? direct : band;
      if ((pass == 0 && band && direct) || (pass == 1 && second) ||
          (pass == 2 && third) || pass >= 3)
        return i;
    }
  return -1;
}

int64_t layoutAtMaxima(const purlin_plan_info &pl, exec::Shared S,
                       int64_t &parityStride) {
  S.elemSize = 8;
  S.L = pl.lanes;
  S.K = pl.chunks;
  S.nsignals = pl.nsignals;
  S.parityStride = 0; // the layout's own at these values (layoutEnd)
  const int64_t bytes = (pl.layout(&S) + 15) / 16 * 16;
  parityStride = S.parityStride;
  return bytes;
}

bool areasAtMaxima(const purlin_plan_info &pl, const exec::Params &maxP,
                   exec::Shared &S) {
  exec::Shared A = S;
  A.P = maxP;
  pl.layout(&A);
  for (int k = 0; k < exec::kMaxClauses; ++k)
    if (S.slotBytes[k] > A.slotBytes[k])
      return false;
  for (int b = 0; b < exec::kMaxBuffers; ++b)
    S.scratchOff[b] = A.scratchOff[b];
  for (int k = 0; k < exec::kMaxClauses; ++k) {
    S.stagingOff[k] = A.stagingOff[k];
    S.slotElems[k] = A.slotElems[k];
    S.slotBytes[k] = A.slotBytes[k];
    S.partialOff[k] = A.partialOff[k];
    S.receivedOff[k] = A.receivedOff[k];
  }
  return true;
}

bool partialParityLaunch(const purlin_plan_info &pl, const exec::Params &maxP,
                         const exec::Shared &S) {
  if (!S.parityAreas)
    return false;
  // From the call's own layout first: only where some clause moves and a
  // parity clause has no slots here is the maximum binding laid out (so a
  // call of the usual kind pays no second layout).
  bool moves = false;
  uint32_t empty = 0; // parity clauses without slots at this call
  for (int k = 0; k < exec::kMaxClauses; ++k) {
    moves |= S.slotBytes[k] != 0;
    if ((S.parityClauses >> k & 1u) != 0 && S.slotBytes[k] == 0)
      empty |= 1u << k;
  }
  if (!moves || !empty)
    return false;
  exec::Shared A = S;
  A.P = maxP;
  pl.layout(&A);
  for (int k = 0; k < exec::kMaxClauses; ++k)
    if ((empty >> k & 1u) != 0 && A.slotBytes[k] != 0)
      return true; // idle here, not at the maximum binding
  return false;
}

bool bandBinding(const Collective &c, const Binding &maxB, int64_t maxBytes,
                 Binding &out) {
  if (maxBytes <= 0)
    return false;
  std::vector<std::pair<std::string, int64_t>> counts;
  for (const Param &p : c.params) {
    if (p.kind == ParamKind::Table)
      return false;
    if (p.kind != ParamKind::Count)
      continue;
    auto it = maxB.scalars.find(p.name);
    if (it == maxB.scalars.end())
      return false;
    counts.emplace_back(p.name, it->second);
  }
  if (counts.empty())
    return false;
  // The bytes at scale t / 2^40 of every count, at 1-byte elements.
  constexpr int64_t kOne = int64_t(1) << 40;
  Binding b = maxB;
  b.dtype = DType::U8;
  auto bytesAt = [&](int64_t t) {
    for (const auto &n : counts)
      b.scalars[n.first] = (int64_t)((__int128)n.second * t / kOne);
    return callBytes(c, b);
  };
  if (bytesAt(kOne) < maxBytes || bytesAt(0) >= maxBytes)
    return false;
  int64_t lo = 0, hi = kOne; // bytesAt(lo) < maxBytes <= bytesAt(hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (bytesAt(mid) < maxBytes ? lo : hi) = mid;
  }
  bytesAt(lo);
  b.dtype = maxB.dtype;
  out = b;
  return true;
}

Unordered unorderedCall(const purlin_plan_info &pl, const exec::Params &maxP,
                        const exec::Shared &S) {
  if (!partialParityLaunch(pl, maxP, S))
    return Unordered::kRun;
  return pl.several_launches ? Unordered::kBarriers : Unordered::kRefuse;
}

bool emptyParityLaunch(const exec::Shared &S) {
  if (!S.parityAreas)
    return false;
  for (int k = 0; k < exec::kMaxClauses; ++k)
    if (S.slotBytes[k] != 0)
      return false;
  return true;
}

} // namespace purlin
