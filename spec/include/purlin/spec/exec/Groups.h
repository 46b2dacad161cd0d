// Names grouped by their rank coordinates: how the executor enumerates the
// names of a clause whose rank selectors are maps or sets (`x@((r+1)%R)`,
// `y@{g*G + j | j in [G]}`). Part of the executor (purlin/spec/Exec.h).
//
// The rank coordinates of a clause are the coordinates its rank selectors
// mention; their extents are expressions of parameters. Fixing them gives a
// *group*: a box of names over the other coordinates (Box), one set of
// contributors F and one set of destinations D, each a bit mask of ranks
// (kMaxRanks <= 32). Groups are numbered in row-major order of the rank
// coordinates (the group's index); both ends of every exchange enumerate
// them alike, so they agree on what moves and where it lies in a staging
// slot without talking. A clause whose selectors are all `*`, one
// coordinate over [R] or an expression of parameters has at most one group
// per (contributor, destination) pair and keeps the direct paths of
// Names.h and Steps.h.
//
// Clause contract, on top of Names.h's (generated only for such clauses):
//   static constexpr bool kGeneral = true;
//   static constexpr unsigned kRankDims;   bit d: d is a rank coordinate
//   static int64_t fromRank(const int64_t *c, int64_t v, const Params&);
//   static int64_t fromCount(const int64_t *c, const Params&);
//   static int64_t toRank(...), toCount(...);
// fromRank is the contributor rank of the coordinates c (for kSet, member
// v of the set, v < fromCount); kFromRole may be kCoord, kFixed, kMap or
// kSet (kEvery: every rank).
#pragma once

#include "purlin/spec/exec/State.h"

namespace purlin {
namespace exec {

/// Whether clause C takes the general paths (it declares kGeneral).
template <class C, class = void> struct GeneralOf {
  static constexpr bool value = false;
};
template <class C> struct GeneralOf<C, decltype((void)C::kGeneral, void())> {
  static constexpr bool value = C::kGeneral;
};
template <class C> PURLIN_HD constexpr bool isGeneral() { return GeneralOf<C>::value; }

/// A set of ranks, bit r for rank r.
typedef uint32_t RankMask;
static_assert(kMaxRanks <= 32, "a RankMask holds every rank");
PURLIN_HD RankMask allRanks(int R) { return R >= 32 ? ~0u : (1u << R) - 1; }
PURLIN_HD int popCount(RankMask m) {
  int n = 0;
  for (; m; m &= m - 1)
    ++n;
  return n;
}
/// The ranks in [lo, hi).
PURLIN_HD RankMask rankRange(int lo, int hi, int R) {
  if (lo < 0)
    lo = 0;
  if (hi > R)
    hi = R;
  return lo >= hi ? 0 : allRanks(hi) & ~allRanks(lo);
}

/// The groups of clause C: the rank coordinates not pinned, their extents,
/// and how many groups there are; a coordinate pinned to a rank (that of a
/// kCoord side whose rank is known) is set in `c0`.
struct Groups {
  int n = 0;
  int dim[kMaxDims];
  int64_t ext[kMaxDims];
  int64_t count = 1; // groups enumerated
  int64_t c0[kMaxDims];
};

/// Groups of C whose contributors may hold p and destinations q (-1: any):
/// a kCoord side pins its coordinate to its rank. The groups enumerated
/// keep their row-major order.
template <class C>
PURLIN_HD_CALL void groups(const Params &P, int64_t p, int64_t q, Groups &g) {
  g.n = 0;
  g.count = 1;
  for (int d = 0; d < kMaxDims; ++d)
    g.c0[d] = 0;
  for (int d = C::kDims - 1; d >= 0; --d) { // innermost first
    if (!((C::kRankDims >> d) & 1))
      continue;
    int64_t e = C::extent(d, g.c0, P); // parameters only (checkStructure)
    if (e < 0)
      e = 0;
    int64_t pin = -1;
    if (C::kFromRole == kCoord && C::kFromDim == d && p >= 0)
      pin = p;
    if (C::kToRole == kCoord && C::kToDim == d && q >= 0) {
      if (pin >= 0 && pin != q)
        e = 0; // one coordinate cannot be both
      pin = q;
    }
    if (pin >= 0) {
      g.c0[d] = pin;
      if (pin >= e)
        g.count = 0;
    } else {
      g.dim[g.n] = d;
      g.ext[g.n++] = e;
      g.count *= e;
    }
  }
}

/// The coordinates of group i of g (0 <= i < g.count) in c.
PURLIN_HD void groupAt(const Groups &g, int64_t i, int64_t *c) {
  for (int d = 0; d < kMaxDims; ++d)
    c[d] = g.c0[d];
  for (int k = 0; k < g.n; ++k) {
    c[g.dim[k]] = i % g.ext[k];
    i /= g.ext[k];
  }
}

/// The index of the group of coordinates c among all groups of C
/// (unpinned, row-major): the order of a staging slot's parts.
template <class C> PURLIN_HD_CALL int64_t groupIndex(const Params &P, const int64_t *c) {
  int64_t i = 0;
  for (int d = 0; d < C::kDims; ++d)
    if ((C::kRankDims >> d) & 1) {
      int64_t e = C::extent(d, c, P);
      i = i * (e < 0 ? 0 : e) + c[d];
    }
  return i;
}

/// The contributors (from) or destinations of the group of coordinates c.
/// Ranks outside [0, R) are dropped (checkBinding rejects them).
template <class C>
PURLIN_HD_CALL RankMask sideMask(bool from, const int64_t *c, const Params &P, int R) {
  const int role = from ? C::kFromRole : C::kToRole;
  if (role == kEvery)
    return allRanks(R);
  int64_t x = 0;
  if (role == kCoord)
    x = c[from ? C::kFromDim : C::kToDim];
  else if (role == kFixed)
    x = from ? C::fromFixed(P) : C::toFixed(P);
  else if (role == kMap)
    x = from ? C::fromRank(c, 0, P) : C::toRank(c, 0, P);
  else {
    RankMask m = 0;
    const int64_t n = from ? C::fromCount(c, P) : C::toCount(c, P);
    for (int64_t v = 0; v < n; ++v) {
      const int64_t y = from ? C::fromRank(c, v, P) : C::toRank(c, v, P);
      if (y >= 0 && y < R)
        m |= 1u << y;
    }
    return m;
  }
  return x >= 0 && x < R ? 1u << x : 0u;
}

/// The owners of a group for `owned` consumes: its destinations where they
/// are a set (a sub-group's all-reduce runs inside the group), else its
/// contributors where they are, else every rank (each owns part r).
template <class C>
PURLIN_HD RankMask ownersOf(RankMask F, RankMask D, int R) {
  return C::kToRole == kSet ? D : C::kFromRole == kSet ? F : allRanks(R);
}

/// The position of rank r in mask m (how many ranks of m lie below r).
PURLIN_HD int rankPos(RankMask m, int r) { return popCount(m & allRanks(r)); }

/// Peers of rank r (Peers: kPeersSrcs, kPeersDsts, kPeersGroup, kPeersAll)
/// for clause C, as a mask: one pass over the groups.
template <class C>
PURLIN_HD_CALL RankMask groupPeers(const Params &P, int peers, int r, int R) {
  if (peers == kPeersAll)
    return allRanks(R);
  if (peers == kPeersSelf)
    return 1u << r;
  Groups g;
  groups<C>(P, peers == kPeersDsts ? r : -1, peers == kPeersSrcs ? r : -1, g);
  RankMask out = 0;
  int64_t c[kMaxDims];
  for (int64_t i = 0; i < g.count; ++i) {
    groupAt(g, i, c);
    const RankMask F = sideMask<C>(true, c, P, R), D = sideMask<C>(false, c, P, R);
    const RankMask bit = 1u << r;
    if (peers == kPeersSrcs) {
      if (D & bit)
        out |= F;
    } else if (peers == kPeersDsts) {
      if (F & bit)
        out |= D;
    } else {
      const RankMask M = F | D | ownersOf<C>(F, D, R);
      if (M & bit)
        out |= M;
    }
  }
  return out;
}

/// Whether names of C flow from contributor p to destination q.
template <class C> PURLIN_HD_CALL bool groupFlows(const Params &P, int p, int q, int R) {
  Groups g;
  groups<C>(P, p, q, g);
  int64_t c[kMaxDims];
  for (int64_t i = 0; i < g.count; ++i) {
    groupAt(g, i, c);
    if (((sideMask<C>(true, c, P, R) >> p) & 1) && ((sideMask<C>(false, c, P, R) >> q) & 1))
      return true;
  }
  return false;
}

/// Rounds a staging slot part up to whole 16-byte vectors (`unit`
/// elements), so that every part starts vector- and line-aligned.
PURLIN_HD int64_t roundUnit(int64_t n, int64_t unit) { return (n + unit - 1) / unit * unit; }

} // namespace exec
} // namespace purlin
