// Flagged lines: the low-latency protocol of the SM datapath, in its two
// formats (exec/Lines.h): LL here, LL128 in lines128.cuh; the dispatch of
// exec's moves to either at the end.
//
// LL: a staged 16-byte line holds 8 data bytes and, twice, a 32-bit flag
// (the low half of the launch's epoch): {data 0-3, flag, data 4-7, flag}.
// A writer stores the line in one 16-byte store of two 64-bit elements,
// each {4 data bytes, flag}. The PTX memory model treats a vector access
// as scalar accesses of its elements in no set order, and a scalar access
// of at most 64 bits, aligned, as single-copy atomic against another of
// the same location (both .volatile, i.e. relaxed at system scope). So the
// unit that arrives whole is each 64-bit element, data and flag together,
// and a reader that sees both elements' flags equal to its epoch has both
// halves of this launch's data. (Elements of 32 bits, {d0, f, d1, f} as
// v4.u32, would make the flag and its data separate accesses: a model
// reader could see the flag new and the data old; the hardware's 16-byte
// store does not do that, but the model does not promise it.) No fence
// and no separate signal: the flag travels with the data. (The host target keeps
// the same format with release/acquire flags: atom-kernels/host/target.h.)
//
// Stale lines never match: a slot's lines carry an older epoch, and a plan
// with flagged lines gets scratch of its own, zeroed at allocation
// (purlin_plan_info::exclusive_scratch). The flag (aux.h llFlag) is the
// epoch's low 24 bits under 7 folded bits of the call's fingerprint and a
// set top bit, so a rank whose peer called with other arguments (another
// count, type or op: a multi-process call's fingerprint,
// runtime/cuda/Launch.cpp) finds lines of its epoch with another
// fingerprint and stops with kErrMismatch (flagsMismatch) instead of
// combining them: before, the flag was the epoch's low 32 bits alone, and
// two ranks that called with 4095 and 4096 elements (the same lines) both
// returned success. A flag repeats after 2^24 launches of one plan (a
// stale line matches only if it is exactly a multiple of that older, in
// the same half), and is never 0. Staging by launch parity (exec kParity:
// a symmetric clause without a `free` round) changes no code here: the
// executor hands these moves the slot of half epoch & 1
// (exec::stagingSlot, the same address on every target), whose stale
// lines are two launches old.
#pragma once

#include <stdint.h>

#include "purlin/spec/Exec.h"
#include "common/sm/aux.h"
#include "common/sm/elem.cuh"
#include "common/sm/lines128.cuh"
#include "common/sm/move.cuh"
#include "common/sm/sync.cuh"

namespace purlin {
namespace sm {

constexpr int kLineBytes = 16, kLineData = 8;

/// PURLIN_LL_NO_MISMATCH=1 (a measurement build, tools/gpu-ll-ab.sh): no
/// line is ever a mismatch, so the polls' slow-path check compiles away
/// (the floor the check is measured against).
#ifndef PURLIN_LL_NO_MISMATCH
#define PURLIN_LL_NO_MISMATCH 0
#endif
/// Whether a line's loaded flags, not `flag` (the lane's llFlag, aux.h),
/// are this launch's from a peer of another fingerprint (llFlagMismatch).
/// The check reads the flags a poll has already loaded, on the slow path
/// only (a poll that has waited 1,024 rounds): no load of its own. (A
/// check that loaded the lines again cost 0.13-0.29 us a call at 8 B ..
/// 8 KiB, out of line too; docs/performance.md, thirty-second session.)
__device__ __forceinline__ bool flagsMismatch(uint64_t lo, uint64_t hi, uint32_t flag) {
  if (PURLIN_LL_NO_MISMATCH == 1)
    return false;
  return llFlagMismatch((uint32_t)(lo >> 32), (uint32_t)(hi >> 32), flag);
}

/// A line's two 64-bit elements {4 data bytes, flag} for 8 data bytes.
__device__ __forceinline__ void packLine(uint64_t data, uint32_t flag,
                                         uint64_t &lo, uint64_t &hi) {
  lo = (data & 0xffffffffull) | (uint64_t)flag << 32;
  hi = (data >> 32) | (uint64_t)flag << 32;
}
/// A line's 8 data bytes from its two elements; whether both flags show
/// `flag`.
__device__ __forceinline__ bool unpackLine(uint64_t lo, uint64_t hi,
                                           uint32_t flag, uint64_t &data) {
  data = (lo & 0xffffffffull) | hi << 32;
  return (uint32_t)(lo >> 32) == flag && (uint32_t)(hi >> 32) == flag;
}

__device__ __forceinline__ void storeLine(char *line, uint64_t data,
                                          uint32_t flag) {
  uint64_t lo, hi;
  packLine(data, flag, lo, hi);
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(line),
               "l"(lo), "l"(hi)
               : "memory");
}

/// One load of the line, no waiting: whether both flags show `flag`;
/// lo and hi the line's two elements as loaded.
__device__ __forceinline__ bool peekLine(const char *line, uint32_t flag,
                                         uint64_t &data, uint64_t &lo, uint64_t &hi) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(lo), "=l"(hi)
               : "l"(line)
               : "memory");
  return unpackLine(lo, hi, flag, data);
}
__device__ __forceinline__ bool peekLine(const char *line, uint32_t flag,
                                         uint64_t &data) {
  uint64_t lo, hi;
  return peekLine(line, flag, data, lo, hi);
}

/// Polls the line until both flags show `flag`; false after the timeout,
/// or, given the lane's aux words, when the line is a peer's of another
/// fingerprint (flagsMismatch, reported into the error word here as `who`'s).
__device__ __forceinline__ bool loadLine(const char *line, uint32_t flag,
                                         uint64_t &data, uint64_t timeout,
                                         const uint64_t *aux = nullptr,
                                         uint32_t who = 0) {
  if (peekLine(line, flag, data))
    return true;
  const uint64_t start = globalTimerNs();
  for (uint32_t i = 1;; ++i) {
    uint64_t lo, hi;
    if (peekLine(line, flag, data, lo, hi))
      return true;
    if ((i & 1023) == 0) {
      if (aux && flagsMismatch(lo, hi, flag)) {
        reportError(aux, kErrMismatch | who);
        return false;
      }
      if (globalTimerNs() - start > timeout)
        return false;
    }
  }
}

/// Element e of a line's 8 data bytes (elements of type Raw in order).
template <class Raw>
__device__ __forceinline__ Raw lineElem(uint64_t data, int e) {
  Raw v;
  const uint64_t bits = data >> (8 * sizeof(Raw) * e);
  memcpy(&v, &bits, sizeof(Raw));
  return v;
}
/// v placed as element e of a line's data (the other bytes 0).
template <class Raw>
__device__ __forceinline__ uint64_t lineBits(Raw v, int e) {
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(Raw));
  return bits << (8 * sizeof(Raw) * e);
}

/// Lines a thread has in flight at once (loads issued before any is used).
constexpr int kLineBatch = 8;

/// Where names [t0, t1) of the move's source lie contiguous, a full line
/// at an 8-byte aligned address (one 8-byte load); else null.
template <int ES>
__device__ __forceinline__ const char *srcLineRun(const exec::Move &m,
                                                  int64_t t0, int64_t t1) {
  constexpr int epl = kLineData / ES;
  const exec::Box &x = m.box;
  if (m.srcFlat || t1 - t0 != epl || x.nfree != 1 || x.sstr[0] != 1)
    return nullptr;
  const char *p = m.src[0] + (x.sbase + t0) * ES;
  return ((uintptr_t)p & 7) == 0 ? p : nullptr;
}

/// Names [a, b) of a move with a flagged side (m.ll). Push (kLinesDst):
/// gather each line's names from the source, store the line; a thread loads
/// kLineBatch lines before it stores them. Consume (kLinesSrc): load the
/// line of up to kLineBatch sources at once, poll those not there yet,
/// combine the names in source order, write them.
template <class E, int OP>
__device__ __noinline__ bool moveLinesOp(const exec::Move &m, int64_t a,
                                         int64_t b, int tid, int nthr,
                                         LineCtx ctx) {
  const uint32_t flag = llFlag(ctx.flag);
  using Raw = typename E::Raw;
  constexpr int es = sizeof(Raw), epl = kLineData / es;
  const exec::Box &x = m.box;
  const int64_t j0 = a / epl, j1 = (b + epl - 1) / epl;
  if (m.ll == exec::kLinesDst) {
    for (int64_t jb = j0 + tid; jb < j1; jb += (int64_t)nthr * kLineBatch) {
      uint64_t data[kLineBatch];
#pragma unroll
      for (int u = 0; u < kLineBatch; ++u) {
        const int64_t j = jb + (int64_t)u * nthr;
        data[u] = 0;
        if (j >= j1)
          continue;
        const int64_t t0 = j * epl, t1 = t0 + epl < b ? t0 + epl : b;
        if (const char *p = srcLineRun<es>(m, t0, t1)) {
          data[u] = *(const uint64_t *)p;
          continue;
        }
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t so = m.srcFlat ? t : nameOffset(x, t, true);
          data[u] |= lineBits(*(const Raw *)(m.src[0] + so * es), (int)(t - t0));
        }
      }
#pragma unroll
      for (int u = 0; u < kLineBatch; ++u) {
        const int64_t j = jb + (int64_t)u * nthr;
        if (j < j1)
          storeLine(m.dst[0] + j * kLineBytes, data[u], flag);
      }
    }
    return true;
  }
  for (int64_t j = j0 + tid; j < j1; j += nthr) {
    const int64_t t0 = j * epl, t1 = t0 + epl < b ? t0 + epl : b;
    typename E::Acc acc[epl];
    uint64_t copied = 0;
    for (int s0 = 0; s0 < m.nsrc; s0 += kLineBatch) {
      const int ns = m.nsrc - s0 < kLineBatch ? m.nsrc - s0 : kLineBatch;
      uint64_t d[kLineBatch];
      bool there[kLineBatch];
#pragma unroll
      for (int u = 0; u < kLineBatch; ++u)
        if (u < ns)
          there[u] = peekLine(m.src[s0 + u] + j * kLineBytes, flag, d[u]);
#pragma unroll
      for (int u = 0; u < kLineBatch; ++u)
        if (u < ns && !there[u] &&
            !loadLine(m.src[s0 + u] + j * kLineBytes, flag, d[u], ctx.timeout(),
                      ctx.aux, ctx.who))
          return false;
      if constexpr (OP == exec::kCopy) {
        copied = d[0]; // one contribution, copied bit for bit
      } else {
#pragma unroll
        for (int u = 0; u < kLineBatch; ++u) {
          if (u >= ns)
            break;
#pragma unroll
          for (int e = 0; e < epl; ++e) {
            const Raw v = lineElem<Raw>(d[u], e);
            acc[e] = s0 + u == 0 ? E::widen(v) : combine<E, OP>(acc[e], E::widen(v));
          }
        }
      }
    }
    uint64_t out = copied;
    if constexpr (OP != exec::kCopy) {
      out = 0;
#pragma unroll
      for (int e = 0; e < epl; ++e)
        out |= lineBits(E::narrow(finish<E, OP>(acc[e], m.nsrc)), e);
    }
    for (int d = 0; d < m.ndst; ++d) {
      char *run = nullptr;
      if (!m.dstFlat && t1 - t0 == epl && x.nfree == 1 && x.dstr[0] == 1) {
        char *p = m.dst[d] + (x.dbase + t0) * es;
        run = ((uintptr_t)p & 7) == 0 ? p : nullptr;
      }
      if (run) {
        *(uint64_t *)run = out;
        continue;
      }
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t dq = m.dstFlat ? t : nameOffset(x, t, false);
        *(Raw *)(m.dst[d] + dq * es) = lineElem<Raw>(out, (int)(t - t0));
      }
    }
  }
  return true;
}

/// A flagged push from registers (exec's pushLines contract): `bytes` at
/// src + soff as lines into each of nd slots (nd <= kFastPtrs), from the
/// line of data byte doff on. A thread loads kLineBatch whole lines (8
/// bytes each, one load, predicated: no branch between the loads) before
/// it stores them, each line to every slot; a last line of fewer than 8
/// bytes is built and stored by one thread after the loop. No Move, no
/// shared memory. False (nothing done) where the source is not 8-byte
/// aligned or doff is not a line's start. (The tail's byte loop had been
/// inside the unrolled batch, eight copies between the loads: 2,785
/// instructions where the hand-written push has 360, and 0.6-0.9 us more
/// at 8 KiB: docs/performance.md, twenty-first session.)
__device__ __forceinline__ bool pushLinesLL(const char *src, char *const *dst,
                                            int nd, int64_t soff, int64_t doff,
                                            int64_t bytes, int tid, int nthr,
                                            uint32_t flag) {
  if (nd < 1 || nd > kFastPtrs || (((uintptr_t)(src + soff)) & 7) ||
      (doff & 7))
    return false;
  const char *s = src + soff;
  char *d[kFastPtrs];
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i)
    d[i] = i < nd ? dst[i] + doff / kLineData * kLineBytes : nullptr;
  const int64_t full = bytes / kLineData;
  const uint64_t *w = (const uint64_t *)s;
  for (int64_t jb = tid; jb < full; jb += (int64_t)nthr * kLineBatch) {
    uint64_t data[kLineBatch];
#pragma unroll
    for (int u = 0; u < kLineBatch; ++u) {
      const int64_t j = jb + (int64_t)u * nthr;
      data[u] = j < full ? w[j] : 0;
    }
#pragma unroll
    for (int u = 0; u < kLineBatch; ++u) {
      const int64_t j = jb + (int64_t)u * nthr;
      if (j >= full)
        break;
#pragma unroll
      for (int i = 0; i < kFastPtrs; ++i)
        if (i < nd)
          storeLine(d[i] + j * kLineBytes, data[u], flag);
    }
  }
  const int64_t rest = bytes - full * kLineData;
  if (rest > 0 && tid == (int)(full % nthr)) { // the tail: fewer than 8 bytes
    uint64_t v = 0;
    for (int64_t k = 0; k < rest; ++k)
      v |= (uint64_t)(uint8_t)s[full * kLineData + k] << (8 * k);
#pragma unroll
    for (int i = 0; i < kFastPtrs; ++i)
      if (i < nd)
        storeLine(d[i] + full * kLineBytes, v, flag);
  }
  return true;
}

/// The consume's timer, read on a late poll only (every 1,024th): the
/// first read starts it (start 0: not started), a later one says whether
/// the lane's timeout has passed since.
__device__ __forceinline__ bool lateTimedOut(uint64_t &start, const LineCtx &ctx) {
  const uint64_t now = globalTimerNs();
  if (start == 0)
    start = now;
  else if (now - start > ctx.timeout())
    return true;
  return false;
}

/// One poll of line j of the slots s[] (ns of them, ns <= NS; the caller
/// points s[u] for u >= ns at slot ns-1, so every load is unconditional):
/// the NS loads issued back to back, then the flags; v[u] the data of slot
/// u's line. The slots below ns whose line is not there yet, as a bit
/// mask. (A load guarded by `u < ns` needs a predicate each, live across
/// the poll loop: ptxas ran out of them and looked at lines 1 and 2 before
/// it issued the rest, three round trips a poll: docs/performance.md,
/// twentieth session.)
template <int NS>
__device__ __forceinline__ uint32_t pollLines(const char *const (&s)[NS], int ns,
                                              int64_t j, uint32_t flag,
                                              uint64_t (&v)[NS],
                                              uint32_t *other = nullptr) {
  uint64_t lo[NS], hi[NS];
#pragma unroll
  for (int u = 0; u < NS; ++u)
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(lo[u]), "=l"(hi[u])
                 : "l"(s[u] + j * kLineBytes)
                 : "memory");
  uint32_t missing = 0;
#pragma unroll
  for (int u = 0; u < NS; ++u)
    if (!unpackLine(lo[u], hi[u], flag, v[u]))
      missing |= 1u << u;
  if (other) { // the slots whose line is a peer's of another fingerprint
    uint32_t m = 0;
#pragma unroll
    for (int u = 0; u < NS; ++u)
      m |= (uint32_t)flagsMismatch(lo[u], hi[u], flag) << u;
    *other = m & ((1u << ns) - 1);
  }
  return missing & ((1u << ns) - 1);
}

/// A flagged consume from registers, op OP: the lines from data byte soff
/// on of each of the ns slots src[] (ns <= kFastPtrs), `bytes` of data,
/// combined in source order into dst + doff. A thread loads its line of
/// every slot at once (one 16-byte load each), polls those not there yet,
/// combines and stores: no Move, no shared memory, no lane barrier between
/// the lines. False: a line did not arrive in time.
template <class E, int OP, int NS>
__device__ __forceinline__ bool consumeLinesOp(const char *const *src, int ns,
                                               char *dst, int64_t soff,
                                               int64_t doff, int64_t bytes,
                                               int tid, int nthr,
                                               const LineCtx &ctx) {
  const uint32_t flag = llFlag(ctx.flag);
  using Raw = typename E::Raw;
  constexpr int es = sizeof(Raw), epl = kLineData / es;
  const char *s[NS];
#pragma unroll
  for (int i = 0; i < NS; ++i) // past ns: slot ns-1 again (pollLines)
    s[i] = src[i < ns ? i : ns - 1] + soff / kLineData * kLineBytes;
  char *d = dst + doff;
  const bool whole = ((uintptr_t)d & 7) == 0;
  const int64_t full = bytes / kLineData, nl = (bytes + kLineData - 1) / kLineData;
  for (int64_t j = tid; j < nl; j += nthr) {
    // Every slot's line at once (pollLines: one round trip for all of
    // them); while any is missing, all of them again. The timer is read
    // every 1024th poll only, so a line that comes within the first polls
    // costs no timer read.
    uint64_t v[NS];
    uint32_t missing = pollLines(s, ns, j, flag, v);
    if (missing) {
      uint64_t start = 0;
      for (uint32_t i = 1; missing; ++i) {
        if ((i & 1023) == 0) {
          // A missing line of this epoch with another fingerprint: a peer
          // called with other arguments (reported; the caller stops). The
          // check reads the flags this poll loaded.
          uint32_t other = 0;
          missing = pollLines(s, ns, j, flag, v, &other);
          if (missing & other) {
            reportError(ctx.aux, kErrMismatch | ctx.who);
            return false;
          }
          if (missing && lateTimedOut(start, ctx))
            return false; // the timeout read here only: no load before the polls
        } else {
          missing = pollLines(s, ns, j, flag, v);
        }
      }
    }
    uint64_t out = v[0];
    if constexpr (OP != exec::kCopy) {
      typename E::Acc acc[epl];
#pragma unroll
      for (int e = 0; e < epl; ++e)
        acc[e] = E::widen(lineElem<Raw>(v[0], e));
#pragma unroll
      for (int u = 1; u < NS; ++u) {
        if (u >= ns)
          break;
#pragma unroll
        for (int e = 0; e < epl; ++e)
          acc[e] = combine<E, OP>(acc[e], E::widen(lineElem<Raw>(v[u], e)));
      }
      out = 0;
#pragma unroll
      for (int e = 0; e < epl; ++e)
        out |= lineBits(E::narrow(finish<E, OP>(acc[e], ns)), e);
    }
    if (j < full && whole) {
      *(uint64_t *)(d + j * kLineData) = out;
      continue;
    }
    const int n = (int)((j < full ? kLineData : bytes - j * kLineData) / es);
    for (int e = 0; e < n; ++e)
      *(Raw *)(d + j * kLineData + e * es) = lineElem<Raw>(out, e);
  }
  return true;
}

/// The op of a consume dispatched to F<OP>: a copy, or one contribution,
/// takes the copy path. False: an op this kernel is not built for.
template <class E, uint32_t OPS, class F>
__device__ __forceinline__ bool withLinesOp(int op, int nsrc, F &&f) {
  if (op == exec::kCopy || nsrc == 1) {
    f(OpConst<exec::kCopy>());
    return true;
  }
  return withReduction<E, OPS>(op, f);
}

// The dispatch below builds the formats in FMTS only (exec::LineFmtBits:
// the plan's; Target's LINES), and the caller never asks another.

/// exec's pushLines contract in line format fmt: false (nothing done)
/// where the target declines: more slots than registers hold, or (LL) a
/// source not 8-byte aligned or (both) doff not a line's start.
template <class E, int FMTS>
__device__ __forceinline__ bool pushLines(int fmt, const char *src,
                                          char *const *dst, int nd,
                                          int64_t soff, int64_t doff,
                                          int64_t bytes, int tid, int nthr,
                                          const LineCtx &ctx) {
  if constexpr ((FMTS & exec::kLinesLL128Bit) != 0) {
    if (fmt == exec::kFmtLL128) {
      if (nd < 1 || nd > kFastPtrs || doff % kL128Data || (nthr & 31))
        return false;
      L128Plain s;
      s.base = (char *)src + soff - doff; // slot data byte d at base + d
      pushLines128Run<typename E::Raw>(s, dst, nd, doff, doff + bytes, tid,
                                       nthr, ctx);
      return true;
    }
  }
  if constexpr ((FMTS & exec::kLinesLLBit) != 0)
    return pushLinesLL(src, dst, nd, soff, doff, bytes, tid, nthr,
                       llFlag(ctx.flag));
  return false;
}

/// exec's consumeLines contract in line format fmt, the op dispatched: 1
/// done, 0 declined (nothing done: more slots than registers hold, soff
/// not a line's start (LL), or an op the kernel is not built for), -1 a
/// line did not arrive in time.
template <class E, uint32_t OPS, int FMTS>
__device__ __forceinline__ int consumeLines(int fmt, const char *const *src,
                                            int ns, char *dst, int64_t soff,
                                            int64_t doff, int64_t bytes,
                                            int op, int tid, int nthr,
                                            const LineCtx &ctx) {
  const bool ll128 = (FMTS & exec::kLinesLL128Bit) != 0 && fmt == exec::kFmtLL128;
  if (ns < 1 || ns > kFastPtrs || bytes % sizeof(typename E::Raw) ||
      (ll128 ? (nthr & 31) != 0 : (soff & 7) != 0))
    return 0;
  L128Plain d;
  d.base = dst + doff - soff; // slot data byte x to base + x
  bool arrived = true;
  if (!withLinesOp<E, OPS>(op, ns, [&](auto o) {
        constexpr int OP = decltype(o)::value;
        if constexpr ((FMTS & exec::kLinesLL128Bit) != 0)
          if (ll128) {
            arrived = consumeLines128Run<E, OP>(src, ns, d, soff, soff + bytes,
                                                tid, nthr, ctx);
            return;
          }
        if constexpr ((FMTS & exec::kLinesLLBit) != 0) {
          // One slot (a copy, or one contribution: the copy path) polls
          // one line; more poll kFastPtrs, those past ns at slot ns-1
          // (pollLines).
          if constexpr (OP == exec::kCopy)
            if (ns == 1) {
              arrived = consumeLinesOp<E, OP, 1>(src, ns, dst, soff, doff, bytes, tid,
                                                 nthr, ctx);
              return;
            }
          arrived = consumeLinesOp<E, OP, kFastPtrs>(src, ns, dst, soff, doff, bytes,
                                                     tid, nthr, ctx);
        }
      }))
    return 0;
  return arrived ? 1 : -1;
}

/// A Move with a flagged side (m.ll, in format m.fmt), names [a, b), the
/// op dispatched. `ok` false: the op cannot run in this kernel (a
/// copy-only instantiation, or an op it is not built for). False: a line
/// did not arrive in time.
template <class E, uint32_t OPS, int FMTS>
__device__ __forceinline__ bool moveLines(const exec::Move &m, int64_t a,
                                          int64_t b, int tid, int nthr,
                                          const LineCtx &ctx, bool &ok) {
  constexpr int es = sizeof(typename E::Raw);
  bool arrived = true;
  ok = true;
  if constexpr ((FMTS & exec::kLinesLL128Bit) != 0) {
    if (m.fmt == exec::kFmtLL128) {
      // exec's moves are whole warps; a push writes slots (up to kFastPtrs),
      // a flagged consume one side (this rank's output or partial results).
      if ((nthr & 31) || m.ndst > kFastPtrs || (m.ll == exec::kLinesSrc && m.ndst != 1))
        __trap();
      if (m.ll == exec::kLinesDst) {
        pushLines128Run<typename E::Raw>(plainOf(m, true, 0, es), m.dst, m.ndst,
                                         a * es, b * es, tid, nthr, ctx);
        return true;
      }
      const L128Plain d = plainOf(m, false, 0, es);
      ok = withLinesOp<E, OPS>(m.op, m.nsrc, [&](auto o) {
        arrived = consumeLines128Run<E, decltype(o)::value>(
            m.src, m.nsrc, d, a * es, b * es, tid, nthr, ctx);
      });
      return arrived;
    }
  }
  if constexpr ((FMTS & exec::kLinesLLBit) != 0)
    ok = withLinesOp<E, OPS>(m.ll == exec::kLinesDst ? exec::kCopy : m.op,
                             m.nsrc, [&](auto o) {
                               arrived = moveLinesOp<E, decltype(o)::value>(
                                   m, a, b, tid, nthr, ctx);
                             });
  return arrived;
}

} // namespace sm
} // namespace purlin
