// purlin-latency-probe: where the time of a small all-reduce goes. Times, under
// CUDA-graph replay on 8 virtual ranks (bf16, 8 KiB per rank), plans that do
// part of the direct all-reduce: nothing (launch + epoch), the two flag
// barriers alone, the consume alone (racy reads, timing only), the whole
// plan; each with 1 and 4 lanes. Differences place the time.
#include "purlin/spec/Exec.h"
#include "purlin/spec/Entry.h"
#include "sm90/target.cuh"
#include "purlin/purlin.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace probe {
using namespace purlin::exec;
struct Clause0 {
  static constexpr int kIndex = 0, kDims = 1;
  static constexpr int kFromRole = kEvery, kFromDim = -1;
  static constexpr int kToRole = kEvery, kToDim = -1;
  static constexpr int kFromBuf = 0, kToBuf = 1, kOp = kOpParam;
  PURLIN_HD static int64_t fromFixed(const Params &) { return 0; }
  PURLIN_HD static int64_t toFixed(const Params &) { return 0; }
  PURLIN_HD static int64_t extent(int d, const int64_t *, const Params &P) {
    return d == 0 ? P.s[1] : 0;
  }
  PURLIN_HD static int64_t fromIndex(const int64_t *c, const Params &) { return c[0]; }
  PURLIN_HD static int64_t toIndex(const int64_t *c, const Params &) { return c[0]; }
};
// Plans that keep epochs (bumped at kernel start).
struct Keeps {
  static constexpr bool kInnerSyncs = true;
  static constexpr bool kLines = false; // no flagged-line moves
};
struct Empty : Keeps {
  template <class T> __device__ static void run(T &) {}
};
struct EmptyNoEpoch {
  static constexpr bool kInnerSyncs = false;
  static constexpr bool kLines = false;
  template <class T> __device__ static void run(T &) {}
};
struct Sync : Keeps {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0);
    wait<Clause0>(t, 1, kPeersDsts, 0);
  }
};
struct Consume : Keeps {
  template <class T> __device__ static void run(T &t) {
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
  }
};
// The direct plan as purlinc emits it: its ready/done barriers are boundary
// syncs, skipped here because all 8 ranks run in one launch.
struct DirectBoundary {
  static constexpr bool kInnerSyncs = false; // as purlinc emits it
  static constexpr bool kLines = false;
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0, kBoundary);
    wait<Clause0>(t, 0, kPeersSrcs, 0, kBoundary);
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0, kBoundary);
    wait<Clause0>(t, 1, kPeersDsts, 0, kBoundary);
  }
};
// The consume's Move built by the lane leader (box, split, 8 sources) but
// nothing moved: the serial setup alone.
struct BuildOnly : Keeps {
  template <class T> __device__ static void run(T &t) {
    const Shared &S = t.shared();
    const int r = t.rank();
    laneMoves(t, 1, [&](int, Move &m) {
      if (!makeBox<Clause0>(S.P, 0, r, m.box))
        return false;
      splitRange(m.box.n, (int64_t)S.K * S.L, t.lane(), t.vecElems(), m.lo, m.hi);
      m.op = S.op;
      m.ndst = 1;
      m.dst[0] = (char *)S.buf[r][1];
      m.nsrc = S.R;
      for (int p = 0; p < S.R; ++p)
        m.src[p] = (const char *)S.buf[p][0];
      return false; // built, not moved
    });
  }
};
// A Move set up without the generic box code (one contiguous range, 32-bit
// split): this lane's part of the 8 inputs into its rank's output.
template <class T> __device__ void simpleMove(T &t, Move &m) {
  const Shared &S = t.shared();
  const int r = t.rank(), n = (int)S.P.s[1], L = S.L, l = t.lane();
  m.box.nfree = 1;
  m.box.n = m.box.ext[0] = n;
  m.box.sbase = m.box.dbase = 0;
  m.box.sstr[0] = m.box.dstr[0] = 1;
  m.lo = (int64_t)(n / L * l);
  m.hi = l + 1 == L ? n : (int64_t)(n / L * (l + 1));
  m.op = S.op;
  m.ndst = 1;
  m.dst[0] = (char *)S.buf[r][1];
  m.nsrc = S.R;
  for (int p = 0; p < S.R; ++p)
    m.src[p] = (const char *)S.buf[p][0];
}
// That Move, then the datapath: what the atoms cost.
struct MoveOnly : Keeps {
  template <class T> __device__ static void run(T &t) {
    laneMoves(t, 1, [&](int, Move &m) {
      simpleMove(t, m);
      return true;
    });
  }
};
// The same Move, entering the datapath lower down: at contig (alignment
// checks, head/tail) and at the vector loop itself.
template <int Entry> struct MoveAt : Keeps {
  template <class T> __device__ static void run(T &t) {
    Move &m = *t.laneMoves();
    if (t.leader()) {
      m.reset();
      simpleMove(t, m);
    }
    t.barrier();
    using E = purlin::sm::ElemBF16;
    if (Entry == 0)
      purlin::sm::contig<E, kSum>(m, m.lo * 2, m.lo * 2, m.hi - m.lo,
                                  threadIdx.x, blockDim.x);
    else
      purlin::sm::contigVecFast<E, kSum, 1>(m, m.lo * 2, m.lo * 2,
                                            (m.hi - m.lo) / 8, threadIdx.x,
                                            blockDim.x);
    t.barrier();
  }
};
// The floor: a hand-written one-shot sum, one 16-byte vector of 8 bf16 per
// thread from each of the 8 ranks, fp32 accumulation; no Move at all.
struct HandWritten : Keeps {
  template <class T> __device__ static void run(T &t) {
    const Shared &S = t.shared();
    const int r = t.rank();
    const int64_t nvec = S.P.s[1] / 8;
    for (int64_t v = (int64_t)t.lane() * blockDim.x + threadIdx.x; v < nvec;
         v += (int64_t)S.L * blockDim.x) {
      uint4 x[8];
#pragma unroll
      for (int p = 0; p < 8; ++p)
        x[p] = ((const uint4 *)S.buf[p][0])[v];
      float acc[8];
#pragma unroll
      for (int k = 0; k < 8; ++k)
        acc[k] = 0.f;
#pragma unroll
      for (int p = 0; p < 8; ++p) {
        const __nv_bfloat16 *e = (const __nv_bfloat16 *)&x[p];
#pragma unroll
        for (int k = 0; k < 8; ++k)
          acc[k] += __bfloat162float(e[k]);
      }
      uint4 o;
      __nv_bfloat16 *oe = (__nv_bfloat16 *)&o;
#pragma unroll
      for (int k = 0; k < 8; ++k)
        oe[k] = __float2bfloat16(acc[k]);
      ((uint4 *)S.buf[r][1])[v] = o;
    }
  }
};
struct Unused : Keeps {
  template <class T> __device__ static void run(T &t) {
    Sync::run(t); // not the same order; only the sum matters here
  }
};
struct Direct : Keeps {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0);
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0);
    wait<Clause0>(t, 1, kPeersDsts, 0);
  }
};
// One barrier of each kind: per lane (lane l of every peer), and over all
// lanes (every lane of every peer: what a scratch copy's `ready` needs).
struct Barrier1 : Keeps {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0);
  }
};
struct BarrierAll : Keeps {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0, kAllLanes);
  }
};
// The all-lanes wait polled differently: Mode 0 with a pause between
// polls, Mode 1 by the lane's first warp alone.
template <int Mode> struct BarrierAllPoll : Keeps {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    const Shared &S = t.shared();
    const int words = S.R * S.L;
    const int step = Mode == 1 ? 32 : t.threads();
    if (Mode == 0 || t.thread() < 32)
      for (int w = t.thread(); w < words; w += step) {
        const uint64_t *p = signalWord(S, t.rank(), 0, w / S.L, w % S.L, 0);
        while (purlin::sm::loadRelaxed(p, true) < t.epoch())
          if (Mode == 0)
            __nanosleep(128);
      }
    purlin::sm::fenceAcqRel(true);
    __syncthreads();
  }
};
// What in place costs with a scratch copy (direct_copy in one launch): the
// copy, the all-lanes `ready`, the consume from the copies.
struct DirectCopy : Keeps {
  template <class T> __device__ static void run(T &t) {
    copyLocalRange(t, Clause0::kFromBuf, t.shared().P.s[1], 0);
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0, kAllLanes);
    consume<Clause0>(t, kSelMine, kSrcScratch, kDstSelf, 0);
  }
};
// The low-latency protocol with one chunk: push of flagged lines, then the
// consume that polls them (no barrier in one launch); and the push alone.
struct LL : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    stagePush<Clause0>(t, 0, kFlagged);
    consume<Clause0>(t, kSelMine, kSrcStaging, kDstSelf, 0, kFlagged);
  }
};
struct LLPush : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    stagePush<Clause0>(t, 0, kFlagged);
  }
};
// The same bytes staged without flags (the staged plan's push), and the
// line push written by hand (no Move: each thread stores its lines of
// every peer's slot), with the flagged store and with a plain one.
struct PlainPush : Keeps {
  template <class T> __device__ static void run(T &t) {
    stagePush<Clause0>(t, 0, 0);
  }
};
template <bool Flagged> struct HandPush : Keeps {
  template <class T> __device__ static void run(T &t) {
    const Shared &S = t.shared();
    const int r = t.rank();
    const int64_t lines = S.P.s[1] * 2 / purlin::sm::kLineData; // bf16
    const uint64_t *in = (const uint64_t *)S.buf[r][0];
    const uint32_t flag = purlin::sm::llFlag(t.epoch()); // as the generated LL (lines.cuh)
    for (int q = 0; q < S.R; ++q) {
      char *slot = S.scratch[q] + S.stagingOff[0] + (int64_t)r * S.slotBytes[0];
      for (int64_t j = (int64_t)t.lane() * blockDim.x + threadIdx.x; j < lines;
           j += (int64_t)S.L * blockDim.x) {
        const uint64_t d = in[j];
        if (Flagged) {
          purlin::sm::storeLine(slot + j * purlin::sm::kLineBytes, d, flag);
        } else {
          uint4 v = make_uint4((uint32_t)d, flag, (uint32_t)(d >> 32), flag);
          *(uint4 *)(slot + j * purlin::sm::kLineBytes) = v;
        }
      }
    }
    __syncthreads();
  }
};
// The 4 bf16 of a line's 8 data bytes added to acc in f32; acc rounded to
// 4 bf16 in a line's 8 data bytes.
__device__ __forceinline__ void addBf16x4(float (&acc)[4], uint64_t d) {
#pragma unroll
  for (int k = 0; k < 4; ++k)
    acc[k] += __uint_as_float((uint32_t)((d >> (16 * k)) & 0xffff) << 16);
}
__device__ __forceinline__ uint64_t packBf16x4(const float (&acc)[4]) {
  uint64_t o = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const __nv_bfloat16 b = __float2bfloat16(acc[k]);
    o |= (uint64_t)*(const uint16_t *)&b << (16 * k);
  }
  return o;
}
// The consume of the hand-written LL all-reduce: each thread polls its
// lines of its own R slots (ascending), sums the 4 bf16 of each in f32 and
// stores 8 bytes.
template <class T> __device__ void handPollSum(T &t, uint32_t flag) {
  const Shared &S = t.shared();
  const int r = t.rank();
  const int64_t lines = S.P.s[1] * 2 / purlin::sm::kLineData; // bf16
  const char *mine = S.scratch[r] + S.stagingOff[0];
  uint64_t *out = (uint64_t *)S.buf[r][1];
  for (int64_t j = (int64_t)t.lane() * blockDim.x + threadIdx.x; j < lines;
       j += (int64_t)S.L * blockDim.x) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int q = 0; q < S.R; ++q) {
      uint64_t d = 0;
      if (!purlin::sm::loadLine(mine + (int64_t)q * S.slotBytes[0] +
                                    j * purlin::sm::kLineBytes,
                                flag, d, 1000000000ull))
        return; // timing only: a lost line ends the thread
      addBf16x4(acc, d);
    }
    out[j] = packBf16x4(acc);
  }
}
// The low-latency all-reduce written by hand: the hand-written line push
// above, then each thread polls the same lines of its own R slots (one per
// peer, ascending), sums the 4 bf16 of each in f32 and stores 8 bytes: the
// floor of the LL protocol on this GPU (no Move, no exec step), against
// which "flagged lines, 1 chunk" (the generated steps) is read.
struct HandLL : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    HandPush<true>::run(t);
    handPollSum(t, purlin::sm::llFlag(t.epoch()));
  }
};
// The same all-reduce bumping its epoch itself (no epoch from the kernel's
// prologue: kInnerSyncs false, one launch), so the order can change: Early
// issues the thread's first kPre source loads before the epoch word is
// read, Early false reads the epoch first as the prologue does. The two
// rows' difference is what overlapping the source load with the epoch's
// round trip would save the generated push (docs/performance.md,
// eighteenth session's hypothesis).
template <bool Early> struct HandLLOwn {
  static constexpr bool kInnerSyncs = false;
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    const Shared &S = t.shared();
    const int r = t.rank();
    const int64_t lines = S.P.s[1] * 2 / purlin::sm::kLineData; // bf16
    const uint64_t *in = (const uint64_t *)S.buf[r][0];
    const int64_t j0 = (int64_t)t.lane() * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)S.L * blockDim.x;
    constexpr int kPre = 4;
    uint64_t pre[kPre];
#pragma unroll
    for (int u = 0; u < kPre; ++u)
      pre[u] = Early && j0 + u * step < lines ? in[j0 + u * step] : 0;
    __shared__ uint64_t epoch;
    if (threadIdx.x == 0) {
      uint64_t *w = epochWord(S, r, t.lane());
      epoch = *w + 1;
      *w = epoch;
    }
    __syncthreads();
    const uint32_t flag = purlin::sm::llFlag(epoch);
    auto push = [&](int64_t j, uint64_t d) {
      for (int q = 0; q < S.R; ++q)
        purlin::sm::storeLine(S.scratch[q] + S.stagingOff[0] + (int64_t)r * S.slotBytes[0] +
                                  j * purlin::sm::kLineBytes,
                              d, flag);
    };
#pragma unroll
    for (int u = 0; u < kPre; ++u) {
      const int64_t j = j0 + u * step;
      if (j < lines)
        push(j, Early ? pre[u] : in[j]);
    }
    for (int64_t j = j0 + kPre * step; j < lines; j += step)
      push(j, in[j]);
    __syncthreads();
    handPollSum(t, flag);
  }
};
// The LL floor, polled as the generated consume polls (consumeLinesOp):
// each thread loads its line of all 8 slots at once, then, while any is
// missing, loads again all of them (Missing false) or only those missing
// (Missing true: an eighth of the polling loads once most have come).
// Gpu: the lines stored and loaded at gpu scope (st/ld.relaxed.gpu)
// instead of volatile (system scope, what LL needs across GPUs): what
// scope costs where every rank is on one GPU.
template <bool Gpu>
__device__ __forceinline__ void storeLineAt(char *line, uint64_t data, uint32_t flag) {
  if (!Gpu)
    return purlin::sm::storeLine(line, data, flag);
  uint64_t lo, hi;
  purlin::sm::packLine(data, flag, lo, hi);
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(lo),
               "l"(hi)
               : "memory");
}
template <bool Gpu>
__device__ __forceinline__ bool peekLineAt(const char *line, uint32_t flag, uint64_t &data) {
  if (!Gpu)
    return purlin::sm::peekLine(line, flag, data);
  uint64_t lo, hi;
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(lo), "=l"(hi)
               : "l"(line)
               : "memory");
  return purlin::sm::unpackLine(lo, hi, flag, data);
}
// The hand-written batch LL's push: each thread stores its lines to the 8
// ranks' slots (its lines: j0, j0 + step, ... over every lane).
template <bool Gpu, class T> __device__ void batchPush(T &t) {
  const Shared &S = t.shared();
  const int r = t.rank();
  const int64_t lines = S.P.s[1] * 2 / purlin::sm::kLineData; // bf16
  const uint32_t flag = purlin::sm::llFlag(t.epoch()); // as the generated LL (lines.cuh)
  const uint64_t *in = (const uint64_t *)S.buf[r][0];
  const int64_t j0 = (int64_t)t.lane() * blockDim.x + threadIdx.x;
  const int64_t step = (int64_t)S.L * blockDim.x;
  for (int64_t j = j0; j < lines; j += step) {
    const uint64_t d = in[j];
#pragma unroll
    for (int q = 0; q < 8; ++q)
      storeLineAt<Gpu>(S.scratch[q] + S.stagingOff[0] + (int64_t)r * S.slotBytes[0] +
                           j * purlin::sm::kLineBytes,
                       d, flag);
  }
}
// Its consume: each thread loads its line of the 8 slots at once, polls
// (all again, or the missing ones), sums in f32 and stores 8 bytes.
template <bool Missing, bool Gpu, class T> __device__ void batchConsume(T &t) {
  const Shared &S = t.shared();
  const int r = t.rank();
  const int64_t lines = S.P.s[1] * 2 / purlin::sm::kLineData; // bf16
  const uint32_t flag = purlin::sm::llFlag(t.epoch()); // as the generated LL (lines.cuh)
  const int64_t j0 = (int64_t)t.lane() * blockDim.x + threadIdx.x;
  const int64_t step = (int64_t)S.L * blockDim.x;
  const char *mine = S.scratch[r] + S.stagingOff[0];
  uint64_t *out = (uint64_t *)S.buf[r][1];
  for (int64_t j = j0; j < lines; j += step) {
    uint64_t v[8];
    uint32_t missing = 0;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      uint64_t x = 0;
      if (!peekLineAt<Gpu>(mine + q * S.slotBytes[0] + j * purlin::sm::kLineBytes, flag, x))
        missing |= 1u << q;
      v[q] = x;
    }
    for (uint64_t n = 0; missing; ++n) {
      uint32_t now = 0;
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        if (Missing && !(missing >> q & 1u))
          continue;
        uint64_t x = 0;
        if (!peekLineAt<Gpu>(mine + q * S.slotBytes[0] + j * purlin::sm::kLineBytes, flag,
                             x))
          now |= 1u << q;
        v[q] = x;
      }
      missing = now;
      if (n > (1ull << 22))
        return; // timing only: a lost line ends the thread
    }
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int q = 0; q < 8; ++q)
      addBf16x4(acc, v[q]);
    out[j] = packBf16x4(acc);
  }
}
template <bool Missing, bool Gpu> struct HandLLBatch : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    batchPush<Gpu>(t);
    __syncthreads();
    batchConsume<Missing, Gpu>(t);
  }
};
// The generated and the hand-written halves crossed (twentieth session:
// which half holds the generated LL steps' 1.3 us over the batch floor).
// The probe's layout has no parity areas, so both halves address the same
// slots (line j of slot q at j * 16), whatever lane wrote or reads it.
struct GenPushHandConsume : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    stagePush<Clause0>(t, 0, kFlagged);
    batchConsume<false, false>(t);
  }
};
// The target's register push (sm::pushLinesLL) called directly with the
// lane's contiguous piece, as pushRegisters cuts it, without exec's setup
// (flows, makeBox, the staging slots), then the batch consume: whether the
// generated push's cost is pushLinesLL's loop or what runs before it.
struct PushLinesBatchConsume : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    const Shared &S = t.shared();
    const int r = t.rank();
    const int64_t n = S.P.s[1]; // bf16 names
    const int64_t a = n * t.lane() / S.L / 8 * 8, b = (t.lane() + 1 == S.L) ? n : n * (t.lane() + 1) / S.L / 8 * 8;
    char *dst[purlin::sm::kFastPtrs];
#pragma unroll
    for (int q = 0; q < purlin::sm::kFastPtrs; ++q)
      dst[q] = S.scratch[q] + S.stagingOff[0] + (int64_t)r * S.slotBytes[0];
    if (a < b)
      purlin::sm::pushLinesLL((const char *)S.buf[r][0], dst, 8, a * 2, a * 2, (b - a) * 2,
                              t.thread(), t.threads(), purlin::sm::llFlag(t.epoch()));
    __syncthreads();
    batchConsume<false, false>(t);
  }
};
// exec's register push alone (pushRegisters: flows, makeBox, the split,
// the staging slots, then the target's pushLines), without stagePush's
// fallback through laneMoves, whose Move path holds the kernel's 252
// registers and 23 KB of shared memory: whether the gap between the
// generated push and pushLinesLL is exec's setup or the kernel's size.
struct PushRegistersBatchConsume : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    if (!pushRegisters<Clause0>(t, 0, kFlagged))
      t.abort();
    batchConsume<false, false>(t);
  }
};
// consume's register step as consume calls it (this rank's names, piece
// lane of K x L, flagged): false where it declined or a line timed out.
template <class T> __device__ bool genConsume(T &t) {
  const Shared &S = t.shared();
  return consumeRegisters<Clause0>(t, false, kSrcStaging, kDstSelf, (int64_t)S.K * S.L,
                                   t.lane(), detail::clauseOp<Clause0>(S), kFlagged);
}
// The generated LL's two register steps alone (pushRegisters, then
// consumeRegisters as consume calls it), without the generic fallbacks
// that stagePush and consume carry: whether the generated LL's time over
// the batch floor is its steps' code or the kernel they sit in.
struct LeanGenLL : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    if (!pushRegisters<Clause0>(t, 0, kFlagged) || !genConsume(t))
      t.abort();
  }
};
// Each half's cycles (clock64 on the block's first thread, after the
// barrier that closes the half), summed over the calls per (rank, lane):
// the four crossings of the generated and the batch halves, so the table
// after the probe's says which half grows where both are generated
// (thirty-third session: 3.24 and 3.20 us crossed, 3.88 both generated,
// at 4 lanes; the generated push already ends on the lane's barrier, so a
// row with a second barrier there timed nothing new and was dropped).
constexpr int kPhaseRanks = 8, kPhaseLanes = 16;
constexpr int kPhaseSlots = 2 * kPhaseRanks * kPhaseLanes; // 2 halves a block
/// Block (rank, lane)'s first slot in g_phase.
__host__ __device__ constexpr int phaseSlot(int rank, int lane) {
  return 2 * (rank * kPhaseLanes + lane);
}
__device__ unsigned long long g_phase[kPhaseSlots];
template <int Push, int Cons> struct PhasesLL : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    const long long c0 = clock64();
    if (Push) {
      if (!pushRegisters<Clause0>(t, 0, kFlagged))
        t.abort();
    } else {
      batchPush<false>(t);
      __syncthreads();
    }
    const long long c1 = clock64();
    if (Cons) {
      if (!t.aborted() && !genConsume(t))
        t.abort();
    } else {
      batchConsume<false, false>(t);
      __syncthreads();
    }
    const long long c2 = clock64();
    if (threadIdx.x == 0 && t.rank() < kPhaseRanks && t.lane() < kPhaseLanes) {
      const int b = phaseSlot(t.rank(), t.lane());
      atomicAdd(&g_phase[b], (unsigned long long)(c1 - c0));
      atomicAdd(&g_phase[b + 1], (unsigned long long)(c2 - c1));
    }
  }
};
// The batch LL with stagePush's whole code in the kernel behind a branch
// never taken (a count no call has): the generated kernel's registers and
// size, the batch's executed path.
struct BatchLLDeadCode : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    batchPush<false>(t);
    if (t.shared().P.s[1] == -12345)
      stagePush<Clause0>(t, 0, kFlagged);
    __syncthreads();
    batchConsume<false, false>(t);
  }
};
struct HandPushGenConsume : Keeps {
  static constexpr bool kLines = true;
  template <class T> __device__ static void run(T &t) {
    batchPush<false>(t);
    __syncthreads();
    consume<Clause0>(t, kSelMine, kSrcStaging, kDstSelf, 0, kFlagged);
  }
};
// The probe launches bf16 sum alone: its kernels hold that op (and copy),
// not every op (a fifth of the instantiations: minutes less of nvcc).
constexpr uint32_t kProbeOps = (1u << purlin::exec::kCopy) | (1u << purlin::exec::kSum);
template <class P>
int entry(const purlin_shared_t *S, int first, int n, int, int, void *stream,
          const void *) {
  return purlin::sm::launch(
      (const void *)purlin::sm::planKernel<purlin::sm::ElemBF16, kProbeOps, P>, S, first,
      n, stream, nullptr, purlin::sm::PlanThreads<P>::value,
      !P::kInnerSyncs && S->oneLaunch != 0);
}
int64_t layout(Shared *S) {
  for (int b = 0; b < kMaxBuffers; ++b)
    S->scratchOff[b] = 0;
  for (int k = 0; k < kMaxClauses; ++k)
    S->stagingOff[k] = S->slotElems[k] = 0;
  return 0;
}
int64_t layoutCopy(Shared *S) { // the input's copy at 0
  layout(S);
  return (S->P.s[1] * S->elemSize + 15) / 16 * 16;
}
int64_t layoutLines(Shared *S) { // R staging slots of flagged lines
  layout(S);
  S->slotElems[0] = S->P.s[1];
  S->slotBytes[0] = (S->P.s[1] * S->elemSize + 15) / 16 * 32;
  return S->R * S->slotBytes[0];
}
const char kDesc[] = "purlin-desc 1\ncollective all_reduce\nparam R ranks\n"
                     "param C count\nparam T type\nparam op redop\n"
                     "buffer in x T [C]\nbuffer out y T [C]\nclause op\n"
                     "  dim i [C]\n  from x @ [*] [i]\n  to y @ [*] [i]\nend\n";
} // namespace probe

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  struct Variant {
    const char *name;
    purlin_cuda_entry_t fn;
    int64_t (*layout)(purlin_shared_t *) = probe::layout;
    int exclusive = 0;
    bool phases = false; // PhasesLL: its halves' cycles printed after the table
  } vs[] = {{"empty (launch + epoch)", probe::entry<probe::Empty>},
            {"empty, no epoch", probe::entry<probe::EmptyNoEpoch>},
            {"flag barriers only", probe::entry<probe::Sync>},
            {"consume only", probe::entry<probe::Consume>},
            {"  its Move build only", probe::entry<probe::BuildOnly>},
            {"  a simple Move, moved", probe::entry<probe::MoveOnly>},
            {"  the same, from contig", probe::entry<probe::MoveAt<0>>},
            {"  the same, vector loop", probe::entry<probe::MoveAt<1>>},
            {"  hand-written one-shot", probe::entry<probe::HandWritten>},
            {"direct, barriers kept", probe::entry<probe::Direct>},
            {"direct, one launch", probe::entry<probe::DirectBoundary>},
            {"one barrier, per lane", probe::entry<probe::Barrier1>},
            {"one barrier, all lanes", probe::entry<probe::BarrierAll>},
            {"  polls with pauses", probe::entry<probe::BarrierAllPoll<0>>},
            {"  polled by one warp", probe::entry<probe::BarrierAllPoll<1>>},
            {"direct_copy, one launch", probe::entry<probe::DirectCopy>, probe::layoutCopy},
            {"flagged lines, 1 chunk", probe::entry<probe::LL>, probe::layoutLines, 1},
            {"  their push alone", probe::entry<probe::LLPush>, probe::layoutLines, 1},
            {"  the push, no flags", probe::entry<probe::PlainPush>, probe::layoutLines, 1},
            {"  hand-written line push", probe::entry<probe::HandPush<true>>, probe::layoutLines, 1},
            {"  the same, plain stores", probe::entry<probe::HandPush<false>>, probe::layoutLines, 1},
            {"hand-written LL all-reduce", probe::entry<probe::HandLL>, probe::layoutLines, 1},
            {"  LL own epoch, read first", probe::entry<probe::HandLLOwn<false>>, probe::layoutLines, 1},
            {"  LL own epoch, loads first", probe::entry<probe::HandLLOwn<true>>, probe::layoutLines, 1},
            {"  LL polled 8 at once", probe::entry<probe::HandLLBatch<false, false>>, probe::layoutLines, 1},
            {"  LL, missing re-polled", probe::entry<probe::HandLLBatch<true, false>>, probe::layoutLines, 1},
            {"  LL 8 at once, gpu scope", probe::entry<probe::HandLLBatch<false, true>>, probe::layoutLines, 1},
            {"  LL missing, gpu scope", probe::entry<probe::HandLLBatch<true, true>>, probe::layoutLines, 1},
            {"generated push, batch consume", probe::entry<probe::GenPushHandConsume>, probe::layoutLines, 1},
            {"batch push, generated consume", probe::entry<probe::HandPushGenConsume>, probe::layoutLines, 1},
            {"pushLinesLL alone, batch consume", probe::entry<probe::PushLinesBatchConsume>, probe::layoutLines, 1},
            {"pushRegisters alone, batch consume", probe::entry<probe::PushRegistersBatchConsume>, probe::layoutLines, 1},
            {"lean generated LL (register steps)", probe::entry<probe::LeanGenLL>, probe::layoutLines, 1},
            {"batch LL, stagePush dead code", probe::entry<probe::BatchLLDeadCode>, probe::layoutLines, 1},
            {"LL halves: batch, batch", probe::entry<probe::PhasesLL<0, 0>>, probe::layoutLines, 1, true},
            {"LL halves: gen push, batch", probe::entry<probe::PhasesLL<1, 0>>, probe::layoutLines, 1, true},
            {"LL halves: batch, gen consume", probe::entry<probe::PhasesLL<0, 1>>, probe::layoutLines, 1, true},
            {"LL halves: gen, gen", probe::entry<probe::PhasesLL<1, 1>>, probe::layoutLines, 1, true}};
  const int R = 8;
  // PURLIN_PROBE_COUNT: bf16 elements a rank (default 4096: 8 KiB), a
  // multiple of 8 (the hand-written kernels move 16-byte vectors).
  int64_t C = 4096;
  if (const char *e = std::getenv("PURLIN_PROBE_COUNT"))
    if (std::atoll(e) >= 8)
      C = std::atoll(e) / 8 * 8;
  std::vector<int> devs(R, 0);
  purlinComm_t comm;
  if (purlinCommCreate(&comm, R, devs.data())) {
    std::printf("%s\n", purlinGetLastError());
    return 1;
  }
  std::vector<void *> bufs(2 * R);
  for (auto &b : bufs)
    cudaMalloc(&b, C * 2);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  void *streams[1] = {s};
  constexpr int kCalls = 1000; // a graph's
  std::printf("# 8 virtual ranks, bf16 sum, %lld bytes per rank, graph of %d calls, us per call%s\n",
              (long long)C * 2, kCalls,
              std::getenv("PURLIN_ONE_LAUNCH") ? " (PURLIN_ONE_LAUNCH set)" : "");
  std::printf("%-26s %8s %8s %8s %8s\n", "plan", "1 lane", "2 lanes", "4 lanes",
              "16 lanes");
  std::string phases; // the PhasesLL rows' halves, printed after the table
  for (auto &v : vs) {
    std::printf("%-26s", v.name);
    for (int lanes : {1, 2, 4, 16}) {
      if (v.phases) {
        static const unsigned long long zero[probe::kPhaseSlots] = {};
        cudaMemcpyToSymbol(probe::g_phase, zero, sizeof zero);
      }
      purlin_plan_info plan = {"probe", lanes, 1, 2, 0, 0, 0, -1, v.layout,
                               nullptr, v.fn, v.exclusive};
      purlin_collective_info info = {"all_reduce", probe::kDesc, "sm_90", 1, &plan};
      purlinColl_t h;
      const std::string maxP = "C=" + std::to_string(C);
      if (purlinCollCreate(&h, comm, &info, maxP.c_str())) {
        std::printf("%s\n", purlinGetLastError());
        return 1;
      }
      int64_t c = C;
      purlinArgs a = {PURLIN_BF16, PURLIN_SUM, &c, 1, nullptr, 0, bufs.data(), streams};
      cudaGraph_t g;
      cudaGraphExec_t ge;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      for (int i = 0; i < kCalls; ++i)
        purlinLaunch(h, &a);
      cudaStreamEndCapture(s, &g);
      cudaGraphInstantiate(&ge, g, 0);
      cudaGraphLaunch(ge, s);
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      cudaEventRecord(e0, s);
      cudaGraphLaunch(ge, s);
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      std::printf(" %8.2f", ms * 1000.0f / kCalls); // us a call
      if (v.phases) {
        // the graph launched twice; lanes x 8 blocks
        unsigned long long ph[probe::kPhaseSlots];
        cudaMemcpyFromSymbol(ph, probe::g_phase, sizeof ph);
        double sum[2] = {0, 0}, most[2] = {0, 0};
        for (int r = 0; r < R; ++r)
          for (int l = 0; l < lanes; ++l)
            for (int k = 0; k < 2; ++k) {
              const double c = (double)ph[probe::phaseSlot(r, l) + k] / (2.0 * kCalls);
              sum[k] += c;
              most[k] = c > most[k] ? c : most[k];
            }
        char line[200];
        std::snprintf(line, sizeof line, "#  %-26s %2d lanes: push %7.0f (max %7.0f)  consume %7.0f (max %7.0f)\n",
                      v.name, lanes, sum[0] / (R * lanes), most[0], sum[1] / (R * lanes), most[1]);
        phases += line;
      }
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
      purlinCollDestroy(h);
    }
    std::printf("\n");
  }
  if (!phases.empty())
    std::printf("# cycles a call of each half, mean (max) over the blocks\n%s", phases.c_str());
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("# %s, comm check %d\n", cudaGetErrorString(e), (int)purlinCommCheck(comm));
  return 0;
}
