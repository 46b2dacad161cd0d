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
  case ParamKind::Group:
    return "group";
  }
  return "?";
}

bool parseParamKind(const std::string &s, ParamKind &out) {
  for (ParamKind k : {ParamKind::Ranks, ParamKind::Count, ParamKind::Root,
                      ParamKind::Type, ParamKind::Op, ParamKind::Table,
                      ParamKind::Group})
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

RankRole rankRole(const Collective &coll, const Clause &c,
                  const RankSel &sel) {
  RankRole r;
  if (sel.every)
    return r;
  if (sel.isSet()) {
    r.kind = RankRole::Set;
    return r;
  }
  // A coordinate ranging over [R] is the rank itself (each rank one
  // coordinate value); one of another extent is a map like any other.
  const Param *rp = coll.ranksParam();
  if (sel.rank.kind() == Expr::Kind::Var)
    for (size_t d = 0; d < c.dims.size(); ++d)
      if (c.dims[d].name == sel.rank.name() && rp &&
          c.dims[d].extent.kind() == Expr::Kind::Var &&
          c.dims[d].extent.name() == rp->name) {
        r.kind = RankRole::Coord;
        r.dim = (int)d;
        return r;
      }
  for (auto &d : c.dims)
    if (sel.rank.mentions(d.name)) {
      r.kind = RankRole::Map;
      return r;
    }
  r.kind = RankRole::Fixed;
  r.fixed = sel.rank;
  return r;
}

bool isGeneralClause(const Collective &coll, const Clause &c) {
  for (const RankSel *s : {&c.from.rank, &c.to.rank}) {
    RankRole r = rankRole(coll, c, *s);
    if (r.kind == RankRole::Map || r.kind == RankRole::Set)
      return true;
  }
  return false;
}

unsigned rankDims(const Clause &c) {
  unsigned m = 0;
  for (size_t d = 0; d < c.dims.size(); ++d)
    for (const RankSel *s : {&c.from.rank, &c.to.rank})
      if (!s->every && (s->rank.mentions(c.dims[d].name) ||
                        (s->isSet() && s->extent.mentions(c.dims[d].name))))
        m |= 1u << d;
  return m;
}

bool readsOutput(const Collective &c, size_t k) {
  const Buffer *b = c.buffer(c.clauses[k].from.buffer);
  return b && b->role == BufferRole::Out;
}

std::string rankSelText(const RankSel &s, const char *modOp, bool paren) {
  if (s.every)
    return "*";
  if (s.isSet())
    return "{" + s.rank.str(modOp) + " | " + s.var + " in [" +
           s.extent.str(modOp) + "]}";
  const std::string t = s.rank.str(modOp);
  const bool atom = s.rank.kind() == Expr::Kind::Var ||
                    (s.rank.kind() == Expr::Kind::Const && s.rank.constValue() >= 0);
  return paren && !atom ? "(" + t + ")" : t;
}

} // namespace purlin
