// The values a collective was compiled with, and the checks of a launch
// against them (BoundValues.h).
#include "purlin/runtime/BoundValues.h"

namespace purlin {
namespace rt {

bool BoundValues::init(const Collective &c, std::string &error) {
  name_ = c.name;
  Binding b;
  if (!applyBoundParams(c, b, error))
    return false;
  for (const Param &p : c.params) {
    if (p.bound.empty())
      continue;
    switch (p.kind) {
    case ParamKind::Ranks:
      ranks_ = (int)b.scalars[p.name];
      ranksParam_ = p.name;
      break;
    case ParamKind::Count:
    case ParamKind::Root:
      scalars_[p.name] = b.scalars[p.name];
      break;
    case ParamKind::Type:
      dtype_ = (int)b.dtype;
      typeWhy_ = p.name + " bound at compile time";
      break;
    case ParamKind::Op:
      op_ = (int)b.redop;
      opParam_ = p.name;
      break;
    case ParamKind::Table:
      tables_[p.name] = b.tables[p.name];
      break;
    }
  }
  DType t;
  const Buffer *buf = nullptr;
  if (clauseDType(c, t, &buf)) {
    dtype_ = (int)t;
    typeWhy_ = "buffer '" + buf->name + "' is " + buf->dtype + "[" +
               buf->size.str() + "]";
  }
  return true;
}

int64_t BoundValues::scalar(const std::string &name) const {
  auto it = scalars_.find(name);
  return it == scalars_.end() ? -1 : it->second;
}

purlinStatus BoundValues::checkRanks(int R, std::string &msg) const {
  if (ranks_ < 0 || R == ranks_)
    return PURLIN_SUCCESS;
  msg = "collective '" + name_ + "' is compiled for " + std::to_string(ranks_) +
        " ranks (" + ranksParam_ + " bound at compile time), not " +
        std::to_string(R);
  return PURLIN_ERR_BAD_RANK_COUNT;
}

purlinStatus BoundValues::checkType(int dtype, std::string &msg) const {
  if (dtype_ < 0 || dtype == dtype_)
    return PURLIN_SUCCESS;
  msg = "collective '" + name_ + "' is compiled for " +
        dtypeName((DType)dtype_) + " (" + typeWhy_ + "), not " +
        (dtype >= 0 && dtype < kNumDTypes ? dtypeName((DType)dtype)
                                          : std::to_string(dtype).c_str());
  return PURLIN_ERR_UNSUPPORTED_TYPE;
}

purlinStatus BoundValues::checkOp(int op, std::string &msg) const {
  if (op_ < 0 || op == op_)
    return PURLIN_SUCCESS;
  msg = "collective '" + name_ + "' is compiled for " + redOpName((RedOp)op_) +
        " (" + opParam_ + " bound at compile time), not " +
        (op >= 0 && op < kNumRedOps ? redOpName((RedOp)op)
                                    : std::to_string(op).c_str());
  return PURLIN_ERR_UNSUPPORTED_OP;
}

purlinStatus BoundValues::checkScalar(const std::string &name, int64_t v,
                                      std::string &msg) const {
  const int64_t want = scalar(name);
  if (want < 0 || v == want)
    return PURLIN_SUCCESS;
  msg = "parameter '" + name + "' was bound at compile time to " +
        std::to_string(want) + "; the launch passes " + std::to_string(v);
  return PURLIN_ERR_PARAM_RANGE;
}

purlinStatus BoundValues::check(const Collective &c, const Binding &b,
                                std::string &msg) const {
  bool hasOpParam = false;
  for (const Param &p : c.params)
    hasOpParam |= p.kind == ParamKind::Op;
  if (!ranksParam_.empty() && b.scalars.count(ranksParam_))
    if (purlinStatus st = checkRanks((int)b.scalars.at(ranksParam_), msg))
      return st;
  if (purlinStatus st = checkType((int)b.dtype, msg))
    return st;
  if (hasOpParam)
    if (purlinStatus st = checkOp((int)b.redop, msg))
      return st;
  for (auto &kv : scalars_) {
    auto it = b.scalars.find(kv.first);
    if (it != b.scalars.end())
      if (purlinStatus st = checkScalar(kv.first, it->second, msg))
        return st;
  }
  for (auto &kv : tables_) {
    auto it = b.tables.find(kv.first);
    if (it != b.tables.end() && it->second != kv.second) {
      msg = "table '" + kv.first + "' was bound at compile time to " +
            c.param(kv.first)->bound + "; the launch passes other values";
      return PURLIN_ERR_PARAM_RANGE;
    }
  }
  return PURLIN_SUCCESS;
}

} // namespace rt
} // namespace purlin
