// The kernels a GPU target builds ahead of time (purlinc --aot): the
// (element type, op) pairs asked for, checked against what the collective
// can take (Plan.h, aotSet), and their masks as the generated code spells
// them.
#include "purlin/Plan/Plan.h"

#include <cstdio>

namespace purlin {

uint32_t clauseOps(const Collective &c) {
  uint32_t ops = 1u << (int)RedOp::Copy;
  for (auto &cl : c.clauses)
    if (cl.opParam.empty())
      ops |= 1u << (int)cl.op;
  return ops;
}
std::string hexMask(uint32_t m) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%xu", m);
  return b;
}

namespace {
bool reducesByParam(const Collective &c) {
  for (auto &p : c.params)
    if (p.kind == ParamKind::Op)
      return true;
  return false;
}
bool isCopyOnly(const Collective &c) {
  for (auto &cl : c.clauses)
    if (cl.op != RedOp::Copy || !cl.opParam.empty())
      return false;
  return true;
}
} // namespace

bool aotSet(const Collective &c, const std::string &spec, AotSet &out,
            std::string &error) {
  // What the collective can take: its concrete or bound type, its bound op.
  uint32_t canTypes = (1u << kNumDTypes) - 1, canOps = 0;
  for (int o = 1; o < kNumRedOps; ++o)
    canOps |= 1u << o;
  Binding b;
  std::string err;
  applyBoundParams(c, b, err);
  for (auto &p : c.params) {
    if (p.kind == ParamKind::Type && !p.bound.empty())
      canTypes = 1u << (int)b.dtype;
    if (p.kind == ParamKind::Op && !p.bound.empty())
      canOps = 1u << (int)b.redop;
  }
  DType t;
  if (clauseDType(c, t))
    canTypes = 1u << (int)t;
  uint32_t types = 0, ops = 0;
  auto list = [&](const std::string &text, bool isType, uint32_t &mask) {
    size_t i = 0;
    while (i <= text.size()) {
      size_t j = text.find(',', i);
      if (j == std::string::npos)
        j = text.size();
      const std::string w = text.substr(i, j - i);
      i = j + 1;
      if (w.empty())
        continue;
      DType t;
      RedOp o;
      if (isType && parseDType(w, t))
        mask |= 1u << (int)t;
      else if (!isType && parseRedOp(w, o) && o != RedOp::Copy)
        mask |= 1u << (int)o;
      else {
        error = std::string("--aot: unknown ") + (isType ? "element type" : "op") +
                " '" + w + "'";
        return false;
      }
    }
    return true;
  };
  if (spec.empty()) {
    types = canTypes == (1u << kNumDTypes) - 1
                ? (1u << (int)DType::BF16) | (1u << (int)DType::F16) |
                      (1u << (int)DType::F32)
                : canTypes;
    const bool boundOp = (canOps & (canOps - 1)) == 0;
    ops = boundOp ? canOps : 1u << (int)RedOp::Sum;
  } else if (spec == "all") {
    types = canTypes;
    ops = canOps;
  } else {
    const size_t colon = spec.find(':');
    if (!list(spec.substr(0, colon), true, types) ||
        !list(colon == std::string::npos ? "sum" : spec.substr(colon + 1),
              false, ops))
      return false;
    if (!(types & canTypes)) {
      error = "--aot: collective '" + c.name + "' takes " +
              dtypeName((DType)__builtin_ctz(canTypes)) +
              " only, which '" + spec + "' does not name";
      return false;
    }
    if (reducesByParam(c) && !(ops & canOps)) {
      error = "--aot: collective '" + c.name + "' is bound to " +
              redOpName((RedOp)__builtin_ctz(canOps)) + ", which '" + spec +
              "' does not name";
      return false;
    }
    types &= canTypes;
    ops &= canOps;
  }
  // Copy-only kernels are per element size: name every type they serve.
  if (isCopyOnly(c)) {
    uint32_t all = 0;
    for (int t = 0; t < kNumDTypes; ++t)
      for (int u = 0; u < kNumDTypes; ++u)
        if ((types >> u & 1u) && dtypeSize((DType)t) == dtypeSize((DType)u))
          all |= 1u << t;
    types = all;
  }
  out.dtypes = types;
  out.ops = (reducesByParam(c) ? ops : 0) | clauseOps(c);
  return true;
}

std::string aotText(const Collective &c, const AotSet &aot) {
  std::string types, ops;
  for (int t = 0; t < kNumDTypes; ++t)
    if (aot.dtypes >> t & 1u)
      types += std::string(types.empty() ? "" : ", ") + dtypeName((DType)t);
  if (isCopyOnly(c))
    return types + " (copy)";
  for (int o = 1; o < kNumRedOps; ++o)
    if (aot.ops >> o & 1u)
      ops += std::string(ops.empty() ? "" : ", ") + redOpName((RedOp)o);
  return types + " with " + ops;
}

} // namespace purlin
