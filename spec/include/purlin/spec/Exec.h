// The generic executor of snac programs: what every target runs.
//
// purlinc lowers a snac program to straight-line calls of the step functions
// below (stage, notify, wait, consume), one per snac op, plus one struct per
// clause that evaluates the clause's maps (see "Clause contract"). The step
// functions turn a step into boxes of names and hand the data movement and
// the signalling to the target's atoms (`Tgt`, "Target contract"). The same
// header compiles with a plain host compiler (the host target) and with
// nvcc (the GPU targets).
//
// Execution model: rank r runs its program on L lanes (a thread block, a
// host thread). Lane l of rank r handles slice l of every step's names, and
// signals lane l of its peers, so lanes never wait on each other. Each step's
// names are cut into K*L pieces; piece (c, l) belongs to lane l in chunk c.
// Signal words are monotonic: a notify stores the lane's epoch, a wait waits
// until the word reaches it. Each lane keeps its epoch in device memory and
// bumps it once per launch, so repeated launches and graph replays agree.
#pragma once

#include <stdint.h>

#include "purlin/spec/Numbering.h"
#include "purlin/spec/Vocabulary.h"

#if defined(__CUDACC__)
#define PURLIN_HD __host__ __device__ __forceinline__
#else
#define PURLIN_HD inline
#endif

namespace purlin {
namespace exec {

// Limits and capacities: Vocabulary.h's.
using namespace purlin::limits;

// The vocabulary (Vocabulary.h) as the ints that generated code passes.
// How a clause picks contributor or destination ranks.
enum Role : int {
  kEvery = (int)RoleKind::Every,
  kCoord = (int)RoleKind::Coord,
  kFixed = (int)RoleKind::Fixed,
};
// Which peers a notify or a wait addresses, relative to this rank r.
enum Peers : int {
  kPeersAll = (int)PeerSet::All,   // every rank
  kPeersSrcs = (int)PeerSet::Srcs, // ranks that contribute names that r receives
  kPeersDsts = (int)PeerSet::Dsts, // ranks that receive names that r contributes
};
enum Select : int {
  kSelMine = (int)Selection::Mine,
  kSelOwned = (int)Selection::Owned,
};
// Where a consume reads: the contributors' inputs, their scratch copies,
// this rank's staging slots; kSrcPartial: this rank's partial result of the
// clause first (a fold continued), then the contributors' inputs;
// kSrcOutput: each part of the names this rank receives from the output of
// the part's owner (which kept it there: owned ... kDstSelf).
enum Source : int {
  kSrcInput = (int)SourceKind::Input,
  kSrcScratch = (int)SourceKind::Scratch,
  kSrcStaging = (int)SourceKind::Staging,
  kSrcPartial = (int)SourceKind::Partial,
  kSrcOutput = (int)SourceKind::Output,
};
// Where it writes: this rank's output (for owned parts: the owner keeps its
// part in its own output), every destination, or this rank's partial
// result (scratch at the names' source offsets).
enum Dest : int {
  kDstSelf = (int)DestKind::Self,
  kDstAll = (int)DestKind::All,
  kDstPartial = (int)DestKind::Partial,
};
// Step flags: purlin::kAllLanes, kBoundary, kFlagged (Vocabulary.h).
using purlin::kAllLanes;
using purlin::kBoundary;
using purlin::kFlagged;
// Move::ll: which side is in flagged lines (the target's line format: 8
// data bytes per 16-byte line), addressed flat like a staging slot.
enum LineSide : int { kLinesNone = 0, kLinesDst = 1, kLinesSrc = 2 };
// Reduction ops, in Numbering.h's order (kCopy, kSum, ...). kOpParam: the
// launch's op.
enum Op : int {
#define PURLIN_X(E, Camel, name) k##Camel,
  PURLIN_REDOPS(PURLIN_X)
#undef PURLIN_X
  kOpParam = -1
};

/// Parameter values of a launch, by slot: scalars (ranks, counts, roots) in
/// the order the collective declares them, then tables.
struct Params {
  int64_t s[kMaxScalars];
  int64_t tabOff[kMaxTables];
  int64_t tabExt[kMaxTables][3];
  int64_t tab[kMaxTableWords];
  PURLIN_HD int64_t lookup(int t, int64_t i) const { return tab[tabOff[t] + i]; }
  PURLIN_HD int64_t lookup(int t, int64_t i, int64_t j) const {
    return tab[tabOff[t] + i * tabExt[t][1] + j];
  }
  PURLIN_HD int64_t lookup(int t, int64_t i, int64_t j, int64_t k) const {
    return tab[tabOff[t] + (i * tabExt[t][1] + j) * tabExt[t][2] + k];
  }
};

PURLIN_HD int64_t purlin_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
PURLIN_HD int64_t purlin_floormod(int64_t a, int64_t b) {
  return a - purlin_floordiv(a, b) * b;
}

/// What every lane of every rank sees: the addresses of all ranks' buffers,
/// scratch and signals (peer-visible), and the launch's parameters.
/// Plain data, passed by value to kernels.
struct Shared {
  int R = 0, L = 1, K = 1; // ranks, lanes, chunks
  int op = kSum;           // the launch's op, for clauses with kOpParam
  int elemSize = 4;
  int nsignals = 0;
  // 1 when every rank of the communicator runs in this one launch (one GPU,
  // one process): the launch's start and end order all ranks, so `boundary`
  // notifies and waits (which only order against the launch boundary) are
  // skipped.
  int oneLaunch = 0;
  void *buf[kMaxRanks][kMaxBuffers]; // every rank's buffers
  // Peer-visible scratch of every rank: copies of the inputs (for
  // kSrcScratch) at scratchOff[buffer], then per clause R staging slots of
  // slotElems[clause] elements at stagingOff[clause]; offsets in bytes.
  char *scratch[kMaxRanks];
  int64_t scratchOff[kMaxBuffers];
  int64_t stagingOff[kMaxClauses];
  int64_t slotElems[kMaxClauses];
  int64_t slotBytes[kMaxClauses]; // bytes of one slot (flagged: lines)
  // Per clause, this rank's partial results (kDstPartial, kSrcPartial): an
  // area of the clause's input buffer's size, at partialOff[clause].
  int64_t partialOff[kMaxClauses];
  // Signal words of every rank: [signal][from rank][lane][chunk], then the
  // epochs of its lanes.
  uint64_t *signals[kMaxRanks];
  Params P;
};

PURLIN_HD uint64_t *signalWord(const Shared &S, int to, int sig, int from,
                               int lane, int chunk) {
  return S.signals[to] +
         (((int64_t)sig * S.R + from) * S.L + lane) * S.K + chunk;
}
PURLIN_HD uint64_t *epochWord(const Shared &S, int rank, int lane) {
  return S.signals[rank] + (int64_t)S.nsignals * S.R * S.L * S.K + lane;
}
/// Signal words of one rank, epochs included.
inline int64_t signalWords(int nsignals, int R, int L, int K) {
  return (int64_t)nsignals * R * L * K + L;
}

/// A box of names: the rank coordinates fixed, the others free. Offsets of
/// a name are base + sum_j c_j * stride_j on each side (maps are affine).
struct Box {
  int nfree = 0;
  int64_t n = 0; // names in the box
  int64_t ext[kMaxDims];
  int64_t sstr[kMaxDims], dstr[kMaxDims];
  int64_t sbase = 0, dbase = 0;
};

/// Cuts [0, n) into `parts` ranges and returns range i, cut points rounded
/// down to multiples of `g` so that vector accesses stay whole.
PURLIN_HD void splitRange(int64_t n, int64_t parts, int64_t i, int64_t g,
                          int64_t &a, int64_t &b) {
  if (n >= 0 && parts > 0 && g > 0 && (uint64_t)n * (uint64_t)parts < (1ull << 32)) {
    // 32-bit division: a 64-bit one is a long software routine on a GPU,
    // and this runs on a lane's critical path.
    const uint32_t n32 = (uint32_t)n, p32 = (uint32_t)parts, g32 = (uint32_t)g;
    a = (int64_t)((n32 * (uint32_t)i / p32) / g32 * g32);
    b = (i + 1 == parts) ? n : (int64_t)((n32 * (uint32_t)(i + 1) / p32) / g32 * g32);
  } else {
    a = (n * i / parts) / g * g;
    b = (i + 1 == parts) ? n : (n * (i + 1) / parts) / g * g;
  }
  if (a > n)
    a = n;
  if (b < a)
    b = a;
}

//===----------------------------------------------------------------------===//
// Clause contract (generated by purlinc, one struct per clause):
//   static constexpr int kDims, kFromRole, kFromDim, kToRole, kToDim,
//                        kFromBuf, kToBuf, kOp, kIndex (the clause's number);
//   static int64_t fromFixed(const Params&), toFixed(const Params&);
//   static int64_t extent(int d, const int64_t *c, const Params&);
//   static int64_t fromIndex(const int64_t *c, const Params&);
//   static int64_t toIndex(const int64_t *c, const Params&);
//===----------------------------------------------------------------------===//

/// The box of names with contributor p and destination q (each used only
/// where the clause's role needs it). Returns false when there is none.
template <class C>
PURLIN_HD bool makeBox(const Params &P, int64_t p, int64_t q, Box &b) {
  int64_t c[kMaxDims];
  bool fixed[kMaxDims];
  for (int d = 0; d < C::kDims; ++d) {
    c[d] = 0;
    fixed[d] = false;
  }
  if (C::kFromRole == kCoord) {
    c[C::kFromDim] = p;
    fixed[C::kFromDim] = true;
  } else if (C::kFromRole == kFixed && C::fromFixed(P) != p) {
    return false;
  }
  if (C::kToRole == kCoord) {
    if (fixed[C::kToDim] && c[C::kToDim] != q)
      return false;
    c[C::kToDim] = q;
    fixed[C::kToDim] = true;
  } else if (C::kToRole == kFixed && C::toFixed(P) != q) {
    return false;
  }
  b.nfree = 0;
  b.n = 1;
  int freeDim[kMaxDims];
  for (int d = 0; d < C::kDims; ++d) {
    if (fixed[d])
      continue;
    int64_t e = C::extent(d, c, P);
    if (e < 0)
      e = 0;
    freeDim[b.nfree] = d;
    b.ext[b.nfree++] = e;
    b.n *= e;
  }
  b.sbase = C::fromIndex(c, P);
  b.dbase = C::toIndex(c, P);
  for (int j = 0; j < b.nfree; ++j) {
    c[freeDim[j]] = 1;
    b.sstr[j] = C::fromIndex(c, P) - b.sbase;
    b.dstr[j] = C::toIndex(c, P) - b.dbase;
    c[freeDim[j]] = 0;
  }
  // Merge neighbours that are contiguous on both sides, innermost first.
  for (int j = b.nfree - 2; j >= 0; --j) {
    if (b.sstr[j] == b.sstr[j + 1] * b.ext[j + 1] &&
        b.dstr[j] == b.dstr[j + 1] * b.ext[j + 1]) {
      b.ext[j] *= b.ext[j + 1];
      b.sstr[j] = b.sstr[j + 1];
      b.dstr[j] = b.dstr[j + 1];
      for (int k = j + 1; k + 1 < b.nfree; ++k) {
        b.ext[k] = b.ext[k + 1];
        b.sstr[k] = b.sstr[k + 1];
        b.dstr[k] = b.dstr[k + 1];
      }
      --b.nfree;
    }
  }
  if (b.nfree == 0) { // a single name
    b.nfree = 1;
    b.ext[0] = 1;
    b.sstr[0] = b.dstr[0] = 1;
  }
  return true;
}

/// Whether names flow from contributor p to destination q (by the clause's
/// rank roles alone, so both ends agree whatever the counts).
template <class C>
PURLIN_HD bool flows(const Params &P, int64_t p, int64_t q) {
  if (C::kFromRole == kFixed && C::fromFixed(P) != p)
    return false;
  if (C::kToRole == kFixed && C::toFixed(P) != q)
    return false;
  if (C::kFromRole == kCoord && C::kToRole == kCoord &&
      C::kFromDim == C::kToDim && p != q)
    return false;
  return true;
}

template <class C>
PURLIN_HD bool inPeers(const Params &P, int peers, int64_t r, int64_t x) {
  switch (peers) {
  case kPeersSrcs:
    return flows<C>(P, x, r);
  case kPeersDsts:
    return flows<C>(P, r, x);
  default:
    return true;
  }
}

/// Whether rank r contributes any name of clause C.
template <class C> PURLIN_HD bool contributes(const Params &P, int64_t r) {
  return C::kFromRole != kFixed || C::fromFixed(P) == r;
}

/// Elements of one staging slot of clause C: the largest box of any pair.
template <class C> inline int64_t slotElems(const Params &P, int R) {
  int64_t m = 0;
  for (int p = 0; p < R; ++p)
    for (int q = 0; q < R; ++q) {
      Box b;
      if (flows<C>(P, p, q) && makeBox<C>(P, p, q, b) && b.n > m)
        m = b.n;
    }
  return m;
}

/// Scratch layout, in the order the plan's stages first need each area
/// (the generated layout_i calls these, and so does the checker): copies
/// of inputs, then per clause R staging slots; offsets 16-byte aligned.
inline void layoutReset(Shared *S) {
  for (int b = 0; b < kMaxBuffers; ++b)
    S->scratchOff[b] = 0;
  for (int k = 0; k < kMaxClauses; ++k)
    S->stagingOff[k] = S->slotElems[k] = S->slotBytes[k] = S->partialOff[k] = 0;
}
/// The copy of input buffer b (`elems` elements) at `off`; returns the end.
inline int64_t layoutCopy(Shared *S, int b, int64_t elems, int64_t off) {
  S->scratchOff[b] = off;
  return off + (elems * S->elemSize + 15) / 16 * 16;
}
/// The partial results of clause C (its input buffer's `elems` elements)
/// at `off`; returns the end.
template <class C>
inline int64_t layoutPartial(Shared *S, int64_t elems, int64_t off) {
  S->partialOff[C::kIndex] = off;
  return off + (elems * S->elemSize + 15) / 16 * 16;
}
/// The staging slots of clause C at `off`; a slot of flagged lines holds 8
/// data bytes per 16-byte line. Returns the end.
template <class C>
inline int64_t layoutSlots(Shared *S, bool flagged, int64_t off) {
  const int k = C::kIndex;
  S->slotElems[k] = slotElems<C>(S->P, S->R);
  S->slotBytes[k] = (S->slotElems[k] * S->elemSize + 15) / 16 * (flagged ? 32 : 16);
  S->stagingOff[k] = off;
  return off + (int64_t)S->R * S->slotBytes[k];
}

/// One data movement handed to the target: names [a, b) of a box, read from
/// nsrc sources (combined by op in source order) and written to ndst
/// destinations. A flat side addresses name t at base + t (staging slots);
/// otherwise at the map's offset.
/// Steps build their Moves once per lane, in storage the lane's threads
/// share (Tgt::laneMoves(), shared memory on a GPU), then the threads move
/// names [lo, hi) of each.
struct Move {
  Box box;
  int nsrc = 0, ndst = 0;
  const char *src[kMaxRanks];
  char *dst[kMaxRanks];
  bool srcFlat = false, dstFlat = false;
  int op = kCopy;
  int ll = kLinesNone;
  int64_t lo = 0, hi = 0;
  PURLIN_HD void reset() {
    nsrc = ndst = 0;
    srcFlat = dstFlat = false;
    op = kCopy;
    ll = kLinesNone;
    lo = hi = 0;
  }
};

//===----------------------------------------------------------------------===//
// Target contract (atoms): a `Tgt` object per lane provides
//   int rank() const, lane() const;          this lane's rank and lane
//   const Shared &shared() const;
//   uint64_t epoch() const;                  this launch's epoch
//   void barrier();                          all threads of the lane
//   bool leader() const;                     one thread of the lane
//   int thread() const, threads() const;     this thread, threads of the lane
//   Move *laneMoves();                       kMaxRanks Moves the lane's
//                                            threads share
//   void signal(uint64_t *w, uint64_t v);    release store, system scope
//   bool wait(const uint64_t *w, uint64_t v);acquire spin (any thread);
//                                            false on timeout
//   bool barrierOr(bool v);                  barrier + OR over the lane; the
//                                            acquire of the waits before it
//   bool aborted() const; void abort();      a timed-out lane skips the rest
//   bool move(const Move &m, int64_t a, int64_t b, int tid, int nthr);
//                                            data, by threads tid of nthr;
//                                            false: flagged lines timed out
//   int64_t vecElems() const;                elements per 16-byte vector
//   bool moveVec(const char *const *src, int nsrc, char *const *dst,
//                int ndst, int64_t soff, int64_t doff, int64_t bytes,
//                int op, int tid, int nthr);
//                                            a register move: `bytes` at
//                                            src[i] + soff (i < nsrc <=
//                                            kRegPtrs, combined by op in
//                                            order) to dst[i] + doff; false
//                                            (nothing done) where the
//                                            target declines (alignment)
//===----------------------------------------------------------------------===//

/// notify: release this lane's writes, then store the epoch into the signal
/// word (sig, from r, lane l, chunk) of every peer in `peers`.
template <class C, class Tgt>
PURLIN_HD void notify(Tgt &t, int sig, int peers, int chunk, int flags = 0) {
  if (t.aborted() || ((flags & kBoundary) && t.shared().oneLaunch))
    return;
  const Shared &S = t.shared();
  t.barrier();
  if (t.leader())
    for (int q = 0; q < S.R; ++q)
      if (inPeers<C>(S.P, peers, t.rank(), q))
        t.signal(signalWord(S, q, sig, t.rank(), t.lane(), chunk), t.epoch());
}

/// wait: until every peer in `peers` has notified (sig, lane l, chunk) in
/// this epoch; acquire, so that what they wrote before is visible. With
/// kAllLanes, until every lane of each peer has: for data that the peer's
/// lanes sliced differently from this lane's reads (a scratch copy). The
/// lane's threads poll the words in parallel: word w (peer w / lanes, lane
/// l0 + w % lanes) by thread w % threads, all threads in the same loop
/// trip, so that a GPU warp polls its 32 words at once. (A loop over the
/// words in which only the owner of each polls makes a warp's threads spin
/// one after another: measured on the H200, an all-lanes wait of 8 ranks x
/// 16 lanes took 27 us that way and 3 us this way.)
template <class C, class Tgt>
PURLIN_HD void wait(Tgt &t, int sig, int peers, int chunk, int flags = 0) {
  const Shared &S = t.shared();
  if (t.aborted() || ((flags & kBoundary) && S.oneLaunch))
    return;
  bool timedOut = false;
  const bool allLanes = (flags & kAllLanes) != 0;
  const int l0 = allLanes ? 0 : t.lane(), nl = allLanes ? S.L : 1;
  const int T = t.threads(), me = t.thread();
  for (int w = me; w < S.R * nl && !timedOut; w += T) {
    const int p = w / nl, l = l0 + w % nl;
    if (inPeers<C>(S.P, peers, t.rank(), p))
      timedOut = !t.wait(signalWord(S, t.rank(), sig, p, l, chunk), t.epoch());
  }
  if (t.barrierOr(timedOut))
    t.abort();
}

/// The moves of one step: `build(i, m)` sets up Move i of n (false, or
/// lo >= hi: nothing to move). Up to kMaxRanks at a time, thread i of the
/// lane builds Move i (in parallel: each build is a serial chain of
/// integer work); then the lane's threads move them, split into warp-sized
/// groups that each take their own moves, so that the moves' memory
/// latencies overlap instead of adding up.
/// With `fill` (not NoFill), a move's R per-rank pointers are set after its
/// build by R threads at once: fill(m, k) sets pointer k of the rank-indexed
/// sources and/or destinations the build announced (nsrc or ndst == R).
struct NoFill {
  template <class M> PURLIN_HD void operator()(M &, int) const {}
};
template <class A, class B> struct SameType {
  static constexpr bool value = false;
};
template <class A> struct SameType<A, A> {
  static constexpr bool value = true;
};
template <class Tgt, class Build, class Fill = NoFill>
PURLIN_HD void laneMoves(Tgt &t, int n, const Build &build,
                         const Fill &fill = Fill()) {
  Move *ms = t.laneMoves();
  const int T = t.threads(), me = t.thread();
  const int R = t.shared().R;
  constexpr bool kFill = !SameType<Fill, NoFill>::value;
  for (int base = 0; base < n; base += kMaxRanks) {
    const int cnt = n - base < kMaxRanks ? n - base : kMaxRanks;
    for (int i = me; i < cnt; i += T) {
      ms[i].reset();
      if (!build(base + i, ms[i]))
        ms[i].lo = ms[i].hi = 0;
    }
    t.barrier();
    if constexpr (kFill) {
      for (int x = me; x < cnt * R; x += T)
        if (ms[x / R].lo < ms[x / R].hi)
          fill(ms[x / R], x % R);
      t.barrier();
    }
    int live = 0;
    for (int i = 0; i < cnt; ++i)
      live += ms[i].lo < ms[i].hi;
    bool ok = true, lines = false;
    if (live <= 1 || T < 64) {
      for (int i = 0; i < cnt; ++i)
        if (ms[i].lo < ms[i].hi) {
          lines |= ms[i].ll != kLinesNone;
          ok &= t.move(ms[i], ms[i].lo, ms[i].hi, me, T);
        }
    } else {
      int per = T / live / 32 * 32;
      if (per < 32)
        per = 32;
      const int groups = T / per, g = me / per;
      for (int i = 0, k = 0; i < cnt; ++i) {
        if (ms[i].lo >= ms[i].hi)
          continue;
        lines |= ms[i].ll != kLinesNone;
        if (k++ % groups == g && g < groups)
          ok &= t.move(ms[i], ms[i].lo, ms[i].hi, me - g * per, per);
      }
    }
    // Before the next builds; a flagged read that timed out aborts the lane.
    if (lines) {
      if (t.barrierOr(!ok))
        t.abort();
    } else {
      t.barrier();
    }
    if (t.aborted())
      return;
  }
}


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
template <class C> PURLIN_HD char *stagingSlot(const Shared &S, int at, int p) {
  return S.scratch[at] + S.stagingOff[C::kIndex] +
         (int64_t)p * S.slotBytes[C::kIndex];
}
template <class C> PURLIN_HD char *partialOf(const Shared &S, int r) {
  return S.scratch[r] + S.partialOff[C::kIndex];
}
// A partial result lies at the names' source offsets: the box's
// destination side becomes its source side.
PURLIN_HD void toSourceOffsets(Move &m) {
  m.box.dbase = m.box.sbase;
  for (int j = 0; j < m.box.nfree; ++j)
    m.box.dstr[j] = m.box.sstr[j];
}
} // namespace detail

/// stage (push): this rank's contributions of each destination q into q's
/// staging slot for this rank, piece (chunk, lane) of each box.
template <class C, class Tgt>
PURLIN_HD void stagePush(Tgt &t, int chunk, int flags = 0) {
  if (t.aborted())
    return;
  const Shared &S = t.shared();
  const int r = t.rank();
  laneMoves(t, S.R, [&](int q, Move &m) {
      if (!flows<C>(S.P, r, q) || !makeBox<C>(S.P, r, q, m.box))
        return false;
      splitRange(m.box.n, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(),
                 t.vecElems(), m.lo, m.hi);
      m.nsrc = m.ndst = 1;
      m.src[0] = (const char *)S.buf[r][C::kFromBuf];
      m.dst[0] = detail::stagingSlot<C>(S, q, r);
      m.dstFlat = true;
      m.op = kCopy;
      m.ll = (flags & kFlagged) ? kLinesDst : kLinesNone;
      return true;
  });
}

/// A consume step of one box whose sources are every rank's buffer at the
/// same offsets (kFromRole kEvery): each thread builds the box in its own
/// registers and hands the target a register move, so there is no shared
/// Move, no fill and no barrier before the data moves (measured on the
/// H200: the lane leader's build and its two barriers were ~0.5 us of a
/// 3.2 us all-reduce). `owned`: part r of the box (kSelOwned) rather than
/// this rank's names (kSelMine). False, with nothing done, where the box is
/// not one run contiguous on both sides or the target declines the move;
/// every thread of the lane decides alike, so the lane falls back together.
template <class C, class Tgt>
PURLIN_HD bool consumeRegisters(Tgt &t, bool owned, int src, int dst,
                                int64_t pieces, int64_t piece, int op) {
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  if (C::kFromRole != kEvery || R > kRegPtrs ||
      (owned && C::kToRole == kCoord))
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
  const int64_t g = t.vecElems();
  if (owned) {
    int64_t pa, pb, a, c;
    splitRange(b.n, R, r, g, pa, pb);
    splitRange(pb - pa, pieces, piece, g, a, c);
    lo = pa + a;
    hi = pa + c;
  } else {
    splitRange(b.n, pieces, piece, g, lo, hi);
  }
  if (lo < hi) {
    const int64_t es = 16 / g;
    const char *srcs[kRegPtrs];
    char *dsts[kRegPtrs];
    const bool all = owned && dst == kDstAll && C::kToRole == kEvery;
    for (int p = 0; p < kRegPtrs; ++p) {
      srcs[p] = p >= R ? nullptr
                : srcFlat ? detail::stagingSlot<C>(S, r, p)
                          : detail::mappedSource<C>(S, src, p);
      dsts[p] = p >= (all ? R : 1) ? nullptr
                                   : (char *)S.buf[all ? p : q][C::kToBuf];
    }
    if (!t.moveVec(srcs, R, dsts, all ? R : 1,
                   (srcFlat ? lo : b.sbase + lo) * es, (b.dbase + lo) * es,
                   (hi - lo) * es, op, t.thread(), t.threads()))
      return false;
  }
  t.barrier(); // as after laneMoves: the lane's step is whole
  return true;
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
    m.box.sbase = m.box.dbase; // read where it is written
    for (int j = 0; j < m.box.nfree; ++j)
      m.box.sstr[j] = m.box.dstr[j];
    m.nsrc = m.ndst = 1;
    m.src[0] = (const char *)S.buf[p][C::kToBuf];
    m.dst[0] = (char *)S.buf[r][C::kToBuf];
    m.op = kCopy;
    return true;
  });
}

/// consume: combine the contributions of names and write them.
///  sel kSelMine:  the names this rank receives;
///  sel kSelOwned: part r of every box (its owner's part);
///  src, dst: see Source and Dest (mine writes kDstSelf or kDstPartial;
///       owned writes kDstAll, kDstSelf or kDstPartial);
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
  // Every contributor, from inputs, copies or staging, to outputs: what
  // inferred plans do, and what may take the register path.
  const bool plain = lo <= 0 && (hi >= kMaxRanks || hi >= R) && src <= kSrcStaging &&
                     dst != kDstPartial && !(sel == kSelOwned && dst == kDstSelf);
  if (plain && !(flags & kFlagged) &&
      consumeRegisters<C>(t, sel == kSelOwned, src, dst, pieces, piece, op))
    return;
  if (src == kSrcOutput) {
    pullParts<C>(t, pieces, piece, lo, hi);
    return;
  }
  auto source = [&](int p) -> const char * {
    return src == kSrcStaging ? detail::stagingSlot<C>(S, r, p)
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
        splitRange(m.box.n, pieces, piece, t.vecElems(), m.lo, m.hi);
        m.op = op;
        m.ndst = 1;
        m.dst[0] = (char *)S.buf[r][C::kToBuf];
        if (dst == kDstPartial) {
          m.dst[0] = detail::partialOf<C>(S, r);
          detail::toSourceOffsets(m);
        }
        sources(m, C::kFromRole == kEvery ? -1 : pi);
        m.srcFlat = src == kSrcStaging;
        m.ll = (flags & kFlagged) ? kLinesSrc : kLinesNone;
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
