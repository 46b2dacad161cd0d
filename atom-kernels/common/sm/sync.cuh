// Signal and wait atoms on the SM datapath, and the error report.
//
// Ordering: a notify is one release pattern (fence.acq_rel, then relaxed
// stores of the signal words to every peer); a wait polls relaxed and the
// lane's following barrierOr starts with one fence.acq_rel (an acquire
// pattern) before it publishes the result to the lane. Release/acquire
// stores and loads per peer would each carry a fence: measured on the H200
// at about 1 us each (docs/performance.md), so one fence per step instead.
// Scope: system (peer GPUs), or gpu when every rank of the communicator is
// on one GPU (aux word 2, set by the runtime).
#pragma once

#include <stdint.h>

#include "common/sm/aux.h"

namespace purlin {
namespace sm {

__device__ __forceinline__ void fenceAcqRel(bool gpu) {
  if (gpu)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  else
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}
__device__ __forceinline__ void storeRelaxed(uint64_t *p, uint64_t v,
                                             bool gpu) {
  if (gpu)
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                 : "memory");
  else
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                 : "memory");
}
__device__ __forceinline__ uint64_t loadRelaxed(const uint64_t *p, bool gpu) {
  uint64_t v;
  if (gpu)
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
  else
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
  return v;
}
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Signal: called by the lane leader after the lane's barrier; `fence` on
/// the first signal after a barrier (the release of the lane's writes).
__device__ __forceinline__ void signalWord(uint64_t *w, uint64_t v, bool fence,
                                           bool gpu) {
  if (fence)
    fenceAcqRel(gpu);
  storeRelaxed(w, v, gpu);
}

/// A signal word's value `x` against the awaited `v` (signalValue): 1 when
/// its epoch is v's with v's fingerprint, or later (epochs are monotonic; a
/// later launch's fingerprint may differ); -1 when it is v's epoch with
/// another fingerprint; 0 when earlier.
__device__ __forceinline__ int signalState(uint64_t x, uint64_t v) {
  const uint64_t e = x & kEpochMask, ve = v & kEpochMask;
  if (e > ve)
    return 1;
  if (e < ve)
    return 0;
  return (x >> kEpochBits) == (v >> kEpochBits) ? 1 : -1;
}

/// Polls the word (relaxed) until state(word) is not 0, and returns it; 0
/// after the timeout (aux[1] ns, or the default). The caller fences before
/// use.
template <class State>
__device__ __forceinline__ int pollWord(const uint64_t *w, const uint64_t *aux,
                                        bool gpu, State state) {
  int s = state(loadRelaxed(w, gpu));
  if (s)
    return s;
  const uint64_t timeout = aux[1] ? aux[1] : kDefaultTimeoutNs;
  const uint64_t start = globalTimerNs();
  for (uint32_t i = 1;; ++i) {
    if ((s = state(loadRelaxed(w, gpu))))
      return s;
    if ((i & 1023) == 0 && globalTimerNs() - start > timeout)
      return 0;
  }
}

/// Polls until the word reaches v (signalState); 1 then, 0 after the
/// timeout, -1 on a fingerprint mismatch. The caller fences before use.
__device__ __forceinline__ int waitWord(const uint64_t *w, uint64_t v,
                                        const uint64_t *aux, bool gpu) {
  return pollWord(w, aux, gpu, [v](uint64_t x) { return signalState(x, v); });
}

/// Records the first error of the communicator (mapped host memory).
__device__ __forceinline__ void reportError(const uint64_t *aux,
                                            uint32_t code) {
  uint32_t *flag = (uint32_t *)(uintptr_t)aux[0];
  if (flag) {
    // The first error stays, except a not-registered report (a launch that
    // did nothing: not sticky), which a later error replaces.
    const uint32_t old = atomicCAS_system(flag, 0u, code);
    if ((old & 0xff) == kErrNotRegistered && (code & 0xff) != kErrNotRegistered)
      atomicCAS_system(flag, old, code);
    __threadfence_system();
  }
}

} // namespace sm
} // namespace purlin
