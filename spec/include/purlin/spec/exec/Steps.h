// The steps: stage, consume, copy; what purlinc's generated plans call.
// Part of the executor (purlin/spec/Exec.h explains the model).
#pragma once

#include "purlin/spec/exec/GroupSteps.h"

namespace purlin {
namespace exec {


/// A push whose R destinations take the same box (contributors and
/// destinations `*`: one source range, R staging slots), from registers:
/// each thread reads its part of the source once and writes it to every
/// destination (flagged: as lines of the flags' format, pushLines; LL128
/// pieces start on whole lines), with no shared Move and no
/// build by the lane leader. The multi-move path cost ~8 us for 8 KiB to 8
/// peers on the H200 where a hand-written push took 2.7 (docs/performance.md).
/// False, with nothing done, where the box is not one contiguous run or the
/// target declines; every thread of the lane decides alike.
template <class C, class Tgt>
PURLIN_HD bool pushRegisters(Tgt &t, int chunk, int flags) {
  if constexpr (isGeneral<C>())
    return false;
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  if (C::kFromRole != kEvery || C::kToRole != kEvery || R > kRegPtrs)
    return false;
  Box b;
  if (!flows<C>(S.P, r, 0) || !makeBox<C>(S.P, r, 0, b)) {
    t.barrier(); // nothing flows here, as in the general path
    return true;
  }
  if (b.nfree != 1 || b.sstr[0] != 1)
    return false;
  const int64_t es = 16 / t.vecElems();
  int64_t lo, hi;
  splitRange(b.n, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(),
             pieceElemsOf(t, flags), lo, hi);
  if (lo < hi) {
    const char *srcs[kRegPtrs];
    char *dsts[kRegPtrs];
    for (int q = 0; q < kRegPtrs; ++q) {
      srcs[q] = q == 0 ? (const char *)S.buf[r][C::kFromBuf] : nullptr;
      dsts[q] = q < R ? detail::stagingSlot<C>(S, q, r, stagingHalfOf(t, flags)) : nullptr;
    }
    const int64_t soff = (b.sbase + lo) * es, doff = lo * es, bytes = (hi - lo) * es;
    const int fmt = lineFmtOf(flags);
    if (!(fmt != kFmtNone
              ? t.pushLines(fmt, srcs[0], dsts, R, soff, doff, bytes, t.thread(),
                            t.threads())
              : t.moveVec(srcs, 1, dsts, R, soff, doff, bytes, kCopy, t.thread(),
                          t.threads())))
      return false;
  }
  t.barrier(); // as after laneMoves: the lane's step is whole
  return true;
}

/// stage (push): this rank's contributions of each destination q into q's
/// staging slot for this rank, piece (chunk, lane) of each box.
template <class C, class Tgt>
PURLIN_HD void stagePush(Tgt &t, int chunk, int flags = 0) {
  if (t.aborted())
    return;
  if constexpr (isGeneral<C>())
    return groupPush<C>(t, chunk, flags);
  if (pushRegisters<C>(t, chunk, flags))
    return;
  const Shared &S = t.shared();
  const int r = t.rank();
  const int half = stagingHalfOf(t, flags);
  laneMoves(t, S.R, [&](int q, Move &m) {
      if (!flows<C>(S.P, r, q) || !makeBox<C>(S.P, r, q, m.box))
        return false;
      splitRange(m.box.n, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(),
                 pieceElemsOf(t, flags), m.lo, m.hi);
      m.nsrc = m.ndst = 1;
      m.src[0] = (const char *)S.buf[r][C::kFromBuf];
      m.dst[0] = detail::stagingSlot<C>(S, q, r, half);
      m.dstFlat = true;
      m.op = kCopy;
      m.lines(kLinesDst, flags);
      return true;
  });
}

/// A consume step of one box whose sources are every rank's buffer at the
/// same offsets (kFromRole kEvery): each thread builds the box in its own
/// registers and hands the target a register move, so there is no shared
/// Move, no fill and no barrier before the data moves (measured on the
/// H200: the lane leader's build and its two barriers were ~0.5 us of a
/// 3.2 us all-reduce). `owned`: part r of the box (kSelOwned) rather than
/// this rank's names (kSelMine). `flags` with a line format: the
/// low-latency protocol's consume (mine, from staging, to self), each
/// thread polling its lines of the R slots (Tgt::consumeLines; LL128
/// pieces start on whole lines) where the Move path kept ptxas's
/// spills of the generic move (docs/performance.md, issue 17); a line that
/// does not arrive in time aborts the lane, as laneMoves does. False, with
/// nothing done, where the box is not one run contiguous on both sides or
/// the target declines the move; every thread of the lane decides alike,
/// so the lane falls back together.
template <class C, class Tgt>
PURLIN_HD bool consumeRegisters(Tgt &t, bool owned, int src, int dst,
                                int64_t pieces, int64_t piece, int op,
                                int flags = 0) {
  if constexpr (isGeneral<C>())
    return false;
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  const int fmt = lineFmtOf(flags);
  const bool flagged = fmt != kFmtNone;
  if (C::kFromRole != kEvery || R > kRegPtrs ||
      (owned && C::kToRole == kCoord) ||
      (flagged && (owned || src != kSrcStaging || dst != kDstSelf)))
    return false;
  const int64_t q = owned ? (C::kToRole == kFixed ? C::toFixed(S.P) : 0) : r;
  Box b;
  if (!flows<C>(S.P, 0, q) || !makeBox<C>(S.P, 0, q, b)) {
    t.barrier(); // nothing flows here, as in the general path
    return true;
  }
  const bool srcFlat = src == kSrcStaging;
  if (b.nfree != 1 || (!srcFlat && b.sstr[0] != 1) || b.dstr[0] != 1)
    return false;
  int64_t lo, hi;
  const int64_t g = pieceElemsOf(t, flags);
  pieceRange(b.n, owned, R, r, pieces, piece, g, lo, hi);
  int st = 1; // flagged: consumeLines' status
  if (lo < hi) {
    const int64_t es = 16 / t.vecElems();
    const char *srcs[kRegPtrs];
    char *dsts[kRegPtrs];
    const bool all = owned && dst == kDstAll && C::kToRole == kEvery;
    for (int p = 0; p < kRegPtrs; ++p) {
      srcs[p] = p >= R ? nullptr
                : srcFlat ? detail::stagingSlot<C>(S, r, p, stagingHalfOf(t, flags))
                          : detail::mappedSource<C>(S, src, p);
      dsts[p] = p >= (all ? R : 1) ? nullptr
                                   : (char *)S.buf[all ? p : q][C::kToBuf];
    }
    const int64_t soff = (srcFlat ? lo : b.sbase + lo) * es,
                  doff = (b.dbase + lo) * es, bytes = (hi - lo) * es;
    if (flagged) {
      st = t.consumeLines(fmt, srcs, R, dsts[0], soff, doff, bytes, op,
                          t.thread(), t.threads());
      if (st == 0)
        return false;
    } else if (!t.moveVec(srcs, R, dsts, all ? R : 1, soff, doff, bytes, op,
                          t.thread(), t.threads())) {
      return false;
    }
  }
  if (!flagged)
    t.barrier(); // as after laneMoves: the lane's step is whole
  else if (t.barrierOr(st < 0))
    t.abort(); // a line timed out
  return true;
}

/// A box read where it is written: its source offsets made its
/// destination's (an owner's output, a received area: at the names'
/// destination offsets).
PURLIN_HD void readAtDest(Box &b) {
  b.sbase = b.dbase;
  for (int j = 0; j < b.nfree; ++j)
    b.sstr[j] = b.dstr[j];
}

/// consume from output: the names this rank receives (a clause every rank
/// receives, contributors `*`), part p of each box copied from the output
/// of its owner p, for owners p in [lo, hi) but this rank; piece (chunk,
/// lane) of each part, as the owner's lanes cut it.
template <class C, class Tgt>
PURLIN_HD void pullParts(Tgt &t, int64_t pieces, int64_t piece, int lo, int hi) {
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  laneMoves(t, R, [&](int p, Move &m) {
    if (p == r || p < lo || p >= hi || C::kToRole != kEvery ||
        C::kFromRole != kEvery || !makeBox<C>(S.P, 0, r, m.box))
      return false;
    int64_t pa, pb, a, b;
    splitRange(m.box.n, R, p, t.vecElems(), pa, pb);
    splitRange(pb - pa, pieces, piece, t.vecElems(), a, b);
    m.lo = pa + a;
    m.hi = pa + b;
    readAtDest(m.box);
    m.nsrc = m.ndst = 1;
    m.src[0] = (const char *)S.buf[p][C::kToBuf];
    m.dst[0] = (char *)S.buf[r][C::kToBuf];
    m.op = kCopy;
    return true;
  });
}

/// consume from received: the names this rank receives (mine), copied
/// from its received area (where a consume `to received` left them, at
/// their destination offsets) to its output; or (owned) part r of the box,
/// the part its owned consume `to received` kept in this rank's area,
/// copied from there to every rank's output. What the checker runs for the
/// unfused plans' second consume (the targets run it through the clause's
/// epilogue, cut in rows, maybe on a launch of its own: exec/Epilogue.h):
/// so that its model asks for the barrier the targets need, lane l takes
/// the piece that the first consume gave another lane (piece (chunk, L-1-l)
/// of the box, or of the owner's part).
template <class C, class Tgt>
PURLIN_HD void copyReceived(Tgt &t, bool owned, int64_t pieces, int64_t piece) {
  piece = (piece / t.shared().L) * t.shared().L + (t.shared().L - 1 - piece % t.shared().L);
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  laneMoves(t, 1, [&](int, Move &m) {
    const int q = owned ? 0 : r;
    if (C::kFromRole != kEvery || (owned && C::kToRole != kEvery) || !flows<C>(S.P, 0, q) ||
        !makeBox<C>(S.P, 0, q, m.box))
      return false;
    pieceRange(m.box.n, owned, R, r, pieces, piece, t.vecElems(), m.lo, m.hi);
    readAtDest(m.box);
    m.nsrc = 1;
    m.src[0] = detail::receivedOf<C>(S, r);
    m.ndst = owned ? R : 1;
    for (int x = 0; x < m.ndst; ++x)
      m.dst[x] = (char *)S.buf[owned ? x : r][C::kToBuf];
    m.op = kCopy;
    return true;
  });
}

/// consume from owners: the names this rank receives (a clause every rank
/// receives from every rank), part p of the box copied from owner p's
/// received area (where its owned consume `to received` kept it, at the
/// names' destination offsets) to this rank's output, for every owner p,
/// this rank too. What the checker runs for two_shot_gather's second
/// consume (the targets run it through the clause's epilogue, each row
/// read from its owner's area: exec/Epilogue.h, applyRowsGathered). As in
/// copyReceived, lane l takes the piece of each part that the first
/// consume gave another lane (piece (chunk, L-1-l)), so that its model
/// asks for the syncs the targets need: every lane of every owner done.
template <class C, class Tgt>
PURLIN_HD void copyOwners(Tgt &t, int64_t pieces, int64_t piece) {
  piece = (piece / t.shared().L) * t.shared().L + (t.shared().L - 1 - piece % t.shared().L);
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  laneMoves(t, R, [&](int p, Move &m) {
    if (C::kToRole != kEvery || C::kFromRole != kEvery || !flows<C>(S.P, 0, r) ||
        !makeBox<C>(S.P, 0, r, m.box))
      return false;
    pieceRange(m.box.n, true, R, p, pieces, piece, t.vecElems(), m.lo, m.hi);
    readAtDest(m.box);
    m.nsrc = m.ndst = 1;
    m.src[0] = detail::receivedOf<C>(S, p);
    m.dst[0] = (char *)S.buf[r][C::kToBuf];
    m.op = kCopy;
    return true;
  });
}

/// consume: combine the contributions of names and write them.
///  sel kSelMine:  the names this rank receives;
///  sel kSelOwned: part r of every box (its owner's part);
///  src, dst: see Source and Dest (mine writes kDstSelf, kDstPartial or
///       kDstReceived; owned writes kDstAll, kDstSelf, kDstPartial or
///       kDstReceived (its part, into its own area); kSrcReceived: mine to
///       kDstSelf, owned to kDstAll);
///  [lo, hi): the contributors combined, in ascending rank (all by
///       default); with kSrcPartial, after this rank's partial result.
/// A partial result stored in the element type continues a fold exactly
/// only where the accumulator is that type (DType.h): the checker proves
/// it per type.
template <class C, class Tgt>
PURLIN_HD void consume(Tgt &t, int sel, int src, int dst, int chunk,
                       int flags = 0, int lo = 0, int hi = kMaxRanks) {
  if (t.aborted())
    return;
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  const int64_t pieces = (int64_t)S.K * S.L,
                piece = (int64_t)chunk * S.L + t.lane();
  const int op = detail::clauseOp<C>(S);
  if constexpr (isGeneral<C>()) {
    if (src != kSrcOutput) // a general clause has no owners' outputs to pull
      groupConsume<C>(t, sel, src, dst, pieces, piece, op, flags, lo, hi);
    return;
  }
  // Every contributor, from inputs, copies or staging, to outputs: what
  // inferred plans do, and what may take the register path.
  const bool plain = lo <= 0 && (hi >= kMaxRanks || hi >= R) && src <= kSrcStaging &&
                     dst != kDstPartial && dst != kDstReceived &&
                     !(sel == kSelOwned && dst == kDstSelf);
  if (plain && consumeRegisters<C>(t, sel == kSelOwned, src, dst, pieces, piece,
                                   op, flags & (kLineFlags | kParity)))
    return;
  if (src == kSrcOutput) {
    pullParts<C>(t, pieces, piece, lo, hi);
    return;
  }
  if (src == kSrcReceived) {
    copyReceived<C>(t, sel == kSelOwned, pieces, piece);
    return;
  }
  if (src == kSrcOwners) {
    copyOwners<C>(t, pieces, piece);
    return;
  }
  const int half = stagingHalfOf(t, flags);
  auto source = [&](int p) -> const char * {
    return src == kSrcStaging ? detail::stagingSlot<C>(S, r, p, half)
                              : detail::mappedSource<C>(S, src, p);
  };
  // The sources of a name: every contributor in [lo, hi), after this
  // rank's partial result (kSrcPartial); `fill` sets them where plain.
  auto sources = [&](Move &m, int one) {
    m.nsrc = 0;
    if (src == kSrcPartial)
      m.src[m.nsrc++] = detail::partialOf<C>(S, r);
    if (one >= 0) {
      m.src[m.nsrc++] = source(one);
      return;
    }
    if (plain) {
      m.nsrc = R; // fill() below, in parallel
      return;
    }
    for (int p = lo < 0 ? 0 : lo; p < R && p < hi; ++p)
      m.src[m.nsrc++] = source(p);
  };
  if (sel == kSelMine) {
    // One box per contributor (or one box read from every rank).
    const int pn = C::kFromRole == kEvery ? 1 : R;
    laneMoves(t, pn, [&](int pi, Move &m) {
        if (C::kFromRole != kEvery && (!flows<C>(S.P, pi, r) || pi < lo || pi >= hi))
          return false;
        if (C::kFromRole == kEvery && !flows<C>(S.P, 0, r))
          return false;
        if (!makeBox<C>(S.P, pi, r, m.box))
          return false;
        splitRange(m.box.n, pieces, piece, pieceElemsOf(t, flags), m.lo,
                   m.hi);
        m.op = op;
        m.ndst = 1;
        m.dst[0] = (char *)S.buf[r][C::kToBuf];
        if (dst == kDstPartial) {
          m.dst[0] = detail::partialOf<C>(S, r);
          detail::toSourceOffsets(m);
        } else if (dst == kDstReceived) {
          m.dst[0] = detail::receivedOf<C>(S, r); // at the names' own offsets
        }
        sources(m, C::kFromRole == kEvery ? -1 : pi);
        m.srcFlat = src == kSrcStaging;
        m.lines(kLinesSrc, flags);
        return true;
    }, [&](Move &m, int p) {
        if (C::kFromRole == kEvery && plain)
          m.src[p] = source(p);
    });
    return;
  }
  // kSelOwned: enumerate every box (rank coordinates over all ranks).
  const int pn = C::kFromRole == kCoord ? R : 1;
  const int qn = C::kToRole == kCoord ? R : 1;
  laneMoves(t, pn * qn, [&](int i, Move &m) {
        const int pi = i / qn, qi = i % qn;
        int64_t p = C::kFromRole == kFixed ? C::fromFixed(S.P) : pi;
        int64_t q = C::kToRole == kFixed ? C::toFixed(S.P) : qi;
        if (C::kFromRole == kCoord && C::kToRole == kCoord &&
            C::kFromDim == C::kToDim && pi != qi)
          return false;
        if (C::kFromRole != kEvery && (p < lo || p >= hi))
          return false;
        if (!makeBox<C>(S.P, p, q, m.box))
          return false;
        int64_t pa, pb, a, b;
        splitRange(m.box.n, R, r, t.vecElems(), pa, pb);
        splitRange(pb - pa, pieces, piece, t.vecElems(), a, b);
        m.lo = pa + a;
        m.hi = pa + b;
        m.op = op;
        sources(m, C::kFromRole == kEvery ? -1 : (int)p);
        m.ndst = 1;
        if (dst == kDstAll && C::kToRole == kEvery) {
          m.ndst = R; // fill() below
        } else if (dst == kDstReceived) {
          m.dst[0] = detail::receivedOf<C>(S, r); // the owner's own area
        } else if (dst == kDstSelf) {
          m.dst[0] = (char *)S.buf[r][C::kToBuf]; // the owner keeps its part
        } else if (dst == kDstPartial) {
          m.dst[0] = detail::partialOf<C>(S, r);
          detail::toSourceOffsets(m);
        } else {
          m.dst[0] = (char *)S.buf[q][C::kToBuf];
        }
        return true;
  }, [&](Move &m, int x) {
        if (C::kFromRole == kEvery && plain)
          m.src[x] = source(x);
        if (dst == kDstAll && C::kToRole == kEvery)
          m.dst[x] = (char *)S.buf[x][C::kToBuf];
  });
}

/// stage (copy): this rank's input buffer `bufIndex` (of `elems` elements)
/// into its own peer-visible scratch, piece (chunk, lane), so that peers read
/// a copy that this rank's outputs cannot touch when they alias its inputs.
template <class Tgt>
PURLIN_HD void copyLocalRange(Tgt &t, int bufIndex, int64_t elems, int chunk) {
  if (t.aborted())
    return;
  const Shared &S = t.shared();
  const int r = t.rank();
  laneMoves(t, 1, [&](int, Move &m) {
    m.box.nfree = 1;
    m.box.n = m.box.ext[0] = elems;
    m.box.sbase = m.box.dbase = 0;
    m.box.sstr[0] = m.box.dstr[0] = 1;
    m.nsrc = m.ndst = 1;
    m.src[0] = (const char *)S.buf[r][bufIndex];
    m.dst[0] = S.scratch[r] + S.scratchOff[bufIndex];
    m.op = kCopy;
    splitRange(elems, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(),
               t.vecElems(), m.lo, m.hi);
    return true;
  });
}

/// stage copy of clause C: this rank copies the clause's input buffer (of
/// `elems` elements) into its scratch, where it contributes a name of C.
template <class C, class Tgt>
PURLIN_HD void stageCopy(Tgt &t, int64_t elems, int chunk) {
  if (contributes<C>(t.shared().P, t.rank()))
    copyLocalRange(t, C::kFromBuf, elems, chunk);
}

} // namespace exec
} // namespace purlin
