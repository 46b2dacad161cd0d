// The SM load/store datapath: one exec::Move (names [a, b) of a box, read
// from nsrc sources combined by op in source order, written to ndst
// destinations), done by the threads of one lane.
//
// Paths, fastest first:
//  - contiguous: both sides walk the names with stride 1 (or a flat
//    staging side); 16-byte vectors when every pointer shares one
//    alignment, scalar head and tail around them; else scalar;
//  - rows: several free dims whose innermost is contiguous on both sides:
//    the contiguous path row by row;
//  - strided: anything else, one name per thread at a time.
// Copy helpers take (tid, nthr), so the lane's shape is the caller's.
#pragma once

#include <stdint.h>

#include "purlin/spec/Exec.h"
#include "common/sm/elem.cuh"

namespace purlin {
namespace sm {

constexpr int kVecBytes = 16;
constexpr int kFastPtrs = exec::kRegPtrs; // sources/destinations held in registers
constexpr int64_t kRowMin = 256;   // shortest row worth the row path

template <class Raw> union Vec {
  uint4 u;
  Raw e[kVecBytes / sizeof(Raw)];
};

// ---------------------------------------------------------------------------
// Contiguous runs of n elements: sources at src[i] + soff bytes, destinations
// at dst[i] + doff bytes.
// ---------------------------------------------------------------------------

/// One element: every source's at byte offset `so` combined (in ascending
/// source order) or copied, stored at byte offset `dq` of every destination.
template <class E, int OP>
__device__ __forceinline__ void moveElement(const exec::Move &m, int64_t so, int64_t dq) {
  using Raw = typename E::Raw;
  Raw out;
  if constexpr (OP == exec::kCopy) {
    out = *(const Raw *)(m.src[0] + so);
  } else {
    typename E::Acc acc = E::widen(*(const Raw *)(m.src[0] + so));
    for (int s = 1; s < m.nsrc; ++s)
      acc = combine<E, OP>(acc, E::widen(*(const Raw *)(m.src[s] + so)));
    out = E::narrow(finish<E, OP>(acc, m.nsrc));
  }
  for (int d = 0; d < m.ndst; ++d)
    *(Raw *)(m.dst[d] + dq) = out;
}

/// Scalar combination of elements [i0, i1) (one element per thread).
template <class E, int OP>
__device__ __noinline__ void contigScalar(const exec::Move &m, int64_t soff, int64_t doff,
                             int64_t i0, int64_t i1, int tid, int nthr) {
  using Raw = typename E::Raw;
  for (int64_t i = i0 + tid; i < i1; i += nthr) {
    const int64_t so = soff + i * (int64_t)sizeof(Raw),
                  dq = doff + i * (int64_t)sizeof(Raw);
    moveElement<E, OP>(m, so, dq);
  }
}

/// Combines the vectors x[0..n) (already loaded, in source order).
template <class E, int OP, int N>
__device__ __forceinline__ uint4 combineVec(const uint4 *x, int n) {
  using Raw = typename E::Raw;
  constexpr int NV = kVecBytes / sizeof(Raw);
  Vec<Raw> v0;
  v0.u = x[0];
  typename E::Acc acc[NV];
#pragma unroll
  for (int k = 0; k < NV; ++k)
    acc[k] = E::widen(v0.e[k]);
#pragma unroll
  for (int s = 1; s < N; ++s) {
    if (s < n) {
      Vec<Raw> v;
      v.u = x[s];
#pragma unroll
      for (int k = 0; k < NV; ++k)
        acc[k] = combine<E, OP>(acc[k], E::widen(v.e[k]));
    }
  }
  Vec<Raw> o;
#pragma unroll
  for (int k = 0; k < NV; ++k)
    o.e[k] = E::narrow(finish<E, OP>(acc[k], n));
  return o.u;
}

/// Vectors v0, v0 + nthr, ... below nvec at src[0..ns) -> dst[0..nd) (ns, nd
/// <= kFastPtrs), one vector in flight per thread; inlined into the kernel
/// on the small-message path (sm::moveInline), where every call layer costs
/// a fetch of new code, and the tail of contigVecFast.
template <class E, int OP>
__device__ __forceinline__ void vecLoop(const char *const *src, char *const *dst,
                                        int ns, int nd, int64_t soff,
                                        int64_t doff, int64_t nvec, int64_t v0,
                                        int nthr) {
  const uint4 *sp[kFastPtrs];
  uint4 *dp[kFastPtrs];
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i) {
    sp[i] = i < ns ? (const uint4 *)(src[i] + soff) : nullptr;
    dp[i] = i < nd ? (uint4 *)(dst[i] + doff) : nullptr;
  }
  for (int64_t v = v0; v < nvec; v += nthr) {
    uint4 x[kFastPtrs];
    // Unused slots set too: a slot left as it was stays live across trips.
#pragma unroll
    for (int i = 0; i < kFastPtrs; ++i)
      x[i] = i < ns ? sp[i][v] : make_uint4(0, 0, 0, 0);
    uint4 o;
    if constexpr (OP == exec::kCopy)
      o = x[0];
    else
      o = combineVec<E, OP, kFastPtrs>(x, ns);
#pragma unroll
    for (int i = 0; i < kFastPtrs; ++i)
      if (i < nd)
        dp[i][v] = o;
  }
}

/// Vectors [0, nvec) from up to kFastPtrs sources to up to kFastPtrs
/// destinations, pointers in registers; U vectors in flight per thread.
template <class E, int OP, int U>
__device__ __noinline__ void contigVecFast(const exec::Move &m, int64_t soff, int64_t doff,
                              int64_t nvec, int tid, int nthr) {
  const uint4 *sp[kFastPtrs];
  uint4 *dp[kFastPtrs];
  const int ns = m.nsrc, nd = m.ndst;
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i) {
    sp[i] = i < ns ? (const uint4 *)(m.src[i] + soff) : nullptr;
    dp[i] = i < nd ? (uint4 *)(m.dst[i] + doff) : nullptr;
  }
  int64_t v = tid;
  if constexpr (OP == exec::kCopy) {
    // One source: U vectors in flight.
    for (; v + (int64_t)(U - 1) * nthr < nvec; v += (int64_t)U * nthr) {
      uint4 x[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        x[u] = sp[0][v + (int64_t)u * nthr];
#pragma unroll
      for (int i = 0; i < kFastPtrs; ++i)
        if (i < nd)
#pragma unroll
          for (int u = 0; u < U; ++u)
            dp[i][v + (int64_t)u * nthr] = x[u];
    }
  }
  for (; U > 1 && OP != exec::kCopy &&
         v + (int64_t)(U - 1) * nthr < nvec;
       v += (int64_t)U * nthr) {
    uint4 x[U][kFastPtrs];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int i = 0; i < kFastPtrs; ++i)
        x[u][i] = i < ns ? sp[i][v + (int64_t)u * nthr] : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      uint4 o;
      if constexpr (OP == exec::kCopy)
        o = x[u][0];
      else
        o = combineVec<E, OP, kFastPtrs>(x[u], ns);
#pragma unroll
      for (int i = 0; i < kFastPtrs; ++i)
        if (i < nd)
          dp[i][v + (int64_t)u * nthr] = o;
    }
  }
  vecLoop<E, OP>(m.src, m.dst, ns, nd, soff, doff, nvec, v, nthr);
}

/// Vectors [0, nvec), any number of sources and destinations.
template <class E, int OP>
__device__ __noinline__ void contigVecSlow(const exec::Move &m, int64_t soff, int64_t doff,
                              int64_t nvec, int tid, int nthr) {
  using Raw = typename E::Raw;
  constexpr int NV = kVecBytes / sizeof(Raw);
  for (int64_t v = tid; v < nvec; v += nthr) {
    const int64_t so = soff + v * kVecBytes, dq = doff + v * kVecBytes;
    uint4 o = *(const uint4 *)(m.src[0] + so);
    if constexpr (OP != exec::kCopy) {
      Vec<Raw> v0;
      v0.u = o;
      typename E::Acc acc[NV];
#pragma unroll
      for (int k = 0; k < NV; ++k)
        acc[k] = E::widen(v0.e[k]);
      for (int s = 1; s < m.nsrc; ++s) {
        Vec<Raw> x;
        x.u = *(const uint4 *)(m.src[s] + so);
#pragma unroll
        for (int k = 0; k < NV; ++k)
          acc[k] = combine<E, OP>(acc[k], E::widen(x.e[k]));
      }
#pragma unroll
      for (int k = 0; k < NV; ++k)
        v0.e[k] = E::narrow(finish<E, OP>(acc[k], m.nsrc));
      o = v0.u;
    }
    for (int d = 0; d < m.ndst; ++d)
      *(uint4 *)(m.dst[d] + dq) = o;
  }
}

/// n contiguous elements; soff/doff in bytes.
template <class E, int OP>
__device__ __noinline__ void contig(const exec::Move &m, int64_t soff, int64_t doff,
                       int64_t n, int tid, int nthr) {
  using Raw = typename E::Raw;
  constexpr int es = sizeof(Raw);
  // One alignment for every pointer, or no vectors.
  const uintptr_t mis = (uintptr_t)(m.src[0] + soff) & (kVecBytes - 1);
  bool same = true;
  for (int s = 1; s < m.nsrc; ++s)
    same &= (((uintptr_t)(m.src[s] + soff)) & (kVecBytes - 1)) == mis;
  for (int d = 0; d < m.ndst; ++d)
    same &= (((uintptr_t)(m.dst[d] + doff)) & (kVecBytes - 1)) == mis;
  if (!same || mis % es != 0) {
    contigScalar<E, OP>(m, soff, doff, 0, n, tid, nthr);
    return;
  }
  int64_t head = (int64_t)((kVecBytes - mis) & (kVecBytes - 1)) / es;
  if (head > n)
    head = n;
  const int64_t nvec = (n - head) * es / kVecBytes;
  const int64_t tail = head + nvec * (kVecBytes / es);
  if (head > 0)
    contigScalar<E, OP>(m, soff, doff, 0, head, tid, nthr);
  if (nvec > 0) {
    const int64_t vs = soff + head * es, vd = doff + head * es;
    if (m.nsrc <= kFastPtrs && m.ndst <= kFastPtrs) {
      if constexpr (OP == exec::kCopy)
        contigVecFast<E, OP, 4>(m, vs, vd, nvec, tid, nthr);
      else
        contigVecFast<E, OP, 1>(m, vs, vd, nvec, tid, nthr);
    } else {
      contigVecSlow<E, OP>(m, vs, vd, nvec, tid, nthr);
    }
  }
  if (tail < n)
    contigScalar<E, OP>(m, soff, doff, tail, n, tid, nthr);
}

// ---------------------------------------------------------------------------
// Boxes
// ---------------------------------------------------------------------------

/// Element offset of name t (row-major in the box) on one side.
__device__ __forceinline__ int64_t nameOffset(const exec::Box &b, int64_t t,
                                              bool src) {
  int64_t off = src ? b.sbase : b.dbase;
  const int64_t *str = src ? b.sstr : b.dstr;
  for (int j = b.nfree - 1; j >= 0; --j) {
    const int64_t e = b.ext[j];
    const int64_t c = j == 0 ? t : t % e;
    t = j == 0 ? 0 : t / e;
    off += c * str[j];
  }
  return off;
}

/// Names [a, b) of the move, all threads of the lane.
template <class E, int OP>
__device__ __noinline__ void moveBox(const exec::Move &m, int64_t a, int64_t b, int tid,
                        int nthr) {
  using Raw = typename E::Raw;
  constexpr int64_t es = sizeof(Raw);
  const exec::Box &x = m.box;
  const int in = x.nfree - 1;
  const bool srcRow = m.srcFlat || x.sstr[in] == 1;
  const bool dstRow = m.dstFlat || x.dstr[in] == 1;
  if (x.nfree == 1 && srcRow && dstRow) {
    const int64_t so = m.srcFlat ? a : x.sbase + a;
    const int64_t dq = m.dstFlat ? a : x.dbase + a;
    contig<E, OP>(m, so * es, dq * es, b - a, tid, nthr);
    return;
  }
  if (srcRow && dstRow && x.ext[in] >= kRowMin) {
    const int64_t w = x.ext[in];
    for (int64_t row = a / w; row * w < b; ++row) {
      const int64_t c0 = row * w > a ? row * w : a;
      const int64_t c1 = (row + 1) * w < b ? (row + 1) * w : b;
      const int64_t so = m.srcFlat ? c0 : nameOffset(x, c0, true);
      const int64_t dq = m.dstFlat ? c0 : nameOffset(x, c0, false);
      contig<E, OP>(m, so * es, dq * es, c1 - c0, tid, nthr);
    }
    return;
  }
  for (int64_t t = a + tid; t < b; t += nthr) {
    const int64_t so = (m.srcFlat ? t : nameOffset(x, t, true)) * es;
    const int64_t dq = (m.dstFlat ? t : nameOffset(x, t, false)) * es;
    moveElement<E, OP>(m, so, dq);
  }
}

/// Elements [0, n) at byte offsets soff / doff, one per thread, pointers in
/// registers: what is left of a register move after its whole vectors.
template <class E, int OP>
__device__ __forceinline__ void scalarLoop(const char *const *src,
                                           char *const *dst, int ns, int nd,
                                           int64_t soff, int64_t doff,
                                           int64_t n, int tid, int nthr) {
  using Raw = typename E::Raw;
  for (int64_t t = tid; t < n; t += nthr) {
    const int64_t so = soff + t * (int64_t)sizeof(Raw),
                  dq = doff + t * (int64_t)sizeof(Raw);
    Raw out;
    if constexpr (OP == exec::kCopy) {
      out = *(const Raw *)(src[0] + so);
    } else {
      typename E::Acc acc = E::widen(*(const Raw *)(src[0] + so));
#pragma unroll
      for (int i = 1; i < kFastPtrs; ++i)
        if (i < ns)
          acc = combine<E, OP>(acc, E::widen(*(const Raw *)(src[i] + so)));
      out = E::narrow(finish<E, OP>(acc, ns));
    }
#pragma unroll
    for (int i = 0; i < kFastPtrs; ++i)
      if (i < nd)
        *(Raw *)(dst[i] + dq) = out;
  }
}

template <class E, int OP>
__device__ __forceinline__ void regLoop(const char *const *src,
                                        char *const *dst, int ns, int nd,
                                        int64_t soff, int64_t doff,
                                        int64_t nvec, int64_t ntail, int tid,
                                        int nthr) {
  if (nvec > 0)
    vecLoop<E, OP>(src, dst, ns, nd, soff, doff, nvec, tid, nthr);
  if (ntail > 0)
    scalarLoop<E, OP>(src, dst, ns, nd, soff + nvec * kVecBytes,
                      doff + nvec * kVecBytes, ntail, tid, nthr);
}

/// Bytes a register move takes at most (larger moves want several vectors
/// in flight per thread: the general path), and at most element by element
/// (pointers not 16-byte aligned).
constexpr int64_t kRegBytes = 64 * 1024, kRegScalarBytes = 4096;

/// A register move (exec's moveVec contract): `bytes` from src[i] + soff
/// (i < ns) to dst[i] + doff (i < nd), pointers in registers, inlined into
/// the kernel: whole 16-byte vectors where every pointer is aligned, the
/// rest element by element. False (nothing done) for larger moves, and for
/// an op the kernel is not built for (OPS).
template <class E, uint32_t OPS>
__device__ __forceinline__ bool moveVec(const char *const *src, int ns,
                                        char *const *dst, int nd,
                                        int64_t soff, int64_t doff,
                                        int64_t bytes, int op, int tid,
                                        int nthr) {
  constexpr int64_t es = sizeof(typename E::Raw);
  if (ns < 1 || nd < 1 || ns > kFastPtrs || nd > kFastPtrs ||
      bytes > kRegBytes || bytes % es != 0)
    return false;
  uintptr_t bits = 0;
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i) {
    if (i < ns)
      bits |= (uintptr_t)(src[i] + soff);
    if (i < nd)
      bits |= (uintptr_t)(dst[i] + doff);
  }
  const bool vec = (bits & (kVecBytes - 1)) == 0;
  if (!vec && bytes > kRegScalarBytes)
    return false;
  const int64_t nvec = vec ? bytes / kVecBytes : 0;
  const int64_t ntail = (bytes - nvec * kVecBytes) / es;
  if (op == exec::kCopy || ns == 1) {
    regLoop<E, exec::kCopy>(src, dst, ns, nd, soff, doff, nvec, ntail, tid, nthr);
    return true;
  }
  return withReduction<E, OPS>(op, [&](auto o) {
    regLoop<E, decltype(o)::value>(src, dst, ns, nd, soff, doff, nvec, ntail,
                                   tid, nthr);
  });
}

/// The small-message path, inlined into the kernel: names [a, b) of a
/// one-dimensional box, contiguous (or flat) on both sides, at most
/// kFastPtrs sources and destinations, as a register move (moveVec).
/// Returns false (nothing done) for any other move.
template <class E, uint32_t OPS>
__device__ __forceinline__ bool moveInline(const exec::Move &m, int64_t a,
                                           int64_t b, int tid, int nthr) {
  using Raw = typename E::Raw;
  constexpr int64_t es = sizeof(Raw);
  const exec::Box &x = m.box;
  const int ns = m.nsrc, nd = m.ndst;
  if (x.nfree != 1 || ns > kFastPtrs || nd > kFastPtrs ||
      !(m.srcFlat || x.sstr[0] == 1) || !(m.dstFlat || x.dstr[0] == 1))
    return false;
  const char *src[kFastPtrs];
  char *dst[kFastPtrs];
#pragma unroll
  for (int i = 0; i < kFastPtrs; ++i) {
    src[i] = i < ns ? m.src[i] : nullptr;
    dst[i] = i < nd ? m.dst[i] : nullptr;
  }
  return moveVec<E, OPS>(src, ns, dst, nd, (m.srcFlat ? a : x.sbase + a) * es,
                         (m.dstFlat ? a : x.dbase + a) * es, (b - a) * es,
                         m.op, tid, nthr);
}

/// The move with the op dispatched: a copy (or a single contribution,
/// which every op leaves as it is) takes the copy path. Returns false when
/// the op cannot run in this kernel (a copy-only instantiation, or an op
/// it is not built for).
template <class E, uint32_t OPS>
__device__ __noinline__ bool move(const exec::Move &m, int64_t a, int64_t b, int tid,
                     int nthr) {
  if (m.op == exec::kCopy || m.nsrc == 1) {
    moveBox<E, exec::kCopy>(m, a, b, tid, nthr);
    return true;
  }
  return withReduction<E, OPS>(m.op, [&](auto o) {
    moveBox<E, decltype(o)::value>(m, a, b, tid, nthr);
  });
}

} // namespace sm
} // namespace purlin
