// How a TMA target's kernel is launched: as the SM atoms' (common/sm/
// launch.h: grid lanes x local ranks, cooperative), with dynamic shared
// memory for the lane's bulk stages (tma/target.cuh). Host code: the
// generated entries launch with it, and the CUDA runtime's tma datapath
// the kernels it compiled at first use (runtime/cuda/tma).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>

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

/// The stages' bytes `kernel` launches with on the current GPU
/// (sm::optInSmem of askedSmem()); 0 when nothing is asked (the kernel then
/// moves everything on the SM atoms). A cudaError_t in `err` when a query
/// or setting the attribute fails.
inline size_t stageBytes(const void *kernel, int &err) {
  err = (int)cudaSuccess;
  const size_t asked = askedSmem();
  return asked == 0 ? 0 : sm::optInSmem(kernel, asked, err);
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
    smem = sm::fitSmem(kernel, smem, (int64_t)exec::liveLanesOf(*S) * n);
  return sm::launchPlan(kernel, S, first, n, stream, threads, slot, smem,
                       independent);
}

} // namespace tma
} // namespace purlin
