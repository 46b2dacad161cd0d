// The copy-engine target ("ce" in the target table): a plan's steps become a
// schedule of DMA copies and stream memory operations per rank, so a copy
// collective runs with no kernel and leaves every SM to the application.
//
// How: the generated plan function runs on the host CPU, once per rank, on
// a Target that records instead of acting (the executor, purlin/spec/Exec.h,
// is unchanged: the same step functions every target runs). A move becomes
// copies of contiguous runs (adjacent runs merged), a notify a store of a
// token into the peer's signal word, a wait a wait for the token followed
// by a store of 0. A datapath then plays the schedule: the CUDA runtime's
// `ce` datapath (runtime/cuda/ce) as cudaMemcpy / cuMemcpyBatchAsync and
// cuStreamWriteValue32 / cuStreamWaitValue32 on one stream per rank; the
// host runner's model of it (runtime/host/lib/CeModel.cpp) as memcpy and
// atomic flags on one thread per rank.
//
// Tokens, not epochs. The executor's signal words grow by an epoch per
// launch; a stream memory operation compares with an immediate, which a
// CUDA graph fixes at capture, so a replay could not write or wait for a
// new epoch. Here each word carries a token: a notify stores 1, the waiter
// (the word's owner) waits until it reads 1 and stores 0. That is right
// when a notify of a word in launch n+1 is ordered after its waiter's
// reset in launch n:
//  - every rank in one launch (one GPU, one process): the runtime forks the
//    ranks' streams from the caller's stream and joins them back, so every
//    reset of launch n is done before launch n+1 starts;
//  - boundary syncs kept (several GPUs, PURLIN_ONE_LAUNCH=0): the plans end
//    with their `done` round, whose waits follow every reset of the launch
//    in each rank's stream. The host model reports a notify that finds an
//    unconsumed token ("overrun"), so a plan for which this does not hold
//    fails there rather than hanging a GPU.
//
// Lanes and chunks: the schedule is recorded with one lane and one chunk
// (S.L = S.K = 1): a rank's copies are one stream's, and cutting them into
// lanes and chunks would only add operations. Reductions and flagged lines
// are refused with a reason: the copy engine moves bytes, it cannot combine
// them, nor poll a line's flag.
//
// CUDA-free and MLIR-free: plain C++ that the host runner and the CUDA
// runtime both include (this header); target.h adds the entry macros for
// the generated code.
#pragma once

#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace purlin {
namespace ce {

/// The value a notify stores; a wait waits for it and stores 0.
constexpr uint32_t kToken = 1;

/// One operation of a rank's schedule, in the rank's stream order.
struct Op {
  enum Kind { Copy, Signal, Wait } kind = Copy;
  char *dst = nullptr;       // Copy: `bytes` from src to dst
  const char *src = nullptr;
  int64_t bytes = 0;
  uint64_t *word = nullptr;  // Signal, Wait: the signal word
};

/// A rank's schedule, or why its plan cannot run on the copy engine.
struct Schedule {
  std::vector<Op> ops;
  std::string error;
  int64_t copies() const {
    int64_t n = 0;
    for (const Op &o : ops)
      n += o.kind == Op::Copy;
    return n;
  }
};

constexpr const char *kReducesError =
    "the copy engine only copies bytes: a reduction (or a collective whose "
    "op is a parameter) runs on the SM datapath";
constexpr const char *kEpilogueError =
    "the copy engine only copies bytes: an epilogue (arithmetic on what a "
    "rank receives) runs on the SM datapath";
constexpr const char *kLinesError =
    "flagged lines (the low-latency protocol, LL or LL128) are polled by a "
    "kernel: this plan runs on the SM datapath";

/// The recording target of one rank (the Target contract of Exec.h, with
/// one lane of one thread; nothing waits while recording).
class Target {
public:
  Target(const exec::Shared &S, int rank, Schedule *s)
      : S_(S), rank_(rank), s_(s) {}
  int rank() const { return rank_; }
  int lane() const { return 0; }
  const exec::Shared &shared() const { return S_; }
  uint64_t epoch() const { return kToken; }
  void barrier() {}
  bool leader() const { return true; }
  int thread() const { return 0; }
  int threads() const { return 1; }
  int lanes() const { return S_.L; }
  bool epilogueApart() const { return false; } // epilogues are refused
  exec::Move *laneMoves() { return moves_; }
  bool barrierOr(bool v) { return v; }
  bool aborted() const { return !s_->error.empty(); }
  void abort() {}
  int64_t vecElems() const { return 16 / S_.elemSize; }

  void signal(uint64_t *w, uint64_t) { push(Op::Signal, w); }
  bool wait(const uint64_t *w, uint64_t) {
    push(Op::Wait, const_cast<uint64_t *>(w));
    return true;
  }

  /// Names [a, b) of the move's box as copies of contiguous runs.
  bool move(const exec::Move &m, int64_t a, int64_t b, int, int) {
    if (m.ll != exec::kLinesNone)
      return refuse(kLinesError);
    if (m.nsrc != 1)
      return refuse(kReducesError);
    const exec::Box &bx = m.box;
    const int last = bx.nfree - 1;
    const bool unit = (m.srcFlat || bx.sstr[last] == 1) &&
                      (m.dstFlat || bx.dstr[last] == 1);
    const int64_t es = S_.elemSize;
    for (int64_t t = a; t < b;) {
      int64_t so = bx.sbase, dof = bx.dbase, rem = t;
      for (int j = last; j >= 0; --j) {
        const int64_t cj = rem % bx.ext[j];
        rem /= bx.ext[j];
        so += cj * bx.sstr[j];
        dof += cj * bx.dstr[j];
      }
      if (m.srcFlat)
        so = t;
      if (m.dstFlat)
        dof = t;
      int64_t n = unit ? bx.ext[last] - t % bx.ext[last] : 1;
      if (n > b - t)
        n = b - t;
      for (int i = 0; i < m.ndst; ++i)
        copy(m.dst[i] + dof * es, m.src[0] + so * es, n * es);
      t += n;
    }
    return true;
  }

  /// A register move: copies where there is one source; else declined (the
  /// step then builds Moves, and move() refuses the reduction).
  bool moveVec(const char *const *src, int nsrc, char *const *dst, int ndst,
               int64_t soff, int64_t doff, int64_t bytes, int, int, int) {
    if (nsrc != 1)
      return false;
    for (int i = 0; i < ndst; ++i)
      copy(dst[i] + doff, src[0] + soff, bytes);
    return true;
  }

  /// Flagged lines, of either format: declined (the step's Moves then
  /// reach move(), which refuses them with the reason).
  bool pushLines(int, const char *, char *const *, int, int64_t, int64_t,
                 int64_t, int, int) {
    return false;
  }

  /// Flagged consume: declined, as pushLines.
  int consumeLines(int, const char *const *, int, char *, int64_t, int64_t,
                   int64_t, int, int, int) {
    return 0;
  }

  /// Epilogues (element-wise arithmetic on what a rank receives): refused
  /// with the reason, as reductions; the values returned are never stored.
  float loadF(const char *, int64_t) {
    refuse(kEpilogueError);
    return 0.0f;
  }
  void storeF(char *, int64_t, float) { refuse(kEpilogueError); }
  float loadFAs(int, const char *b, int64_t i) { return loadF(b, i); }
  void storeFAs(int, char *b, int64_t i, float v) { storeF(b, i, v); }
  float rowReduce(float v, int) { return v; }
  template <int N> void rowReduceN(float *, int, int) {}
  static constexpr int kEpiRowVecs = 1;
  static constexpr int kEpiHeldVecs = 0;
  void storeF8(char *, int64_t, const float *) { refuse(kEpilogueError); }
  void loadF8(const char *, int64_t, float *out) {
    refuse(kEpilogueError);
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = 0.0f;
  }
  struct Raw8 {
    float v[exec::kEpiVec];
  };
  void loadRaw8(const char *b, int64_t i, Raw8 &x) { loadF8(b, i, x.v); }
  void widen8(const Raw8 &x, float *out) {
    for (int j = 0; j < exec::kEpiVec; ++j)
      out[j] = x.v[j];
  }
  void prefetchF8(const char *, int64_t) {}
  void prefetchL2(const char *, int64_t) {}
  void storeF32x8(char *b, int64_t i, const float *v) { storeF8(b, i, v); }
  void loadF32x8(const char *b, int64_t i, float *out) { loadF8(b, i, out); }

private:
  bool refuse(const char *why) {
    if (s_->error.empty())
      s_->error = why;
    return true; // not a timeout: aborted() stops the recording
  }
  void push(Op::Kind k, uint64_t *w) {
    Op o;
    o.kind = k;
    o.word = w;
    s_->ops.push_back(o);
  }
  // Appends a copy, merged with the previous one where both sides continue.
  void copy(char *dst, const char *src, int64_t bytes) {
    if (bytes <= 0)
      return;
    if (!s_->ops.empty()) {
      Op &p = s_->ops.back();
      if (p.kind == Op::Copy && p.dst + p.bytes == dst && p.src + p.bytes == src) {
        p.bytes += bytes;
        return;
      }
    }
    Op o;
    o.dst = dst;
    o.src = src;
    o.bytes = bytes;
    s_->ops.push_back(o);
  }
  const exec::Shared &S_;
  int rank_;
  Schedule *s_;
  exec::Move moves_[exec::kMaxRanks];
};

/// The schedules of ranks [first, first + n) of plan `p` with the launch's
/// shared state `S` (one lane, one chunk: the header's comment). False with
/// the first rank's reason where the plan cannot run on the copy engine.
inline bool record(const purlin_plan_info &p, const exec::Shared &S, int first,
                   int n, std::vector<Schedule> &out, std::string &error) {
  exec::Shared one = S;
  one.L = one.K = 1;
  out.assign((size_t)n, Schedule());
  for (int i = 0; i < n; ++i) {
    p.host_entry(&one, first + i, 0, &out[(size_t)i]);
    if (!out[(size_t)i].error.empty()) {
      error = "plan '" + std::string(p.strategy) + "': " + out[(size_t)i].error;
      return false;
    }
  }
  return true;
}

} // namespace ce
} // namespace purlin
