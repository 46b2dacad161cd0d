// How a plan's kernel is launched on the SM datapath: grid (lanes, local
// ranks), one thread block per lane, every block resident at once (ranks
// of one GPU wait on each other), so the launch is cooperative, which fails
// instead of deadlocking when they do not fit; it works under stream
// capture. Host code (a host compiler takes it): the generated entries
// (target.cuh) launch their kernels with it, and the CUDA runtime the
// kernels it compiled at first use (runtime/cuda/sm).
#pragma once

#include <cuda_runtime.h>

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

/// How many blocks of `kernel` with `threads` each (and `smem` bytes of
/// dynamic shared memory) fit on the current GPU at once; asked once per
/// (device, kernel, threads, smem), as the occupancy queries cost more than
/// a launch.
inline int64_t residentBlocks(const void *kernel, int threads,
                              size_t smem = 0) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void *, int, size_t>, int64_t> known;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lk(mu);
  auto it = known.find({dev, kernel, threads, smem});
  if (it != known.end())
    return it->second;
  int sms = 0, per = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, threads, smem);
  return known[{dev, kernel, threads, smem}] = (int64_t)per * sms;
}

/// Launches `kernel(S, first)` (a __global__ function, or a cudaKernel_t
/// cast to a pointer) on grid (exec::liveLanesOf(*S), n) with `threads` per block on
/// `stream`; with `slot`, a slot kernel: `kernel(slot, first)` (aux.h's
/// SharedSlot in device memory, holding what S holds). `smem`: bytes of
/// dynamic shared memory per block (the SM atoms use none; the TMA atoms'
/// stages, atom-kernels/tma). `independent`: no block of the launch waits
/// for another (a plan without inner syncs whose ranks are all in this
/// launch: its boundary syncs are skipped), so its blocks need not be
/// resident at once: where they do not fit, it is launched plainly rather
/// than refused (more lanes than SMs, e.g. a lane a row). Returns a
/// cudaError_t.
inline int launchPlan(const void *kernel, const exec::Shared *S, int first,
                      int n, void *stream, int threads,
                      const void *slot = nullptr, size_t smem = 0,
                      bool independent = false) {
  const int lanes = exec::liveLanesOf(*S); // S->L, or fewer (Shared::liveLanes)
  if (n <= 0 || lanes <= 0)
    return (int)cudaSuccess;
  // Asked before the launch, not after a refused one: a refused launch
  // inside a stream capture would end the capture.
  const bool fits = (!independent && cooperativeLaunch()) ||
                    residentBlocks(kernel, threads, smem) >= (int64_t)lanes * n;
  if (!fits && !independent)
    return (int)cudaErrorCooperativeLaunchTooLarge;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)lanes, (unsigned)n, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = (cudaStream_t)stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cooperativeLaunch() && fits ? 1 : 0;
  void *args[] = {slot ? (void *)&slot : (void *)const_cast<exec::Shared *>(S),
                  &first};
  return (int)cudaLaunchKernelExC(&cfg, kernel, args);
}

} // namespace sm
} // namespace purlin
