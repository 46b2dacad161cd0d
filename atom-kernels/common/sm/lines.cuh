// Flagged lines: the low-latency protocol of the SM datapath. A staged
// 16-byte line holds 8 data bytes and, twice, a 32-bit flag (the low half
// of the launch's epoch): {data 0-3, flag, data 4-7, flag}. A writer stores
// the line in one 16-byte store; each {4 data bytes, flag} half is an
// aligned 8-byte unit, so a reader that sees both flags equal to its epoch
// has both halves of this launch's data. No fence and no separate signal:
// the flag travels with the data. (The host target keeps the same format
// with release/acquire flags: atom-kernels/host/target.h.)
//
// Stale lines never match: a slot's lines carry an older epoch, and a plan
// with flagged lines gets scratch of its own, zeroed at allocation
// (purlin_plan_info::exclusive_scratch). A flag repeats after 2^32 launches
// of one plan.
#pragma once

#include <stdint.h>

#include "common/exec.h"
#include "common/sm/aux.h"
#include "common/sm/elem.cuh"
#include "common/sm/move.cuh"
#include "common/sm/sync.cuh"

namespace purlin {
namespace sm {

constexpr int kLineBytes = 16, kLineData = 8;

__device__ __forceinline__ void storeLine(char *line, uint64_t data,
                                          uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(line),
               "r"((uint32_t)data), "r"(flag), "r"((uint32_t)(data >> 32)),
               "r"(flag)
               : "memory");
}

/// Polls the line until both flags show `flag`; false after the timeout.
__device__ __forceinline__ bool loadLine(const char *line, uint32_t flag,
                                         uint64_t &data, uint64_t timeout) {
  uint64_t start = 0;
  for (uint32_t i = 0;; ++i) {
    uint32_t d0, f0, d1, f1;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1)
                 : "l"(line)
                 : "memory");
    if (f0 == flag && f1 == flag) {
      data = (uint64_t)d0 | (uint64_t)d1 << 32;
      return true;
    }
    if (i == 0)
      start = globalTimerNs();
    else if ((i & 1023) == 0 && globalTimerNs() - start > timeout)
      return false;
  }
}

/// Names [a, b) of a move with a flagged side (m.ll), one line per thread
/// at a time. Push (kLinesDst): gather the line's names from the source,
/// store the line. Consume (kLinesSrc): poll every source's line, combine
/// the line's names in source order, write them.
template <class E, int OP>
__device__ __noinline__ bool moveLinesOp(const exec::Move &m, int64_t a,
                                         int64_t b, int tid, int nthr,
                                         uint32_t flag, uint64_t timeout) {
  using Raw = typename E::Raw;
  constexpr int es = sizeof(Raw), epl = kLineData / es;
  const exec::Box &x = m.box;
  const int64_t j0 = a / epl, j1 = (b + epl - 1) / epl;
  for (int64_t j = j0 + tid; j < j1; j += nthr) {
    const int64_t t0 = j * epl, t1 = t0 + epl < b ? t0 + epl : b;
    if (m.ll == exec::kLinesDst) {
      uint64_t data = 0;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t so = m.srcFlat ? t : nameOffset(x, t, true);
        Raw v = *(const Raw *)(m.src[0] + so * es);
        uint64_t bits = 0;
        memcpy(&bits, &v, es);
        data |= bits << (8 * es * (t - t0));
      }
      storeLine(m.dst[0] + j * kLineBytes, data, flag);
      continue;
    }
    if constexpr (OP == exec::kCopy) {
      // One contribution, copied bit for bit.
      uint64_t data;
      if (!loadLine(m.src[0] + j * kLineBytes, flag, data, timeout))
        return false;
      for (int64_t t = t0; t < t1; ++t) {
        Raw out;
        const uint64_t bits = data >> (8 * es * (t - t0));
        memcpy(&out, &bits, es);
        const int64_t dq = m.dstFlat ? t : nameOffset(x, t, false);
        for (int d = 0; d < m.ndst; ++d)
          *(Raw *)(m.dst[d] + dq * es) = out;
      }
    } else {
      typename E::Acc acc[epl];
      for (int s = 0; s < m.nsrc; ++s) {
        uint64_t data;
        if (!loadLine(m.src[s] + j * kLineBytes, flag, data, timeout))
          return false;
#pragma unroll
        for (int e = 0; e < epl; ++e) {
          Raw v;
          const uint64_t bits = data >> (8 * es * e);
          memcpy(&v, &bits, es);
          acc[e] = s == 0 ? E::widen(v) : combine<E, OP>(acc[e], E::widen(v));
        }
      }
      for (int64_t t = t0; t < t1; ++t) {
        const Raw out = E::narrow(finish<E, OP>(acc[t - t0], m.nsrc));
        const int64_t dq = m.dstFlat ? t : nameOffset(x, t, false);
        for (int d = 0; d < m.ndst; ++d)
          *(Raw *)(m.dst[d] + dq * es) = out;
      }
    }
  }
  return true;
}

/// The flagged move with its op dispatched (a copy, or one contribution,
/// takes the copy path). `ok` false: the op cannot run on this element type.
template <class E>
__device__ __forceinline__ bool moveLines(const exec::Move &m, int64_t a,
                                          int64_t b, int tid, int nthr,
                                          uint32_t flag, uint64_t timeout,
                                          bool &ok) {
  ok = true;
  if (m.op == exec::kCopy || m.nsrc == 1 || m.ll == exec::kLinesDst)
    return moveLinesOp<E, exec::kCopy>(m, a, b, tid, nthr, flag, timeout);
  if constexpr (E::kCanReduce) {
    switch (m.op) {
    case exec::kSum:
      return moveLinesOp<E, exec::kSum>(m, a, b, tid, nthr, flag, timeout);
    case exec::kProd:
      return moveLinesOp<E, exec::kProd>(m, a, b, tid, nthr, flag, timeout);
    case exec::kMin:
      return moveLinesOp<E, exec::kMin>(m, a, b, tid, nthr, flag, timeout);
    case exec::kMax:
      return moveLinesOp<E, exec::kMax>(m, a, b, tid, nthr, flag, timeout);
    case exec::kAvg:
      return moveLinesOp<E, exec::kAvg>(m, a, b, tid, nthr, flag, timeout);
    }
  }
  ok = false;
  return true;
}

} // namespace sm
} // namespace purlin
