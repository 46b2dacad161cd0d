// The SM load/store target: the Target contract of spec/include/purlin/spec/Exec.h on one GPU
// generation, the kernel that runs a plan (grid: lanes x local ranks, one
// lane = one thread block) and the entry that launches it.
//
// A generation's header (sm80/target.cuh, ...) defines
//   PURLIN_TARGET_NAME and PURLIN_SM_THREADS (threads per lane)
// and includes this file.
//
// Which kernels exist: the generated code names the element types and ops
// built ahead of time (kAotDtypes, kAotOps: purlinc --aot) and the ops its
// clauses fix (kClauseOps); the entry launches those. The CUDA runtime
// compiles the other pairs at first use (NVRTC, runtime/cuda/sm): then
// this header is compiled with __CUDACC_RTC__, PURLIN_JIT_DTYPE is the
// pair's element type, kAotOps its op, and PURLIN_PLAN_ENTRY defines two
// extern "C" kernels per plan, purlin_jit_NAME (the shared state by value)
// and purlin_jit_slot_NAME (read from a SharedSlot: CUDA graphs whose
// buffers are registered after capture), instead of the entry.
//
// Another datapath built on these atoms (atom-kernels/tma: the same lanes
// and signals, other moves) names its lane class and host launch before
// its plans' entries: PURLIN_SM_ATOMS (a class template <E, OPS, int LINES>
// with this Target's members, default ::purlin::sm::Target) and
// PURLIN_SM_LAUNCH (launch()'s signature, default ::purlin::sm::launch).
#pragma once

#include <stdint.h>

#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"
#include "common/sm/aux.h"
#include "common/sm/elem.cuh"
#include "common/sm/lines.cuh"
#include "common/sm/move.cuh"
#include "common/sm/sync.cuh"
#ifndef __CUDACC_RTC__
#include "common/sm/launch.h"
#endif

// PURLIN_SM_SLOTS=0 builds no slot kernels ahead of time (compile checks
// of other generations: half the kernels); a slot launch then finds none
// and fails as a kernel not built does.
#ifndef PURLIN_SM_SLOTS
#define PURLIN_SM_SLOTS 1
#endif

#ifndef PURLIN_SM_THREADS
#define PURLIN_SM_THREADS 512
#endif

// The register row's vectors a thread (Target::kEpiRowVecs). 2 with 512
// threads (the 128 registers a thread that bound leaves); a measurement
// build with PURLIN_SM_THREADS=256 (255 registers) may hold 4, so that a
// row of 8192 stays in registers with half the warps.
#ifndef PURLIN_SM_EPI_ROW_VECS
#define PURLIN_SM_EPI_ROW_VECS 2
#endif
// Rows wider than that (hidden 12288 and 16384 with 512 threads) run in
// kernels of their own whose register row holds PURLIN_SM_EPI_ROW_WIDE
// times as many vectors a thread (WideRows below; the entry picks them by
// the call's widest epilogue row, the generated epiRowElems), so that the
// usual kernels keep their registers. Until the thirty-ninth session those
// rows took the general form (exec/Epilogue.h): 16384 x 1 79.6 us against
// the pair's 6.3 (H100, 8 ranks, bf16). A wider instantiation inside the
// usual kernels ran them 5-7x faster but the usual rows 0.73-0.93x
// (ptxas spilled in every epilogue kernel; docs/performance.md,
// thirty-ninth session). These kernels of their own: 2.4-8.1x faster than
// the general form at hidden 12288 and 16384, the usual widths unchanged
// (H100, fortieth session). 1: no such kernels (the general form).
#ifndef PURLIN_SM_EPI_ROW_WIDE
#define PURLIN_SM_EPI_ROW_WIDE 2
#endif
#ifndef PURLIN_SM_EPI_HELD_VECS
#define PURLIN_SM_EPI_HELD_VECS 1
#endif

// Threads a lane at most for the kernels of plans whose flagged moves are
// LL lines only (staged_ll): the low-latency plans run at small sizes,
// where the runtime launches 256-thread lanes anyway (Launch.cpp,
// smallLaneThreads), and a kernel bound to 512 threads has 128 registers a
// thread, under which exec's steps around the line moves spilled ~650
// bytes a thread (ptxas sm_90, all_reduce bf16: 650 B of spill stores and
// 1,344 of loads; bound to 256: 32 and 80). PURLIN_SM_LL_THREADS=512 (a
// measurement build) gives them the common bound again.
#ifndef PURLIN_SM_LL_THREADS
#define PURLIN_SM_LL_THREADS 256
#endif

namespace purlin {
namespace sm {

constexpr int kThreads = PURLIN_SM_THREADS;
constexpr int kLLThreads =
    PURLIN_SM_LL_THREADS < PURLIN_SM_THREADS ? PURLIN_SM_LL_THREADS : PURLIN_SM_THREADS;

/// The launch bounds of plan function struct P's kernels: `value`, its
/// most threads a lane, kLLThreads where its flagged moves are LL lines
/// only, else kThreads; `minBlocks`, 1 for the LL plans, which lets ptxas
/// take every register the bound leaves (without it ptxas kept the slot
/// kernel at 128 registers and 650 bytes of spill stores; 0 leaves the
/// bound as it was: no .minnctapersm).
/// PURLIN_SM_MIN_BLOCKS=N (a measurement build): the other plans' kernels
/// bound to N blocks an SM (N = 2 at 512 threads: 64 registers a thread),
/// so that a plan of twice the lanes is resident in one wave.
#ifndef PURLIN_SM_MIN_BLOCKS
#define PURLIN_SM_MIN_BLOCKS 0
#endif
template <class P, class = void> struct PlanThreads {
  static constexpr int value = kThreads;
  static constexpr int minBlocks = PURLIN_SM_MIN_BLOCKS;
};
template <class P> struct PlanThreads<P, decltype((void)P::kLines)> {
  static constexpr bool kLL = P::kLines == exec::kLinesLLBit && kLLThreads < kThreads;
  static constexpr int value = kLL ? kLLThreads : kThreads;
  static constexpr int minBlocks = kLL ? 1 : PURLIN_SM_MIN_BLOCKS;
};

/// exec::kEpiVec elements of type Raw moved with the widest accesses their
/// size allows (16-byte words, one 8-byte word for 1-byte elements, else
/// element by element); the caller checked the alignment.
template <class Raw> struct RawVec {
  static constexpr int kN = exec::kEpiVec;
  static constexpr int kBytes = kN * (int)sizeof(Raw);
  union {
    uint4 v16[kBytes / 16 > 0 ? kBytes / 16 : 1];
    uint2 v8;
    Raw r[kN];
  } u;
  __device__ void load(const Raw *p) {
    if constexpr (kBytes % 16 == 0) {
#pragma unroll
      for (int q = 0; q < kBytes / 16; ++q)
        u.v16[q] = ((const uint4 *)p)[q];
    } else if constexpr (kBytes == 8) {
      u.v8 = *(const uint2 *)p;
    } else {
#pragma unroll
      for (int j = 0; j < kN; ++j)
        u.r[j] = p[j];
    }
  }
  __device__ void store(Raw *p) const {
    if constexpr (kBytes % 16 == 0) {
#pragma unroll
      for (int q = 0; q < kBytes / 16; ++q)
        ((uint4 *)p)[q] = u.v16[q];
    } else if constexpr (kBytes == 8) {
      *(uint2 *)p = u.v8;
    } else {
#pragma unroll
      for (int j = 0; j < kN; ++j)
        p[j] = u.r[j];
    }
  }
};
/// One lane (thread block) of one rank. Element type E; the op comes with
/// each move (the launch's op, or the clause's), one of those in OPS.
/// LINES: the line formats of the plan's flagged-line moves (the low-latency
/// protocol; exec::LineFmtBits, 0: none); a plan without them does not
/// instantiate the flagged moves, the largest code of a kernel (it halved
/// the first-use compile of all_reduce's plans), and a plan of one format
/// not the other's.
template <class E, uint32_t OPS, int LINES = exec::kLinesAll> class Target {
public:
  /// `syncs`: some notify or wait of the plan runs in this launch. Only
  /// then is the aux word read (at kernel start, where its latency hides);
  /// a plan whose syncs are all skipped must not wait on that load before
  /// its first data access.
  __device__ Target(const exec::Shared &S, int rank, int lane, uint64_t epoch,
                    bool syncs)
      : S_(S), rank_(rank), lane_(lane), lanes_(exec::liveLanesOf(S)),
        epoch_(signalValue(epoch, S.fingerprint)), aux_(auxWords(S, rank)),
        gpu_(syncs && aux_[2] != 0) {}

  __device__ int rank() const { return rank_; }
  __device__ int lane() const { return lane_; }
  __device__ const exec::Shared &shared() const { return S_; }
  __device__ uint64_t epoch() const { return epoch_; }
  __device__ void barrier() {
    __syncthreads();
    fenced_ = false;
  }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ int thread() const { return (int)threadIdx.x; }
  __device__ int threads() const { return (int)blockDim.x; }
  /// The lanes a step's pieces are cut among: the plan's, or in the
  /// epilogue's launch of its own (runApply) its blocks a rank.
  __device__ int lanes() const { return lanes_; }
  /// Whether the unfused plan's epilogue runs as a launch of its own after
  /// this one (runPlan: the plan has one and every rank runs in this
  /// launch); the generated plan then returns before it.
  __device__ bool epilogueApart() const { return apart_; }
  __device__ void setLaunch(int lanes, bool apart) {
    lanes_ = lanes;
    apart_ = apart;
  }
  /// The lane's Moves, in shared memory (exec::laneMoves).
  __device__ exec::Move *laneMoves() {
    __shared__ __align__(16) char storage[exec::kMaxRanks * sizeof(exec::Move)];
    return reinterpret_cast<exec::Move *>(storage);
  }
  __device__ void signal(uint64_t *w, uint64_t v) {
    signalWord(w, v, !fenced_, gpu_);
    fenced_ = true;
  }
  /// False on a timeout or a peer's other fingerprint (reported here, by
  /// the thread that saw it: the lane's abort then finds the word set).
  __device__ bool wait(const uint64_t *w, uint64_t v) {
    acquire_ = true;
    const int s = waitWord(w, v, aux_, gpu_);
    if (s < 0)
      reportError(aux_, kErrMismatch | (uint32_t)rank_ << 8 |
                            (uint32_t)lane_ << 20);
    return s > 0;
  }
  /// After waits: each polling thread's acquire fence, then the lane's
  /// barrier, which passes the acquire on to the lane.
  __device__ bool barrierOr(bool v) {
    if (acquire_) {
      fenceAcqRel(gpu_);
      acquire_ = false;
    }
    return __syncthreads_or(v) != 0;
  }
  __device__ bool aborted() const { return aborted_; }
  __device__ void abort() {
    aborted_ = true;
    if (leader())
      reportError(aux_, kErrTimeout | (uint32_t)rank_ << 8 |
                            (uint32_t)lane_ << 20);
  }
  /// False: a flagged line did not arrive in time.
  __device__ bool move(const exec::Move &m, int64_t a, int64_t b, int tid,
                       int nthr) {
    if (m.ll != exec::kLinesNone) {
      if constexpr (LINES != 0) {
        if (!(LINES & exec::lineFmtBit(m.fmt)))
          __trap(); // purlinc said the plan has no lines of this format: a purlinc bug
        bool ok;
        const bool arrived = sm::moveLines<E, OPS, LINES>(m, a, b, tid, nthr,
                                                         lineCtx(), ok);
        if (!ok)
          __trap(); // an op this kernel is not built for: a purlinc or runtime bug
        return arrived;
      } else {
        __trap(); // purlinc said the plan has no flagged lines: a purlinc bug
      }
    }
    // Small contiguous moves inline (no call layers to fetch); the rest
    // through the general datapath.
    if (sm::moveInline<E, OPS>(m, a, b, tid, nthr))
      return true;
    if (!sm::move<E, OPS>(m, a, b, tid, nthr))
      __trap(); // an op this kernel is not built for: a purlinc or runtime bug
    return true;
  }
  __device__ bool moveVec(const char *const *src, int nsrc, char *const *dst,
                          int ndst, int64_t soff, int64_t doff, int64_t bytes,
                          int op, int tid, int nthr) {
    return sm::moveVec<E, OPS>(src, nsrc, dst, ndst, soff, doff, bytes, op, tid,
                          nthr);
  }
  /// exec's pushLines, in line format fmt (declined where the plan has no
  /// lines of it: the generic path then traps).
  __device__ bool pushLines(int fmt, const char *src, char *const *dst,
                            int ndst, int64_t soff, int64_t doff,
                            int64_t bytes, int tid, int nthr) {
    if constexpr (LINES != 0)
      return (LINES & exec::lineFmtBit(fmt)) &&
             sm::pushLines<E, LINES>(fmt, src, dst, ndst, soff, doff, bytes,
                                     tid, nthr, lineCtx());
    else
      return false;
  }
  /// exec's consumeLines: 1 done, 0 declined, -1 a line did not arrive in
  /// time (the step then aborts the lane, which reports the timeout).
  __device__ int consumeLines(int fmt, const char *const *src, int nsrc,
                              char *dst, int64_t soff, int64_t doff,
                              int64_t bytes, int op, int tid, int nthr) {
    if constexpr (LINES != 0)
      return (LINES & exec::lineFmtBit(fmt))
                 ? sm::consumeLines<E, OPS, LINES>(fmt, src, nsrc, dst, soff,
                                                   doff, bytes, op, tid, nthr,
                                                   lineCtx())
                 : 0;
    else
      return 0; // no flagged lines in this plan: the generic path traps
  }
  __device__ int64_t vecElems() const {
    return kVecBytes / (int64_t)sizeof(typename E::Raw);
  }

  // Epilogues (exec/Epilogue.h): an element widened to f32 and narrowed
  // with one rounding (elem.cuh, DType.h's conversions), and a row
  // reduction over the lane's threads: each warp folds by shuffles, then
  // warp 0 folds the warps' values in warp order. Every thread returns the
  // result.
  __device__ float loadF(const char *base, int64_t i) const {
    return (float)E::widen(((const typename E::Raw *)base)[i]);
  }
  __device__ void storeF(char *base, int64_t i, float v) const {
    ((typename E::Raw *)base)[i] = E::narrow((typename E::Acc)v);
  }
  // An epilogue's buffer of its own type (exec::Shared::bufDType: one of
  // the floating types, which the frontend allows there), element by
  // element as loadF and storeF do for E.
  __device__ float loadFAs(int d, const char *base, int64_t i) const {
    switch (d) {
    case kF32: return loadAs<ElemF32>(base, i);
    case kF16: return loadAs<ElemF16>(base, i);
    case kBF16: return loadAs<ElemBF16>(base, i);
    case kF8E4M3: return loadAs<ElemF8E4M3>(base, i);
    default: return loadAs<ElemF8E5M2>(base, i);
    }
  }
  __device__ void storeFAs(int d, char *base, int64_t i, float v) const {
    switch (d) {
    case kF32: storeAs<ElemF32>(base, i, v); break;
    case kF16: storeAs<ElemF16>(base, i, v); break;
    case kBF16: storeAs<ElemBF16>(base, i, v); break;
    case kF8E4M3: storeAs<ElemF8E4M3>(base, i, v); break;
    default: storeAs<ElemF8E5M2>(base, i, v); break;
    }
  }
  template <class T>
  static __device__ float loadAs(const char *base, int64_t i) {
    return (float)T::widen(((const typename T::Raw *)base)[i]);
  }
  template <class T>
  static __device__ void storeAs(char *base, int64_t i, float v) {
    ((typename T::Raw *)base)[i] = T::narrow((typename T::Acc)v);
  }
  // The register row (exec/Epilogue.h): kEpiRowVecs vectors a thread (32
  // f32 values of a row), each exec::kEpiVec elements loaded at once (one
  // or more 16-byte loads, or one 8-byte load for 1-byte elements; the
  // caller checked the alignment) and widened as loadF does; storeF8 the
  // converse (narrowed as storeF does).
  static constexpr int kEpiRowVecs = PURLIN_SM_EPI_ROW_VECS;
  // Of those, the vectors whose epilogue inputs stay in registers across
  // the passes in one-shot (PURLIN_SM_EPI_HELD_VECS, default 1: a row of
  // 4096 is one vector a thread with 512 threads; holding two vectors'
  // inputs spilled ~60 bytes, ptxas sm_90 bf16, the bound's 128 registers).
  static constexpr int kEpiHeldVecs = PURLIN_SM_EPI_HELD_VECS;
  __device__ void loadF8(const char *base, int64_t i, float *out) const {
    Raw8 x;
    loadRaw8(base, i, x);
    widen8(x, out);
  }
  // loadF8 in two steps: the vector as it lies in memory (the element
  // type's bytes: 4 registers for 2-byte types, not 8), widened when used
  // (exec/Epilogue.h, PURLIN_EPI_RAW_LOADS).
  using Raw8 = RawVec<typename E::Raw>;
  __device__ void loadRaw8(const char *base, int64_t i, Raw8 &x) const {
    x.load((const typename E::Raw *)base + i);
  }
  __device__ void widen8(const Raw8 &x, float *out) const {
#pragma unroll
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = (float)E::widen(x.u.r[j]);
  }
  __device__ void storeF8(char *base, int64_t i, const float *v) const {
    RawVec<typename E::Raw> x;
#pragma unroll
    for (int j = 0; j < exec::kEpiVec; ++j)
      x.u.r[j] = E::narrow((typename E::Acc)v[j]);
    x.store((typename E::Raw *)base + i);
  }
  // kEpiVec f32 values at element i of base (16-byte aligned: the caller
  // checked), as two 16-byte accesses: the received areas of the unfused
  // plans (exec/Epilogue.h, kEpiStash and kEpiApply).
  __device__ void loadF32x8(const char *base, int64_t i, float *out) const {
    const float4 *p = (const float4 *)(base + i * 4);
    const float4 a = p[0], b = p[1];
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
    out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  }
  __device__ void storeF32x8(char *base, int64_t i, const float *v) const {
    float4 *p = (float4 *)(base + i * 4);
    p[0] = make_float4(v[0], v[1], v[2], v[3]);
    p[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
  // A hint that the vector at element i of base is read soon (the register
  // row of the stash and the apply gives one for every contribution and
  // input of its vectors before the first load; the fused forms give none,
  // exec/Epilogue.h's kEpiPrefetch): into L1, without a register or a
  // wait, so the loads that follow, issued a few at a time, find them there.
  __device__ void prefetchF8(const char *base, int64_t i) const {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(
        base + i * (int64_t)sizeof(typename E::Raw)));
  }
  // A hint that the `bytes` bytes from p are read soon, into L2 (sm_90 on:
  // one bulk prefetch of the 16-byte words they cover; earlier
  // generations: none). No register, no wait; exec/Epilogue.h's
  // PURLIN_EPI_L2_PREFETCH gives the register row's rows ahead.
  __device__ void prefetchL2(const char *p, int64_t bytes) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uintptr_t a = (uintptr_t)p;
    const uintptr_t b = (a + 15) & ~(uintptr_t)15, e = (a + (uintptr_t)bytes) & ~(uintptr_t)15;
    if (e > b)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(b), "r"((uint32_t)(e - b))
                   : "memory");
#else
    (void)p, (void)bytes;
#endif
  }
  __device__ float rowReduce(float v, int op) {
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1)
      v = purlin_epi_fold(op, v, __shfl_xor_sync(0xffffffffu, v, o));
    const int w = threadIdx.x / 32, nw = (blockDim.x + 31) / 32;
    if ((threadIdx.x & 31) == 0)
      part[w] = v;
    __syncthreads();
    float acc = part[0];
    for (int k = 1; k < nw; ++k)
      acc = purlin_epi_fold(op, acc, part[k]);
    __syncthreads(); // part is reused by the next reduction
    return acc;
  }
  // rowReduce of v[0] .. v[n-1] together: the same tree for each, one
  // pair of barriers for all.
  template <int N> __device__ void rowReduceN(float *v, int n, int op) {
    __shared__ float part[N][32];
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (j < n)
        for (int o = 16; o > 0; o >>= 1)
          v[j] = purlin_epi_fold(op, v[j], __shfl_xor_sync(0xffffffffu, v[j], o));
    const int w = threadIdx.x / 32, nw = (blockDim.x + 31) / 32;
    if ((threadIdx.x & 31) == 0)
#pragma unroll
      for (int j = 0; j < N; ++j)
        if (j < n)
          part[j][w] = v[j];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (j < n) {
        float acc = part[j][0];
        for (int k = 1; k < nw; ++k)
          acc = purlin_epi_fold(op, acc, part[j][k]);
        v[j] = acc;
      }
    __syncthreads(); // part is reused by the next reduction
  }

private:
  /// What a flagged-line move needs of this lane (lines128.cuh).
  __device__ LineCtx lineCtx() const {
    return LineCtx{epoch_, aux_, (uint32_t)rank_ << 8 | (uint32_t)lane_ << 20,
                   gpu_};
  }
  const exec::Shared &S_;
  int rank_, lane_, lanes_;
  bool apart_ = false;
  uint64_t epoch_;
  const uint64_t *aux_;
  bool gpu_;             // every rank on this GPU: gpu-scope signals
  bool acquire_ = false; // polled since the last barrierOr (this thread)
  bool aborted_ = false;
  bool fenced_ = false; // a fence since the last barrier (leader)
};

/// Kernel prologue: the lane leader bumps the lane's epoch (kept in device
/// memory so that launches and graph replays agree) and shares it.
__device__ __forceinline__ uint64_t bumpEpoch(const exec::Shared &S, int rank,
                                              int lane) {
  __shared__ uint64_t epoch;
  if (threadIdx.x == 0) {
    uint64_t *w = exec::epochWord(S, rank, lane);
    epoch = *w + 1;
    *w = epoch;
  }
  __syncthreads();
  return epoch;
}

/// Whether plan function struct P runs its epilogue as a launch of its own
/// (P::kApply, PURLIN_PLAN_FN_APPLY); plans written by hand (the latency
/// probe's) say nothing: no.
template <class...> using VoidT = void;
template <class P, class = void> struct PlanApplies {
  static constexpr bool value = false;
};
template <class P> struct PlanApplies<P, VoidT<decltype(P::kApply)>> {
  static constexpr bool value = P::kApply;
};
/// Whether the launch of plan function struct P needs epochs for syncs of
/// its own (not boundary syncs) with every rank in this launch: P's inner
/// syncs, or, where its epilogue runs as a launch of its own, only those
/// before it (P::kApartInnerSyncs: the unfused one-shot's syncs all follow
/// the stash, so that launch keeps no epoch and its blocks wait for none,
/// as the plain all-reduce's).
template <class P, bool = PlanApplies<P>::value> struct OneLaunchSyncs {
  static constexpr bool value = P::kInnerSyncs;
};
template <class P> struct OneLaunchSyncs<P, true> {
  static constexpr bool value = P::kApartInnerSyncs;
};

/// The body of the kernel for element type E, ops OPS and plan function
/// Plan::run. Epochs are kept unless every rank runs in this launch and the
/// only syncs this launch runs are boundary syncs (all skipped then: no
/// signal word is read or written; OneLaunchSyncs: the plan's, or those
/// before its epilogue's launch of its own).
/// Atoms: the lane's class (Target, or another datapath's built on it).
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__device__ __forceinline__ void runPlan(const exec::Shared &S, int first) {
  PURLIN_EPI_MARK(0);
  const int rank = first + (int)blockIdx.y, lane = (int)blockIdx.x;
  const bool epochs = !S.oneLaunch || OneLaunchSyncs<Plan>::value;
  Atoms<E, OPS, Plan::kLines> t(S, rank, lane,
                                epochs ? bumpEpoch(S, rank, lane) : 0, epochs);
  t.setLaunch(exec::liveLanesOf(S), PlanApplies<Plan>::value && S.oneLaunch != 0);
  Plan::run(t);
}

/// The epilogue of an unfused plan as a launch of its own (Plan::kApply,
/// every rank in one launch: the entry launches it after runPlan's, which
/// returned before it): grid (blocks a rank, local ranks), each block a
/// lane over the rank's rows, cut among gridDim.x lanes. No signal is
/// touched (no sync follows the consume but boundary syncs, skipped in one
/// launch), so no epoch either.
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__device__ __forceinline__ void runApply(const exec::Shared &S, int first) {
  PURLIN_EPI_MARK(0); // the timing build's start (exec/Epilogue.h)
  const int rank = first + (int)blockIdx.y, lane = (int)blockIdx.x;
  Atoms<E, OPS, Plan::kLines> t(S, rank, lane, 0, false);
  t.setLaunch((int)gridDim.x, false);
  Plan::apply(t);
}

/// runPlan with the shared state read from device memory (a CUDA graph's
/// launch whose buffers are registered after the capture: aux.h's
/// SharedSlot). The lane copies it into shared memory first, so the plan's
/// code reads it as it reads a kernel parameter. A slot that is not ready
/// yet is reported (kErrNotRegistered, through this rank's error word: the
/// slot holds this rank's own signal memory) and the kernel returns before
/// any other access.
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target, bool kApply = false>
__device__ __forceinline__ void runPlanSlot(const SharedSlot *slot, int first) {
  static_assert(sizeof(exec::Shared) % sizeof(uint64_t) == 0,
                "exec::Shared is copied in 64-bit words");
  constexpr int kWords = (int)(sizeof(exec::Shared) / sizeof(uint64_t));
  __shared__ __align__(16) uint64_t words[kWords];
  __shared__ int ready;
  if (threadIdx.x == 0) {
    ready = *(const volatile uint64_t *)&slot->ready != 0;
    if (!ready) {
      const int rank = first + (int)blockIdx.y, lane = (int)blockIdx.x;
      reportError(auxWords(slot->S, rank), kErrNotRegistered |
                                               (uint32_t)rank << 8 |
                                               (uint32_t)lane << 20);
    }
  }
  __syncthreads();
  if (!ready)
    return;
  const uint64_t *src = reinterpret_cast<const uint64_t *>(&slot->S);
  for (int i = (int)threadIdx.x; i < kWords; i += (int)blockDim.x)
    words[i] = src[i];
  __syncthreads();
  const exec::Shared &S = *reinterpret_cast<const exec::Shared *>(words);
  if constexpr (kApply)
    runApply<E, OPS, Plan, Atoms>(S, first);
  else
    runPlan<E, OPS, Plan, Atoms>(S, first);
}

#ifndef PURLIN_SM_APPLY_MIN_BLOCKS
#define PURLIN_SM_APPLY_MIN_BLOCKS 0
#endif
/// The epilogue launch's blocks an SM must hold at once (its launch bound):
/// PURLIN_SM_APPLY_MIN_BLOCKS, or the plan kernel's (0, the default). A
/// measurement build's 2 caps the apply at 64 registers a thread at 512
/// threads, so that two of its blocks share an SM.
template <class Plan> struct ApplyMinBlocks {
  static constexpr int value =
      PURLIN_SM_APPLY_MIN_BLOCKS > 0 ? PURLIN_SM_APPLY_MIN_BLOCKS : PlanThreads<Plan>::minBlocks;
};

template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__global__ void __launch_bounds__(PlanThreads<Plan>::value, PlanThreads<Plan>::minBlocks)
    planKernel(const __grid_constant__ exec::Shared S, int first) {
  runPlan<E, OPS, Plan, Atoms>(S, first);
}
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__global__ void __launch_bounds__(PlanThreads<Plan>::value, ApplyMinBlocks<Plan>::value)
    applyKernel(const __grid_constant__ exec::Shared S, int first) {
  runApply<E, OPS, Plan, Atoms>(S, first);
}
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__global__ void __launch_bounds__(PlanThreads<Plan>::value, PlanThreads<Plan>::minBlocks)
    planKernelSlot(const SharedSlot *slot, int first) {
  runPlanSlot<E, OPS, Plan, Atoms>(slot, first);
}
template <class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__global__ void __launch_bounds__(PlanThreads<Plan>::value, ApplyMinBlocks<Plan>::value)
    applyKernelSlot(const SharedSlot *slot, int first) {
  runPlanSlot<E, OPS, Plan, Atoms, true>(slot, first);
}

/// A lane class A (Target or a datapath's built on it) whose register row
/// holds PURLIN_SM_EPI_ROW_WIDE times A's vectors a thread: the kernels of
/// the calls whose epilogue rows would not fit A's (entry, launchApply).
template <template <class, uint32_t, int> class A> struct WideRows {
  template <class E, uint32_t OPS, int LINES> class T : public A<E, OPS, LINES> {
  public:
    using A<E, OPS, LINES>::A;
    static constexpr int kEpiRowVecs = PURLIN_SM_EPI_ROW_WIDE * A<E, OPS, LINES>::kEpiRowVecs;
  };
};

/// Whether a launch whose widest epilogue row has `elems` elements, on
/// lanes of `threads` threads, takes the WideRows kernels: the row needs
/// more vectors a thread than Target's register row holds.
constexpr bool wideRowsFor(int64_t elems, int threads) {
  return PURLIN_SM_EPI_ROW_WIDE > 1 &&
         (elems + exec::kEpiVec - 1) / exec::kEpiVec > (int64_t)PURLIN_SM_EPI_ROW_VECS * threads;
}
#if PURLIN_SM_EPI_ROW_WIDE == 2 && PURLIN_SM_EPI_ROW_VECS == 2
static_assert(!wideRowsFor(0, 512) && !wideRowsFor(4096, 512) && !wideRowsFor(8192, 512) &&
                  wideRowsFor(8200, 512) && wideRowsFor(12288, 512) &&
                  wideRowsFor(16384, 512) && wideRowsFor(8192, 256),
              "rows of up to 2 vectors of 8 a thread take the usual kernels");
#endif

#ifndef __CUDACC_RTC__
/// Launches a kernel of this target with `most` threads per lane, its
/// launch bound (PlanThreads), or fewer (the runtime's hint,
/// PURLIN_LANE_THREADS; launch.h); `independent`: its blocks wait for none
/// (launchPlan).
inline int launch(const void *kernel, const exec::Shared *S, int first, int n,
                  void *stream, const void *slot, int most, bool independent) {
  return launchPlan(kernel, S, first, n, stream,
                    laneThreads(most, S->laneThreads), slot, 0, independent);
}

/// The kernel for a dtype (Numbering.h) among those built ahead of time
/// (DTYPES): its own element type when the plan reduces, else the copy-only
/// element of its size; the slot kernel when `slot`. Null when it is not
/// built.
/// kApply: the plan's epilogue launch (applyKernel) instead.
template <class Plan, bool Reduces, uint32_t DTYPES, uint32_t OPS,
          template <class, uint32_t, int> class Atoms = Target, int T = 0,
          bool kApply = false>
const void *kernelFor(int dtype, bool slot) {
  if constexpr (T == kNumDTypeIds) {
    (void)dtype, (void)slot;
    return nullptr;
  } else {
    if constexpr ((DTYPES >> T) & 1u)
      if (dtype == T) {
        using E = typename ElemFor<T, Reduces>::type;
        if constexpr (kApply) {
#if PURLIN_SM_SLOTS
          if (slot)
            return (const void *)applyKernelSlot<E, OPS, Plan, Atoms>;
#endif
          return slot ? nullptr : (const void *)applyKernel<E, OPS, Plan, Atoms>;
        } else {
#if PURLIN_SM_SLOTS
          if (slot)
            return (const void *)planKernelSlot<E, OPS, Plan, Atoms>;
#endif
          return slot ? nullptr : (const void *)planKernel<E, OPS, Plan, Atoms>;
        }
      }
    return kernelFor<Plan, Reduces, DTYPES, OPS, Atoms, T + 1, kApply>(dtype, slot);
  }
}

/// kernelFor with Atoms, or with WideRows<Atoms>::T where `wide` (the
/// call's rows need it: wideRowsFor); both are built for the same dtypes.
/// Plans without an epilogue (kEpi false) have no wide kernels.
template <class Plan, bool Reduces, uint32_t DTYPES, uint32_t OPS,
          template <class, uint32_t, int> class Atoms, bool kApply, bool kEpi>
const void *kernelForRows(bool wide, int dtype, bool slot) {
  if constexpr (kEpi && PURLIN_SM_EPI_ROW_WIDE > 1)
    if (wide)
      return kernelFor<Plan, Reduces, DTYPES, OPS, WideRows<Atoms>::template T, 0, kApply>(
          dtype, slot);
  (void)wide;
  return kernelFor<Plan, Reduces, DTYPES, OPS, Atoms, 0, kApply>(dtype, slot);
}

#ifndef PURLIN_SM_APPLY_VECS
#define PURLIN_SM_APPLY_VECS 0
#endif
/// The vectors of a row each thread of the epilogue's launch of its own
/// takes (launchApply): PURLIN_SM_APPLY_VECS where set (a measurement
/// build); else, where a row runs one rank's statements (the one-shot
/// apply) and a block a row with one vector a thread would not fit on the
/// GPU at once (more blocks than resident ones: 132 at 113 registers and
/// 512 threads), 2: half-width blocks, two an SM; else 1, a block as wide
/// as the row. Measured on an H100 (docs/performance.md, thirty-fifth
/// session) against one vector: d_apart 1.09x at 32 x 4096 (256 blocks),
/// 1.15x at 64 and 128, 1.20x at 1024; 0.98x at 1 token, 1.00x at 16 (128
/// blocks: one wave either way) and at hidden 8192 (a row's 1,024 vectors
/// give 512 threads two either way); the owned apply (every rank's
/// statements a row, 2s_apart) 0.86-0.95x at every size.
static_assert(PURLIN_SM_APPLY_VECS >= 0 && PURLIN_SM_APPLY_VECS <= PURLIN_SM_EPI_ROW_VECS &&
                  2 <= PURLIN_SM_EPI_ROW_VECS,
              "the apply's rows must stay in the register row");

/// Launches the plan's epilogue as a launch of its own (Plan::kApply; the
/// plan's launch held every rank): grid (a block per row, local ranks),
/// one plain launch (its blocks wait for nothing), threads enough for a
/// row's vectors (a multiple of 32, at most kThreads). Returns a
/// cudaError_t.
template <class Plan, bool Reduces, uint32_t DTYPES, uint32_t OPS,
          template <class, uint32_t, int> class Atoms = Target>
int launchApply(const exec::Shared *S, int first, int n, int dtype, void *stream,
                const void *slot) {
  int64_t rows = 1, inner = 1;
  int ranks = 1;
  Plan::applyShape(S, &rows, &inner, &ranks);
  // Vectors a thread: see PURLIN_SM_APPLY_VECS above (the register row
  // holds up to Target::kEpiRowVecs; a row that needs more at the launch
  // bound's threads, the wide kernel: WideRows).
  const int64_t vecs = (inner + exec::kEpiVec - 1) / exec::kEpiVec;
  const void *k = kernelForRows<Plan, Reduces, DTYPES, OPS, Atoms, true, true>(
      wideRowsFor(inner, PlanThreads<Plan>::value), dtype, slot != nullptr);
  if (!k)
    return (int)cudaErrorInvalidValue;
  if (n <= 0 || rows <= 0)
    return (int)cudaSuccess;
  const int64_t blocks = rows < (int64_t)0x7fffffff ? rows : (int64_t)0x7fffffff;
  auto threadsFor = [vecs](int per) {
    constexpr int kMost = PlanThreads<Plan>::value;
    const int64_t each = (vecs + per - 1) / per;
    const int64_t t = (each + 31) / 32 * 32;
    return t < 32 ? 32 : t > kMost ? kMost : (int)t;
  };
  int per = PURLIN_SM_APPLY_VECS;
  if (per == 0)
    per = ranks <= 1 && blocks * n > residentBlocks(k, threadsFor(1)) ? 2 : 1;
  const int threads = threadsFor(per);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)blocks, (unsigned)n, 1);
  cfg.blockDim = dim3((unsigned)threads, 1, 1);
  cfg.stream = (cudaStream_t)stream;
  void *args[] = {slot ? (void *)&slot : (void *)const_cast<exec::Shared *>(S), &first};
  return (int)cudaLaunchKernelExC(&cfg, k, args);
}

/// A kernel's host launch: launch() above, or another datapath's; `most`:
/// the kernel's launch bound (threads a lane); `independent`: no block
/// waits for another (launchPlan).
using LaunchFn = int (*)(const void *kernel, const exec::Shared *S, int first,
                         int n, void *stream, const void *slot, int most,
                         bool independent);

/// `slot` null: the kernel takes *S by value; else it reads its shared
/// state from `slot` (a SharedSlot in device memory; S gives the grid).
template <class Plan, bool Reduces, uint32_t DTYPES, uint32_t OPS,
          template <class, uint32_t, int> class Atoms = Target,
          LaunchFn Launch = launch>
int entry(const exec::Shared *S, int first, int n, int dtype, int op,
          void *stream, const void *slot) {
  // A call whose widest epilogue row needs more vectors a thread than the
  // register row holds: the wide kernels (WideRows).
  const void *k = kernelForRows<Plan, Reduces, DTYPES, OPS, Atoms, false, Plan::kEpiRows>(
      wideRowsFor(Plan::rowElems(S), laneThreads(PlanThreads<Plan>::value, S->laneThreads)),
      dtype, slot != nullptr);
  if (!k || (Reduces && op != exec::kCopy && !hasOp(OPS, op)))
    return (int)cudaErrorInvalidValue; // not built: the runtime compiles it
  // A plan whose syncs are all boundary syncs, with every rank in this
  // launch, skips them all: its blocks wait for none.
  const bool independent = !OneLaunchSyncs<Plan>::value && S->oneLaunch != 0;
  const int e = Launch(k, S, first, n, stream, slot, PlanThreads<Plan>::value,
                       independent);
  if constexpr (PlanApplies<Plan>::value)
    if (e == (int)cudaSuccess && S->oneLaunch)
      return launchApply<Plan, Reduces, DTYPES, OPS, Atoms>(S, first, n, dtype,
                                                            stream, slot);
  return e;
}
#endif

} // namespace sm
} // namespace purlin

// PURLIN_PLAN_ENTRY(NAME, FN[, REDUCES[, INNER_SYNCS[, LINES]]]): entry_NAME for
// plan function FN (a template over the target), launching the kernels
// built ahead of time (the generated code's kAotDtypes, kAotOps and
// kClauseOps). REDUCES 0: a copy-only collective, kernels by element size
// alone. INNER_SYNCS 0: every notify and wait of the plan is a boundary
// sync. LINES: the line formats of the plan's flagged-line moves
// (exec::LineFmtBits: 1 LL, 2 LL128; 0 none: Target's LINES). Defaults 1
// (LINES: every format). Compiled at first use (NVRTC), it defines the kernels
// purlin_jit_NAME and purlin_jit_slot_NAME for PURLIN_JIT_DTYPE instead; with PURLIN_JIT_PLAN
// ("p2"), the other plans' kernels are empty (their plan functions are not
// instantiated), so that a first use compiles the one plan it launches;
// with PURLIN_JIT_KERNELS (1 or 2), the other kind's kernels are empty too.
#ifndef PURLIN_SM_ATOMS
#define PURLIN_SM_ATOMS ::purlin::sm::Target
#endif
#ifndef PURLIN_SM_LAUNCH
#define PURLIN_SM_LAUNCH ::purlin::sm::launch
#endif
#define PURLIN_PLAN_FN(NAME, FN, INNER_SYNCS, LINES)                           \
  struct PlanFn_##NAME {                                                       \
    static constexpr bool kInnerSyncs = (INNER_SYNCS) != 0;                    \
    static constexpr int kLines = (LINES);                                     \
    static constexpr bool kApply = false;                                      \
    static constexpr bool kEpiRows = kHasEpilogue;                             \
    template <class Tgt> __device__ static void run(Tgt &t) { FN(t); }         \
    static int64_t rowElems(const ::purlin::exec::Shared *S) {                 \
      return epiRowElems(S);                                                   \
    }                                                                          \
  };
// A plan whose epilogue may run as a launch of its own (the unfused plans:
// APPLY its consume from received, SHAPE its rows x elements and the ranks
// whose statements a row runs: 1, or R owned). INNER_SYNCS
// 2: inner syncs, none before the epilogue (the launch apart has none).
#define PURLIN_PLAN_FN_APPLY(NAME, FN, INNER_SYNCS, LINES, APPLY, SHAPE)       \
  struct PlanFn_##NAME {                                                       \
    static constexpr bool kInnerSyncs = (INNER_SYNCS) != 0;                    \
    static constexpr bool kApartInnerSyncs = (INNER_SYNCS) == 1;               \
    static constexpr int kLines = (LINES);                                     \
    static constexpr bool kApply = true;                                       \
    static constexpr bool kEpiRows = kHasEpilogue;                             \
    template <class Tgt> __device__ static void run(Tgt &t) { FN(t); }         \
    static int64_t rowElems(const ::purlin::exec::Shared *S) {                 \
      return epiRowElems(S);                                                   \
    }                                                                          \
    template <class Tgt> __device__ static void apply(Tgt &t) { APPLY(t); }    \
    static void applyShape(const ::purlin::exec::Shared *S, int64_t *rows,     \
                           int64_t *inner, int *ranks) {                       \
      SHAPE(S, rows, inner, ranks);                                            \
    }                                                                          \
  };
#ifdef __CUDACC_RTC__
namespace purlin {
namespace sm {
/// Whether the first-use program builds plan `name` (all of them unless
/// PURLIN_JIT_PLAN names one).
constexpr bool jitWants(const char *name) {
#ifdef PURLIN_JIT_PLAN
  const char *w = PURLIN_JIT_PLAN;
  while (*name && *name == *w) {
    ++name;
    ++w;
  }
  return *name == *w;
#else
  return name != nullptr;
#endif
}
/// Whether the first-use program builds the kernels of kind `kind` (1: the
/// shared state as a parameter, 2: read from a slot): both unless
/// PURLIN_JIT_KERNELS names one. The runtime compiles the slot kernels only
/// where a launch may need them (Jit.h), as each kind is half the compile.
constexpr bool jitBuilds(int kind) {
#ifdef PURLIN_JIT_KERNELS
  return (PURLIN_JIT_KERNELS & kind) != 0;
#else
  return kind != 0;
#endif
}
/// runPlan (runPlanSlot) when `Wanted`; nothing instantiated otherwise.
template <bool Wanted, class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__device__ __forceinline__ void runPlanIf(const exec::Shared &S, int first) {
  if constexpr (Wanted)
    runPlan<E, OPS, Plan, Atoms>(S, first);
}
template <bool Wanted, class E, uint32_t OPS, class Plan,
          template <class, uint32_t, int> class Atoms = Target>
__device__ __forceinline__ void runPlanSlotIf(const SharedSlot *slot,
                                              int first) {
  if constexpr (Wanted)
    runPlanSlot<E, OPS, Plan, Atoms>(slot, first);
}
} // namespace sm
} // namespace purlin
#define PURLIN_PLAN_ENTRY_5(NAME, FN, REDUCES, INNER_SYNCS, LINES)             \
  PURLIN_PLAN_FN(NAME, FN, INNER_SYNCS, LINES)                                 \
  /* its size read by the runtime at load: 2 bytes when the plan waits    \
     inside a launch, 1 when the blocks of a one-launch call wait for none  \
     (launchPlan's `independent`); no copy of its contents needed */        \
  extern "C" __device__ char                                                  \
      purlin_jit_inner_syncs_##NAME[(INNER_SYNCS) != 0 ? 2 : 1];               \
  extern "C" __global__ void __launch_bounds__(                               \
      ::purlin::sm::PlanThreads<PlanFn_##NAME>::value,                         \
      ::purlin::sm::PlanThreads<PlanFn_##NAME>::minBlocks)                     \
      purlin_jit_##NAME(const __grid_constant__ ::purlin::exec::Shared S,      \
                        int first) {                                           \
    ::purlin::sm::runPlanIf<                                                   \
        ::purlin::sm::jitWants(#NAME) && ::purlin::sm::jitBuilds(1),           \
        typename ::purlin::sm::ElemFor<PURLIN_JIT_DTYPE, (REDUCES) != 0>::type, \
        kAotOps | kClauseOps, PlanFn_##NAME, PURLIN_SM_ATOMS>(S, first);       \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(                               \
      ::purlin::sm::PlanThreads<PlanFn_##NAME>::value,                         \
      ::purlin::sm::PlanThreads<PlanFn_##NAME>::minBlocks)                     \
      purlin_jit_slot_##NAME(const ::purlin::sm::SharedSlot *slot, int first) { \
    ::purlin::sm::runPlanSlotIf<                                               \
        ::purlin::sm::jitWants(#NAME) && ::purlin::sm::jitBuilds(2),           \
        typename ::purlin::sm::ElemFor<PURLIN_JIT_DTYPE, (REDUCES) != 0>::type, \
        kAotOps | kClauseOps, PlanFn_##NAME, PURLIN_SM_ATOMS>(slot, first);    \
  }
// First use runs the epilogue in the plan's launch (kApply false).
#define PURLIN_PLAN_ENTRY_7(NAME, FN, REDUCES, INNER_SYNCS, LINES, APPLY, SHAPE) \
  PURLIN_PLAN_ENTRY_5(NAME, FN, REDUCES, INNER_SYNCS, LINES)
#else
#define PURLIN_PLAN_ENTRY_7(NAME, FN, REDUCES, INNER_SYNCS, LINES, APPLY, SHAPE) \
  PURLIN_PLAN_FN_APPLY(NAME, FN, INNER_SYNCS, LINES, APPLY, SHAPE)             \
  PURLIN_PLAN_ENTRY_BODY(NAME, REDUCES)
#define PURLIN_PLAN_ENTRY_5(NAME, FN, REDUCES, INNER_SYNCS, LINES)             \
  PURLIN_PLAN_FN(NAME, FN, INNER_SYNCS, LINES)                                 \
  PURLIN_PLAN_ENTRY_BODY(NAME, REDUCES)
#define PURLIN_PLAN_ENTRY_BODY(NAME, REDUCES)                                  \
  static int entry_##NAME(const purlin_shared_t *S, int first, int n,          \
                          int dtype, int op, void *stream, const void *slot) { \
    return ::purlin::sm::entry<PlanFn_##NAME, (REDUCES) != 0, kAotDtypes,      \
                               kAotOps | kClauseOps, PURLIN_SM_ATOMS,          \
                               PURLIN_SM_LAUNCH>(S, first, n, dtype, op,       \
                                                 stream, slot);                \
  }
#endif
#define PURLIN_PLAN_ENTRY_4(NAME, FN, REDUCES, INNER_SYNCS)                    \
  PURLIN_PLAN_ENTRY_5(NAME, FN, REDUCES, INNER_SYNCS, ::purlin::exec::kLinesAll)
#define PURLIN_PLAN_ENTRY_3(NAME, FN, REDUCES)                                 \
  PURLIN_PLAN_ENTRY_5(NAME, FN, REDUCES, 1, ::purlin::exec::kLinesAll)
#define PURLIN_PLAN_ENTRY_2(NAME, FN)                                          \
  PURLIN_PLAN_ENTRY_5(NAME, FN, 1, 1, ::purlin::exec::kLinesAll)
#define PURLIN_PLAN_ENTRY_PICK(_1, _2, _3, _4, _5, _6, _7, M, ...) M
#define PURLIN_PLAN_ENTRY(...)                                                 \
  PURLIN_PLAN_ENTRY_PICK(__VA_ARGS__, PURLIN_PLAN_ENTRY_7, PURLIN_PLAN_ENTRY_6_NONE, \
                         PURLIN_PLAN_ENTRY_5, PURLIN_PLAN_ENTRY_4,             \
                         PURLIN_PLAN_ENTRY_3, PURLIN_PLAN_ENTRY_2, )(__VA_ARGS__)
#define PURLIN_HOST_ENTRY(NAME) nullptr
#define PURLIN_HOST_APPLY(NAME) nullptr
#define PURLIN_CUDA_ENTRY(NAME) entry_##NAME
