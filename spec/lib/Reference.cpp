#include "purlin/spec/Reference.h"
#include "purlin/spec/Epilogue.h"

#include <algorithm>
#include <cstring>

namespace purlin {

bool allocateBuffers(const Collective &c, const Binding &b, RankBuffers &data,
                     uint64_t seed, uint8_t poison, std::string &error) {
  int64_t R = b.ranks(c);
  data.assign(R, {});
  for (int64_t r = 0; r < R; ++r)
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      int64_t n;
      if (!bufferElems(c, b, (int)i, n, error))
        return false;
      if (n < 0) {
        error = "buffer '" + c.buffers[i].name + "' has a negative size";
        return false;
      }
      const DType t = bufferDType(c, b, (int)i);
      data[r].emplace_back((size_t)(n * dtypeSize(t)), poison);
      if (c.buffers[i].role == BufferRole::In)
        fillRandom(t, data[r].back().data(), n,
                   seed * 1000003 + (uint64_t)r * 131 + i);
    }
  return true;
}

namespace {
bool evaluateAll(const Collective &c, const Binding &b, RankBuffers &data,
                 bool unfused, std::string &error) {
  BoundCollective bc;
  if (!bc.init(c, b, error))
    return false;
  const int64_t R = bc.R;
  const int sz = dtypeSize(bc.dtype);
  if ((int64_t)data.size() != R) {
    error = "reference: expected buffers of " + std::to_string(R) + " ranks";
    return false;
  }
  for (int64_t r = 0; r < R; ++r)
    for (size_t i = 0; i < c.buffers.size(); ++i)
      if (data[r].size() != c.buffers.size() ||
          (int64_t)data[r][i].size() != bc.bufElems[i] * dtypeSize(bc.bufDType[i])) {
        error = "reference: buffer '" + c.buffers[i].name + "' of rank " +
                std::to_string(r) + " has the wrong size";
        return false;
      }
  // Reads see the inputs as given; outputs are written into a copy first so
  // that nothing a name writes is read by another name. Clauses apply in
  // order: a step (a clause that reads an output) reads it as the earlier
  // clauses left it, before its own writes.
  RankBuffers out = data;
  std::vector<const uint8_t *> srcs(R);
  std::vector<int64_t> F, D;
  std::vector<std::vector<uint8_t>> before(R);
  for (size_t ci = 0; ci < c.clauses.size(); ++ci) {
    const auto &k = bc.clauses[ci];
    if (!c.clauses[ci].epilogue.empty()) {
      if (!evaluateEpilogue(c, bc, (int)ci, data, out, unfused, error))
        return false;
      continue;
    }
    const bool step = readsOutput(c, ci);
    for (int64_t p = 0; step && p < R; ++p)
      before[p] = out[p][k.fromBuf];
    bool ok = bc.visit(
        (int)ci,
        [&](const int64_t *s) -> bool {
          int64_t fi, ti;
          if (!k.fromIndex.eval(s, fi) || !k.toIndex.eval(s, ti) ||
              !bc.ranksOf((int)ci, true, s, F) || !bc.ranksOf((int)ci, false, s, D)) {
            error = "reference: a map cannot be evaluated";
            return false;
          }
          bool inside = fi >= 0 && fi < bc.bufElems[k.fromBuf] && ti >= 0 &&
                        ti < bc.bufElems[k.toBuf] && !F.empty() && (int64_t)F.size() <= R;
          for (int64_t r : F)
            inside &= r >= 0 && r < R;
          for (int64_t r : D)
            inside &= r >= 0 && r < R;
          if (!inside) {
            error = "reference: a name maps outside its buffers";
            return false;
          }
          std::sort(F.begin(), F.end()); // ascending contributor rank
          int n = 0;
          for (int64_t p : F)
            srcs[n++] = (step ? before[p].data() : data[p][k.fromBuf].data()) + fi * sz;
          uint8_t val[8];
          reduceElement(bc.dtype, k.op, srcs.data(), n, val);
          for (int64_t q : D)
            std::memcpy(out[q][k.toBuf].data() + ti * sz, val, sz);
          return true;
        },
        error);
    if (!ok)
      return false;
  }
  for (int64_t r = 0; r < R; ++r)
    for (size_t i = 0; i < c.buffers.size(); ++i)
      if (c.buffers[i].role == BufferRole::Out)
        data[r][i] = std::move(out[r][i]);
  return true;
}

} // namespace

bool referenceEvaluate(const Collective &c, const Binding &b, RankBuffers &data,
                       std::string &error) {
  return evaluateAll(c, b, data, false, error);
}

bool referenceEvaluateUnfused(const Collective &c, const Binding &b,
                              RankBuffers &data, std::string &error) {
  return evaluateAll(c, b, data, true, error);
}

} // namespace purlin
