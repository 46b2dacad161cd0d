// The TMA bulk datapath's data movement (sm_90 and later): a contiguous
// move of a lane's threads done by the Tensor Memory Accelerator's bulk
// copies through shared memory, so that one thread per lane keeps
// kStages - 1 stages of loads in flight (144 KiB with launch.h's default
// 192 KiB) and a few SMs may move as much as many do with loads and stores.
//
// A move of `bytes` from ns sources to nd destinations (exec's register
// move contract: sources combined by op in ascending order) is cut into
// tiles; tile i goes through stage i % kStages of the group's part of the
// lane's dynamic shared memory, each stage holding one slot per source:
//
//   issuer   loads: mbarrier.arrive.expect_tx(full[s], ns * len), then per
//            source cp.async.bulk.shared::cluster.global ... complete_tx
//            into slot k of stage s;
//   copy     the issuer waits on full[s] and stores slot 0 to every
//            destination (cp.async.bulk.global.shared::cta.bulk_group, one
//            commit group per tile);
//   reduce   every thread of the group waits on full[s], combines its
//            16-byte vectors of the ns slots in registers in source order
//            (the SM atoms' arithmetic: bitwise their result and the
//            reference's), writes the result into slot 0, fences it to the
//            async proxy, and the group meets at its named barrier; then
//            the issuer stores slot 0 as above;
//   refill   once the stores of tile i-1 have read their stage
//            (cp.async.bulk.wait_group.read 1: tile i's may still be
//            reading), the issuer loads tile i-1+kStages into it.
//
// So the loads of kStages-1 tiles are in flight while a tile is combined
// and stored. The issuer is thread 0 of the group; a copy needs no other
// thread (the group's others return at once and meet it at the lane's
// barrier after the step). The move ends with cp.async.bulk.wait_group 0
// (the stores are complete) and a proxy fence, so that the lane's notify
// that follows releases them like the SM atoms' stores.
//
// No cp.reduce.async.bulk: its adds land in an order the program does not
// fix, and purlin's reductions are bitwise deterministic in ascending rank
// order.
#pragma once

#include <stdint.h>

#include "purlin/spec/Exec.h"
#include "common/sm/elem.cuh"
#include "common/sm/move.cuh"

// Stages a group's shared memory is cut into (loads in flight while a tile
// is stored: kStages - 1).
#ifndef PURLIN_TMA_STAGES
#define PURLIN_TMA_STAGES 4
#endif
// The smallest move (bytes per source) taken by bulk copies; smaller ones
// stay on the SM atoms, whose loads start at once (a bulk move pays the
// mbarrier setup and one round trip before its first store).
#ifndef PURLIN_TMA_MIN_BYTES
#define PURLIN_TMA_MIN_BYTES 16384
#endif

namespace purlin {
namespace tma {

constexpr int kStages = PURLIN_TMA_STAGES;
constexpr int64_t kMinBytes = PURLIN_TMA_MIN_BYTES;
constexpr int64_t kAlign = 16;      // cp.async.bulk: addresses and sizes
constexpr int64_t kMinTile = 1024;  // bytes per source and tile, at least
constexpr int kMaxGroups = 15;      // named barriers 1..15 (0: __syncthreads)
constexpr int kMaxSrcs = exec::kRegPtrs, kMaxDsts = exec::kRegPtrs;
static_assert(kStages >= 2, "the pipeline needs two stages at least");

// ---------------------------------------------------------------------------
// PTX: mbarriers, bulk copies, proxy fences (sm_90).
// ---------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
/// The dynamic shared memory this block was launched with (0: none, so no
/// bulk move: a kernel launched as the SM datapath launches).
__device__ __forceinline__ uint32_t dynamicSmemBytes() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n));
  return n;
}
__device__ __forceinline__ void mbarInit(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)),
               "r"(count)
               : "memory");
}
__device__ __forceinline__ void mbarInval(uint64_t *bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smemAddr(bar))
               : "memory");
}
/// The issuer's arrival, announcing the bytes the phase's loads bring.
__device__ __forceinline__ void mbarExpectTx(uint64_t *bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
          smemAddr(bar)),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void mbarWait(uint64_t *bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(smemAddr(bar)), "r"(parity)
                 : "memory");
  } while (!done);
}
/// Global (this GPU's or a peer's) -> this block's shared memory; completes
/// `bytes` of the mbarrier's transaction count.
__device__ __forceinline__ void bulkLoad(void *smem, const void *gmem,
                                         uint32_t bytes, uint64_t *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];" ::"r"(smemAddr(smem)),
               "l"(gmem), "r"(bytes), "r"(smemAddr(bar))
               : "memory");
}
/// Shared -> global, in the thread's current bulk group.
__device__ __forceinline__ void bulkStore(void *gmem, const void *smem,
                                          uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::
                   "l"(gmem),
               "r"(smemAddr(smem)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulkCommit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/// Until at most N of the thread's bulk groups are still reading shared
/// memory (their sources may be overwritten).
template <int N> __device__ __forceinline__ void bulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
/// Until at most N of the thread's bulk groups are incomplete (their
/// writes performed).
template <int N> __device__ __forceinline__ void bulkWait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
/// Orders this thread's generic-proxy accesses of global memory with async
/// proxy ones (bulk copies) after it, and the completed bulk stores before
/// it with the generic release that follows.
__device__ __forceinline__ void fenceProxyGlobal() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
/// The same for shared memory: slot 0 written by the group's threads, then
/// read by a bulk store.
__device__ __forceinline__ void fenceProxyShared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/// Makes mbarrier.init visible to the async proxy (the bulk loads' complete_tx).
__device__ __forceinline__ void fenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
/// The group's threads meet (named barrier `id`, `n` threads, a multiple
/// of 32).
__device__ __forceinline__ void groupBarrier(int id, int n) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

// ---------------------------------------------------------------------------
// The bulk move
// ---------------------------------------------------------------------------

/// Where a group's bulk move runs: its stages (kStages of `stageBytes`
/// each, 128-byte aligned), its mbarriers (kStages), the tile (bytes per
/// source per stage), its named barrier and whether it combines.
struct Plan {
  char *stages = nullptr;
  uint64_t *full = nullptr;
  int64_t stageBytes = 0, tile = 0;
  int barrierId = 0;
};

/// Combines the 16-byte vectors [tid, len / 16) of the ns slots of `st`
/// (slot k at k * tile) in source order into slot 0: the SM atoms'
/// arithmetic (move.cuh's contigVecSlow, elem.cuh's combine and finish).
template <class E, int OP>
__device__ __forceinline__ void combineSlots(char *st, int ns, int64_t tile,
                                             int64_t len, int tid, int nthr) {
  using Raw = typename E::Raw;
  constexpr int NV = sm::kVecBytes / sizeof(Raw);
  for (int64_t v = tid; v * sm::kVecBytes < len; v += nthr) {
    char *p = st + v * sm::kVecBytes;
    sm::Vec<Raw> x;
    x.u = *(const uint4 *)p;
    typename E::Acc acc[NV];
#pragma unroll
    for (int k = 0; k < NV; ++k)
      acc[k] = E::widen(x.e[k]);
    for (int s = 1; s < ns; ++s) {
      sm::Vec<Raw> y;
      y.u = *(const uint4 *)(p + s * tile);
#pragma unroll
      for (int k = 0; k < NV; ++k)
        acc[k] = sm::combine<E, OP>(acc[k], E::widen(y.e[k]));
    }
#pragma unroll
    for (int k = 0; k < NV; ++k)
      x.e[k] = E::narrow(sm::finish<E, OP>(acc[k], ns));
    *(uint4 *)p = x.u;
  }
}

/// `bytes` (a multiple of kAlign, every address aligned) from src[k] + soff
/// to dst[d] + doff through the stages of `pl`, by the group's threads tid
/// of nthr; OP kCopy: ns is 1 and only tid 0 works.
template <class E, int OP>
__device__ __noinline__ void bulkMove(const Plan &pl, const char *const *src,
                                      int ns, char *const *dst, int nd,
                                      int64_t soff, int64_t doff,
                                      int64_t bytes, int tid, int nthr) {
  constexpr bool kReduce = OP != exec::kCopy;
  const int64_t tile = pl.tile;
  const int64_t ntiles = (bytes + tile - 1) / tile;
  auto len = [&](int64_t i) {
    const int64_t l = bytes - i * tile;
    return (uint32_t)(l < tile ? l : tile);
  };
  auto stage = [&](int64_t i) { return pl.stages + (i % kStages) * pl.stageBytes; };
  auto issue = [&](int64_t i) {
    const uint32_t n = len(i);
    uint64_t *bar = pl.full + i % kStages;
    mbarExpectTx(bar, n * (uint32_t)ns);
    char *st = stage(i);
    for (int k = 0; k < ns; ++k)
      bulkLoad(st + k * tile, src[k] + soff + i * tile, n, bar);
  };
  if (tid == 0) {
    // What this lane's threads wrote (ordered before this move by the
    // lane's barrier) and what peers released to it (the waits' acquire)
    // is read by the async proxy from here on.
    fenceProxyGlobal();
    for (int s = 0; s < kStages; ++s)
      mbarInit(pl.full + s, 1);
    fenceBarrierInit();
    for (int64_t i = 0; i < ntiles && i < kStages; ++i)
      issue(i);
  }
  if constexpr (kReduce)
    groupBarrier(pl.barrierId, nthr); // the mbarriers are initialized
  else if (tid != 0)
    return;
  for (int64_t i = 0; i < ntiles; ++i) {
    const uint32_t parity = (uint32_t)((i / kStages) & 1);
    char *st = stage(i);
    const uint32_t n = len(i);
    if (kReduce || tid == 0)
      mbarWait(pl.full + i % kStages, parity);
    if constexpr (kReduce) {
      combineSlots<E, OP>(st, ns, tile, n, tid, nthr);
      fenceProxyShared(); // slot 0's new bytes, for the bulk stores
      groupBarrier(pl.barrierId, nthr);
    }
    if (tid == 0) {
      for (int d = 0; d < nd; ++d)
        bulkStore(dst[d] + doff + i * tile, st, n);
      bulkCommit();
      // Stage (i-1) % kStages is free once tile i-1's stores have read it
      // (and, combining, once every thread has: the barrier above).
      if (i >= 1 && i - 1 + kStages < ntiles) {
        bulkWaitRead<1>();
        issue(i - 1 + kStages);
      }
    }
  }
  if (tid == 0) {
    bulkWait<0>();      // the stores are performed
    fenceProxyGlobal(); // before the generic release of the next notify
    for (int s = 0; s < kStages; ++s)
      mbarInval(pl.full + s); // every phase completed: re-initialized next move
  }
}

} // namespace tma
} // namespace purlin
