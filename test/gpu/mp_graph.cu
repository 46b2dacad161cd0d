// purlin-mp-test --case graphbuf: CUDA graphs whose buffers are registered
// after the capture (purlinCommRegisterGraphBuffers, docs/multiprocess.md
// "CUDA graphs"), as a framework's graph pool needs:
//  1. i32 sum all_reduce (kernels built ahead of time), out of place on two
//     cudaMalloc buffers never registered, at two sizes (two plans):
//     captured (global capture mode, as torch's) between a kernel that
//     bumps the input and one that checks the output on the device; a
//     replay before registering does nothing (output still poisoned) and
//     purlinCommCheck says PURLIN_ERR_NOT_REGISTERED once; after
//     purlinCommRegisterGraphBuffers, 1000 replays checked after each on
//     the device and the last output bit for bit on the host; then the
//     recorded buffers deregister like registered ones;
//  2. in place, two launches in one graph, the second on a part of the
//     first's buffer (the recorded buffers share one registration);
//  3. f16 sum, kernels compiled at first use (purlinCollPrepare before the
//     capture: NVRTC's slot kernels), 1000 replays;
//  4. rank 0 captures one launch more than the others: every rank's
//     purlinCommRegisterGraphBuffers fails with PURLIN_ERR_MISMATCH, naming
//     the counts, without a hang.
#include "MpCommon.h"

#include <cuda_fp16.h>

#include <cstring>

using namespace mptest;

namespace {
__global__ void bumpAll(int32_t *x, int64_t n, int *iter) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    x[i] += 1;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ++*iter;
}
__global__ void checkAll(const int32_t *y, int64_t n, const int32_t *base,
                         int R, const int *iter, unsigned long long *bad) {
  const uint32_t add = (uint32_t)R * (uint32_t)*iter;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    if ((uint32_t)y[i] != (uint32_t)base[i] + add)
      atomicAdd(bad, 1ull);
}

uint32_t input(int64_t i, int r) { return (uint32_t)(i * 2654435761u + r * 40503u); }

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("rank %d: FAIL ", rank);                                     \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/// Part 1 at count C.
int outOfPlace(purlinComm_t comm, const Coll &c, int rank, int R, int64_t C) {
  const int replays = 1000;
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c.info, "C=65539"));
  int32_t *x, *y, *base;
  int *iter;
  unsigned long long *bad;
  MP_CU(cudaMalloc((void **)&x, C * 4));
  MP_CU(cudaMalloc((void **)&y, C * 4));
  MP_CU(cudaMalloc((void **)&base, C * 4));
  MP_CU(cudaMalloc((void **)&iter, sizeof(int)));
  MP_CU(cudaMalloc((void **)&bad, 8));
  std::vector<int32_t> hx(C), hb(C), got(C);
  for (int64_t i = 0; i < C; ++i) {
    hx[i] = (int32_t)input(i, rank);
    uint32_t sum = 0;
    for (int q = 0; q < R; ++q)
      sum += input(i, q);
    hb[i] = (int32_t)sum;
  }
  auto reset = [&]() {
    cudaMemcpy(x, hx.data(), C * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(base, hb.data(), C * 4, cudaMemcpyHostToDevice);
    cudaMemset(y, 0x5A, C * 4);
    cudaMemset(iter, 0, sizeof(int));
    cudaMemset(bad, 0, 8);
    return cudaDeviceSynchronize();
  };
  MP_CU(reset());
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *bufs[2] = {x, y};
  void *streams[1] = {s};
  purlinArgs a = {PURLIN_I32, PURLIN_SUM, &C, 1, nullptr, 0, bufs, streams};
  // Eagerly, the same launch is refused, as before.
  EXPECT(purlinLaunch(h, &a) == PURLIN_ERR_NOT_REGISTERED,
         "an eager launch on unregistered buffers: %s", purlinGetLastError());
  cudaGraph_t g;
  cudaGraphExec_t ge;
  MP_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  bumpAll<<<64, 256, 0, s>>>(x, C, iter);
  purlinStatus st = purlinLaunch(h, &a);
  checkAll<<<64, 256, 0, s>>>(y, C, base, R, iter, bad);
  MP_CU(cudaStreamEndCapture(s, &g));
  MP_OK(st);
  MP_CU(cudaGraphInstantiate(&ge, g, 0));
  // A replay before the registration: nothing moves, reported once.
  MP_CU(cudaGraphLaunch(ge, s));
  MP_CU(cudaStreamSynchronize(s));
  st = purlinCommCheck(comm);
  EXPECT(st == PURLIN_ERR_NOT_REGISTERED &&
             std::strstr(purlinGetLastError(), "purlinCommRegisterGraphBuffers"),
         "a replay before registering: purlinCommCheck gave %d (%s)", (int)st,
         purlinGetLastError());
  MP_OK(purlinCommCheck(comm)); // not sticky
  MP_CU(cudaMemcpy(got.data(), y, C * 4, cudaMemcpyDeviceToHost));
  int64_t touched = 0;
  for (int64_t i = 0; i < C; ++i)
    touched += (uint32_t)got[i] != 0x5A5A5A5Au;
  EXPECT(touched == 0, "the unready replay wrote %lld outputs",
         (long long)touched);
  MP_CU(reset());
  MP_OK(purlinCommRegisterGraphBuffers(comm));
  MP_OK(purlinCommRegisterGraphBuffers(comm)); // nothing left: a no-op
  auto t0 = Clock::now();
  for (int k = 0; k < replays; ++k)
    MP_CU(cudaGraphLaunch(ge, s));
  MP_CU(cudaStreamSynchronize(s));
  const double secs = since(t0);
  MP_OK(purlinCommCheck(comm));
  unsigned long long nbad = 0;
  int it = 0;
  MP_CU(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
  MP_CU(cudaMemcpy(&it, iter, 4, cudaMemcpyDeviceToHost));
  MP_CU(cudaMemcpy(got.data(), y, C * 4, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < C; ++i)
    wrong += (uint32_t)got[i] != (uint32_t)hb[i] + (uint32_t)(R * replays);
  std::printf("rank %d: graphbuf all_reduce i32 sum C=%lld, registered after "
              "capture, x%d replays (%s): %llu wrong on the device, %lld on "
              "the host, %.1f us/replay\n",
              rank, (long long)C, it, purlinCollLastPlan(h), nbad,
              (long long)wrong, secs * 1e6 / replays);
  EXPECT(nbad == 0 && wrong == 0 && it == replays, "wrong results");
  // The recorded buffers are registered buffers now.
  MP_OK(purlinCommDeregister(comm, x));
  MP_OK(purlinCommDeregister(comm, y));
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  cudaFree(x);
  cudaFree(y);
  cudaFree(base);
  cudaFree(iter);
  cudaFree(bad);
  MP_OK(purlinCollDestroy(h));
  return 0;
}

/// Part 2: z <- input; all_reduce z in place; all_reduce z[off, off + C2)
/// in place again (its buffers inside the first's).
int inPlace(purlinComm_t comm, const Coll &c, int rank, int R) {
  const int64_t C = 8192, off = 1024, C2 = 2048;
  const int replays = 1000;
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c.info, "C=65539"));
  int32_t *z, *src;
  MP_CU(cudaMalloc((void **)&z, C * 4));
  MP_CU(cudaMalloc((void **)&src, C * 4));
  std::vector<int32_t> hx(C), want(C), got(C);
  for (int64_t i = 0; i < C; ++i) {
    hx[i] = (int32_t)input(i, rank);
    uint32_t sum = 0;
    for (int q = 0; q < R; ++q)
      sum += input(i, q);
    want[i] = (int32_t)(i >= off && i < off + C2 ? sum * (uint32_t)R : sum);
  }
  MP_CU(cudaMemcpy(src, hx.data(), C * 4, cudaMemcpyHostToDevice));
  MP_CU(cudaDeviceSynchronize());
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *b1[2] = {z, z}, *b2[2] = {z + off, z + off};
  int64_t n1 = C, n2 = C2;
  void *streams[1] = {s};
  purlinArgs a1 = {PURLIN_I32, PURLIN_SUM, &n1, 1, nullptr, 0, b1, streams};
  purlinArgs a2 = {PURLIN_I32, PURLIN_SUM, &n2, 1, nullptr, 0, b2, streams};
  cudaGraph_t g;
  cudaGraphExec_t ge;
  MP_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaMemcpyAsync(z, src, C * 4, cudaMemcpyDeviceToDevice, s);
  purlinStatus st1 = purlinLaunch(h, &a1);
  purlinStatus st2 = purlinLaunch(h, &a2);
  MP_CU(cudaStreamEndCapture(s, &g));
  MP_OK(st1);
  MP_OK(st2);
  MP_CU(cudaGraphInstantiate(&ge, g, 0));
  MP_OK(purlinCommRegisterGraphBuffers(comm));
  for (int k = 0; k < replays; ++k)
    MP_CU(cudaGraphLaunch(ge, s));
  MP_CU(cudaStreamSynchronize(s));
  MP_OK(purlinCommCheck(comm));
  MP_CU(cudaMemcpy(got.data(), z, C * 4, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < C; ++i)
    wrong += got[i] != want[i];
  std::printf("rank %d: graphbuf in place, 2 launches in one buffer, x%d "
              "replays: %lld wrong\n",
              rank, replays, (long long)wrong);
  EXPECT(wrong == 0, "wrong results in place");
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  MP_OK(purlinCollDestroy(h));
  return 0; // z stays registered: purlinCommDestroy frees it
}

uint16_t halfBits(float v) {
  __half h = __float2half(v);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

/// Part 3: f16 (compiled at first use), out of place.
int firstUse(purlinComm_t comm, const Coll &c, int rank, int R) {
  const int64_t C = 4099;
  const int replays = 1000;
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c.info, "C=65539"));
  int dt = PURLIN_F16, op = PURLIN_SUM;
  MP_OK(purlinCollPrepare(h, &dt, 1, &op, 1));
  uint16_t *x, *y;
  MP_CU(cudaMalloc((void **)&x, C * 2));
  MP_CU(cudaMalloc((void **)&y, C * 2));
  std::vector<uint16_t> hx(C), want(C), got(C);
  for (int64_t i = 0; i < C; ++i) {
    hx[i] = halfBits((float)((i % 13) - 6 + rank));
    float sum = 0;
    for (int q = 0; q < R; ++q)
      sum += (float)((i % 13) - 6 + q);
    want[i] = halfBits(sum); // small integers: exact in any order
  }
  MP_CU(cudaMemcpy(x, hx.data(), C * 2, cudaMemcpyHostToDevice));
  MP_CU(cudaDeviceSynchronize());
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *bufs[2] = {x, y};
  void *streams[1] = {s};
  int64_t n = C;
  purlinArgs a = {PURLIN_F16, PURLIN_SUM, &n, 1, nullptr, 0, bufs, streams};
  cudaGraph_t g;
  cudaGraphExec_t ge;
  MP_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaMemsetAsync(y, 0x5A, C * 2, s); // every replay writes y afresh
  purlinStatus st = purlinLaunch(h, &a);
  MP_CU(cudaStreamEndCapture(s, &g));
  MP_OK(st);
  MP_CU(cudaGraphInstantiate(&ge, g, 0));
  MP_OK(purlinCommRegisterGraphBuffers(comm));
  for (int k = 0; k < replays; ++k)
    MP_CU(cudaGraphLaunch(ge, s));
  MP_CU(cudaStreamSynchronize(s));
  MP_OK(purlinCommCheck(comm));
  MP_CU(cudaMemcpy(got.data(), y, C * 2, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < C; ++i)
    wrong += got[i] != want[i];
  std::printf("rank %d: graphbuf f16 sum (compiled at first use) C=%lld, x%d "
              "replays (%s): %lld wrong\n",
              rank, (long long)C, replays, purlinCollLastPlan(h),
              (long long)wrong);
  EXPECT(wrong == 0, "wrong f16 results");
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  MP_OK(purlinCollDestroy(h));
  return 0;
}

/// Part 4: rank 0 records two launches' buffers, the others one launch's.
int mismatch(purlinComm_t comm, const Coll &c, int rank, int R) {
  const int64_t C = 1024;
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c.info, "C=65539"));
  int32_t *x;
  MP_CU(cudaMalloc((void **)&x, 4 * C * 4));
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *b1[2] = {x, x + C}, *b2[2] = {x + 2 * C, x + 3 * C};
  void *streams[1] = {s};
  int64_t n = C;
  purlinArgs a1 = {PURLIN_I32, PURLIN_SUM, &n, 1, nullptr, 0, b1, streams};
  purlinArgs a2 = {PURLIN_I32, PURLIN_SUM, &n, 1, nullptr, 0, b2, streams};
  cudaGraph_t g;
  MP_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  purlinStatus st1 = purlinLaunch(h, &a1);
  purlinStatus st2 = rank == 0 ? purlinLaunch(h, &a2) : PURLIN_SUCCESS;
  MP_CU(cudaStreamEndCapture(s, &g));
  MP_OK(st1);
  MP_OK(st2);
  auto t0 = Clock::now();
  purlinStatus st = purlinCommRegisterGraphBuffers(comm);
  const std::string msg = purlinGetLastError();
  std::printf("rank %d: graphbuf mismatch: %s in %.2f s: %s\n", rank,
              purlinStatusString(st), since(t0), msg.c_str());
  EXPECT(st == PURLIN_ERR_MISMATCH &&
             msg.find("rank 0: 4") != std::string::npos &&
             msg.find("rank 1: 2") != std::string::npos,
         "a mismatched capture: expected PURLIN_ERR_MISMATCH naming the "
         "counts");
  // The list is dropped: a second call has nothing to register.
  MP_OK(purlinCommRegisterGraphBuffers(comm));
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  MP_OK(purlinCollDestroy(h));
  cudaFree(x);
  return 0;
}
} // namespace

int mptest::caseGraphBuffers(const Options &o, const purlinUniqueId &id,
                             int rank) {
  const int R = o.R;
  auto cs = loadColls(o);
  const Coll *c = findColl(cs, "all_reduce");
  if (!c) {
    std::printf("rank %d: FAIL no all_reduce\n", rank);
    return 1;
  }
  // No staging area: an eager launch on these buffers is refused, as the
  // first check of each case expects (the staged path: --case coll).
  setenv("PURLIN_STAGING_BYTES", "0", 1);
  purlinComm_t comm;
  MP_OK(initComm(&comm, id, R, rank));
  for (int64_t C : {1037ll, 65539ll})
    if (outOfPlace(comm, *c, rank, R, C))
      return 1;
  if (inPlace(comm, *c, rank, R))
    return 1;
  if (!o.quick && firstUse(comm, *c, rank, R))
    return 1;
  if (R > 1 && mismatch(comm, *c, rank, R))
    return 1;
  MP_OK(purlinCommDestroy(comm));
  std::printf("rank %d: graphbuf: passed\n", rank);
  return 0;
}
