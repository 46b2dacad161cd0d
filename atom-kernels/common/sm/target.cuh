// The SM load/store target: the Target contract of spec/include/purlin/spec/Exec.h on one GPU
// generation, the kernel that runs a plan (grid: lanes x local ranks, one
// lane = one thread block) and the entry that launches it.
//
// A generation's header (sm80/target.cuh, ...) defines
//   PURLIN_TARGET_NAME and PURLIN_SM_THREADS (threads per lane)
// and includes this file.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"
#include "common/sm/aux.h"
#include "common/sm/elem.cuh"
#include "common/sm/lines.cuh"
#include "common/sm/move.cuh"
#include "common/sm/sync.cuh"

#ifndef PURLIN_SM_THREADS
#define PURLIN_SM_THREADS 512
#endif

namespace purlin {
namespace sm {

constexpr int kThreads = PURLIN_SM_THREADS;
/// One lane (thread block) of one rank. Element type E; the op comes with
/// each move (the launch's op, or the clause's).
template <class E> class Target {
public:
  /// `syncs`: some notify or wait of the plan runs in this launch. Only
  /// then is the aux word read (at kernel start, where its latency hides);
  /// a plan whose syncs are all skipped must not wait on that load before
  /// its first data access.
  __device__ Target(const exec::Shared &S, int rank, int lane, uint64_t epoch,
                    bool syncs)
      : S_(S), rank_(rank), lane_(lane), epoch_(epoch),
        aux_(auxWords(S, rank)), gpu_(syncs && aux_[2] != 0) {}

  __device__ int rank() const { return rank_; }
  __device__ int lane() const { return lane_; }
  __device__ const exec::Shared &shared() const { return S_; }
  __device__ uint64_t epoch() const { return epoch_; }
  __device__ void barrier() {
    __syncthreads();
    fenced_ = false;
  }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ int thread() const { return (int)threadIdx.x; }
  __device__ int threads() const { return (int)blockDim.x; }
  /// The lane's Moves, in shared memory (exec::laneMoves).
  __device__ exec::Move *laneMoves() {
    __shared__ __align__(16) char storage[exec::kMaxRanks * sizeof(exec::Move)];
    return reinterpret_cast<exec::Move *>(storage);
  }
  __device__ void signal(uint64_t *w, uint64_t v) {
    signalWord(w, v, !fenced_, gpu_);
    fenced_ = true;
  }
  __device__ bool wait(const uint64_t *w, uint64_t v) {
    acquire_ = true;
    return waitWord(w, v, aux_, gpu_);
  }
  /// After waits: each polling thread's acquire fence, then the lane's
  /// barrier, which passes the acquire on to the lane.
  __device__ bool barrierOr(bool v) {
    if (acquire_) {
      fenceAcqRel(gpu_);
      acquire_ = false;
    }
    return __syncthreads_or(v) != 0;
  }
  __device__ bool aborted() const { return aborted_; }
  __device__ void abort() {
    aborted_ = true;
    if (leader())
      reportError(aux_, kErrTimeout | (uint32_t)rank_ << 8 |
                            (uint32_t)lane_ << 20);
  }
  /// False: a flagged line did not arrive in time.
  __device__ bool move(const exec::Move &m, int64_t a, int64_t b, int tid,
                       int nthr) {
    if (m.ll != exec::kLinesNone) {
      bool ok;
      const bool arrived = sm::moveLines<E>(m, a, b, tid, nthr, (uint32_t)epoch_,
                                            aux_[1] ? aux_[1] : kDefaultTimeoutNs, ok);
      if (!ok)
        __trap(); // a reduction in a copy-only instantiation: a purlinc bug
      return arrived;
    }
    // Small contiguous moves inline (no call layers to fetch); the rest
    // through the general datapath.
    if (sm::moveInline<E>(m, a, b, tid, nthr))
      return true;
    if (!sm::move<E>(m, a, b, tid, nthr))
      __trap(); // a reduction in a copy-only instantiation: a purlinc bug
    return true;
  }
  __device__ bool moveVec(const char *const *src, int nsrc, char *const *dst,
                          int ndst, int64_t soff, int64_t doff, int64_t bytes,
                          int op, int tid, int nthr) {
    return sm::moveVec<E>(src, nsrc, dst, ndst, soff, doff, bytes, op, tid,
                          nthr);
  }
  __device__ int64_t vecElems() const {
    return kVecBytes / (int64_t)sizeof(typename E::Raw);
  }

private:
  const exec::Shared &S_;
  int rank_, lane_;
  uint64_t epoch_;
  const uint64_t *aux_;
  bool gpu_;             // every rank on this GPU: gpu-scope signals
  bool acquire_ = false; // polled since the last barrierOr (this thread)
  bool aborted_ = false;
  bool fenced_ = false; // a fence since the last barrier (leader)
};

/// Kernel prologue: the lane leader bumps the lane's epoch (kept in device
/// memory so that launches and graph replays agree) and shares it.
__device__ __forceinline__ uint64_t bumpEpoch(const exec::Shared &S, int rank,
                                              int lane) {
  __shared__ uint64_t epoch;
  if (threadIdx.x == 0) {
    uint64_t *w = exec::epochWord(S, rank, lane);
    epoch = *w + 1;
    *w = epoch;
  }
  __syncthreads();
  return epoch;
}

/// Launches `kernel(S, first)` on grid (S.L, n): every block of it must be
/// resident at once (ranks of one GPU wait on each other), so the launch is
/// cooperative, which fails instead of deadlocking when they do not fit.
/// Works under stream capture.
/// PURLIN_COOPERATIVE=0 launches plainly after an occupancy check instead
/// (for measuring what the cooperative launch costs).
inline bool cooperativeLaunch() {
  static const bool on = [] {
    const char *e = getenv("PURLIN_COOPERATIVE");
    return !(e && e[0] == '0');
  }();
  return on;
}

/// Threads per lane: kThreads, or PURLIN_LANE_THREADS (a multiple of 32 up
/// to kThreads; for measuring what the lane's size costs at small sizes).
inline int laneThreads() {
  static const int n = [] {
    const char *e = getenv("PURLIN_LANE_THREADS");
    const int v = e ? atoi(e) : 0;
    return v >= 32 && v <= kThreads && v % 32 == 0 ? v : kThreads;
  }();
  return n;
}

inline int launch(const void *kernel, const exec::Shared *S, int first, int n,
                  void *stream) {
  if (n <= 0 || S->L <= 0)
    return (int)cudaSuccess;
  if (!cooperativeLaunch()) {
    int dev = 0, sms = 0, per = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, laneThreads(), 0);
    if ((int64_t)per * sms < (int64_t)S->L * n)
      return (int)cudaErrorCooperativeLaunchTooLarge;
  }
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)S->L, (unsigned)n, 1);
  cfg.blockDim = dim3(laneThreads(), 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = (cudaStream_t)stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cooperativeLaunch() ? 1 : 0;
  void *args[] = {(void *)S, (void *)&first};
  return (int)cudaLaunchKernelExC(&cfg, kernel, args);
}

/// The kernel for element type E and plan function Plan::run. Epochs are
/// kept unless every rank runs in this launch and the plan's only syncs are
/// boundary syncs (all skipped then: no signal word is read or written).
template <class E, class Plan>
__global__ void __launch_bounds__(kThreads)
    planKernel(const __grid_constant__ exec::Shared S, int first) {
  const int rank = first + (int)blockIdx.y, lane = (int)blockIdx.x;
  const bool epochs = Plan::kInnerSyncs || !S.oneLaunch;
  Target<E> t(S, rank, lane, epochs ? bumpEpoch(S, rank, lane) : 0, epochs);
  Plan::run(t);
}

/// Kernel for a dtype (DType.h numbering): every type when the plan
/// reduces, else one instantiation per element size. Null when unknown.
template <class Plan, bool Reduces> const void *kernelFor(int dtype) {
  if constexpr (Reduces) {
    switch (dtype) {
    case kF32: return (const void *)planKernel<ElemF32, Plan>;
    case kF16: return (const void *)planKernel<ElemF16, Plan>;
    case kBF16: return (const void *)planKernel<ElemBF16, Plan>;
    case kF8E4M3: return (const void *)planKernel<ElemF8E4M3, Plan>;
    case kF8E5M2: return (const void *)planKernel<ElemF8E5M2, Plan>;
    case kI8: return (const void *)planKernel<ElemI8, Plan>;
    case kU8: return (const void *)planKernel<ElemU8, Plan>;
    case kI32: return (const void *)planKernel<ElemI32, Plan>;
    case kI64: return (const void *)planKernel<ElemI64, Plan>;
    case kF64: return (const void *)planKernel<ElemF64, Plan>;
    }
  } else {
    switch (dtype) {
    case kF8E4M3: case kF8E5M2: case kI8: case kU8:
      return (const void *)planKernel<ElemBytes<1>, Plan>;
    case kF16: case kBF16:
      return (const void *)planKernel<ElemBytes<2>, Plan>;
    case kF32: case kI32:
      return (const void *)planKernel<ElemBytes<4>, Plan>;
    case kI64: case kF64:
      return (const void *)planKernel<ElemBytes<8>, Plan>;
    }
  }
  return nullptr;
}

template <class Plan, bool Reduces>
int entry(const exec::Shared *S, int first, int n, int dtype, int op,
          void *stream) {
  (void)op; // carried in S->op; moves dispatch on it
  const void *k = kernelFor<Plan, Reduces>(dtype);
  if (!k)
    return (int)cudaErrorInvalidValue;
  return launch(k, S, first, n, stream);
}

} // namespace sm
} // namespace purlin

// PURLIN_PLAN_ENTRY(NAME, FN[, REDUCES[, INNER_SYNCS]]): entry_NAME for
// plan function FN (a template over the target). REDUCES 0: a copy-only
// collective, kernels by element size alone. INNER_SYNCS 0: every notify
// and wait of the plan is a boundary sync. Defaults 1.
#define PURLIN_PLAN_ENTRY_4(NAME, FN, REDUCES, INNER_SYNCS)                    \
  struct PlanFn_##NAME {                                                       \
    static constexpr bool kInnerSyncs = (INNER_SYNCS) != 0;                    \
    template <class Tgt> __device__ static void run(Tgt &t) { FN(t); }         \
  };                                                                           \
  static int entry_##NAME(const purlin_shared_t *S, int first, int n,          \
                          int dtype, int op, void *stream) {                   \
    return ::purlin::sm::entry<PlanFn_##NAME, (REDUCES) != 0>(                 \
        S, first, n, dtype, op, stream);                                       \
  }
#define PURLIN_PLAN_ENTRY_3(NAME, FN, REDUCES)                                 \
  PURLIN_PLAN_ENTRY_4(NAME, FN, REDUCES, 1)
#define PURLIN_PLAN_ENTRY_2(NAME, FN) PURLIN_PLAN_ENTRY_4(NAME, FN, 1, 1)
#define PURLIN_PLAN_ENTRY_PICK(_1, _2, _3, _4, M, ...) M
#define PURLIN_PLAN_ENTRY(...)                                                 \
  PURLIN_PLAN_ENTRY_PICK(__VA_ARGS__, PURLIN_PLAN_ENTRY_4, PURLIN_PLAN_ENTRY_3, \
                         PURLIN_PLAN_ENTRY_2, )(__VA_ARGS__)
#define PURLIN_HOST_ENTRY(NAME) nullptr
#define PURLIN_CUDA_ENTRY(NAME) entry_##NAME
