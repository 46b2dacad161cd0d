// LL128 lines: the low-latency protocol's mid-size format on the SM
// datapath (exec/Lines.h, kFmtLL128). A 128-byte line holds 120 data bytes
// and, at byte 120, an 8-byte flag word: the writing lane's signal value
// (its epoch, with the call's fingerprint above it: aux.h's signalValue)
// XOR kL128FlagKey, stored and polled as a notify stores and a wait polls
// a signal word (sync.cuh), but matched exactly (flagState). 8 of every
// 128 staged bytes are flags (LL: 8 of 16).
//
// Correct by the PTX memory model, not by how a warp's 128-byte store
// happens to travel (NCCL's LL128 counts on a line's stores arriving
// together over NVLink, which the model does not promise):
//  - writer: a warp stores the data of a batch of lines (8 threads a line,
//    a 16-byte piece each, the last piece 8 bytes; 4 lines at a time, up
//    to kL128Batch times), then __syncwarp, which orders its threads'
//    memory accesses (CUDA programming guide, "Warp Synchronization"), then
//    the thread of each line's last piece does one fence.acq_rel and
//    stores the flags of its lines relaxed: a release pattern, whose fence
//    is cumulative, so it also releases the other threads' data that the
//    warp barrier ordered before it (the notify's pattern: the lane's
//    barrier, one fence, relaxed stores);
//  - reader: threads poll the flags of a batch relaxed (each thread some
//    lines' flags in some slots), fence.acq_rel (the acquire pattern), and
//    __syncwarp passes the acquire on to the warp's other threads, which
//    only then load the lines' data, combine it and store it (the wait's
//    pattern: polls, one fence, the lane's barrier).
// What that costs against LL (one 16-byte store a line, no fence): a fence
// per warp and batch on each side. The writer's waits until the warp's
// stores are performed at the flag's scope (system across GPUs, gpu on
// one: aux word 2); a fence with peer stores in flight was measured at
// about 1 us on the H200 (sync.cuh). A batch is up to 16 lines (1920 data
// bytes) a warp, so the fences are paid once per 2 KiB a warp rather than
// per line, and most warps of a lane have their batch in flight at once.
// What it gains: 94% of the staged bytes are data (LL: 50%), with 16-byte
// accesses on both sides. Hence mid sizes (staged_ll128); nothing of it is
// measured yet.
//
// Every line has one writer (exec: an LL128 step's pieces start on whole
// lines; the checker proves it; with staging by launch parity the executor
// hands these moves the slot of half epoch & 1, at a stride that keeps the
// 128-byte grid: exec::layoutEnd), and stale words do not match: a plan with
// flagged lines has scratch of its own, zeroed at allocation; earlier
// launches' flags carry earlier epochs; its LL128 slots start on 128 bytes
// from that scratch's start whatever the call's sizes (exec::layoutSlots),
// so no line's data lies where another call's flag word did, or the
// reverse. What may still lie under a flag word is another area's data
// from a call of other sizes (a step's scratch copy, all_reduce_2d's second
// clause): the key makes it match only where that data holds exactly this
// launch's 64-bit keyed value (a flag compared with >=, as a signal word
// is, would take any large stale word).
//
// Threads: the moves are run by whole warps (nthr a multiple of 32 from a
// warp's first thread: the lane, or laneMoves' groups of it); the warps
// share a move's lines, each taking units of 4 lines, kL128Batch units at
// a time (fewer where the move has fewer lines, so that more warps work).
#pragma once

#include <stdint.h>

#include "purlin/spec/Exec.h"
#include "common/sm/aux.h"
#include "common/sm/elem.cuh"
#include "common/sm/move.cuh"
#include "common/sm/sync.cuh"

namespace purlin {
namespace sm {

/// What a line move (of either format) needs of its lane.
struct LineCtx {
  uint64_t flag;       // the lane's signal value (LL stores llFlag of it, lines.cuh)
  const uint64_t *aux; // the lane's aux words (timeout, error word)
  uint32_t who;        // rank << 8 | lane << 20, for an error report
  bool gpu;            // every rank on this GPU: gpu-scope fences and flags
  __device__ uint64_t timeout() const {
    return aux[1] ? aux[1] : kDefaultTimeoutNs;
  }
};

constexpr int kL128Line = 128, kL128Data = 120, kL128Flag = 120;
/// XORed into a line's flag: its low 32 bits set, so that no keyed value
/// of a plan's first 2^32 launches is 0 (zeroed scratch) or small.
constexpr uint64_t kL128FlagKey = 0x5c3a96e1ffffffffull;

/// A flag word `x` against the lane's signal value v: 1 when it is v's, -1
/// when it has v's epoch with another fingerprint (a peer called with
/// other arguments), 0 otherwise (not there yet).
__device__ __forceinline__ int flagState(uint64_t x, uint64_t v) {
  x ^= kL128FlagKey;
  if (x == v)
    return 1;
  return (x & kEpochMask) == (v & kEpochMask) ? -1 : 0;
}
constexpr int kL128Threads = 8; // threads a line: a 16-byte piece each
constexpr int kL128Units = 4;   // lines a warp moves at once (32 / 8)
constexpr int kL128Batch = 4;   // units a warp moves per fence (16 lines)
static_assert(kL128Threads == kFastPtrs, "a line's threads poll a slot each");

/// A move's lines as the warps of threads [0, nthr) take them: slot data
/// bytes [d0, d1), lines [j0, j1), units of kL128Units lines, warp w taking
/// units w, w + nwarps, ..., `beff` of them per batch; this thread's line
/// of a unit is the q-th, its piece the k-th (bytes 16k .. 16k + 15 of the
/// line's data; the last, k = 7, holds bytes 112-119).
struct L128Walk {
  int64_t d0, d1, j0;
  int lines, units, warp, nwarps, q, k, beff;
  __device__ L128Walk(int64_t a, int64_t b, int tid, int nthr)
      : d0(a), d1(b), j0(a / kL128Data),
        lines((int)((b + kL128Data - 1) / kL128Data - a / kL128Data)),
        units((lines + kL128Units - 1) / kL128Units), warp(tid >> 5),
        nwarps(nthr >> 5), q((tid & 31) >> 3), k(tid & 7) {
    const int per = (units + nwarps - 1) / nwarps;
    beff = per >= kL128Batch ? kL128Batch : per < 1 ? 1 : per;
  }
  /// Batches: ub = warp, warp + nwarps * beff, ... (the same in every
  /// thread of a warp).
  __device__ int step() const { return nwarps * beff; }
  /// This thread's line in unit u of the batch at ub, or -1.
  __device__ int64_t line(int ub, int u) const {
    const int unit = ub + u * nwarps, rel = unit * kL128Units + q;
    return u < beff && unit < units && rel < lines ? j0 + rel : -1;
  }
  /// This thread's piece of line j (>= 0): data bytes [p0, p0 + 16)
  /// ([p0, p0 + 8) for the last).
  __device__ int64_t piece0(int64_t j) const { return j * kL128Data + k * 16; }
  /// The same, [lo, hi) of them in the move; false where none is.
  __device__ bool piece(int64_t j, int64_t &p0, int64_t &lo, int64_t &hi) const {
    if (j < 0)
      return false;
    p0 = piece0(j);
    const int64_t p1 = p0 + (k == kL128Threads - 1 ? 8 : 16);
    lo = p0 > d0 ? p0 : d0;
    hi = p1 < d1 ? p1 : d1;
    return lo < hi;
  }
  /// The slot byte of piece p0 of line j.
  __device__ int64_t slotByte(int64_t j) const { return j * kL128Line + k * 16; }
};

/// A line move's plain side (the push's source, the consume's
/// destination): slot data byte d at base + d where that side is one
/// contiguous run, else element d / es of the Move's box (side `src`,
/// pointer i).
struct L128Plain {
  char *base = nullptr;
  const exec::Move *m = nullptr;
  int i = 0;
  bool src = true;
  __device__ char *elem(int64_t d, int es) const {
    if (base)
      return base + d;
    const int64_t t = d / es;
    const bool flat = src ? m->srcFlat : m->dstFlat;
    const int64_t o = flat ? t : nameOffset(m->box, t, src);
    return (src ? (char *)m->src[i] : m->dst[i]) + o * es;
  }
};

/// The plain side of a Move (elements of es bytes; names numbered from the
/// slot's start, so data byte d is name d / es): contiguous where it is
/// flat or one run of stride 1, else through the box.
__device__ __forceinline__ L128Plain plainOf(const exec::Move &m, bool src, int i,
                                             int es) {
  L128Plain p;
  p.m = &m;
  p.i = i;
  p.src = src;
  const exec::Box &x = m.box;
  char *ptr = src ? (char *)m.src[i] : m.dst[i];
  if (src ? m.srcFlat : m.dstFlat)
    p.base = ptr;
  else if (x.nfree == 1 && (src ? x.sstr[0] : x.dstr[0]) == 1)
    p.base = ptr + (src ? x.sbase : x.dbase) * es;
  return p;
}

// Piece access. A move's lines split in two: those whole in the range on
// a side that is contiguous and 8-byte aligned go the fast way, each
// piece one 16-byte access (two 8-byte ones where the piece is only
// 8-byte aligned: every other line, 120 not being a multiple of 16); the
// rest (at most the range's first and last line, or all of a strided or
// unaligned side) element by element, in a separate instantiation, so that
// the fast loop carries none of that code and its registers.

/// The piece at p0 (n = 16 or 8 bytes) of a contiguous, 8-byte aligned side.
__device__ __forceinline__ uint4 loadWhole(const char *base, int64_t p0, int n) {
  const char *p = base + p0;
  if (n == 16 && ((uintptr_t)p & 15) == 0)
    return *(const uint4 *)p;
  const uint2 a = *(const uint2 *)p;
  const uint2 b = n == 16 ? *(const uint2 *)(p + 8) : make_uint2(0, 0);
  return make_uint4(a.x, a.y, b.x, b.y);
}
__device__ __forceinline__ void storeWhole(char *base, int64_t p0, int n, uint4 v) {
  char *p = base + p0;
  if (n == 16 && ((uintptr_t)p & 15) == 0) {
    *(uint4 *)p = v;
    return;
  }
  *(uint2 *)p = make_uint2(v.x, v.y);
  if (n == 16)
    *(uint2 *)(p + 8) = make_uint2(v.z, v.w);
}
/// Bytes [lo, hi) of the piece at p0 of a side, element by element, as a
/// 16-byte value (byte o of the piece at byte o; the rest 0), in registers
/// (shifts, no indexed arrays).
template <class Raw>
__device__ __forceinline__ uint4 loadElems(const L128Plain &s, int64_t p0,
                                           int64_t lo, int64_t hi) {
  uint64_t w0 = 0, w1 = 0;
  for (int64_t d = lo; d < hi; d += sizeof(Raw)) {
    const Raw r = *(const Raw *)s.elem(d, sizeof(Raw));
    uint64_t bits = 0;
    memcpy(&bits, &r, sizeof(Raw));
    const int o = (int)(d - p0);
    if (o < 8)
      w0 |= bits << (8 * o);
    else
      w1 |= bits << (8 * (o - 8));
  }
  return make_uint4((uint32_t)w0, (uint32_t)(w0 >> 32), (uint32_t)w1,
                    (uint32_t)(w1 >> 32));
}
/// The converse of loadElems.
template <class Raw>
__device__ __forceinline__ void storeElems(const L128Plain &s, int64_t p0,
                                           int64_t lo, int64_t hi, uint4 v) {
  const uint64_t w0 = (uint64_t)v.x | (uint64_t)v.y << 32,
                 w1 = (uint64_t)v.z | (uint64_t)v.w << 32;
  for (int64_t d = lo; d < hi; d += sizeof(Raw)) {
    const int o = (int)(d - p0);
    const uint64_t bits = o < 8 ? w0 >> (8 * o) : w1 >> (8 * (o - 8));
    Raw r;
    memcpy(&r, &bits, sizeof(Raw));
    *(Raw *)s.elem(d, sizeof(Raw)) = r;
  }
}

/// Piece k of a line in a slot (16 bytes, or the last piece's 8: never the
/// flag, which is read apart, before), and its store.
__device__ __forceinline__ uint4 slotPiece(const char *p, int k) {
  if (k == kL128Threads - 1) {
    const uint2 w = *(const uint2 *)p;
    return make_uint4(w.x, w.y, 0, 0);
  }
  return *(const uint4 *)p;
}
__device__ __forceinline__ void slotStore(char *p, int k, uint4 v) {
  if (k == kL128Threads - 1)
    *(uint2 *)p = make_uint2(v.x, v.y);
  else
    *(uint4 *)p = v;
}

/// The lines of data bytes [d0, d1) that are whole there, [f0, f1) in data
/// bytes (empty: f0 == f1), and whether a contiguous side at `base` takes
/// them the fast way.
__device__ __forceinline__ bool wholeLines(const char *base, int64_t d0,
                                           int64_t d1, int64_t &f0, int64_t &f1) {
  f0 = (d0 + kL128Data - 1) / kL128Data * kL128Data;
  f1 = d1 / kL128Data * kL128Data;
  if (!base || ((uintptr_t)base & 7) || f1 <= f0) {
    f0 = f1 = d0;
    return false;
  }
  return true;
}

/// The push of slot data bytes [d0, d1) from side `s` as lines into each
/// of the nd slots (nd <= kFastPtrs). Fast: [d0, d1) whole lines, s
/// contiguous and 8-byte aligned. Per batch: the pieces' loads, their
/// stores to every slot, the warp barrier, the flags' release.
template <class Raw, bool Fast>
__device__ __noinline__ void pushLines128Part(const L128Plain s,
                                              const char *const *slots, int nd,
                                              int64_t d0, int64_t d1, int tid,
                                              int nthr, const LineCtx ctx) {
  // The slots in registers (the element path reads them where they are).
  char *sl[kFastPtrs];
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i)
    sl[i] = Fast && i < nd ? (char *)slots[i] : nullptr;
  const L128Walk w(d0, d1, tid, nthr);
  const int n = w.k == kL128Threads - 1 ? 8 : 16; // bytes of this piece
  for (int ub = w.warp; ub < w.units; ub += w.step()) {
    uint4 v[kL128Batch];
#pragma unroll
    for (int u = 0; u < kL128Batch; ++u) {
      int64_t p0, lo, hi;
      const int64_t j = w.line(ub, u);
      v[u] = make_uint4(0, 0, 0, 0);
      if (Fast && j >= 0)
        v[u] = loadWhole(s.base, w.piece0(j), n);
      else if (!Fast && w.piece(j, p0, lo, hi))
        v[u] = loadElems<Raw>(s, p0, lo, hi);
    }
#pragma unroll
    for (int u = 0; u < kL128Batch; ++u) {
      int64_t p0, lo, hi;
      const int64_t j = w.line(ub, u);
      if (Fast ? j < 0 : !w.piece(j, p0, lo, hi))
        continue;
      if constexpr (Fast) {
#pragma unroll
        for (int i = 0; i < kFastPtrs; ++i)
          if (i < nd)
            slotStore(sl[i] + w.slotByte(j), w.k, v[u]);
      } else {
        for (int i = 0; i < nd; ++i) {
          L128Plain t; // the slot: data byte d of line j at slot + d + 8j
          t.base = (char *)slots[i] + j * (kL128Line - kL128Data);
          storeElems<Raw>(t, p0, lo, hi, v[u]);
        }
      }
    }
    __syncwarp();
    // The release: the thread of each line's last piece fences once, then
    // stores the flags of its lines in the batch (its line of the batch's
    // first unit is there if any of its lines is).
    if (w.k == kL128Threads - 1 && w.line(ub, 0) >= 0) {
      fenceAcqRel(ctx.gpu);
#pragma unroll
      for (int u = 0; u < kL128Batch; ++u) {
        const int64_t j = w.line(ub, u);
        if (j < 0)
          continue;
#pragma unroll
        for (int i = 0; i < kFastPtrs; ++i)
          if (i < nd)
            storeRelaxed((uint64_t *)((Fast ? sl[i] : (char *)slots[i]) +
                                      j * kL128Line + kL128Flag),
                         ctx.flag ^ kL128FlagKey, ctx.gpu);
      }
    }
  }
}

/// The push: slot data bytes [d0, d1) from side `s` as lines into each of
/// the nd slots, whole lines the fast way, the rest element by element.
template <class Raw>
__device__ __forceinline__ void pushLines128Run(const L128Plain &s,
                                                const char *const *slots,
                                                int nd, int64_t d0, int64_t d1,
                                                int tid, int nthr,
                                                const LineCtx &ctx) {
  int64_t f0, f1;
  if (wholeLines(s.base, d0, d1, f0, f1))
    pushLines128Part<Raw, true>(s, slots, nd, f0, f1, tid, nthr, ctx);
  if (d0 < f0)
    pushLines128Part<Raw, false>(s, slots, nd, d0, f0, tid, nthr, ctx);
  if (f1 < d1)
    pushLines128Part<Raw, false>(s, slots, nd, f1, d1, tid, nthr, ctx);
}

/// The consume of slot data bytes [d0, d1) of the ns slots, each line once
/// its flags show this launch, combined by OP in slot order, to side `dst`
/// (a flagged consume writes this rank's output, or its partial results:
/// one side). Fast: [d0, d1) whole lines, `dst` contiguous and 8-byte
/// aligned. Per batch: the flags' polls, the acquire, the warp barrier,
/// then the pieces. False: a flag did not come in time, or came with
/// another fingerprint (reported here).
template <class E, int OP, bool Fast>
__device__ __noinline__ bool consumeLines128Part(const char *const *slots,
                                                 int ns, const L128Plain dst,
                                                 int64_t d0, int64_t d1,
                                                 int tid, int nthr,
                                                 const LineCtx ctx) {
  using Raw = typename E::Raw;
  constexpr int NV = 16 / sizeof(Raw);
  const L128Walk w(d0, d1, tid, nthr);
  const int n = w.k == kL128Threads - 1 ? 8 : 16; // bytes of this piece
  // The first kFastPtrs slots in registers; thread k polls slots k, k + 8, ...
  const char *sp[kFastPtrs];
  const char *mine = nullptr;
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i) {
    sp[i] = i < ns ? slots[i] : nullptr;
    if (i == w.k)
      mine = sp[i];
  }
  for (int ub = w.warp; ub < w.units; ub += w.step()) {
    int st = 1;
#pragma unroll 1
    for (int u = 0; u < kL128Batch; ++u) {
      const int64_t j = w.line(ub, u);
      if (j < 0)
        continue;
      for (int p = w.k; p < ns; p += kL128Threads) {
        const char *slot = p < kFastPtrs ? mine : slots[p];
        const uint64_t v = ctx.flag;
        const int r = pollWord((const uint64_t *)(slot + j * kL128Line + kL128Flag),
                               ctx.aux, ctx.gpu,
                               [v](uint64_t x) { return flagState(x, v); });
        st = r < st ? r : st;
      }
    }
    if (st < 0)
      reportError(ctx.aux, kErrMismatch | ctx.who);
    if (__any_sync(0xffffffffu, st <= 0))
      return false;
    fenceAcqRel(ctx.gpu);
    __syncwarp();
#pragma unroll 1
    for (int u = 0; u < kL128Batch; ++u) {
      int64_t p0, lo, hi;
      const int64_t j = w.line(ub, u);
      if (Fast ? j < 0 : !w.piece(j, p0, lo, hi))
        continue;
      if (Fast)
        p0 = w.piece0(j);
      const int64_t sb = w.slotByte(j);
      uint4 out;
      if constexpr (OP == exec::kCopy) {
        out = slotPiece(sp[0] + sb, w.k);
      } else {
        typename E::Acc acc[NV];
        for (int s0 = 0; s0 < ns; s0 += kFastPtrs) {
          uint4 x[kFastPtrs];
#pragma unroll
          for (int i = 0; i < kFastPtrs; ++i)
            x[i] = s0 + i < ns ? slotPiece((s0 == 0 ? sp[i] : slots[s0 + i]) + sb, w.k)
                               : make_uint4(0, 0, 0, 0);
#pragma unroll
          for (int i = 0; i < kFastPtrs; ++i) {
            if (s0 + i >= ns)
              break;
            Vec<Raw> v;
            v.u = x[i];
#pragma unroll
            for (int e = 0; e < NV; ++e)
              acc[e] = s0 + i == 0 ? E::widen(v.e[e])
                                   : combine<E, OP>(acc[e], E::widen(v.e[e]));
          }
        }
        Vec<Raw> o;
#pragma unroll
        for (int e = 0; e < NV; ++e)
          o.e[e] = E::narrow(finish<E, OP>(acc[e], ns));
        out = o.u;
      }
      if (Fast)
        storeWhole(dst.base, p0, n, out);
      else
        storeElems<Raw>(dst, p0, lo, hi, out);
    }
  }
  return true;
}

/// The consume: whole lines the fast way where every side allows it, the
/// rest element by element. False: a line did not arrive in time.
template <class E, int OP>
__device__ __forceinline__ bool consumeLines128Run(const char *const *slots,
                                                   int ns, const L128Plain &dst,
                                                   int64_t d0, int64_t d1,
                                                   int tid, int nthr,
                                                   const LineCtx &ctx) {
  int64_t f0, f1;
  if (wholeLines(dst.base, d0, d1, f0, f1) &&
      !consumeLines128Part<E, OP, true>(slots, ns, dst, f0, f1, tid, nthr, ctx))
    return false;
  return (d0 >= f0 ||
          consumeLines128Part<E, OP, false>(slots, ns, dst, d0, f0, tid, nthr, ctx)) &&
         (f1 >= d1 ||
          consumeLines128Part<E, OP, false>(slots, ns, dst, f1, d1, tid, nthr, ctx));
}

} // namespace sm
} // namespace purlin
