// purlin-mp-test --case bench: what setting up costs with R processes
// (purlinCommInitRank, purlinMemAlloc, purlinCommRegister, purlinCollCreate,
// the slowest rank's time), the host time of one purlinLaunch and the 8 KiB
// all_reduce (bf16 sum) per launch, multi-process vs one process of R
// virtual ranks (rank 0 runs that after the multi-process part). Processes
// sharing one GPU: the latency is for the record, not a multi-GPU figure.
#include "GeneratedRegistry.h"
#include "MpCommon.h"

#include <chrono>
#include <cstring>

using namespace mptest;

namespace {
double usSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

const purlin_collective_info *allReduce(const Options &o) {
  for (auto &c : o.colls)
    if (c.first == "all_reduce")
      return c.second;
  return nullptr;
}

/// 1000 launches of the 8 KiB all_reduce after 100 warm-up ones: the host
/// time of the calls alone and the time per launch up to the last's end.
int timeLaunches(purlinColl_t h, void *const *bufs, cudaStream_t s, int rank,
                 double &hostUs, double &perLaunchUs) {
  int64_t C = 4096;
  void *streams[8] = {s, s, s, s, s, s, s, s};
  purlinArgs a = {PURLIN_BF16, PURLIN_SUM, &C, 1, nullptr, 0, bufs, streams};
  for (int k = 0; k < 100; ++k)
    MP_OK(purlinLaunch(h, &a));
  MP_CU(cudaStreamSynchronize(s));
  const int n = 1000;
  double host = 0;
  auto t0 = Clock::now();
  for (int k = 0; k < n; ++k) {
    auto t1 = Clock::now();
    MP_OK(purlinLaunch(h, &a));
    host += usSince(t1);
  }
  MP_CU(cudaStreamSynchronize(s));
  perLaunchUs = usSince(t0) / n;
  hostUs = host / n;
  return 0;
}
} // namespace

int mptest::caseBench(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  const purlin_collective_info *info = allReduce(o);
  if (!info)
    return 1;
  auto t0 = Clock::now();
  purlinComm_t comm;
  MP_OK(purlinCommInitRank(&comm, R, id, rank, -1));
  double tInit = usSince(t0);
  t0 = Clock::now();
  void *x, *y;
  MP_OK(purlinMemAlloc(comm, 64 << 20, &x));
  double tAlloc = usSince(t0);
  MP_OK(purlinMemAlloc(comm, 64 << 20, &y));
  void *raw;
  MP_CU(cudaMalloc(&raw, 64 << 20));
  t0 = Clock::now();
  MP_OK(purlinCommRegister(comm, raw, 64 << 20));
  double tReg = usSince(t0);
  t0 = Clock::now();
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, info, "C=4096"));
  double tColl = usSince(t0);
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *bufs[2] = {x, y};
  double hostUs = 0, perUs = 0;
  if (timeLaunches(h, bufs, s, rank, hostUs, perUs))
    return 1;
  MP_OK(purlinCommDeregister(comm, raw));
  cudaFree(raw);
  MP_OK(purlinMemFree(comm, x));
  MP_OK(purlinMemFree(comm, y));
  MP_OK(purlinCollDestroy(h));
  t0 = Clock::now();
  MP_OK(purlinCommDestroy(comm));
  double tDestroy = usSince(t0);
  std::printf("bench rank %d of %d: init %.0f us, alloc 64 MiB %.0f us, "
              "register 64 MiB %.0f us, coll create %.0f us, destroy %.0f us; "
              "8 KiB all_reduce bf16: host %.2f us/launch, %.2f us/launch "
              "end to end\n",
              rank, R, tInit, tAlloc, tReg, tColl, tDestroy, hostUs, perUs);
  if (rank != 0)
    return 0;
  // One process, R virtual ranks on this GPU: the same launches.
  int dev = 0;
  cudaGetDevice(&dev);
  std::vector<int> devs(R, dev);
  MP_OK(purlinCommCreate(&comm, R, devs.data()));
  MP_OK(purlinCollCreate(&h, comm, info, "C=4096"));
  std::vector<void *> b1(2 * R);
  for (auto &p : b1)
    MP_CU(cudaMalloc(&p, 8192));
  if (timeLaunches(h, b1.data(), s, rank, hostUs, perUs))
    return 1;
  std::printf("bench one process, %d virtual ranks: 8 KiB all_reduce bf16: "
              "host %.2f us/launch, %.2f us/launch end to end\n",
              R, hostUs, perUs);
  for (auto p : b1)
    cudaFree(p);
  MP_OK(purlinCollDestroy(h));
  MP_OK(purlinCommDestroy(comm));
  return 0;
}
