// The TMA bulk target: the SM atoms' lane (common/sm/target.cuh: signals,
// waits, epilogues, the kernel and its entry) with another data movement.
// A contiguous move large enough (bulk.cuh's kMinBytes per source) whose
// every address is 16-byte aligned goes through shared memory by bulk
// copies (bulk.cuh); everything else takes the SM atoms' path unchanged:
//  - unaligned addresses (cp.async.bulk needs 16-byte addresses and sizes;
//    the bytes after the last whole 16 of an aligned move go by the SM
//    atoms' register move),
//  - small moves (below kMinBytes per source),
//  - boxes that are not one contiguous run on both sides (rows, strides),
//  - flagged lines (the low-latency protocol), epilogues (row-wise f32),
//  - more than kRegPtrs sources or destinations,
//  - a group of the lane beyond the 15 named barriers, or stages that would
//    hold less than 1 KiB per source,
//  - a kernel launched without dynamic shared memory.
//
// Each lane's stages are its dynamic shared memory, asked at launch
// (launch.h: PURLIN_TMA_SMEM); when exec::laneMoves splits the lane into
// warp groups, group g of G takes the g-th G-th of it.
//
// A generation's header (sm90.cuh) defines PURLIN_TARGET_NAME and
// PURLIN_SM_THREADS and includes this file.
#pragma once

#include "tma/bulk.cuh"

// The SM atoms build this target's kernels and entries (common/sm's
// PURLIN_SM_ATOMS, PURLIN_SM_LAUNCH), with this lane class and launch.
#define PURLIN_SM_ATOMS ::purlin::tma::Target
#define PURLIN_SM_LAUNCH ::purlin::tma::launch
#include "common/sm/target.cuh"
#ifndef __CUDACC_RTC__
#include "tma/launch.h"
#endif

namespace purlin {
namespace tma {

template <class E, uint32_t OPS, int LINES = exec::kLinesAll>
class Target : public sm::Target<E, OPS, LINES> {
  using Base = sm::Target<E, OPS, LINES>;

public:
  using Base::Base;

  __device__ bool move(const exec::Move &m, int64_t a, int64_t b, int tid,
                       int nthr) {
    constexpr int64_t es = sizeof(typename E::Raw);
    const exec::Box &x = m.box;
    if ((b - a) * es >= kMinBytes && m.ll == exec::kLinesNone && x.nfree == 1 &&
        (m.srcFlat || x.sstr[0] == 1) && (m.dstFlat || x.dstr[0] == 1) &&
        bulk(m.src, m.nsrc, m.dst, m.ndst,
             (m.srcFlat ? a : x.sbase + a) * es,
             (m.dstFlat ? a : x.dbase + a) * es, (b - a) * es, m.op, tid, nthr))
      return true;
    return Base::move(m, a, b, tid, nthr);
  }

  __device__ bool moveVec(const char *const *src, int nsrc, char *const *dst,
                          int ndst, int64_t soff, int64_t doff, int64_t bytes,
                          int op, int tid, int nthr) {
    if (bytes >= kMinBytes &&
        bulk(src, nsrc, dst, ndst, soff, doff, bytes, op, tid, nthr))
      return true;
    return Base::moveVec(src, nsrc, dst, ndst, soff, doff, bytes, op, tid,
                         nthr);
  }

private:
  /// The bulk path, called only for moves of kMinBytes or more. Not
  /// inlined in a kernel that reduces: inlined, its setup made the
  /// executor's own path spill more where large messages run (ptxas,
  /// all_reduce bf16, spill stores/loads in bytes: two_shot 244/484
  /// inlined, 216/272 called, the SM datapath's 100/196; two_shot_copy
  /// 296/552, 280/324, 192/344; direct, for small messages, goes the
  /// other way: 32/32, 84/64, 100/196). Inlined in a copy kernel, where it
  /// spills nothing and the call would (all_gather: 24/120).
  __device__ __forceinline__ bool bulk(const char *const *src, int ns,
                                       char *const *dst, int nd, int64_t soff,
                                       int64_t doff, int64_t bytes, int op,
                                       int tid, int nthr) {
    if constexpr (E::kCanReduce)
      return bulkCall(src, ns, dst, nd, soff, doff, bytes, op, tid, nthr);
    else
      return bulkBody(src, ns, dst, nd, soff, doff, bytes, op, tid, nthr);
  }
  __device__ __noinline__ bool bulkCall(const char *const *src, int ns,
                                        char *const *dst, int nd, int64_t soff,
                                        int64_t doff, int64_t bytes, int op,
                                        int tid, int nthr) {
    return bulkBody(src, ns, dst, nd, soff, doff, bytes, op, tid, nthr);
  }
  /// The bulk path (bulk.cuh) when it applies, the tail of under 16 bytes
  /// by the SM atoms' register move; false (nothing done) where it does
  /// not. Every thread of the group decides alike (the same arguments).
  __device__ __forceinline__ bool bulkBody(const char *const *src, int ns,
                                           char *const *dst, int nd,
                                           int64_t soff, int64_t doff,
                                           int64_t bytes, int op, int tid,
                                           int nthr) {
    const bool reduce = op != exec::kCopy && ns > 1;
    const int64_t body = bytes / kAlign * kAlign;
    if (ns < 1 || nd < 1 || ns > kMaxSrcs || nd > kMaxDsts ||
        body < kMinBytes || (op == exec::kCopy && ns != 1) ||
        (reduce && !sm::hasOp(OPS, op)))
      return false;
    uintptr_t bits = 0;
    for (int k = 0; k < ns; ++k)
      bits |= (uintptr_t)(src[k] + soff);
    for (int k = 0; k < nd; ++k)
      bits |= (uintptr_t)(dst[k] + doff);
    if (bits & (kAlign - 1))
      return false;
    // The group: threads [first, first + nthr) of the lane, one of
    // blockDim.x / nthr (exec::laneMoves' warp groups, or the whole lane).
    const int first = (int)threadIdx.x - tid, groups = (int)blockDim.x / nthr;
    if (nthr % 32 != 0 || first % nthr != 0 || first / nthr >= kMaxGroups)
      return false;
    const int g = first / nthr;
    extern __shared__ __align__(128) char stages[];
    __shared__ uint64_t full[kMaxGroups][kStages];
    Plan pl;
    const int64_t part = (int64_t)dynamicSmemBytes() / groups / 128 * 128;
    pl.stageBytes = part / kStages / 128 * 128;
    pl.tile = pl.stageBytes / ns / kAlign * kAlign;
    if (pl.tile < kMinTile)
      return false;
    pl.stages = stages + g * part;
    pl.full = full[g];
    pl.barrierId = 1 + g;
    const char *s[kMaxSrcs];
    char *d[kMaxDsts];
#pragma unroll
    for (int k = 0; k < kMaxSrcs; ++k)
      s[k] = k < ns ? src[k] : nullptr;
#pragma unroll
    for (int k = 0; k < kMaxDsts; ++k)
      d[k] = k < nd ? dst[k] : nullptr;
    if (!reduce) {
      bulkMove<E, exec::kCopy>(pl, s, 1, d, nd, soff, doff, body, tid, nthr);
    } else if (!sm::withReduction<E, OPS>(op, [&](auto o) {
                 bulkMove<E, decltype(o)::value>(pl, s, ns, d, nd, soff, doff,
                                                 body, tid, nthr);
               })) {
      return false; // not built for op: checked above, kept for the contract
    }
    if (body < bytes &&
        !sm::moveVec<E, OPS>(s, ns, d, nd, soff + body, doff + body,
                             bytes - body, reduce ? op : exec::kCopy, tid,
                             nthr))
      __trap(); // under 16 aligned bytes: the register move takes them
    return true;
  }
};

#ifndef __CUDACC_RTC__
/// A generated entry's launch (common/sm/target.cuh's PURLIN_SM_LAUNCH):
/// sm::launch's threads per lane (`most`: the kernel's launch bound), with
/// the lane's stages (launch.h).
inline int launch(const void *kernel, const exec::Shared *S, int first, int n,
                  void *stream, const void *slot, int most, bool independent) {
  return launchPlan(kernel, S, first, n, stream,
                    sm::laneThreads(most, S->laneThreads), slot, independent);
}
#endif

} // namespace tma
} // namespace purlin
