// How a TMA target's kernel is launched: as the SM atoms' (common/sm/
// launch.h: grid lanes x local ranks, cooperative), with dynamic shared
// memory for the lane's bulk stages (tma/target.cuh). Host code: the
// generated entries launch with it, and the CUDA runtime's tma datapath
// the kernels it compiled at first use (runtime/cuda/tma).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "common/sm/launch.h"

namespace purlin {
namespace tma {

/// Bytes of stages a lane asks by default: 192 KiB, so that with the SM
/// atoms' ~24 KiB of static shared memory one lane fills an H100/H200 SM
/// (227 KiB a block): 3 of its 4 stages, 144 KiB, are loads in flight
/// while one is stored.
constexpr size_t kDefaultSmem = 192 * 1024;

/// PURLIN_TMA_SMEM: the stages' bytes a lane asks (a K suffix: KiB; 0: no
/// stages, every move on the SM atoms, for measuring the bulk path
/// against them in one build); else kDefaultSmem.
inline size_t askedSmem() {
  static const size_t asked = [] {
    const char *e = std::getenv("PURLIN_TMA_SMEM");
    if (!e || !*e)
      return kDefaultSmem;
    char *end = nullptr;
    size_t v = (size_t)std::strtoull(e, &end, 10);
    if (end && (*end == 'K' || *end == 'k'))
      v *= 1024;
    return v;
  }();
  return asked;
}

/// The dynamic shared memory `kernel` launches with on the current GPU:
/// what is asked, at most what a block may have beside the kernel's static
/// shared memory, in whole KiB; set as the kernel's maximum once per
/// (device, kernel) (above 48 KiB a kernel must opt in). 0 when nothing is
/// asked (the kernel then moves everything on the SM atoms). A cudaError_t
/// in `err` when a query or setting the attribute fails.
inline size_t stageBytes(const void *kernel, int &err) {
  static std::mutex mu;
  static std::map<std::pair<int, const void *>, size_t> known;
  err = (int)cudaSuccess;
  const size_t asked = askedSmem();
  if (asked == 0)
    return 0;
  int dev = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lk(mu);
  auto it = known.find({dev, kernel});
  if (it != known.end())
    return it->second;
  int optin = 0;
  cudaFuncAttributes fa;
  cudaError_t e = cudaDeviceGetAttribute(
      &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  if (e == cudaSuccess)
    e = cudaFuncGetAttributes(&fa, kernel);
  if (e != cudaSuccess) {
    err = (int)e;
    return 0;
  }
  size_t room = (size_t)optin > fa.sharedSizeBytes
                    ? (size_t)optin - fa.sharedSizeBytes
                    : 0;
  const size_t smem = (asked < room ? asked : room) / 1024 * 1024;
  if (smem > 0) {
    // (A cudaKernel_t of a first-use compile takes it as a function does.)
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem);
    if (e != cudaSuccess) {
      // Not cached: the launch fails with CUDA's reason rather than running
      // without its stages unnoticed.
      err = (int)e;
      return 0;
    }
  }
  return known[{dev, kernel}] = smem;
}

/// The stages of one block when `blocks` must be resident at once (a
/// cooperative launch): `smem`, or less where more than one block per SM
/// is needed (more ranks x lanes than SMs), so that the grid fits wherever
/// the SM atoms' would; 0 (the SM atoms alone) below 8 KiB. Asked once per
/// (device, kernel, blocks, smem): a launch's host time counts.
inline size_t fitStages(const void *kernel, size_t smem, int64_t blocks) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void *, int64_t, size_t>, size_t> known;
  int dev = 0, sms = 0, perSm = 0;
  cudaGetDevice(&dev);
  std::lock_guard<std::mutex> lk(mu);
  const auto key = std::make_tuple(dev, kernel, blocks, smem);
  auto it = known.find(key);
  if (it != known.end())
    return it->second;
  cudaFuncAttributes fa;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&perSm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                             dev) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, kernel) != cudaSuccess || sms <= 0) {
    cudaGetLastError();
    return known[key] = smem;
  }
  const int64_t each = (blocks + sms - 1) / sms; // blocks an SM must hold
  if (each <= 1)
    return known[key] = smem;
  // 1 KiB of every block's shared memory is the system's.
  const int64_t room = (int64_t)perSm / each - 1024 - (int64_t)fa.sharedSizeBytes;
  const size_t fit = room > 0 ? (size_t)room / 1024 * 1024 : 0;
  return known[key] = fit >= 8 * 1024 ? (fit < smem ? fit : smem) : 0;
}

/// launchPlan (common/sm/launch.h) with the kernel's stages.
inline int launchPlan(const void *kernel, const exec::Shared *S, int first,
                      int n, void *stream, int threads,
                      const void *slot = nullptr, bool independent = false) {
  int err = 0;
  size_t smem = stageBytes(kernel, err);
  if (err != (int)cudaSuccess)
    return err;
  if (smem > 0)
    smem = fitStages(kernel, smem, (int64_t)exec::liveLanesOf(*S) * n);
  return sm::launchPlan(kernel, S, first, n, stream, threads, slot, smem,
                       independent);
}

} // namespace tma
} // namespace purlin
