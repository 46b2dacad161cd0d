// purlin-bench's shared parts: error macros, a run of the collective (its
// instance, binding and buffers), the timers (timing.cu) and NCCL's side
// (nccl.cu). See purlin_bench.cu for what the tool does.
#pragma once

#include "purlin/purlin.h"
#include "purlin/spec/Collective.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CUDA_OK(x)                                                             \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define PURLIN_OK(x)                                                           \
  do {                                                                         \
    if ((x) != PURLIN_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   purlinGetLastError());                                      \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace bench {

/// One way of calling the collective: its instance, binding and buffers.
struct Run {
  purlinColl_t h;
  const purlin::Collective *d;
  int R, nb;
  purlin::DType t;
  purlin::RedOp op;
  std::vector<int64_t> scalars;
  std::vector<void *> bufs;
  cudaStream_t s;
  std::vector<cudaStream_t> ss; // --nccl: one stream per GPU (ss[0] == s)
};

/// The launch arguments of a run (streams: s, or one per GPU).
purlinArgs argsOf(Run &r);

// timing.cu
/// The median of 5 timed replays of graph `ge` on `s`, in ms.
float medianReplay(cudaGraphExec_t ge, cudaStream_t s);
/// Average time of one call in us: `iters` calls after `warm`, eager or in
/// one graph (then the median of 5 replays).
double timeCalls(Run &r, int iters, int warm, bool graph);

/// The host's time per eager purlinLaunch, in us: `calls` launches back to
/// back on the run's stream (timed on the host clock, the GPU not awaited;
/// the best of 5 rounds, after a warm-up).
double hostCallUs(Run &r, int calls);
/// --nccl: the same for `launch`, which launches on every GPU's stream;
/// the graph is captured on ss[0] with the other GPUs' streams forked from
/// and joined to it.
double timeMulti(const std::vector<cudaStream_t> &ss,
                 const std::vector<int> &devs,
                 const std::function<void()> &launch, int iters, int warm,
                 bool graph);
/// The one-GPU baseline: cudaMemcpyAsync of `bytes`, in us per copy.
double timeMemcpy(void *dst, const void *src, int64_t bytes, cudaStream_t s,
                  int iters, int warm);

// nccl.cu: NCCL's counterpart of a collective, in the same process, one
// rank per GPU (built without NCCL: available() is false).
class Nccl {
public:
  static bool available();
  static int version();
  /// Communicators over `devs`; `t` as NCCL's type (false: NCCL has none).
  bool init(const std::vector<int> &devs, purlin::DType t);
  /// Times collective `name` (root 0) on in/out, each rank's buffers of
  /// inE/outE elements of `es` bytes; -1 when NCCL has no counterpart.
  double time(const std::string &name, const std::vector<cudaStream_t> &ss,
              const std::vector<int> &devs, const std::vector<void *> &in,
              const std::vector<void *> &out, int64_t inE, int64_t outE, int es,
              purlin::RedOp op, int iters, int warm, bool graph);
  ~Nccl();

private:
  struct Impl;
  Impl *impl_ = nullptr;
};

/// Kernel nodes of one call captured into a graph (-1: the launch failed).
int kernelsPerCall(Run &r);

} // namespace bench
