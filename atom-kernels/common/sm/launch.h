// How a plan's kernel is launched on the SM datapath: grid (lanes, local
// ranks), one thread block per lane, every block resident at once (ranks
// of one GPU wait on each other), so the launch is cooperative, which fails
// instead of deadlocking when they do not fit; it works under stream
// capture. Where the runtime asks (exec::Shared's clusterLanes), a rank's
// lanes are one thread-block cluster (sm_90 and later), so that a
// few-token epilogue row can be split over them (exec/Epilogue.h). Host code (a host compiler takes it): the generated entries
// (target.cuh) launch their kernels with it, and the CUDA runtime the
// kernels it compiled at first use (runtime/cuda/sm).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "purlin/spec/Exec.h"

namespace purlin {
namespace sm {

/// PURLIN_COOPERATIVE=0 launches plainly after an occupancy check instead
/// (for measuring what the cooperative launch costs).
inline bool cooperativeLaunch() {
  static const bool on = [] {
    const char *e = std::getenv("PURLIN_COOPERATIVE");
    return !(e && e[0] == '0');
  }();
  return on;
}

/// Threads per lane: PURLIN_LANE_THREADS where set (a multiple of 32 up to
/// `most`, the kernel's launch bound; for measuring what the lane's size
/// costs), else what the runtime asks for the launch (exec::Shared's
/// laneThreads, likewise), else `most`.
inline int laneThreads(int most, int hint = 0) {
  static const int asked = [] {
    const char *e = std::getenv("PURLIN_LANE_THREADS");
    return e ? std::atoi(e) : 0;
  }();
  auto fits = [most](int t) { return t >= 32 && t <= most && t % 32 == 0; };
  return fits(asked) ? asked : fits(hint) ? hint : most;
}

/// How many blocks of `kernel` with `threads` each fit on the current GPU
/// at once; asked once per (device, kernel, threads), as the occupancy
/// queries cost more than a launch.
inline int64_t residentBlocks(const void *kernel, int threads) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void *, int>, int64_t> known;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lk(mu);
  auto it = known.find({dev, kernel, threads});
  if (it != known.end())
    return it->second;
  int sms = 0, per = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, 0);
  return known[{dev, kernel, threads}] = (int64_t)per * sms;
}

/// Whether `kernel` with `threads` a block runs its (L, n) grid as n
/// clusters of L lanes at once (cudaOccupancyMaxActiveClusters), asked once
/// per (device, kernel, threads, L); false where clusters are refused (a GPU
/// before sm_90) or a launch with them failed (forget()).
inline bool clustersFit(const void *kernel, int threads, int L, int n,
                        bool forget = false) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void *, int, int>, int64_t> known;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lk(mu);
  const auto key = std::make_tuple(dev, kernel, threads, L);
  if (forget)
    return known[key] = 0, false;
  auto it = known.find(key);
  if (it == known.end()) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)L, (unsigned)n, 1);
    cfg.blockDim = dim3(threads, 1, 1);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)L;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int most = 0;
    if (cudaOccupancyMaxActiveClusters(&most, kernel, &cfg) != cudaSuccess) {
      cudaGetLastError();
      most = 0;
    }
    it = known.emplace(key, most).first;
  }
  return it->second >= n;
}

/// PURLIN_CLUSTER_LOG=1: one line on stderr for each kernel's first launch
/// that asks for clusters, saying whether it got them.
inline bool clusterLog(const void *kernel) {
  static const bool on = [] {
    const char *e = std::getenv("PURLIN_CLUSTER_LOG");
    return e && e[0] == '1';
  }();
  if (!on)
    return false;
  static std::mutex mu;
  static std::map<const void *, int> seen;
  std::lock_guard<std::mutex> lk(mu);
  return seen[kernel]++ == 0;
}

/// Launches `kernel(S, first)` (a __global__ function, or a cudaKernel_t
/// cast to a pointer) on grid (S->L, n) with `threads` per block on
/// `stream`; with `slot`, a slot kernel: `kernel(slot, first)` (aux.h's
/// SharedSlot in device memory, holding what S holds). Returns a
/// cudaError_t.
inline int launchPlan(const void *kernel, const exec::Shared *S, int first,
                      int n, void *stream, int threads,
                      const void *slot = nullptr) {
  if (n <= 0 || S->L <= 0)
    return (int)cudaSuccess;
  if (!cooperativeLaunch() && residentBlocks(kernel, threads) < (int64_t)S->L * n)
    return (int)cudaErrorCooperativeLaunchTooLarge;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)S->L, (unsigned)n, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = (cudaStream_t)stream;
  // The rank's lanes as one cluster where the runtime asks (S->clusterLanes)
  // and they fit; if such a launch fails, once without.
  const int cl = S->clusterLanes > 1 && S->clusterLanes == S->L &&
                         clustersFit(kernel, threads, S->L, n)
                     ? S->L
                     : 0;
  cudaLaunchAttribute attr[2];
  int na = 0;
  if (cooperativeLaunch()) {
    attr[na].id = cudaLaunchAttributeCooperative;
    attr[na++].val.cooperative = 1;
  }
  if (cl) {
    attr[na].id = cudaLaunchAttributeClusterDimension;
    attr[na].val.clusterDim.x = (unsigned)cl;
    attr[na].val.clusterDim.y = 1;
    attr[na++].val.clusterDim.z = 1;
  }
  cfg.attrs = attr;
  cfg.numAttrs = na;
  void *args[] = {slot ? (void *)&slot : (void *)const_cast<exec::Shared *>(S),
                  &first};
  cudaError_t e = cudaLaunchKernelExC(&cfg, kernel, args);
  if (S->clusterLanes > 1 && clusterLog(kernel))
    std::fprintf(stderr,
                 "purlin: kernel %p, %d lanes x %d ranks, %d threads: %s\n",
                 kernel, S->L, n, threads,
                 !cl ? "no cluster (it does not fit, or an earlier launch failed)"
                 : e == cudaSuccess ? "launched as clusters"
                                    : cudaGetErrorString(e));
  if (e != cudaSuccess && cl) {
    cudaGetLastError();
    clustersFit(kernel, threads, S->L, n, true);
    cfg.numAttrs = na - 1;
    e = cudaLaunchKernelExC(&cfg, kernel, args);
  }
  return (int)e;
}

} // namespace sm
} // namespace purlin
