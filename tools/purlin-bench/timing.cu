// purlin-bench's timers (bench.h): eager calls or CUDA-graph replays,
// measured with events on the launching stream.
#include "bench.h"

#include <algorithm>
#include <chrono>

namespace bench {

purlinArgs argsOf(Run &r) {
  static void *streams[64];
  streams[0] = r.s;
  for (size_t g = 0; g < r.ss.size() && g < 64; ++g)
    streams[g] = r.ss[g];
  purlinArgs a = {};
  a.dtype = (int)r.t;
  a.op = (int)r.op;
  a.scalars = r.scalars.data();
  a.nscalars = (int)r.scalars.size();
  a.buffers = r.bufs.data();
  a.streams = streams;
  return a;
}

float medianReplay(cudaGraphExec_t ge, cudaStream_t s) {
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  std::vector<float> v;
  for (int k = 0; k < 5; ++k) {
    CUDA_OK(cudaEventRecord(e0, s));
    CUDA_OK(cudaGraphLaunch(ge, s));
    CUDA_OK(cudaEventRecord(e1, s));
    CUDA_OK(cudaEventSynchronize(e1));
    float x;
    CUDA_OK(cudaEventElapsedTime(&x, e0, e1));
    v.push_back(x);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(v.begin(), v.end());
  return v[2];
}

namespace {
/// `body` (which enqueues `iters` calls on s) captured in one graph,
/// warmed up, then timed as the median replay; in ms.
float timeGraph(cudaStream_t s, int iters, int warm,
                const std::function<void()> &body) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  body();
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < std::max(1, warm / std::max(1, iters)) + 1; ++i)
    CUDA_OK(cudaGraphLaunch(ge, s));
  const float ms = medianReplay(ge, s);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  return ms;
}

/// `warm()` untimed, then `body()` timed with events on s; in ms.
float timeEager(cudaStream_t s, const std::function<void()> &warm,
                const std::function<void()> &body) {
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  warm();
  CUDA_OK(cudaEventRecord(e0, s));
  body();
  CUDA_OK(cudaEventRecord(e1, s));
  CUDA_OK(cudaEventSynchronize(e1));
  float ms = 0;
  CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms;
}
} // namespace

double timeCalls(Run &r, int iters, int warm, bool graph) {
  purlinArgs a = argsOf(r);
  auto calls = [&](int n) {
    for (int i = 0; i < n; ++i)
      PURLIN_OK(purlinLaunch(r.h, &a));
  };
  const float ms = graph
                       ? timeGraph(r.s, iters, warm, [&] { calls(iters); })
                       : timeEager(
                             r.s, [&] { calls(warm); }, [&] { calls(iters); });
  return ms * 1000.0 / iters;
}

double hostCallUs(Run &r, int calls) {
  purlinArgs a = argsOf(r);
  for (int i = 0; i < 20; ++i) // warm: first-use work, caches
    PURLIN_OK(purlinLaunch(r.h, &a));
  CUDA_OK(cudaStreamSynchronize(r.s));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      PURLIN_OK(purlinLaunch(r.h, &a));
    const auto t1 = std::chrono::steady_clock::now();
    CUDA_OK(cudaStreamSynchronize(r.s));
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  return best;
}

double timeMulti(const std::vector<cudaStream_t> &ss,
                 const std::vector<int> &devs,
                 const std::function<void()> &launch, int iters, int warm,
                 bool graph) {
  int prev = 0;
  CUDA_OK(cudaGetDevice(&prev));
  const size_t G = ss.size();
  std::vector<cudaEvent_t> ev(G); // per GPU, for fork/join
  for (size_t g = 0; g < G; ++g) {
    CUDA_OK(cudaSetDevice(devs[g]));
    CUDA_OK(cudaEventCreateWithFlags(&ev[g], cudaEventDisableTiming));
  }
  CUDA_OK(cudaSetDevice(devs[0]));
  auto fork = [&] {
    CUDA_OK(cudaEventRecord(ev[0], ss[0]));
    for (size_t g = 1; g < G; ++g)
      CUDA_OK(cudaStreamWaitEvent(ss[g], ev[0], 0));
  };
  auto join = [&] {
    for (size_t g = 1; g < G; ++g) {
      CUDA_OK(cudaEventRecord(ev[g], ss[g]));
      CUDA_OK(cudaStreamWaitEvent(ss[0], ev[g], 0));
    }
  };
  auto calls = [&](int n) {
    fork();
    for (int i = 0; i < n; ++i)
      launch();
    join();
  };
  const float ms =
      graph ? timeGraph(ss[0], iters, warm, [&] { calls(iters); })
            : timeEager(
                  ss[0], [&] { calls(warm); }, [&] { calls(iters); });
  for (size_t g = 0; g < G; ++g) {
    CUDA_OK(cudaSetDevice(devs[g]));
    cudaEventDestroy(ev[g]);
  }
  CUDA_OK(cudaSetDevice(prev));
  return ms * 1000.0 / iters;
}

double timeMemcpy(void *dst, const void *src, int64_t bytes, cudaStream_t s,
                  int iters, int warm) {
  auto copies = [&](int n) {
    for (int i = 0; i < n; ++i)
      CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  };
  const float ms = timeEager(
      s, [&] { copies(warm); }, [&] { copies(iters); });
  return ms * 1000.0 / iters;
}

/// Kernel nodes of one call captured into a graph (not launched): 0 for a
/// datapath that runs no kernel (the copy engine's), so no SM is used.
int kernelsPerCall(Run &r) {
  cudaGraph_t g;
  CUDA_OK(cudaStreamBeginCapture(r.s, cudaStreamCaptureModeThreadLocal));
  purlinArgs a = argsOf(r);
  const purlinStatus st = purlinLaunch(r.h, &a);
  CUDA_OK(cudaStreamEndCapture(r.s, &g));
  int kernels = st == PURLIN_SUCCESS ? 0 : -1;
  size_t n = 0;
  CUDA_OK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CUDA_OK(cudaGraphGetNodes(g, nodes.data(), &n));
  for (size_t i = 0; i < n && kernels >= 0; ++i) {
    // Stream memory operations are batch-mem-op nodes, which the runtime
    // API cannot name (cudaErrorUnknown, not sticky): not kernels.
    cudaGraphNodeType t;
    if (cudaGraphNodeGetType(nodes[i], &t) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    kernels += t == cudaGraphNodeTypeKernel;
  }
  cudaGraphDestroy(g);
  return kernels;
}

} // namespace bench
