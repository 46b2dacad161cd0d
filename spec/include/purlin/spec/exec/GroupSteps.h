// Where steps read and write (the buffers, scratch copies, staging slots
// and partial results of a rank), and the steps of general clauses: those
// whose rank selectors are maps or sets, enumerated by groups
// (exec/Groups.h). Part of the executor (purlin/spec/Exec.h explains the
// model); Steps.h's steps hand a general clause to these.
#pragma once

#include "purlin/spec/exec/Signals.h"

namespace purlin {
namespace exec {

namespace detail {
template <class C> PURLIN_HD int clauseOp(const Shared &S) {
  return C::kOp == kOpParam ? S.op : C::kOp;
}
// Source base of contributor p for a name read through the map (input or
// its scratch copy).
template <class C>
PURLIN_HD const char *mappedSource(const Shared &S, int src, int p) {
  if (src == kSrcScratch)
    return S.scratch[p] + S.scratchOff[C::kFromBuf];
  return (const char *)S.buf[p][C::kFromBuf];
}
// Rank `at`'s staging slot of clause C for contributor p, in half `half`
// of the clause's slots (staging by launch parity: stagingHalfOf; 0 where
// the slots are not doubled). Half 1 lies parityStride bytes after half 0
// (Shared::parityStride: past every area of the layout at the maximum
// sizes, so that the halves of calls of different sizes never overlap).
template <class C>
PURLIN_HD char *stagingSlot(const Shared &S, int at, int p, int half = 0) {
  return S.scratch[at] + (half ? S.parityStride : 0) + S.stagingOff[C::kIndex] +
         (int64_t)p * S.slotBytes[C::kIndex];
}
template <class C> PURLIN_HD char *partialOf(const Shared &S, int r) {
  return S.scratch[r] + S.partialOff[C::kIndex];
}
// Rank r's received area of clause C (kDstReceived, kSrcReceived).
template <class C> PURLIN_HD char *receivedOf(const Shared &S, int r) {
  return S.scratch[r] + S.receivedOff[C::kIndex];
}
// A partial result lies at the names' source offsets: the box's
// destination side becomes its source side.
PURLIN_HD void toSourceOffsets(Move &m) {
  m.box.dbase = m.box.sbase;
  for (int j = 0; j < m.box.nfree; ++j)
    m.box.dstr[j] = m.box.sstr[j];
}
} // namespace detail

namespace detail {
// Where the part of a staging slot that starts `part` elements in lies, in
// a slot of step flags `flags` (flagged lines: exec/Lines.h; parts start
// on pieceElems, so on whole lines).
template <class C>
PURLIN_HD char *slotPartAt(const Shared &S, int at, int p, int64_t part, int flags,
                           int half) {
  const int64_t d = part * S.elemSize;
  const int fmt = lineFmtOf(flags);
  return stagingSlot<C>(S, at, p, half) + (fmt == kFmtNone ? d : lineByteOf(fmt, d));
}
// The contributions of a group's names in ascending rank (after this
// rank's partial result with kSrcPartial): contributors' inputs or scratch
// copies through the map, or their parts of this rank's staging slots.
template <class C>
PURLIN_HD void groupSources(const Shared &S, Move &m, RankMask F, int src, int r,
                            const int64_t *c, int64_t unit, int flags, int half) {
  m.nsrc = 0;
  if (src == kSrcPartial)
    m.src[m.nsrc++] = partialOf<C>(S, r);
  const int64_t gi = src == kSrcStaging ? groupIndex<C>(S.P, c) : 0;
  for (int p = 0; p < S.R; ++p)
    if ((F >> p) & 1)
      m.src[m.nsrc++] =
          src == kSrcStaging
              ? slotPartAt<C>(S, r, p, slotPart<C>(S.P, p, r, unit, gi), flags, half)
              : mappedSource<C>(S, src, p);
  m.srcFlat = src == kSrcStaging;
}
} // namespace detail

/// stage (push) of a general clause: for each group this rank contributes
/// to and each destination q of it, piece (chunk, lane) of the group's box
/// into q's staging slot for this rank, at the group's part of the slot.
template <class C, class Tgt>
PURLIN_HD void groupPush(Tgt &t, int chunk, int flags) {
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  const int64_t unit = pieceElemsOf(t, flags);
  const int half = stagingHalfOf(t, flags);
  Groups g;
  groups<C>(S.P, r, -1, g);
  laneMoves(t, (int)(g.count * R), [&](int idx, Move &m) {
    int64_t c[kMaxDims];
    const int q = idx % R;
    groupAt(g, idx / R, c);
    if (!((sideMask<C>(true, c, S.P, R) >> r) & 1) ||
        !((sideMask<C>(false, c, S.P, R) >> q) & 1))
      return false;
    groupBox<C>(S.P, c, m.box);
    splitRange(m.box.n, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(), unit,
               m.lo, m.hi);
    m.nsrc = m.ndst = 1;
    m.src[0] = (const char *)S.buf[r][C::kFromBuf];
    m.dst[0] = detail::slotPartAt<C>(
        S, q, r, slotPart<C>(S.P, r, q, unit, groupIndex<C>(S.P, c)), flags, half);
    m.dstFlat = true;
    m.op = kCopy;
    m.lines(kLinesDst, flags);
    return true;
  });
}

/// consume of a general clause: per group, one move of all its
/// contributions in [lo, hi), ascending.
///  kSelMine: the groups this rank receives, written to this rank;
///  kSelOwned: part k of every group whose k-th owner this rank is
///       (ownersOf: a set of destinations, else of contributors, else
///       every rank), written to every destination (kDstAll), kept
///       (kDstSelf) or to the partial result.
template <class C, class Tgt>
PURLIN_HD void groupConsume(Tgt &t, int sel, int src, int dst, int64_t pieces,
                            int64_t piece, int op, int flags, int lo, int hi) {
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  const int64_t unit = pieceElemsOf(t, flags);
  const RankMask range = rankRange(lo, hi, R);
  Groups g;
  groups<C>(S.P, -1, sel == kSelMine ? r : -1, g);
  laneMoves(t, (int)g.count, [&](int i, Move &m) {
    int64_t c[kMaxDims];
    groupAt(g, i, c);
    const RankMask Fall = sideMask<C>(true, c, S.P, R), D = sideMask<C>(false, c, S.P, R);
    const RankMask F = Fall & range;
    if (!F)
      return false;
    groupBox<C>(S.P, c, m.box);
    if (sel == kSelMine) {
      if (!((D >> r) & 1))
        return false;
      splitRange(m.box.n, pieces, piece, unit, m.lo, m.hi);
    } else {
      const RankMask O = ownersOf<C>(Fall, D, R);
      if (!((O >> r) & 1))
        return false;
      int64_t pa, pb, a, b;
      splitRange(m.box.n, popCount(O), rankPos(O, r), unit, pa, pb);
      splitRange(pb - pa, pieces, piece, unit, a, b);
      m.lo = pa + a;
      m.hi = pa + b;
    }
    m.op = op;
    detail::groupSources<C>(S, m, F, src, r, c, unit, flags, stagingHalfOf(t, flags));
    m.lines(kLinesSrc, flags);
    m.ndst = 0;
    if (dst == kDstPartial) {
      m.dst[m.ndst++] = detail::partialOf<C>(S, r);
      detail::toSourceOffsets(m);
    } else if (sel == kSelOwned && dst == kDstAll) {
      for (int q = 0; q < R; ++q)
        if ((D >> q) & 1)
          m.dst[m.ndst++] = (char *)S.buf[q][C::kToBuf];
    } else {
      m.dst[m.ndst++] = (char *)S.buf[r][C::kToBuf];
    }
    return true;
  });
}

} // namespace exec
} // namespace purlin
