// Epilogues: the row-wise f32 work a rank applies to the names it receives
// before they are stored (docs/language.md, "Epilogues"). Part of the
// executor (purlin/spec/Exec.h explains the model); the reference
// evaluator (spec/lib/Epilogue.cpp) uses the same functions, so the host
// target matches it bit for bit.
//
// Generated code gives each epilogue as a struct (purlinc's Codegen):
//   kRowDims     the clause's leading coordinates that name a row;
//   kReductions  the row reductions, numbered in evaluation order (a
//                reduction's argument uses only lower-numbered ones);
//   reduceOp(k)  kEpiRowSum or kEpiRowMax;
//   kUniforms, uniform(x, pass, c, P, red, u): the statements' row-uniform
//                values (no inner coordinate, no recv) into u, each once per
//                row in the first pass that uses it (u keeps it for the
//                later passes; a load of an input in pass 0, so that its
//                latency overlaps the first pass; x reads inputs: EpiRank);
//   element(x, pass, c, P, acc, red, u): one name's statements in pass
//                `pass`: pass k < kReductions folds reduction k's argument
//                into `acc` and returns; pass kReductions stores. `red[k]`
//                is reduction k's value for the row, u[j] uniform value j;
//                `x` reads and stores (EpiElem below);
//   kVecForm, elementVec(x, pass, c, P, rv, ld, acc, red, u): where every
//                access steps by one element along the row's one inner
//                coordinate, the statements of kEpiVec consecutive
//                elements from c (received values rv) at once: each output
//                stored as one vector (x is an EpiVecRank), the elements in
//                ascending order; kVecLoads, loadVec(x, c, P, ld): the
//                inputs those elements read, each loaded as one vector
//                into ld[k] (the register row calls it once a row in
//                one-shot, before each pass in the owned form).
// The step (consumeRows) gives each lane whole rows: the row reductions
// need every element of the row, and a lane's threads reduce them
// together (Tgt::rowReduce). Two forms:
//  - the register row (consumeRowsVec), where every contributor's part of
//    the row is one contiguous, aligned run and the row fits in the lane's
//    registers (Tgt::kEpiRowVecs vectors of kEpiVec elements a thread):
//    each thread owns whole vectors of kEpiVec consecutive elements, loads
//    every contributor's vector once (Tgt::loadF8, all R issued before
//    they are combined), combines them in f32 in ascending rank as recv()
//    does, and runs every pass over the values it holds: the
//    contributions are read once, whatever the number of reductions. Each
//    vector runs through E::elementVec where the epilogue has the vector
//    form; otherwise its elements run in turn with their stores held until
//    the last has run (EpiVecOut), so its loads are issued together and its
//    stores go out as vectors;
//  - the general form otherwise: each pass reads the contributions again
//    (from L2 on a GPU), element by element; correct for any row length
//    and any layout.
// Both fold a thread's elements in ascending element order, then across
// threads (rowReduce); with one thread a lane (the host) both are the
// reference's element order, so the host stays bit for bit equal to the
// reference evaluator whichever form runs.
#pragma once

#include "purlin/spec/exec/EpilogueVec.h"
#include "purlin/spec/exec/GroupSteps.h"

#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

// PURLIN_EPI_TIMING (a measurement build, never the default): thread 0 of
// each lane stamps clock64() at the steps of the register row, and lane 0
// of rank 0 prints the cycles between them in about one launch of 512 (the
// clock's low bits pick it).
#if defined(PURLIN_EPI_TIMING) && defined(__CUDA_ARCH__)
__device__ __forceinline__ long long *purlin_epi_marks() {
  __shared__ long long m[12];
  return m;
}
#define PURLIN_EPI_MARK(i)                                                     \
  do {                                                                         \
    if (threadIdx.x == 0)                                                      \
      purlin_epi_marks()[i] = clock64();                                       \
  } while (0)
#define PURLIN_EPI_REPORT(t, nrows, ninner, form)                              \
  do {                                                                         \
    if (threadIdx.x == 0 && (t).rank() == 0 && (t).lane() == 0 &&              \
        purlin_epi_marks()[8] % 512 == 0) {                                    \
      const long long *m = purlin_epi_marks();                                 \
      printf("epi-timing %s rows %lld inner %lld threads %d: start->rows %lld, " \
             "->row %lld, prefetch %lld, loads %lld, pass0 %lld, reduce %lld, " \
             "pass1 %lld, barrier %lld, total %lld cycles\n",                    \
             (form), (long long)(nrows), (long long)(ninner), (int)blockDim.x, \
             m[1] - m[0], m[2] - m[1], m[3] - m[2], m[4] - m[3], m[5] - m[4],  \
             m[6] - m[5], m[7] - m[6], m[8] - m[7], m[8] - m[0]);              \
    }                                                                          \
  } while (0)
#else
#define PURLIN_EPI_MARK(i) (void)0
#define PURLIN_EPI_REPORT(t, nrows, ninner, form) (void)0
#endif

namespace purlin {
namespace exec {

enum EpiRowOp : int { kEpiRowSum = 0, kEpiRowMax = 1 };
/// What a consume with an epilogue does with the rows it takes: combine
/// and run the statements (kEpiFused); combine and keep the received
/// values, f32, in the destinations' received areas (kEpiStash: consume
/// `to received`, the unfused plans' first consume); run the statements
/// over the values this rank's area holds (kEpiApply: consume `from
/// received`, their second). Stash then apply stores what fused stores,
/// bit for bit on the host: the received value is the same f32, never
/// rounded to the element type in between.
enum EpiMode : int { kEpiFused = 0, kEpiStash = 1, kEpiApply = 2 };

} // namespace exec
} // namespace purlin

// The functions of an epilogue's values, as generated code calls them
// (Expr::cxx prints a call f(a) as purlin_epi_f(a)). IEEE f32: sqrtf is
// correctly rounded on the host and (without fast math) on the GPU.
PURLIN_HD float purlin_epi_sqrt(float x) { return sqrtf(x); }
PURLIN_HD float purlin_epi_abs(float x) { return fabsf(x); }
/// a / b per element where b is a row-uniform value that reads a row
/// reduction: on a GPU a times b's correctly rounded reciprocal (computed
/// once for the row's elements; within 1.5 units in the last place of the
/// true quotient), the true f32 division on the host (docs/language.md).
PURLIN_HD float purlin_epi_div_row(float a, float b) {
#if defined(__CUDA_ARCH__) && !defined(PURLIN_EPI_NO_DIV_ROW)
  return __fmul_rn(a, __frcp_rn(b));
#else
  return a / b;
#endif
}
PURLIN_HD float purlin_epi_min(float a, float b) { return b < a ? b : a; }
PURLIN_HD float purlin_epi_max(float a, float b) { return a < b ? b : a; }
/// One step of a row reduction (and of the reference's, in element order).
PURLIN_HD float purlin_epi_fold(int op, float acc, float v) {
  return op == purlin::exec::kEpiRowMax ? purlin_epi_max(acc, v) : acc + v;
}
PURLIN_HD float purlin_epi_identity(int op) {
  union { // -infinity, without math.h (NVRTC) or a compiler builtin
    uint32_t u;
    float f;
  } minusInf = {0xff800000u};
  return op == purlin::exec::kEpiRowMax ? minusInf.f : 0.0f;
}
/// The received value: contributions combined in f32 in ascending rank
/// (DType.h's contract for narrow floats and f32, without the final
/// rounding); `op` a reduction op (exec::Op).
PURLIN_HD float purlin_epi_combine(int op, float acc, float v) {
  switch (op) {
  case purlin::exec::kProd:
    return acc * v;
  case purlin::exec::kMin:
    return purlin_epi_min(acc, v);
  case purlin::exec::kMax:
    return purlin_epi_max(acc, v);
  default: // sum, avg (divided at the end)
    return acc + v;
  }
}

namespace purlin {
namespace exec {

/// What an epilogue's statements see of one name: its received value, this
/// rank's inputs, this rank's outputs. Elements widen to f32 and narrow
/// with one rounding through the target (loadF, storeF).
template <class C, class Tgt> struct EpiElem : EpiRank<Tgt> {
  int src, op;
  const int64_t *c;
  /// The owned general form reads an element's contributions once and
  /// holds the value for every rank's statements (epiRowGeneral).
  bool held = false;
  float heldRecv = 0.0f;
  /// The rank whose received area holds the row (src kSrcReceived): this
  /// rank, or the row's owner in the gathered apply (epiRowRange sets it).
  int area = 0;
  PURLIN_HD float recv() const {
    if (held)
      return heldRecv;
    Tgt &t = this->t;
    const Shared &S = this->S;
    // Kept by a consume `to received` in rank `area`'s area (this rank's,
    // or the row's owner's in the gathered apply), at the name's
    // destination offset (whichever rank r the statements run for: the
    // owned apply runs them for every rank over the rows it owns).
    if (src == kSrcReceived)
      return t.loadFAs(kElemF32, detail::receivedOf<C>(S, area), C::toIndex(c, S.P));
    const int64_t i = C::fromIndex(c, S.P);
    float acc = t.loadF(detail::mappedSource<C>(S, src, 0), i);
    for (int p = 1; p < S.R; ++p)
      acc = purlin_epi_combine(op, acc, t.loadF(detail::mappedSource<C>(S, src, p), i));
    return op == kAvg ? acc / (float)S.R : acc;
  }
};

/// Measurement builds (never the default; tools/gpu-epilogue.sh variants
/// builds them side by side): PURLIN_EPI_NO_DIV_ROW divides on the GPU too,
/// PURLIN_EPI_UNGROUPED reads the contributors' addresses one at a time,
/// PURLIN_EPI_TESTED_TYPES makes the *Launch forms test Shared::bufDType
/// as the others do (EpilogueVec.h): each undoes one of three changes
/// measured only together. PURLIN_EPI_GUARDED_LOADS guards each of the
/// register row's contribution loads again (consumeRowsVec; fourteenth
/// session, not measured yet).
///
/// Contributors whose addresses the register row reads at once (unrolled
/// loops: the reads do not wait for each other).
constexpr int kEpiGroup = 8;
/// Ranks whose statements the register row runs side by side (the owned
/// form's ranks q; one-shot has one). PURLIN_EPI_RANKS_AT_ONCE=1, a
/// measurement build, runs them one after another as before.
#ifndef PURLIN_EPI_RANKS_AT_ONCE
#define PURLIN_EPI_RANKS_AT_ONCE 4
#endif
constexpr int kEpiRanksAtOnce = PURLIN_EPI_RANKS_AT_ONCE;
/// Contributions the register row loads at once before combining them (4:
/// with 128 registers a thread, 8 spilled; a measurement build with
/// 256-thread lanes, PURLIN_SM_THREADS=256, has the registers for 8: one
/// memory round trip for 8 ranks instead of two).
#ifndef PURLIN_EPI_LOADS
#define PURLIN_EPI_LOADS 4
#endif
/// PURLIN_EPI_RAW_LOADS (1, the default since the thirty-eighth session; 0
/// a measurement build): the register row's contributions are held as they
/// lie in memory until they are combined (Tgt::loadRaw8, Tgt::widen8: 4
/// registers a vector of a 2-byte type, not 8), as the hand-written kernels
/// hold them. The widening and the combine's order are the same, so are the
/// results. On an H100 it ran 1.00-1.04x the widened loads in the fused
/// forms, 0.99-1.00x in the unfused one-shot (docs/performance.md,
/// thirty-eighth session).
#ifndef PURLIN_EPI_RAW_LOADS
#define PURLIN_EPI_RAW_LOADS 1
#endif
constexpr bool kEpiRawLoads = PURLIN_EPI_RAW_LOADS != 0;
namespace detail {
/// A contribution's vector in the register row: widened as loaded
/// (kRaw false: Tgt::loadF8) or held raw (Tgt::Raw8) and widened when used.
template <class Tgt, bool kRaw> struct EpiIn {
  struct Vec {
    float v[kEpiVec];
  };
  PURLIN_HD static void load(Tgt &t, const char *base, int64_t i, Vec &x) { t.loadF8(base, i, x.v); }
  PURLIN_HD static void widen(Tgt &, const Vec &x, float *out) {
    for (int j = 0; j < kEpiVec; ++j)
      out[j] = x.v[j];
  }
};
template <class Tgt> struct EpiIn<Tgt, true> {
  using Vec = typename Tgt::Raw8;
  PURLIN_HD static void load(Tgt &t, const char *base, int64_t i, Vec &x) { t.loadRaw8(base, i, x); }
  PURLIN_HD static void widen(Tgt &t, const Vec &x, float *out) { t.widen8(x, out); }
};
} // namespace detail

/// Where a row of at most one vector a thread (hidden 4096 on 512 threads)
/// takes a register row instantiated for one vector, without the other
/// vectors' code and registers: PURLIN_EPI_ROW_SPLIT 1 (the default) in the
/// fused one-shot, 2 in every form, 0 nowhere. Measured on H100s in the
/// thirtieth session (docs/performance.md), against no split: the fused
/// one-shot 1.01-1.06x at 1-32 tokens (16 x 4096 5.38 -> 5.27 us, 8192 x
/// 16 7.48 -> 7.08); every form split, the fused two-shot 1.02-1.04x at
/// hidden 4096 but 0.97-0.99x at 8192 (where the split is not taken) and
/// the unfused two-shot's apply 0.87-0.89x at 1024 tokens.
#ifndef PURLIN_EPI_ROW_SPLIT
#define PURLIN_EPI_ROW_SPLIT 1
#endif
template <int kMode, bool kOwned>
constexpr bool kEpiRowSplit =
    PURLIN_EPI_ROW_SPLIT == 2 || (PURLIN_EPI_ROW_SPLIT == 1 && kMode == kEpiFused && !kOwned);

/// Whether the register row announces its loads (Tgt::prefetchF8) before
/// it issues them, by form: the owned apply of the unfused plans (a block
/// a row, two blocks an SM) and the stash do; the fused forms do not
/// (PURLIN_EPI_FUSED_PREFETCH=1, a measurement build, does). Measured on
/// an H100 in the twenty-ninth session (docs/performance.md): without the
/// announcements the fused forms are 1.02-1.10x faster wherever they run
/// (1-256 tokens at hidden 4096 and 8192), while the unfused two-shot's
/// apply without them was 0.93x at 1024 tokens.
#ifndef PURLIN_EPI_FUSED_PREFETCH
#define PURLIN_EPI_FUSED_PREFETCH 0
#endif
template <int kMode>
constexpr bool kEpiPrefetch = kMode != kEpiFused || PURLIN_EPI_FUSED_PREFETCH;

/// Where the one-shot register row loads its held inputs (loadHeld in
/// consumeRowsVec): right after the loads of the row's received values
/// went out, so that both wait for one memory round trip, in the apply
/// launch (PURLIN_EPI_HELD_AFTER 1, the default), in every form (2), or
/// before the received values' loads everywhere (0, as until the
/// thirty-fourth session). Loaded first, their widening waited for their
/// data before the apply's area loads were issued (the apply's SASS: two
/// round trips in a row). In the fused forms the contributions come in
/// groups, each combined before the next is loaded; there ptxas placed the
/// held loads after the groups (2: a measurement build).
#ifndef PURLIN_EPI_HELD_AFTER
#define PURLIN_EPI_HELD_AFTER 1
#endif
template <int kMode>
constexpr bool kEpiHeldAfter =
    PURLIN_EPI_HELD_AFTER == 2 || (PURLIN_EPI_HELD_AFTER == 1 && kMode == kEpiApply);

namespace detail {
/// Whether the register row can take row `c` (row coordinates set, inner
/// coordinates 0): every contributor's part of the row is one contiguous
/// run (the source index is affine in the coordinates, docs/language.md,
/// so unit steps along each inner coordinate prove it) starting on a
/// kEpiVec-element boundary aligned for the target's vector loads, and the
/// thread's share fits Tgt::kEpiRowVecs vectors.
template <class C, bool kTo>
PURLIN_HD int64_t sideIndex(const int64_t *c, const Params &P) {
  if constexpr (kTo)
    return C::toIndex(c, P);
  else
    return C::fromIndex(c, P);
}
/// Whether the row at c steps by one element along its inner coordinates
/// on one side of the clause (kTo: the destination's offsets).
template <class C, class E, bool kTo>
PURLIN_HD bool epiRowRun(const Params &P, int64_t *c, const int64_t *ext) {
  const int64_t i0 = sideIndex<C, kTo>(c, P);
  int64_t stride = 1;
  bool ok = true;
  for (int d = C::kDims - 1; d >= E::kRowDims && ok; --d) {
    if (ext[d] > 1) {
      c[d] = 1;
      ok = sideIndex<C, kTo>(c, P) - i0 == stride;
      c[d] = 0;
    }
    stride *= ext[d];
  }
  return ok;
}
/// Whether rank r's received area of clause C holds row c (from its
/// destination offset i0 on) as 16-byte aligned f32 vectors.
template <class C>
PURLIN_HD bool epiReceivedAligned(const Shared &S, int r, int64_t i0) {
  return ((uintptr_t)(receivedOf<C>(S, r) + i0 * 4) & 15u) == 0;
}

template <class C, class E, int kMode = kEpiFused, class Tgt>
PURLIN_HD bool epiRegRow(Tgt &t, const Shared &S, int src, int64_t *c,
                         const int64_t *ext, int64_t ninner, int area) {
  // ceil(vectors / threads) > kEpiRowVecs, without the division
  if (ninner % kEpiVec != 0 ||
      ninner / kEpiVec > (int64_t)Tgt::kEpiRowVecs * t.threads())
    return false;
  const Params &P = S.P;
  // The received area (rank `area`'s: this rank's, where the stash stores
  // and the apply reads, or the row's owner's in the gathered apply) lies
  // at the destination's offsets, as f32.
  if constexpr (kMode != kEpiFused)
    if (!epiRowRun<C, E, true>(P, c, ext) ||
        !epiReceivedAligned<C>(S, area, C::toIndex(c, P)))
      return false;
  if constexpr (kMode == kEpiApply)
    return true;
  const int64_t i0 = C::fromIndex(c, P);
  bool ok = epiRowRun<C, E, false>(P, c, ext);
  // Every contributor's vector start OR-ed: aligned iff each one is. The
  // addresses are read kEpiGroup at a time, none waiting for another's test
  // (on a GPU each is a constant-cache read that may miss).
#if defined(PURLIN_EPI_UNGROUPED) // a measurement build: one at a time
  for (int p = 0; p < S.R && ok; ++p)
    ok = epiVecAligned(S, mappedSource<C>(S, src, p), i0);
  return ok;
#else
  const int64_t off = i0 * (int64_t)S.elemSize;
  uintptr_t low = 0;
  for (int p0 = 0; p0 < S.R; p0 += kEpiGroup)
PURLIN_UNROLL
    for (int b = 0; b < kEpiGroup; ++b)
      if (p0 + b < S.R)
        low |= (uintptr_t)(mappedSource<C>(S, src, p0 + b) + off);
  return ok && epiVecAligned(S, (const char *)low, 0);
#endif
}
} // namespace detail

namespace detail {
/// One vector of the register row in pass `pass` where the epilogue has no
/// vector form: its elements run in turn (element()), their stores held in
/// an EpiVecOut and stored as vectors after the last; where a store is off
/// the runs, the vector runs again storing at once (only the storing pass
/// stores: acc is not touched again). c is at the vector's first element.
template <class C, class E, class Tgt>
PURLIN_HD void epiVecHeld(Tgt &t, const Shared &S, int q, const float *vals,
                          int pass, int64_t *c, const int64_t *ext,
                          int64_t first, float &acc, const float *red,
                          const float *u) {
  EpiVecOut o;
PURLIN_UNROLL
  for (int b = 0; b < kMaxBuffers; ++b)
    o.held[b] = 0u;
  o.off = false;
  epiVecElems<C, E, false>(t, S, q, vals, pass, c, ext, acc, red, u, o);
  if (!o.off) {
    epiVecFlush(t, S, q, o);
    return;
  }
  innerAt<C, E>(first, ext, c);
  epiVecElems<C, E, true>(t, S, q, vals, pass, c, ext, acc, red, u, o);
}
} // namespace detail

/// One row in registers (see the head of this file): thread `th` of the
/// lane owns vectors th, th + threads, ... of the row (a warp's loads are
/// contiguous); c holds the row coordinates and zero inner coordinates.
/// The statements run for ranks q0 .. q1-1, kQ at a time side by side
/// (their inputs and outputs), over the one received row: [r, r+1) in
/// one-shot, every rank in the owned form (fused, or the owned apply, which
/// reads the row from this rank's own area). Every contribution is read
/// before the first store. The stash stores the row into this rank's own
/// area only (the owned form's owner applies it later).
/// kVCap > 0: at most kVCap vectors a thread (the caller checked that the
/// row fits), a smaller instantiation (PURLIN_EPI_ROW_SPLIT).
template <class C, class E, int kQ, int kMode = kEpiFused, int kVCap = 0, class Tgt>
PURLIN_HD void consumeRowsVec(Tgt &t, const Shared &S, int src, int op,
                              int64_t *c, const int64_t *ext, int64_t ninner,
                              int q0, int q1, int area) {
  constexpr int kV =
      kVCap > 0 && kVCap < Tgt::kEpiRowVecs ? kVCap : Tgt::kEpiRowVecs;
  const Params &P = S.P;
  // Where the row's received values come from: the contributions (at
  // their source offsets), or this rank's received area (apply: at the
  // destination's offsets).
  const int64_t i0 = kMode == kEpiApply ? C::toIndex(c, P) : C::fromIndex(c, P);
  const int64_t nvec = ninner / kEpiVec;
  const int th = t.thread(), T = t.threads();
  int nmine = 0; // the thread's vectors (nvec <= kV * T: 32-bit)
  if constexpr (kV <= 8) { // a GPU's few: counted, no division
PURLIN_UNROLL
    for (int k = 0; k < kV; ++k)
      nmine += th + k * T < (int)nvec ? 1 : 0;
  } else if (th < nvec) {
    nmine = ((int)nvec - th + T - 1) / T;
  }
  float row[kV][kEpiVec];
  // One-shot (one rank's statements): the vector form's inputs loaded once,
  // before the contributions, and kept in registers for every pass (loaded
  // in each pass, the storing pass waited a memory round trip for them
  // after the row reduction). Several ranks side by side (the owned form)
  // load them before each pass, as the registers would not hold them.
  constexpr bool kHeldT = E::kVecForm && kMode != kEpiStash && kQ == 1;
  constexpr int kHeldV = kV < Tgt::kEpiHeldVecs ? kV : Tgt::kEpiHeldVecs;
  const bool held = kHeldT && q1 - q0 == 1;
  float ld[kHeldT && kHeldV > 0 ? kHeldV : 1][E::kVecLoads + 1][kEpiVec];
  // The held inputs of vector k, loaded and widened (which waits for their
  // data): first, or (kEpiHeldAfter) right after the loads of the vector's
  // received values went out (the apply's area, or the fused forms' first
  // group of contributions).
  auto loadHeld = [&](int k) {
    if constexpr (kHeldT)
      if (held && k < kHeldV) {
        detail::innerAt<C, E>(((int64_t)th + (int64_t)k * T) * kEpiVec, ext, c);
        E::loadVec(EpiVecRank<Tgt>{{t, S, q0}}, c, P, ld[k < kHeldV ? k : 0]);
      }
  };
  PURLIN_EPI_MARK(2);
  // Where the form announces its loads (kEpiPrefetch: the stash and the
  // apply), every load of the thread's vectors announced first
  // (Tgt::prefetchF8): the contributions and, in the vector form, the
  // statements' inputs of each rank q the row runs for; the loads below, a
  // few at a time in registers, then wait for one memory round trip in
  // all, not one each. The fused forms skip the announcements (faster
  // without them).
PURLIN_UNROLL
  for (int k = 0; k < kV; ++k) {
    if (k >= nmine)
      break;
    const int64_t first = ((int64_t)th + (int64_t)k * T) * kEpiVec;
    if constexpr (!kEpiHeldAfter<kMode>)
      loadHeld(k);
    if constexpr (kMode != kEpiApply && kEpiPrefetch<kMode>) {
#if defined(PURLIN_EPI_UNGROUPED)
      for (int p = 0; p < S.R; ++p)
        t.prefetchF8(detail::mappedSource<C>(S, src, p), i0 + first);
#else
      for (int p0 = 0; p0 < S.R; p0 += kEpiGroup)
PURLIN_UNROLL
        for (int b = 0; b < kEpiGroup; ++b)
          if (p0 + b < S.R)
            t.prefetchF8(detail::mappedSource<C>(S, src, p0 + b), i0 + first);
#endif
    }
    if constexpr (E::kVecForm && kMode != kEpiStash && kEpiPrefetch<kMode>)
      if (!held || k >= kHeldV) {
        detail::innerAt<C, E>(first, ext, c);
        for (int q = q0; q < q1; ++q)
          E::prefetchVec(EpiVecRank<Tgt>{{t, S, q}}, c, P);
      }
  }
  PURLIN_EPI_MARK(3);
  if constexpr (kMode == kEpiApply) {
    // The received values, as the stash stored them: no combine (from
    // rank `area`'s area).
    const char *from = detail::receivedOf<C>(S, area);
PURLIN_UNROLL
    for (int k = 0; k < kV; ++k) {
      if (k >= nmine)
        break;
      t.loadF32x8(from, i0 + ((int64_t)th + (int64_t)k * T) * kEpiVec, row[k]);
      if constexpr (kEpiHeldAfter<kMode>)
        loadHeld(k);
    }
  } else {
    // The contributions kEpiLoads ranks at a time: their loads are issued
    // together (independent, a constant count), then combined in ascending
    // rank, the order recv() has.
    constexpr int kEpiLoads = PURLIN_EPI_LOADS;
    // Held as loaded (Tgt::Raw8, PURLIN_EPI_RAW_LOADS) or widened at once.
    using In = detail::EpiIn<Tgt, kEpiRawLoads>;
    typename In::Vec in[kEpiLoads];
PURLIN_UNROLL
    for (int k = 0; k < kV; ++k) {
      if (k >= nmine)
        break;
      const int64_t at = i0 + ((int64_t)th + (int64_t)k * T) * kEpiVec;
      for (int p0 = 0; p0 < S.R; p0 += kEpiLoads) {
#if !defined(PURLIN_EPI_GUARDED_LOADS)
        if (p0 + kEpiLoads <= S.R) {
          // A whole group: its loads unconditional, so all of them go out
          // before the first is used. Guarded one by one, each load sat in
          // a branch of its own with its widening right behind it, which
          // waited for the data before the next load was issued (the SASS,
          // docs/performance.md, fourteenth session).
PURLIN_UNROLL
          for (int b = 0; b < kEpiLoads; ++b)
            In::load(t, detail::mappedSource<C>(S, src, p0 + b), at, in[b]);
        } else
#endif
        {
          for (int b = 0; b < kEpiLoads; ++b)
            if (p0 + b < S.R)
              In::load(t, detail::mappedSource<C>(S, src, p0 + b), at, in[b]);
        }
        if constexpr (kEpiHeldAfter<kMode>)
          if (p0 == 0)
            loadHeld(k); // while the first group's loads are out
        for (int b = 0; b < kEpiLoads; ++b)
          if (p0 + b < S.R) {
            float v[kEpiVec];
            In::widen(t, in[b], v);
            for (int j = 0; j < kEpiVec; ++j)
              row[k][j] = p0 + b == 0 ? v[j] : purlin_epi_combine(op, row[k][j], v[j]);
          }
      }
      if (op == kAvg)
        for (int j = 0; j < kEpiVec; ++j)
          row[k][j] /= (float)S.R;
    }
  }
  PURLIN_EPI_MARK(4);
  if constexpr (kMode == kEpiStash) {
    // Kept in this rank's own area, at the destination's offsets; the
    // statements run later (kEpiApply), on this rank (one-shot: its own
    // row; owned: the owner's row, for every rank).
    const int64_t o0 = C::toIndex(c, P);
    char *area = detail::receivedOf<C>(S, t.rank());
PURLIN_UNROLL
    for (int k = 0; k < kV; ++k) {
      if (k >= nmine)
        break;
      t.storeF32x8(area, o0 + ((int64_t)th + (int64_t)k * T) * kEpiVec, row[k]);
    }
  } else {
    // The statements run for kQ ranks q at a time (the owned form runs them
    // for every rank, kEpiRanksAtOnce at a time; one-shot for its own, kQ 1):
    // the ranks' passes side by side, so their loads overlap and one
    // Tgt::rowReduceN folds all their row reductions (one pair of lane
    // barriers on a GPU instead of one a rank).
    // Each rank's statements, folds and stores are in the order they would
    // have alone (its outputs are its own; its inputs are not another rank's
    // outputs), so its results are the same bit for bit.
    for (int qb = q0; qb < q1; qb += kQ) {
      const int nq = q1 - qb < kQ ? q1 - qb : kQ;
      // Row reductions and uniform values not known yet are 0: a let the
      // element code computes in every pass may read them before they are
      // (its value is used only in later passes).
      float red[kQ][E::kReductions + 1] = {};
      float u[kQ][E::kUniforms + 1] = {}; // each set in its first pass, kept after
PURLIN_UNROLL
      for (int pass = 0; pass <= E::kReductions; ++pass) {
        const int rop = pass < E::kReductions ? E::reduceOp(pass) : kEpiRowSum;
        float acc[kQ];
PURLIN_UNROLL
        for (int j = 0; j < kQ; ++j) {
          acc[j] = purlin_epi_identity(rop);
          if (j < nq)
            E::uniform(EpiRank<Tgt>{t, S, qb + j}, pass, c, P, red[j], u[j]);
        }
        // Each rank loads, computes and stores in turn, so the owned form's
        // storing pass waits a memory round trip a rank (a rank's loads
        // cannot pass the previous rank's stores: they may alias). Loading
        // 2 or 4 ranks' inputs first measured slower, not faster (0.87x and
        // 0.67x at 128 x 4096; docs/performance.md, thirty-second session).
PURLIN_UNROLL
        for (int j = 0; j < kQ; ++j) {
          if (j >= nq)
            break;
PURLIN_UNROLL
          for (int k = 0; k < kV; ++k) {
            if (k >= nmine)
              break;
            // the inner coordinates of the vector's first element
            const int64_t first = ((int64_t)th + (int64_t)k * T) * kEpiVec;
            detail::innerAt<C, E>(first, ext, c);
            if constexpr (E::kVecForm) {
              const EpiVecRank<Tgt> x{{t, S, qb + j}};
              if (held && k < kHeldV) {
                E::elementVec(x, pass, c, P, row[k], ld[k < kHeldV ? k : 0], acc[j], red[j], u[j]);
              } else {
                float lp[E::kVecLoads + 1][kEpiVec];
                E::loadVec(x, c, P, lp);
                E::elementVec(x, pass, c, P, row[k], lp, acc[j], red[j], u[j]);
              }
            } else
              detail::epiVecHeld<C, E>(t, S, qb + j, row[k], pass, c, ext, first, acc[j],
                                       red[j], u[j]);
          }
        }
        if (pass == 0)
          PURLIN_EPI_MARK(5);
        if (pass < E::kReductions) {
          if constexpr (kQ == 1)
            acc[0] = t.rowReduce(acc[0], rop);
          else
            t.template rowReduceN<kQ>(acc, nq, rop);
PURLIN_UNROLL
          for (int j = 0; j < kQ; ++j)
            red[j][pass] = acc[j];
        }
        if (pass == 0)
          PURLIN_EPI_MARK(6);
      }
    }
  }
  PURLIN_EPI_MARK(7);
  for (int d = E::kRowDims; d < C::kDims; ++d)
    c[d] = 0;
}

namespace detail {
/// One row in the general form for ranks q0 .. q1-1, at most kMaxQ (one
/// rank for one-shot, every rank for the owned form); thread th takes
/// elements th, th + threads, ... Each pass reads an element's
/// contributions once, holds the value (x.held) and runs the ranks'
/// statements on it in ascending rank. Stores come in the last pass only,
/// so every contribution of an element is read before an output at its
/// address is stored: the owned form is right with each output at its
/// clause input's address, as the register row is (the form that walked
/// the ranks one after another read rank q's input again after rank q-1's
/// statements stored over it; Checker.cpp's inplace_same relies on this).
/// Each rank's folds and stores keep the order they have alone, so its
/// outputs are the same bit for bit.
template <class C, class E, int kMaxQ, class Tgt>
PURLIN_HD void epiRowGeneral(Tgt &t, EpiElem<C, Tgt> &x, int64_t *c,
                             const int64_t *ext, int64_t ninner, int q0, int q1) {
  const Params &P = x.S.P;
  const int nq = q1 - q0; // <= kMaxQ
  // as in consumeRowsVec; u each set in its first pass, kept after
  float red[kMaxQ][E::kReductions + 1];
  float u[kMaxQ][E::kUniforms + 1];
  for (int j = 0; j < nq; ++j) {
    for (int k = 0; k <= E::kReductions; ++k)
      red[j][k] = 0.0f;
    for (int k = 0; k <= E::kUniforms; ++k)
      u[j][k] = 0.0f;
  }
  for (int pass = 0; pass <= E::kReductions; ++pass) {
    const int rop = pass < E::kReductions ? E::reduceOp(pass) : kEpiRowSum;
    float acc[kMaxQ];
    for (int j = 0; j < nq; ++j) {
      acc[j] = purlin_epi_identity(rop);
      x.r = q0 + j;
      E::uniform(x, pass, c, P, red[j], u[j]);
    }
    for (int64_t e = t.thread(); e < ninner; e += t.threads()) {
      innerAt<C, E>(e, ext, c);
      x.held = false;
      x.heldRecv = x.recv();
      x.held = true;
      for (int j = 0; j < nq; ++j) {
        x.r = q0 + j;
        E::element(x, pass, c, P, acc[j], red[j], u[j]);
      }
    }
    x.held = false;
    if (pass < E::kReductions)
      for (int j = 0; j < nq; ++j)
        red[j][pass] = t.rowReduce(acc[j], rop);
  }
}
/// One row's received values in the general form, element by element,
/// into this rank's received area (kEpiStash).
template <class C, class E, class Tgt>
PURLIN_HD void epiRowStash(Tgt &t, const EpiElem<C, Tgt> &x, int64_t *c,
                           const int64_t *ext, int64_t ninner) {
  char *area = receivedOf<C>(x.S, t.rank());
  for (int64_t e = t.thread(); e < ninner; e += t.threads()) {
    innerAt<C, E>(e, ext, c);
    t.storeFAs(kElemF32, area, C::toIndex(c, x.S.P), x.recv());
  }
}
} // namespace detail

namespace detail {
/// The clause's extents (parameters only: no coordinate is needed) and the
/// rows x elements they make: the first E::kRowDims coordinates name a row.
template <class C, class E>
PURLIN_HD void rowShape(const Params &P, int64_t *ext, int64_t &nrows,
                        int64_t &ninner) {
  const int64_t none[kMaxDims] = {0};
  for (int d = 0; d < C::kDims; ++d) {
    ext[d] = C::extent(d, none, P);
    (d < E::kRowDims ? nrows : ninner) *= ext[d];
  }
}
/// PURLIN_EPI_OWNED_QSPLIT (1, the default; 0: off, a measurement
/// build): where an owner has at most half as many rows as its plan's
/// lanes, the fused owned form's lanes split each row's ranks q among them
/// (epiRows), so that a few rows keep more SMs busy: each lane combines
/// the row itself and runs its group's statements. Not where the owned
/// consume reads an input that its outputs may lie on (a fused two-shot
/// in place: another lane could still read the contribution a lane
/// stores over). Measured (H100, thirty-sixth session, 8 ranks, bf16):
/// the fused two-shot 14.5 -> 6.3 us at 1 x 4096, 15.3 -> 11.1 at 64 x
/// 4096, 25.1 -> 17.6 at 64 x 8192. The unfused plans' apply does not
/// split: it ran 2.5x faster at 1-16 tokens, where the chooser does not
/// take it, and its second instantiation of the row cost 64 -> 91
/// registers, 0.88x at 1024 tokens, where it does.
#ifndef PURLIN_EPI_OWNED_QSPLIT
#define PURLIN_EPI_OWNED_QSPLIT 1
#endif

/// Whether the fused owned form's owners of at most `nmax` rows (ceil(rows
/// / R)) cut them by (row, group of ranks q): the same answer on every
/// rank and in the plan's live lanes (rows_N) as in epiRows, as it depends
/// only on the plan's pieces (K x L) and the rows.
PURLIN_HD bool epiOwnedSplit(const Shared &S, int64_t nmax) {
  return PURLIN_EPI_OWNED_QSPLIT && nmax > 0 && 2 * nmax <= (int64_t)S.K * S.L;
}

/// The rows a rank's lanes share in a consume of clause C through E, and
/// the elements a row: the clause's rows, or (owned) an owner's most,
/// ceil(rows / R), as epiRows cuts them by rank; R pieces a row, a (row,
/// rank) each at most, where the fused owned form splits them
/// (epiOwnedSplit; kApply, the unfused plans' apply, never does).
/// Generated code sizes the epilogue's launch of its own (applyShape_N,
/// kApply) and a plan's live lanes (rows_N) by it.
template <class C, class E, bool kApply = false>
PURLIN_HD void laneRowShape(const Shared &S, bool owned, int64_t &rows, int64_t &inner) {
  int64_t ext[kMaxDims] = {0};
  rows = inner = 1;
  rowShape<C, E>(S.P, ext, rows, inner);
  if (owned) {
    rows = (rows + S.R - 1) / S.R;
    if (!kApply && epiOwnedSplit(S, rows))
      rows *= S.R;
  }
}

/// The groups of ranks q each of an owner's n rows (of nmax at most) is
/// cut into among `pieces` lanes of the fused owned form: pieces / n, at
/// most R, where epiOwnedSplit; else 1, and 1 where it reads the inputs
/// (src) and a rank's output lies on its input.
template <class C>
PURLIN_HD int64_t epiOwnedGroups(const Shared &S, int src, int64_t n, int64_t nmax,
                                 int64_t pieces) {
  if (!epiOwnedSplit(S, nmax) || n <= 0 || pieces < 2 * n)
    return 1;
  const int64_t g = pieces / n < S.R ? pieces / n : S.R;
  if (src == kSrcInput)
    for (int p = 0; p < S.R; ++p)
      if (S.buf[p][C::kToBuf] == S.buf[p][C::kFromBuf])
        return 1;
  return g;
}

/// c = the coordinates of row `row`'s first element.
template <class C, class E>
PURLIN_HD void rowStart(int64_t row, const int64_t *ext, int64_t *c) {
  if constexpr (E::kRowDims == 1)
    c[0] = row; // row < ext[0]
  else
    for (int d = E::kRowDims - 1; d >= 0; --d) {
      c[d] = row % ext[d];
      row /= ext[d];
    }
  for (int d = E::kRowDims; d < C::kDims; ++d)
    c[d] = 0;
}
} // namespace detail

/// PURLIN_EPI_L2_PREFETCH: the register row announces rows to L2
/// (Tgt::prefetchL2: a bulk prefetch, no register) before it reads them:
/// each contribution's run of the row (fused, stash) or this rank's received
/// area's (apply), one thread a run. 1: the lane's first row and, at each
/// row, the next; 2: every row of the lane at its first; 0: none (the
/// default: on an H100 both lost 0.88-0.97x at 1-64 tokens and gained
/// 1.01-1.03x at 1024 tokens; docs/performance.md, thirty-eighth session).
#ifndef PURLIN_EPI_L2_PREFETCH
#define PURLIN_EPI_L2_PREFETCH 0
#endif

namespace detail {
/// Announces row `row` of a consume of clause C (its register-row runs) to
/// L2: thread p the run of contribution p, or thread 0 the received area's.
template <class C, class E, int kMode, class Tgt>
PURLIN_HD void epiRowToL2(Tgt &t, const Shared &S, int src, int64_t row, const int64_t *ext,
                          int64_t ninner, int area) {
  int64_t c[kMaxDims] = {0};
  rowStart<C, E>(row, ext, c);
  const int th = t.thread();
  if constexpr (kMode == kEpiApply) {
    if (th == 0)
      t.prefetchL2(receivedOf<C>(S, area) + C::toIndex(c, S.P) * 4, ninner * 4);
  } else if (th < S.R) {
    t.prefetchL2(mappedSource<C>(S, src, th) + C::fromIndex(c, S.P) * (int64_t)S.elemSize,
                 ninner * (int64_t)S.elemSize);
  }
}
} // namespace detail

namespace detail {
/// The rank that owns row `row` of `nrows` in the owned forms (rows piece
/// r of R, as epiRows and stashNames cut them): whose received area the
/// owned stash left the row in.
PURLIN_HD int rowOwner(int64_t nrows, int R, int64_t row) {
  for (int p = R - 1; p > 0; --p) {
    int64_t lo, hi;
    splitRange(nrows, (int64_t)R, (int64_t)p, 1, lo, hi);
    if (lo < hi && row >= lo)
      return p;
  }
  return 0;
}

/// Rows [first, last) of epiRows for ranks [q0, q1). kSplit false: the
/// lane's rows for its every rank (q0, q1 as the form has them: R ranks
/// owned, this rank's alone one-shot), as constants of the instantiation,
/// so that the usual cut's code is the one it had before the split
/// existed (with the ranks' range a variable the fused two-shot ran 0.88x
/// at 1024 tokens, H100, thirty-sixth session); true: an owner's row for a
/// group of ranks (epiOwnedGroups). kGather (the gathered apply): each
/// row's received values from its owner's area (rowOwner of nrows).
template <class C, class E, bool kOwned, int kMode, bool kSplit, bool kGather = false,
          class Tgt>
PURLIN_HD void epiRowRange(Tgt &t, const Shared &S, int src, int64_t first, int64_t last,
                           int q0, int q1, const int64_t *ext, int64_t ninner,
                           int64_t nrows = 0) {
  if constexpr (!kSplit) {
    q0 = kOwned ? 0 : t.rank();
    q1 = kOwned ? S.R : t.rank() + 1;
  }
  int64_t c[kMaxDims] = {0};
  constexpr int kQ = kOwned ? kEpiRanksAtOnce : 1; // ranks side by side
  EpiElem<C, Tgt> x{{t, S, q0}, src, clauseOp<C>(S), c};
  // The rank whose received area holds row r (the forms from received).
  auto areaOf = [&](int64_t r) { return kGather ? rowOwner(nrows, S.R, r) : t.rank(); };
  for (int64_t row = first; row < last; ++row) {
    rowStart<C, E>(row, ext, c);
    const int area = areaOf(row);
    x.area = area;
    if (epiRegRow<C, E, kMode>(t, S, src, c, ext, ninner, area)) {
      if constexpr (PURLIN_EPI_L2_PREFETCH == 1) {
        if (row == first)
          epiRowToL2<C, E, kMode>(t, S, src, row, ext, ninner, area);
        if (row + 1 < last)
          epiRowToL2<C, E, kMode>(t, S, src, row + 1, ext, ninner, areaOf(row + 1));
      } else if constexpr (PURLIN_EPI_L2_PREFETCH == 2) {
        if (row == first)
          for (int64_t r = first; r < last; ++r)
            epiRowToL2<C, E, kMode>(t, S, src, r, ext, ninner, areaOf(r));
      }
      // A row of one vector a thread in an instantiation of its own
      // (kEpiRowSplit).
      if constexpr (kEpiRowSplit<kMode, kOwned>)
        if (ninner / kEpiVec <= (int64_t)t.threads()) {
          consumeRowsVec<C, E, kQ, kMode, 1>(t, S, src, x.op, c, ext, ninner, q0, q1, area);
          continue;
        }
      consumeRowsVec<C, E, kQ, kMode>(t, S, src, x.op, c, ext, ninner, q0, q1, area);
      continue;
    }
    if constexpr (kMode == kEpiStash)
      epiRowStash<C, E>(t, x, c, ext, ninner);
    else
      epiRowGeneral<C, E, kOwned ? kMaxRanks : 1>(t, x, c, ext, ninner, q0, q1);
  }
}

/// The rows of a consume with an epilogue, one-shot (kOwned false: this
/// rank's outputs from every row) or owned (this rank's R-th of the rows,
/// every rank's outputs); see consumeRows and consumeRowsOwned. The stash
/// (kEpiStash) keeps the rows in this rank's own area and the apply
/// (kEpiApply) reads them from it, owned or not: both cut ownership alike
/// (rows piece r of R), so the owner applies the rows it kept. The fused
/// owned form cuts an owner's few rows by ranks too (epiOwnedSplit).
template <class C, class E, bool kOwned, int kMode = kEpiFused, bool kGather = false,
          class Tgt>
PURLIN_HD void epiRows(Tgt &t, int src, int chunk) {
  if (t.aborted())
    return;
  static_assert(C::kFromRole == kEvery && C::kToRole == kEvery,
                "an epilogue's clause reads every rank and writes every rank");
  const Shared &S = t.shared();
  int64_t ext[kMaxDims] = {0};
  int64_t nrows = 1, ninner = 1;
  rowShape<C, E>(S.P, ext, nrows, ninner);
  int64_t rlo = 0, rhi = nrows, lo, hi;
  if (kOwned)
    splitRange(nrows, (int64_t)S.R, (int64_t)t.rank(), 1, rlo, rhi);
  // Tgt::lanes(): the plan's lanes, or the blocks of the epilogue's launch
  // of its own (the unfused plans where the target splits them).
  const int64_t pieces = (int64_t)S.K * t.lanes(), piece = (int64_t)chunk * t.lanes() + t.lane();
  PURLIN_EPI_MARK(1);
  bool cut = false;
  if constexpr (kOwned && kMode == kEpiFused) {
    const int64_t g = epiOwnedGroups<C>(S, src, rhi - rlo, (nrows + S.R - 1) / S.R, pieces);
    if (g > 1) {
      // The owner's rows cut by (row, group of ranks q): each lane combines
      // its row and runs the statements of its group's ranks.
      lo = piece / g < rhi - rlo ? piece / g : rhi - rlo;
      hi = lo < rhi - rlo ? lo + 1 : lo;
      int64_t qa, qb;
      splitRange(S.R, g, piece % g, 1, qa, qb);
      // Inlined: called instead (a measurement build of the thirty-sixth
      // session), the kernel's code halved but it ran 0.67-0.89x at 1-64
      // tokens (docs/performance.md, thirty-seventh session).
      epiRowRange<C, E, kOwned, kMode, true>(t, S, src, rlo + lo, rlo + hi, (int)qa, (int)qb,
                                             ext, ninner);
      cut = true;
    }
  }
  if (!cut) {
    splitRange(rhi - rlo, pieces, piece, 1, lo, hi);
    epiRowRange<C, E, kOwned, kMode, false, kGather>(t, S, src, rlo + lo, rlo + hi, 0, 0, ext,
                                                     ninner, nrows);
  }
  t.barrier(); // the lane's step is whole, as after laneMoves
  PURLIN_EPI_MARK(8);
  PURLIN_EPI_REPORT(t, nrows, ninner,
                    kMode == kEpiStash ? "stash" : kMode == kEpiApply ? "apply"
                    : kOwned ? "owned" : "one-shot");
}
} // namespace detail

/// consume with an epilogue: the one-shot consume (`mine` from every
/// rank's input or scratch copy, `to self`) of clause C, whose names are
/// rows x elements, through epilogue E. Lane l of chunk k takes rows piece
/// (k, l); the lane's threads share each row.
template <class C, class E, class Tgt>
PURLIN_HD void consumeRows(Tgt &t, int src, int chunk) {
  detail::epiRows<C, E, false>(t, src, chunk);
}

/// consume with an epilogue, the owned form (two-shot: `owned` from every
/// rank's input or scratch copy, `to all`) of clause C through epilogue E.
/// Ownership is cut on row boundaries: rank r owns rows piece r of R (the
/// row reductions need whole rows on one rank); lane l of chunk k takes
/// piece (k, l) of those. For each row it owns, the rank combines every
/// contributor's part once and then runs the statements for every rank q
/// in ascending order with q's inputs, storing q's outputs: each rank's
/// outputs are exactly what its own one-shot consume would store (so the
/// host still equals the reference bit for bit), while each contribution
/// is read once in all instead of once per rank. Every contribution of a
/// name is read before an output at its address is stored (the register
/// row reads the whole row first; the general form reads each element once
/// for all ranks: epiRowGeneral), so an output may start at its
/// clause input's address (Checker.cpp, inplace_same).
template <class C, class E, class Tgt>
PURLIN_HD void consumeRowsOwned(Tgt &t, int src, int chunk) {
  detail::epiRows<C, E, true>(t, src, chunk);
}

namespace detail {
/// Whether the clause's destination offsets are its coordinates' row-major
/// index from `base` on (every name at base + the index, extents ext): then
/// row k of the clause is names [k * ninner, (k + 1) * ninner) of a box
/// that is one contiguous run from base.
/// kTo false: the same of the source offsets.
template <class C, bool kTo = true>
PURLIN_HD bool rowMajorFrom(const Params &P, const int64_t *ext, int64_t base) {
  int64_t c[kMaxDims] = {0};
  const int64_t i0 = sideIndex<C, kTo>(c, P);
  bool ok = i0 == base;
  int64_t stride = 1;
  for (int d = C::kDims - 1; d >= 0 && ok; --d) {
    if (ext[d] > 1) {
      c[d] = 1;
      ok = sideIndex<C, kTo>(c, P) - i0 == stride;
      c[d] = 0;
    }
    stride *= ext[d];
  }
  return ok;
}

/// The unfused plans' first consume over names rather than rows, as the
/// plain consume cuts them (consumeRegisters: this rank's names, then
/// piece (chunk, lane), on t.vecElems() boundaries): no row setup, every
/// lane busy however few the rows. The owned form takes the names of the
/// rows the rank owns (rows piece r of R, as epiRows cuts them, so that
/// the owner's apply finds them in its own area), then piece (chunk,
/// lane) of those. Each thread combines kEpiVec names at a time from every
/// contributor (Tgt::loadF8, all R loads issued before the combine, in
/// ascending rank as recv() does) and stores them as f32 into this rank's
/// received area (Tgt::storeF32x8); a piece's last names one by one.
/// False, with nothing done, unless the box is one run contiguous on both
/// sides, at most kRegPtrs contributors, every contributor's and the
/// area's first name aligned for those vectors and the element at most 4
/// bytes (so every piece's start is too), and (owned) the names in
/// row-major order with rows of a multiple of t.vecElems() names:
/// conditions the same on every lane, so that the step's lanes all take
/// this cut or all take the rows'.
template <class C, class E, bool kOwned, class Tgt>
PURLIN_HD bool stashNames(Tgt &t, int src, int chunk) {
  const Shared &S = t.shared();
  const int r = t.rank(), R = S.R;
  if (R > kRegPtrs || S.elemSize > 4)
    return false;
  // The box (every rank's names to every rank: the whole clause) from
  // the extents and the zero coordinates, as makeBox would make it but
  // in registers: makeBox's arrays indexed at run time live on the stack,
  // and every thread of the lane built them (1-2 us of a 6 us stash).
  static_assert(C::kFromRole == kEvery && C::kToRole == kEvery,
                "an epilogue's clause reads every rank and writes every rank");
  int64_t ext[kMaxDims] = {0};
  int64_t nrows = 1, ninner = 1;
  rowShape<C, E>(S.P, ext, nrows, ninner);
  bool empty = false;
PURLIN_UNROLL
  for (int d = 0; d < C::kDims; ++d)
    empty |= ext[d] <= 0;
  if (!flows<C>(S.P, 0, kOwned ? 0 : r) || empty) {
    t.barrier(); // nothing flows here
    return true;
  }
  const int64_t zero[kMaxDims] = {0};
  const int64_t sbase = C::fromIndex(zero, S.P), dbase = C::toIndex(zero, S.P);
  const int64_t n = nrows * ninner;
  // one run on both sides
  if (!rowMajorFrom<C, false>(S.P, ext, sbase) || !rowMajorFrom<C, true>(S.P, ext, dbase))
    return false;
  char *const mineArea = receivedOf<C>(S, r);
  uintptr_t low = 0;
  for (int p = 0; p < R; ++p)
    low |= (uintptr_t)(mappedSource<C>(S, src, p) + sbase * S.elemSize);
  if (!epiVecAligned(S, (const char *)low, 0) ||
      ((uintptr_t)(mineArea + dbase * 4) & 15u) != 0)
    return false;
  const int64_t pieces = (int64_t)S.K * S.L, piece = (int64_t)chunk * S.L + t.lane();
  const int64_t g = t.vecElems();
  int64_t lo = 0, hi = n;
  if constexpr (kOwned) {
    if (ninner % g != 0)
      return false;
    int64_t rlo, rhi;
    splitRange(nrows, (int64_t)R, (int64_t)r, 1, rlo, rhi);
    splitRange((rhi - rlo) * ninner, pieces, piece, g, lo, hi);
    lo += rlo * ninner;
    hi += rlo * ninner;
  } else {
    splitRange(n, pieces, piece, g, lo, hi);
  }
  const int op = clauseOp<C>(S);
  const int64_t nvec = (hi - lo) / kEpiVec;
  for (int64_t v = t.thread(); v < nvec; v += t.threads()) {
    const int64_t at = lo + v * kEpiVec;
    float in[kRegPtrs][kEpiVec];
PURLIN_UNROLL
    for (int p = 0; p < kRegPtrs; ++p)
      if (p < R)
        t.loadF8(mappedSource<C>(S, src, p), sbase + at, in[p]);
    // (every loop over a constant count: `in` stays in registers)
PURLIN_UNROLL
    for (int p = 1; p < kRegPtrs; ++p)
      if (p < R)
PURLIN_UNROLL
        for (int j = 0; j < kEpiVec; ++j)
          in[0][j] = purlin_epi_combine(op, in[0][j], in[p][j]);
    if (op == kAvg)
PURLIN_UNROLL
      for (int j = 0; j < kEpiVec; ++j)
        in[0][j] /= (float)R;
    t.storeF32x8(mineArea, dbase + at, in[0]);
  }
  for (int64_t e = lo + nvec * kEpiVec + t.thread(); e < hi; e += t.threads()) {
    float a = t.loadF(mappedSource<C>(S, src, 0), sbase + e);
    for (int p = 1; p < R; ++p)
      a = purlin_epi_combine(op, a, t.loadF(mappedSource<C>(S, src, p), sbase + e));
    if (op == kAvg)
      a /= (float)R;
    t.storeFAs(kElemF32, mineArea, dbase + e, a);
  }
  t.barrier(); // the lane's step is whole
  return true;
}
} // namespace detail

/// consume `to received` of a clause with an epilogue (the unfused plans'
/// first consume): the names combined, their received values kept in f32
/// in this rank's received area: the names it receives (mine), or the rows
/// it owns (owned: rows piece r of R, which its owned apply then reads; one
/// store per name in all); no statement runs. Cut in names where stashNames
/// can, else in rows as consumeRows (mine) or consumeRowsOwned (owned) cut
/// them: either way the lanes' cut is not applyRows' (the owner's rows
/// are the same), so the plans order the two by a barrier of the rank's
/// lanes.
template <class C, class E, class Tgt>
PURLIN_HD void stashRows(Tgt &t, int src, int chunk) {
  if (t.aborted() || detail::stashNames<C, E, false>(t, src, chunk))
    return;
  detail::epiRows<C, E, false, kEpiStash>(t, src, chunk);
}
template <class C, class E, class Tgt>
PURLIN_HD void stashRowsOwned(Tgt &t, int src, int chunk) {
  if (t.aborted() || detail::stashNames<C, E, true>(t, src, chunk))
    return;
  detail::epiRows<C, E, true, kEpiStash>(t, src, chunk);
}

/// consume `from received` through the epilogue (the unfused plans'
/// second consume): this rank's rows, lane l of chunk k taking piece
/// (k, l) of Tgt::lanes() (not what stashRows gave it: the plans put a
/// barrier of the rank's lanes, or a launch boundary, between them), their
/// received values read from its own area (as the stash
/// stored them: the statements see the same f32 as in consumeRows) and its
/// statements run as consumeRows runs them.
template <class C, class E, class Tgt>
PURLIN_HD void applyRows(Tgt &t, int chunk) {
  detail::epiRows<C, E, false, kEpiApply>(t, kSrcReceived, chunk);
}

/// consume `owned from received to all` through the epilogue (two_shot
/// unfused's second consume): the rows this rank owns (rows piece r of R,
/// the rows its stashRowsOwned kept in its own area), lane l of chunk k
/// taking piece (k, l) of Tgt::lanes() of those; for each row the received
/// values are read once from this rank's area and the statements run for
/// every rank q in ascending order with q's inputs, storing q's outputs, as
/// consumeRowsOwned runs them: each rank's outputs are what its own
/// one-shot consume would store. The area is scratch, never an output, so
/// the general form reading it again for each q is safe in place.
template <class C, class E, class Tgt>
PURLIN_HD void applyRowsOwned(Tgt &t, int chunk) {
  detail::epiRows<C, E, true, kEpiApply>(t, kSrcReceived, chunk);
}

/// consume `mine from owners to self` through the epilogue
/// (two_shot_gather's second consume): this rank's rows, as applyRows cuts
/// them, each row's received values read from the area of its owner (rows
/// piece p of R: the rows owner p's stashRowsOwned kept in its own area),
/// and this rank's statements run over them as consumeRows runs them.
/// The shape of an all-reduce followed by a row kernel: each contribution
/// is read once (by its row's owner) and each rank applies its own rows,
/// every rank busy however few rows an owner has. The plan orders it after
/// every owner's stash (a sync of every lane of every rank), and the areas
/// are scratch, never an output, so it is right with outputs over inputs.
template <class C, class E, class Tgt>
PURLIN_HD void applyRowsGathered(Tgt &t, int chunk) {
  detail::epiRows<C, E, false, kEpiApply, true>(t, kSrcReceived, chunk);
}

} // namespace exec
} // namespace purlin
