// Auxiliary words that follow a plan's signal words in every rank's signal
// memory (exec::signalWords), shared by the SM targets and the CUDA runtime.
// Host and device compilable.
//
//   aux[0]  address of the communicator's error word (mapped host memory,
//           so the host reads it without synchronizing); 0: none.
//   aux[1]  wait timeout in nanoseconds (0: the default below).
//   aux[2]  1 when every rank is on one GPU: signals need only gpu scope.
#pragma once

#include "purlin/spec/Exec.h"

namespace purlin {
namespace sm {

constexpr int kAuxWords = 3;
constexpr uint64_t kDefaultTimeoutNs = 10ull * 1000 * 1000 * 1000; // 10 s

/// Error word values: 0 none; else kErrTimeout | rank << 8 | lane << 20.
constexpr uint32_t kErrTimeout = 1;

/// Words of one rank's signal memory for one plan, aux words included.
inline int64_t planSignalWords(int nsignals, int R, int L, int K) {
  return exec::signalWords(nsignals, R, L, K) + kAuxWords;
}

PURLIN_HD uint64_t *auxWords(const exec::Shared &S, int rank) {
  return S.signals[rank] + (int64_t)S.nsignals * S.R * S.L * S.K + S.L;
}

} // namespace sm
} // namespace purlin
