// Signal and wait atoms on the SM datapath: release/acquire at system scope
// (peer GPUs over NVLink, or ranks of one GPU), a wait that gives up after a
// timeout read from the plan's aux words, and the error report.
#pragma once

#include <stdint.h>

#include "common/sm/aux.h"

namespace purlin {
namespace sm {

__device__ __forceinline__ void storeReleaseSys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v)
               : "memory");
}
__device__ __forceinline__ uint64_t loadAcquireSys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];"
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

__device__ __forceinline__ void fenceAcqRelSys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/// Signal: called by the lane leader after the lane's barrier. `fence`
/// (the first signal after a barrier) orders the whole lane's writes,
/// ordered before the barrier, before the words at system scope; each store
/// is a release. One fence per notify, not per peer: system-scope fences
/// cost microseconds.
__device__ __forceinline__ void signalWord(uint64_t *w, uint64_t v,
                                           bool fence) {
  if (fence)
    fenceAcqRelSys();
  storeReleaseSys(w, v);
}

/// Wait until *w >= v (signal words are monotonic). Acquire, so that what
/// the signaller wrote before is visible to this thread; the lane's barrier
/// after it extends that to the lane. Returns false after `timeoutNs`.
__device__ __forceinline__ bool waitWord(const uint64_t *w, uint64_t v,
                                         const uint64_t *aux) {
  if (loadAcquireSys(w) >= v)
    return true;
  uint64_t timeout = aux[1] ? aux[1] : kDefaultTimeoutNs;
  uint64_t start = globalTimerNs();
  for (uint32_t i = 1;; ++i) {
    if (loadAcquireSys(w) >= v)
      return true;
    if ((i & 1023) == 0 && globalTimerNs() - start > timeout)
      return false;
  }
}

/// Records the first error of the communicator (mapped host memory).
__device__ __forceinline__ void reportError(const uint64_t *aux,
                                            uint32_t code) {
  uint32_t *flag = (uint32_t *)(uintptr_t)aux[0];
  if (flag) {
    atomicCAS_system(flag, 0u, code);
    __threadfence_system();
  }
}

} // namespace sm
} // namespace purlin
