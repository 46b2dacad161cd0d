// Notify and wait, and the lane's moves (the target contract).
// Part of the executor (purlin/spec/Exec.h explains the model).
#pragma once

#include "purlin/spec/exec/Names.h"

namespace purlin {
namespace exec {

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
//   bool pushLines(int fmt, const char *src, char *const *dst, int ndst,
//                  int64_t soff, int64_t doff, int64_t bytes, int tid,
//                  int nthr);                a flagged register push:
//                                            `bytes` at src + soff as
//                                            flagged lines of format fmt
//                                            (LineFmt, exec/Lines.h) into
//                                            each dst[i] (ndst <=
//                                            kRegPtrs), data byte doff of
//                                            the slot's data onwards;
//                                            false (nothing done) where the
//                                            target declines
//   int consumeLines(int fmt, const char *const *src, int nsrc,
//                    char *dst, int64_t soff, int64_t doff,
//                    int64_t bytes, int op, int tid, int nthr);
//                                            a flagged register consume:
//                                            `bytes` of data from data
//                                            byte soff on of each slot
//                                            src[i] (nsrc <= kRegPtrs),
//                                            lines of format fmt, polled,
//                                            combined by op in order, to
//                                            dst + doff; 1 done, 0
//                                            declined (nothing done), -1 a
//                                            line timed out
//   float loadF(const char *base, int64_t i) const;
//   void storeF(char *base, int64_t i, float v) const;
//                                            epilogues (exec/Epilogue.h):
//                                            element i of the launch's type
//                                            widened to f32, or narrowed
//                                            with one rounding (DType.h)
//   float loadFAs(int d, const char *base, int64_t i) const;
//   void storeFAs(int d, char *base, int64_t i, float v) const;
//                                            the same for a buffer of type
//                                            d (Numbering.h: f32, f16, bf16,
//                                            f8e4m3, f8e5m2), an epilogue's
//                                            own (Shared::bufDType)
//   float rowReduce(float v, int op);        epilogues: the fold (kEpiRowSum,
//                                            kEpiRowMax) of v over the
//                                            lane's threads, in a fixed
//                                            order; every thread gets it
//   template <int N> void rowReduceN(float *v, int n, int op);
//                                            rowReduce of v[0] .. v[n-1]
//                                            (n <= N) at once, each in
//                                            rowReduce's order, in place
//   static constexpr int kEpiHeldVecs;       of those, the vectors whose
//                                            epilogue inputs one-shot keeps
//                                            in registers across the passes
//                                            (exec/Epilogue.h; the others
//                                            load them in each pass)
//   static constexpr int kEpiRowVecs;        epilogues' register row
//   void loadF8(const char *base, int64_t i, float *out) const;
//                                            (exec/Epilogue.h): vectors of
//                                            kEpiVec elements a thread may
//                                            hold; elements i .. i+7 as
//                                            loadF gives them, i's address
//                                            aligned to min(16, 8 elements)
//   void storeF8(char *base, int64_t i, const float *v) const;
//                                            elements i .. i+7 as storeF
//                                            stores them (same alignment)
//   using Raw8; void loadRaw8(const char *base, int64_t i, Raw8 &x) const;
//   void widen8(const Raw8 &x, float *out) const;
//                                            loadF8 in two steps: the
//                                            vector as loaded (the
//                                            element type's bytes where the
//                                            target can), widened when used
//   void prefetchF8(const char *base, int64_t i) const;
//   void prefetchL2(const char *p, int64_t bytes) const;
//                                            hints, no result: the vector
//                                            at i is read soon (into L1), or
//                                            the bytes from p (into L2; both
//                                            may do nothing)
//===----------------------------------------------------------------------===//

/// notify: release this lane's writes, then store the epoch into the signal
/// word (sig, from r, lane l, chunk) of every peer in `peers`.
template <class C, class Tgt>
PURLIN_HD void notify(Tgt &t, int sig, int peers, int chunk, int flags = 0) {
  if (t.aborted() || ((flags & kBoundary) && t.shared().oneLaunch))
    return;
  const Shared &S = t.shared();
  t.barrier();
  if (!t.leader())
    return;
  if constexpr (isGeneral<C>()) { // the peers in one pass over the groups
    const RankMask m = groupPeers<C>(S.P, peers, t.rank(), S.R);
    for (int q = 0; q < S.R; ++q)
      if ((m >> q) & 1)
        t.signal(signalWord(S, q, sig, t.rank(), t.lane(), chunk), t.epoch());
  } else {
    for (int q = 0; q < S.R; ++q)
      if (inPeers<C>(S.P, peers, t.rank(), q))
        t.signal(signalWord(S, q, sig, t.rank(), t.lane(), chunk), t.epoch());
  }
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
  RankMask m = 0;
  if constexpr (isGeneral<C>())
    m = groupPeers<C>(S.P, peers, t.rank(), S.R);
  for (int w = me; w < S.R * nl && !timedOut; w += T) {
    const int p = w / nl, l = l0 + w % nl;
    bool in;
    if constexpr (isGeneral<C>())
      in = (m >> p) & 1;
    else
      in = inPeers<C>(S.P, peers, t.rank(), p);
    if (in)
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

} // namespace exec
} // namespace purlin
