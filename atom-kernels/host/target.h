// The host target: ranks and lanes as host threads over host memory. Its
// atoms move one element at a time through DType.h's reduceElement (the
// reference arithmetic) and jitter at random points, so that ordering bugs
// in a plan surface as wrong results or timeouts rather than hiding behind a
// lucky schedule.
#pragma once

#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"
#include "purlin/spec/DType.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <random>
#include <thread>

namespace purlin {
namespace host {

/// Per-launch configuration shared by all lanes (HostRunner fills it).
struct HostAtoms {
  DType dtype = DType::F32;
  uint64_t seed = 1;       // jitter seed; 0: no jitter
  int maxDelayUs = 50;     // longest random pause
  int64_t timeoutMs = 20000;
  std::atomic<int> timedOut{0};
  // An unfused plan's epilogue as a launch of its own (HostDatapath: every
  // rank in one launch and the plan has one): the plan's lanes return
  // before it (apart), then applyLanes lanes a rank run it.
  bool apart = false;
  int applyLanes = 1;
  // Never apart: the apply in the plan's launch even where every rank runs
  // in it (the SM datapath's case for kernels compiled at first use; the
  // runner's --apply-in-launch).
  bool applyInLaunch = false;
  // Waiters sleep on the condition variable of their signal word's bucket
  // and a signal wakes that bucket's waiters only: lanes are many more
  // threads than cores, so polling waiters would starve the lanes they wait
  // for, timed sleeps would dominate the run time, and one variable for
  // every word would wake every waiting lane at each signal. 1024 buckets:
  // with 64, a launch of 8 ranks x 16 lanes woke waiters of other words
  // often enough to cost 11% of a test grid's time (2 cores; 15% of its
  // CPU time, most of it in the kernel).
  struct Bucket {
    std::mutex mu;
    std::condition_variable cv;
  };
  static constexpr int kBuckets = 1024;
  Bucket buckets[kBuckets];
  Bucket &bucketOf(const uint64_t *w) {
    return buckets[((uintptr_t)w / sizeof(uint64_t)) % kBuckets];
  }
};

class Target {
public:
  /// `apply`: a lane of the epilogue's launch of its own (cfg->applyLanes
  /// lanes a rank, no epoch: it touches no signal).
  Target(const exec::Shared &S, int rank, int lane, HostAtoms *cfg,
         bool apply = false)
      : S_(S), rank_(rank), lane_(lane), lanes_(apply ? cfg->applyLanes : exec::liveLanesOf(S)),
        apart_(!apply && cfg->apart && S.oneLaunch), cfg_(cfg),
        rng_(cfg->seed * 7919 + rank * 131 + lane) {
    if (apply)
      return;
    uint64_t *e = exec::epochWord(S, rank, lane);
    epoch_ = *e + 1; // only this lane touches its epoch word
    *e = epoch_;
  }
  int rank() const { return rank_; }
  int lane() const { return lane_; }
  const exec::Shared &shared() const { return S_; }
  uint64_t epoch() const { return epoch_; }
  void barrier() {}
  bool leader() const { return true; }
  int thread() const { return 0; }
  int threads() const { return 1; }
  // The lanes a step's pieces are cut among (exec/Epilogue.h), and whether
  // the unfused plans' epilogue runs as a launch of its own (as the SM
  // datapath does where every rank runs in one launch: HostDatapath).
  int lanes() const { return lanes_; }
  bool epilogueApart() const { return apart_; }
  exec::Move *laneMoves() { return moves_; }
  bool barrierOr(bool v) { return v; }
  bool aborted() const { return aborted_; }
  void abort() {
    aborted_ = true;
    cfg_->timedOut.store(1);
  }
  int64_t vecElems() const { return 16 / S_.elemSize; }

  void signal(uint64_t *w, uint64_t v) {
    jitter();
    __atomic_store_n(w, v, __ATOMIC_RELEASE);
    HostAtoms::Bucket &b = cfg_->bucketOf(w);
    { std::lock_guard<std::mutex> lk(b.mu); }
    b.cv.notify_all();
  }
  bool wait(const uint64_t *w, uint64_t v) {
    auto ready = [&] { return __atomic_load_n(w, __ATOMIC_ACQUIRE) >= v; };
    if (!ready()) {
      HostAtoms::Bucket &b = cfg_->bucketOf(w);
      std::unique_lock<std::mutex> lk(b.mu);
      if (!b.cv.wait_for(lk, std::chrono::milliseconds(cfg_->timeoutMs), ready))
        return false;
    }
    jitter();
    return true;
  }

  bool move(const exec::Move &m, int64_t a, int64_t b, int, int) {
    if (m.ll != exec::kLinesNone)
      return moveLines(m, a, b);
    const int es = S_.elemSize;
    const exec::Box &bx = m.box;
    const uint8_t *srcs[exec::kMaxRanks];
    uint8_t val[16];
    for (int64_t t = a; t < b; ++t) {
      if ((t & 255) == 0)
        jitter();
      int64_t so = bx.sbase, dof = bx.dbase, rem = t;
      for (int j = bx.nfree - 1; j >= 0; --j) {
        int64_t cj = rem % bx.ext[j];
        rem /= bx.ext[j];
        so += cj * bx.sstr[j];
        dof += cj * bx.dstr[j];
      }
      if (m.srcFlat)
        so = t;
      if (m.dstFlat)
        dof = t;
      for (int i = 0; i < m.nsrc; ++i)
        srcs[i] = (const uint8_t *)m.src[i] + so * es;
      reduceElement(cfg_->dtype, (RedOp)m.op, srcs, m.nsrc, val);
      for (int i = 0; i < m.ndst; ++i)
        std::memcpy(m.dst[i] + dof * es, val, es);
    }
    return true;
  }

  // A register move: the same element loop over flat ranges.
  bool moveVec(const char *const *src, int nsrc, char *const *dst, int ndst,
               int64_t soff, int64_t doff, int64_t bytes, int op, int tid,
               int nthr) {
    const int es = S_.elemSize;
    if (nsrc < 1 || ndst < 1 || nsrc > exec::kRegPtrs ||
        ndst > exec::kRegPtrs || bytes % es != 0)
      return false;
    exec::Move m;
    m.box.nfree = 1;
    m.box.n = m.box.ext[0] = bytes / es;
    m.box.sstr[0] = m.box.dstr[0] = 1;
    m.nsrc = nsrc;
    m.ndst = ndst;
    for (int i = 0; i < nsrc; ++i)
      m.src[i] = src[i] + soff;
    for (int i = 0; i < ndst; ++i)
      m.dst[i] = dst[i] + doff;
    m.srcFlat = m.dstFlat = true;
    m.op = op;
    return move(m, 0, m.box.n, tid, nthr);
  }

  // A flagged register push: the names of the source range as lines into
  // each destination slot (moveLines on a flat Move per destination).
  bool pushLines(int fmt, const char *src, char *const *dst, int ndst,
                 int64_t soff, int64_t doff, int64_t bytes, int, int) {
    const int es = S_.elemSize;
    if (ndst < 1 || ndst > exec::kRegPtrs || bytes % es || soff % es || doff % es)
      return false;
    exec::Move m = exec::linesPushMove(fmt, src, soff, doff, bytes, es);
    for (int i = 0; i < ndst; ++i) {
      m.dst[0] = dst[i];
      moveLines(m, doff / es, (doff + bytes) / es);
    }
    return true;
  }
  // A flagged register consume: the slots' lines of the range, polled and
  // combined in source order (moveLines on one flat Move).
  int consumeLines(int fmt, const char *const *src, int nsrc, char *dst,
                   int64_t soff, int64_t doff, int64_t bytes, int op, int, int) {
    const int es = S_.elemSize;
    if (nsrc < 1 || nsrc > exec::kRegPtrs || bytes % es || soff % 8 || doff % es)
      return 0;
    const exec::Move m =
        exec::linesConsumeMove(fmt, src, nsrc, dst, soff, doff, bytes, es, op);
    return moveLines(m, soff / es, (soff + bytes) / es) ? 1 : -1;
  }
  // Epilogues (exec/Epilogue.h): elements as f32 through DType.h, the
  // reference's conversions; a lane is one thread, so a row reduction is
  // the thread's own fold, in element order.
  float loadF(const char *base, int64_t i) const {
    return elementToFloat(cfg_->dtype, (const uint8_t *)base + i * S_.elemSize);
  }
  void storeF(char *base, int64_t i, float v) const {
    floatToElement(cfg_->dtype, v, (uint8_t *)base + i * S_.elemSize);
  }
  float rowReduce(float v, int) const { return v; }
  template <int N> void rowReduceN(float *, int, int) const {}
  // An epilogue's buffer of its own type (exec::Shared::bufDType).
  float loadFAs(int d, const char *base, int64_t i) const {
    return elementToFloat((DType)d, (const uint8_t *)base + i * dtypeSize((DType)d));
  }
  void storeFAs(int d, char *base, int64_t i, float v) const {
    floatToElement((DType)d, v, (uint8_t *)base + i * dtypeSize((DType)d));
  }
  // The register row: the lane's one thread holds up to 1024 vectors (a
  // row of 8192 elements, 32 KiB of stack), loaded element by element as
  // loadF does, in element order.
  static constexpr int kEpiRowVecs = 1024;
  // The first vector's inputs kept across the passes, the others loaded in
  // each: a row of several vectors runs both of the register row's ways.
  static constexpr int kEpiHeldVecs = 1;
  void storeF8(char *base, int64_t i, const float *v) const {
    for (int j = 0; j < exec::kEpiVec; ++j)
      storeF(base, i + j, v[j]);
  }
  void loadF8(const char *base, int64_t i, float *out) const {
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = loadF(base, i + j);
  }
  struct Raw8 {
    float v[exec::kEpiVec];
  };
  void loadRaw8(const char *base, int64_t i, Raw8 &x) const { loadF8(base, i, x.v); }
  void widen8(const Raw8 &x, float *out) const {
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = x.v[j];
  }
  void prefetchF8(const char *, int64_t) const {} // no cache to warm
  void prefetchL2(const char *, int64_t) const {}
  // f32 vectors of the received areas (the unfused plans), as loadFAs and
  // storeFAs take them one by one.
  void loadF32x8(const char *base, int64_t i, float *out) const {
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = loadFAs(exec::kElemF32, base, i + j);
  }
  void storeF32x8(char *base, int64_t i, const float *v) const {
    for (int j = 0; j < exec::kEpiVec; ++j)
      storeFAs(exec::kElemF32, base, i + j, v[j]);
  }

  // Flagged lines (the low-latency protocol), in the SM targets' formats
  // (exec/Lines.h): LL, a 16-byte line of data bytes 0-3, the flag, data
  // bytes 4-7, the flag (the low 32 bits of the epoch); LL128, a 128-byte
  // line of 120 data bytes and the flag word (the epoch). Here, in both,
  // a line's data is written first and its flags with release stores; a
  // reader acquires the flags and then reads the data (the SM's LL128
  // does just that; its LL stores and loads a line at once). The slot is
  // the executor's (exec::stagingSlot: with kParity, half epoch & 1), as on
  // the SM target.
  void storeFlags(char *slot, int fmt, int64_t j) const {
    char *f = slot + exec::lineFlagOf(fmt, j);
    if (fmt == exec::kFmtLL128) {
      __atomic_store_n((uint64_t *)f, epoch_, __ATOMIC_RELEASE);
      return;
    }
    __atomic_store_n((uint32_t *)f, (uint32_t)epoch_, __ATOMIC_RELEASE);
    __atomic_store_n((uint32_t *)(f + 8), (uint32_t)epoch_, __ATOMIC_RELEASE);
  }
  bool flagsSet(const char *slot, int fmt, int64_t j) const {
    const char *f = slot + exec::lineFlagOf(fmt, j);
    if (fmt == exec::kFmtLL128)
      return __atomic_load_n((const uint64_t *)f, __ATOMIC_ACQUIRE) == epoch_;
    return __atomic_load_n((const uint32_t *)f, __ATOMIC_ACQUIRE) == (uint32_t)epoch_ &&
           __atomic_load_n((const uint32_t *)(f + 8), __ATOMIC_ACQUIRE) == (uint32_t)epoch_;
  }
  int64_t nameOffset(const exec::Box &bx, int64_t t, bool src) const {
    int64_t off = src ? bx.sbase : bx.dbase, rem = t;
    for (int j = bx.nfree - 1; j >= 0; --j) {
      int64_t cj = rem % bx.ext[j];
      rem /= bx.ext[j];
      off += cj * (src ? bx.sstr[j] : bx.dstr[j]);
    }
    return off;
  }
  // Element t of a slot of lines, byte by byte (LL splits an 8-byte
  // element around the flag).
  void slotElem(int fmt, const char *slot, int64_t t, uint8_t *out) const {
    const int es = S_.elemSize;
    for (int k = 0; k < es; ++k)
      out[k] = (uint8_t)slot[exec::lineByteOf(fmt, t * es + k)];
  }
  bool moveLines(const exec::Move &m, int64_t a, int64_t b) {
    const int es = S_.elemSize, fmt = m.fmt;
    const int64_t epl = exec::lineData(fmt) / es; // elements per line
    const exec::Box &bx = m.box;
    for (int64_t j = a / epl; j * epl < b; ++j) {
      jitter();
      const int64_t t0 = j * epl > a ? j * epl : a, t1 = j * epl + epl < b ? j * epl + epl : b;
      if (m.ll == exec::kLinesDst) {
        for (int64_t t = t0; t < t1; ++t) {
          const char *e = m.src[0] + (m.srcFlat ? t : nameOffset(bx, t, true)) * es;
          for (int k = 0; k < es; ++k)
            m.dst[0][exec::lineByteOf(fmt, t * es + k)] = e[k];
        }
        storeFlags(m.dst[0], fmt, j);
        continue;
      }
      // kLinesSrc: every source's line (its flags, then its data), then the
      // names of the line.
      for (int s = 0; s < m.nsrc; ++s) {
        auto start = std::chrono::steady_clock::now();
        for (uint32_t i = 1; !flagsSet(m.src[s], fmt, j); ++i) {
          std::this_thread::yield();
          if ((i & 255) == 0 && std::chrono::steady_clock::now() - start >
                                    std::chrono::milliseconds(cfg_->timeoutMs))
            return false;
        }
      }
      const uint8_t *srcs[exec::kMaxRanks];
      uint8_t data[exec::kMaxRanks][16], val[16];
      for (int64_t t = t0; t < t1; ++t) {
        for (int s = 0; s < m.nsrc; ++s) {
          slotElem(fmt, m.src[s], t, data[s]);
          srcs[s] = data[s];
        }
        reduceElement(cfg_->dtype, (RedOp)m.op, srcs, m.nsrc, val);
        const int64_t dof = m.dstFlat ? t : nameOffset(bx, t, false);
        for (int i = 0; i < m.ndst; ++i)
          std::memcpy(m.dst[i] + dof * es, val, es);
      }
    }
    return true;
  }

private:
  void jitter() {
    if (!cfg_->seed || cfg_->maxDelayUs <= 0)
      return;
    uint64_t x = rng_();
    if (x % 8 == 0)
      std::this_thread::sleep_for(
          std::chrono::microseconds((x >> 8) % cfg_->maxDelayUs));
    else if (x % 8 == 1)
      std::this_thread::yield();
  }
  const exec::Shared &S_;
  int rank_, lane_, lanes_;
  bool apart_;
  HostAtoms *cfg_;
  std::mt19937_64 rng_;
  uint64_t epoch_ = 0;
  bool aborted_ = false;
  exec::Move moves_[exec::kMaxRanks];
};

} // namespace host
} // namespace purlin

#define PURLIN_TARGET_NAME "host"
// PURLIN_PLAN_ENTRY(NAME, FN, REDUCES[, INNER_SYNCS[, LINES]]): the host keeps
// epochs always (each lane bumps its own) and runs any move, so INNER_SYNCS
// and LINES are not used.
// With APPLY and SHAPE (an unfused plan whose epilogue may run as a
// launch of its own), entry_apply_NAME runs APPLY as lane `lane` of that
// launch (host_apply).
#define PURLIN_HOST_PLAN_ENTRY(NAME, FN)                                        \
  inline void entry_##NAME(const purlin_shared_t *S, int rank, int lane,       \
                           void *atoms) {                                      \
    purlin::host::Target t(*S, rank, lane, (purlin::host::HostAtoms *)atoms);  \
    FN(t);                                                                     \
  }
#define PURLIN_HOST_PLAN_ENTRY_7(NAME, FN, REDUCES, INNER, LINES, APPLY, SHAPE) \
  PURLIN_HOST_PLAN_ENTRY(NAME, FN)                                              \
  inline void entry_apply_##NAME(const purlin_shared_t *S, int rank, int lane, \
                                 void *atoms) {                                \
    purlin::host::Target t(*S, rank, lane, (purlin::host::HostAtoms *)atoms,   \
                           true);                                              \
    APPLY(t);                                                                  \
  }
#define PURLIN_HOST_PLAN_ENTRY_N(NAME, FN, ...) PURLIN_HOST_PLAN_ENTRY(NAME, FN)
#define PURLIN_HOST_PLAN_ENTRY_PICK(_1, _2, _3, _4, _5, _6, _7, M, ...) M
#define PURLIN_PLAN_ENTRY(...)                                                 \
  PURLIN_HOST_PLAN_ENTRY_PICK(__VA_ARGS__, PURLIN_HOST_PLAN_ENTRY_7,           \
                              PURLIN_HOST_PLAN_ENTRY_N, PURLIN_HOST_PLAN_ENTRY_N, \
                              PURLIN_HOST_PLAN_ENTRY_N, PURLIN_HOST_PLAN_ENTRY_N, \
                              PURLIN_HOST_PLAN_ENTRY_N, )(__VA_ARGS__)
#define PURLIN_HOST_ENTRY(NAME) entry_##NAME
#define PURLIN_HOST_APPLY(NAME) entry_apply_##NAME
#define PURLIN_CUDA_ENTRY(NAME) nullptr
