// purlin-latency-probe: where the time of a small all-reduce goes. Times, under
// CUDA-graph replay on 8 virtual ranks (bf16, 8 KiB per rank), plans that do
// part of the direct all-reduce: nothing (launch + epoch), the two flag
// barriers alone, the consume alone (racy reads, timing only), the whole
// plan; each with 1 and 4 lanes. Differences place the time.
#include "common/exec.h"
#include "common/entry.h"
#include "sm90/target.cuh"
#include "purlin/purlin.h"

#include <cstdio>
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
struct Empty {
  template <class T> __device__ static void run(T &) {}
};
struct Sync {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0);
    wait<Clause0>(t, 1, kPeersDsts, 0);
  }
};
struct Consume {
  template <class T> __device__ static void run(T &t) {
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
  }
};
// The direct plan as purlinc emits it: its ready/done barriers are boundary
// syncs, skipped here because all 8 ranks run in one launch.
struct DirectBoundary {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0, kBoundary);
    wait<Clause0>(t, 0, kPeersSrcs, 0, kBoundary);
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0, kBoundary);
    wait<Clause0>(t, 1, kPeersDsts, 0, kBoundary);
  }
};
struct Unused {
  template <class T> __device__ static void run(T &t) {
    Sync::run(t); // not the same order; only the sum matters here
  }
};
struct Direct {
  template <class T> __device__ static void run(T &t) {
    notify<Clause0>(t, 0, kPeersDsts, 0);
    wait<Clause0>(t, 0, kPeersSrcs, 0);
    consume<Clause0>(t, kSelMine, kSrcInput, kDstSelf, 0);
    notify<Clause0>(t, 1, kPeersSrcs, 0);
    wait<Clause0>(t, 1, kPeersDsts, 0);
  }
};
template <class P>
int entry(const purlin_shared_t *S, int first, int n, int, int, void *stream) {
  return purlin::sm::launch(
      (const void *)purlin::sm::planKernel<purlin::sm::ElemBF16, P>, S, first,
      n, stream);
}
int64_t layout(Shared *S) {
  for (int b = 0; b < kMaxBuffers; ++b)
    S->scratchOff[b] = 0;
  for (int k = 0; k < kMaxClauses; ++k)
    S->stagingOff[k] = S->slotElems[k] = 0;
  return 0;
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
  } vs[] = {{"empty (launch + epoch)", probe::entry<probe::Empty>},
            {"flag barriers only", probe::entry<probe::Sync>},
            {"consume only", probe::entry<probe::Consume>},
            {"direct, barriers kept", probe::entry<probe::Direct>},
            {"direct, one launch", probe::entry<probe::DirectBoundary>}};
  const int R = 8;
  const int64_t C = 4096;
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
  std::printf("# 8 virtual ranks, bf16 sum, 8 KiB per rank, graph of 1000 calls, us per call\n");
  std::printf("%-26s %8s %8s %8s %8s\n", "plan", "1 lane", "2 lanes", "4 lanes",
              "16 lanes");
  for (auto &v : vs) {
    std::printf("%-26s", v.name);
    for (int lanes : {1, 2, 4, 16}) {
      purlin_plan_info plan = {"probe", lanes, 1, 2, 0, 0, 0, -1, probe::layout,
                               nullptr, v.fn};
      purlin_collective_info info = {"all_reduce", probe::kDesc, "sm_90", 1, &plan};
      purlinColl_t h;
      if (purlinCollCreate(&h, comm, &info, "C=4096")) {
        std::printf("%s\n", purlinGetLastError());
        return 1;
      }
      int64_t c = C;
      purlinArgs a = {PURLIN_BF16, PURLIN_SUM, &c, 1, nullptr, 0, bufs.data(), streams};
      cudaGraph_t g;
      cudaGraphExec_t ge;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      for (int i = 0; i < 1000; ++i)
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
      std::printf(" %8.2f", ms);
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
      purlinCollDestroy(h);
    }
    std::printf("\n");
  }
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("# %s, comm check %d\n", cudaGetErrorString(e), (int)purlinCommCheck(comm));
  return 0;
}
