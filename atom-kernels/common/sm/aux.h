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

/// Error word values: 0 none; else CODE | rank << 8 | lane << 20, CODE
/// kErrTimeout (a peer never arrived), kErrMismatch (a peer's signal of
/// this launch carries another fingerprint: it called with other
/// arguments) or kErrNotRegistered (a launch read from a SharedSlot that
/// is not ready: a CUDA graph replayed before its buffers were registered;
/// the launch did nothing, so the runtime reports it once, not sticky).
constexpr uint32_t kErrTimeout = 1;
constexpr uint32_t kErrMismatch = 2;
constexpr uint32_t kErrNotRegistered = 3;

/// A launch's shared state in device memory: a CUDA graph captures a launch
/// whose buffers are not registered yet with a pointer to such a slot (the
/// slot kernels of target.cuh), and the runtime writes the peers' buffer
/// addresses into S and sets `ready` once they are registered
/// (purlinCommRegisterGraphBuffers). A kernel that finds `ready` 0 records
/// kErrNotRegistered and returns without touching memory.
struct SharedSlot {
  uint64_t ready;
  uint64_t reserved;
  exec::Shared S;
};

/// Signal words: the launch's epoch in the low kEpochBits bits, the low
/// 24 bits of its fingerprint (exec::Shared::fingerprint) above them.
constexpr int kEpochBits = 40;
constexpr uint64_t kEpochMask = (1ull << kEpochBits) - 1;
PURLIN_HD uint64_t signalValue(uint64_t epoch, uint32_t fingerprint) {
  return (epoch & kEpochMask) | (uint64_t)(fingerprint & 0xffffff) << kEpochBits;
}

/// PURLIN_LL_FLAG_EPOCH32=1 (a measurement build, tools/gpu-datapaths.sh
/// DP_LL_VARIANT): llFlag is the flag before the fingerprint (ca9ceb1), the
/// epoch's low 32 bits; a peer's other arguments go unnoticed.
#ifndef PURLIN_LL_FLAG_EPOCH32
#define PURLIN_LL_FLAG_EPOCH32 0
#endif
/// The LL line flag of a lane's signal value v (lines.cuh): the epoch's
/// low 24 bits, then 7 bits folded from the fingerprint's 24 and a top bit
/// set, so that no flag is 0 (zeroed scratch) and a peer that called with
/// other arguments writes other flags (one pair of fingerprints in 128
/// folds alike). A flag repeats after 2^24 launches of a plan.
PURLIN_HD uint32_t llFlag(uint64_t v) {
#if PURLIN_LL_FLAG_EPOCH32
  return (uint32_t)v;
#else
  const uint32_t fp = (uint32_t)(v >> kEpochBits) & 0xffffffu;
  const uint32_t f7 = (fp ^ fp >> 7 ^ fp >> 14 ^ fp >> 21) & 0x7fu;
  return ((uint32_t)v & 0xffffffu) | (0x80u | f7) << 24;
#endif
}
/// Whether a line whose two flags read a and b (not `flag`, the lane's
/// llFlag) is this launch's from a peer of another fingerprint: both
/// alike, a written flag (top bit set: not the zeroed scratch, whose epoch
/// bits match an epoch that is 0 mod 2^24), with flag's epoch bits and
/// other fingerprint bits.
PURLIN_HD bool llFlagMismatch(uint32_t a, uint32_t b, uint32_t flag) {
  return a == b && a != flag && (a >> 31) != 0 && ((a ^ flag) & 0xffffffu) == 0;
}

/// Words of one rank's signal memory for one plan, aux words included.
inline int64_t planSignalWords(int nsignals, int R, int L, int K) {
  return exec::signalWords(nsignals, R, L, K) + kAuxWords;
}

PURLIN_HD uint64_t *auxWords(const exec::Shared &S, int rank) {
  return S.signals[rank] + (int64_t)S.nsignals * S.R * S.L * S.K + S.L;
}

} // namespace sm
} // namespace purlin
