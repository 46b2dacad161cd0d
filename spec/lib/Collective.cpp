// The collective model: parameter kinds, lookups, and rank roles.
#include "purlin/spec/Collective.h"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

namespace purlin {

const char *paramKindName(ParamKind k) {
  switch (k) {
  case ParamKind::Ranks:
    return "ranks";
  case ParamKind::Count:
    return "count";
  case ParamKind::Root:
    return "root";
  case ParamKind::Type:
    return "type";
  case ParamKind::Op:
    return "redop";
  case ParamKind::Table:
    return "table";
  }
  return "?";
}

bool parseParamKind(const std::string &s, ParamKind &out) {
  for (ParamKind k : {ParamKind::Ranks, ParamKind::Count, ParamKind::Root,
                      ParamKind::Type, ParamKind::Op, ParamKind::Table})
    if (s == paramKindName(k)) {
      out = k;
      return true;
    }
  return false;
}

const Param *Collective::param(const std::string &n) const {
  for (auto &p : params)
    if (p.name == n)
      return &p;
  return nullptr;
}
const Buffer *Collective::buffer(const std::string &n) const {
  int i = bufferIndex(n);
  return i < 0 ? nullptr : &buffers[i];
}
int Collective::bufferIndex(const std::string &n) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == n)
      return (int)i;
  return -1;
}
const Param *Collective::ranksParam() const {
  for (auto &p : params)
    if (p.kind == ParamKind::Ranks)
      return &p;
  return nullptr;
}

RankRole rankRole(const Clause &c, const RankSel &sel) {
  RankRole r;
  if (sel.every)
    return r;
  if (sel.rank.kind() == Expr::Kind::Var)
    for (size_t d = 0; d < c.dims.size(); ++d)
      if (c.dims[d].name == sel.rank.name()) {
        r.kind = RankRole::Coord;
        r.dim = (int)d;
        return r;
      }
  r.kind = RankRole::Fixed;
  r.fixed = sel.rank;
  return r;
}

} // namespace purlin
