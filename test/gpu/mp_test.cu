// One process per GPU (issue #5; NOT RUN YET: written without a GPU): forks
// R processes, each rank r of purlinCommCreateRank on GPU r, symmetric
// buffers from purlinMemAlloc, an i32 sum all-reduce (out of place, several
// counts, eager and 100 back to back), checked against the sum computed on
// the host. The parent never initializes CUDA (a forked child could not use
// it); a child counts the GPUs first. Before that, a child checks
// purlinCommCreateRank's arguments (runs on the CPU too, in ctest).
//
//   purlin-mp-test [R]      R: ranks (default: every visible GPU; >= 2)
#include "GeneratedRegistry.h"
#include "purlin/purlin.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

static int countGpus() {
  pid_t p = fork();
  if (p == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
      n = 0;
    _exit(n > 100 ? 100 : n);
  }
  int st = 0;
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

#define OK(x)                                                                  \
  do {                                                                         \
    purlinStatus s_ = (x);                                                     \
    if (s_ != PURLIN_SUCCESS) {                                                \
      std::printf("rank %d: FAIL %s: %s\n", rank, #x, purlinGetLastError());   \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define CU(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("rank %d: FAIL %s: %s\n", rank, #x, cudaGetErrorString(e_)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static int rankMain(int rank, int R, const std::string &dir) {
  int n = 0;
  const purlin::rt::GeneratedCollective *gc = purlin::rt::generatedCollectives(&n);
  const purlin_collective_info *info = nullptr;
  for (int i = 0; i < n; ++i)
    if (std::strcmp(gc[i].name, "all_reduce") == 0)
      info = gc[i].info();
  if (!info) {
    std::printf("rank %d: FAIL no all_reduce linked\n", rank);
    return 1;
  }
  purlinComm_t comm;
  OK(purlinCommCreateRank(&comm, R, rank, rank, dir.c_str()));
  const int64_t maxC = 1 << 20;
  purlinColl_t ar;
  OK(purlinCollCreate(&ar, comm, info, "C=1048576"));
  void *x, *y;
  OK(purlinMemAlloc(comm, maxC * 4, &x));
  OK(purlinMemAlloc(comm, maxC * 4, &y));
  cudaStream_t s;
  CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int failures = 0;
  for (int64_t C : {1ll, 7ll, 1037ll, 100003ll, 1ll << 20}) {
    std::vector<int32_t> hx(C), want(C), got(C);
    for (int64_t i = 0; i < C; ++i) {
      hx[i] = (int32_t)(i * 2654435761u + rank * 40503u);
      int64_t sum = 0;
      for (int q = 0; q < R; ++q)
        sum += (int32_t)(i * 2654435761u + q * 40503u);
      want[i] = (int32_t)(uint32_t)sum;
    }
    CU(cudaMemcpy(x, hx.data(), C * 4, cudaMemcpyHostToDevice));
    CU(cudaMemset(y, 0xA5, C * 4));
    CU(cudaDeviceSynchronize());
    void *bufs[2] = {x, y};
    void *streams[1] = {s};
    purlinArgs a = {PURLIN_I32, PURLIN_SUM, &C, 1, NULL, 0, bufs, streams};
    int reps = C == 1037 ? 100 : 1; // back to back: epochs, signal reuse
    for (int k = 0; k < reps; ++k)
      OK(purlinLaunch(ar, &a));
    CU(cudaStreamSynchronize(s));
    OK(purlinCommCheck(comm));
    CU(cudaMemcpy(got.data(), y, C * 4, cudaMemcpyDeviceToHost));
    int64_t wrong = 0;
    for (int64_t i = 0; i < C; ++i)
      wrong += got[i] != want[i];
    std::printf("rank %d: all_reduce i32 sum C=%lld x%d (%s): %lld wrong\n",
                rank, (long long)C, reps, purlinCollLastPlan(ar),
                (long long)wrong);
    failures += wrong != 0;
  }
  OK(purlinMemFree(comm, x));
  OK(purlinMemFree(comm, y));
  OK(purlinCollDestroy(ar));
  OK(purlinCommDestroy(comm));
  return failures ? 1 : 0;
}

/// purlinCommCreateRank's argument checks (no GPU needed: they fail before
/// any peer is awaited). Run in a child, like everything that touches CUDA.
static int argChecks() {
  int passed = 0, failed = 0;
  auto check = [&](bool ok, const char *what) {
    ok ? ++passed : ++failed;
    if (!ok)
      std::printf("args: FAIL %s (%s)\n", what, purlinGetLastError());
  };
  unsetenv("PURLIN_RANK");
  unsetenv("PURLIN_NRANKS");
  unsetenv("PURLIN_BOOTSTRAP_DIR");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("SLURM_PROCID");
  purlinComm_t c = nullptr;
  check(purlinCommCreateRank(nullptr, 2, 0, 0, "/tmp") ==
            PURLIN_ERR_INVALID_ARGUMENT, "null comm");
  check(purlinCommCreateRank(&c, -1, -1, -1, nullptr) ==
                PURLIN_ERR_INVALID_ARGUMENT &&
            std::strstr(purlinGetLastError(), "PURLIN_RANK"),
        "no rank anywhere");
  check(purlinCommCreateRank(&c, 0, 0, 0, "/tmp") == PURLIN_ERR_BAD_RANK_COUNT,
        "0 ranks");
  check(purlinCommCreateRank(&c, 33, 0, 0, "/tmp") == PURLIN_ERR_BAD_RANK_COUNT,
        "33 ranks");
  check(purlinCommCreateRank(&c, 2, 2, 0, "/tmp") == PURLIN_ERR_INVALID_ARGUMENT,
        "rank 2 of 2");
  check(c == nullptr, "no communicator after errors");
  check(purlinCommRank(nullptr) == -1 && !purlinCommIsMultiProcess(nullptr),
        "null queries");
  void *p = nullptr;
  check(purlinMemAlloc(nullptr, 16, &p) == PURLIN_ERR_INVALID_ARGUMENT, "MemAlloc null");
  // One rank alone: a communicator where a GPU answers, PURLIN_ERR_NO_DEVICE
  // where none does; never a wait for peers.
  char tmpl[] = "/tmp/purlin-mp1-XXXXXX";
  if (mkdtemp(tmpl)) {
    setenv("PURLIN_RANK", "0", 1);
    setenv("PURLIN_NRANKS", "1", 1);
    setenv("PURLIN_BOOTSTRAP_DIR", tmpl, 1);
    purlinStatus st = purlinCommCreateRank(&c, -1, -1, -1, nullptr);
    check(st == PURLIN_SUCCESS || st == PURLIN_ERR_NO_DEVICE, "R=1 from the environment");
    if (st == PURLIN_SUCCESS) {
      check(purlinCommRank(c) == 0 && purlinCommIsMultiProcess(c), "queries");
      check(purlinMemAlloc(c, 1 << 20, &p) == PURLIN_SUCCESS && p, "MemAlloc R=1");
      check(purlinMemFree(c, p) == PURLIN_SUCCESS, "MemFree R=1");
      check(purlinCommDestroy(c) == PURLIN_SUCCESS, "destroy R=1");
    }
    rmdir(tmpl);
  }
  std::printf("args: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  {
    pid_t p = fork();
    if (p == 0)
      _exit(argChecks());
    int st = 0;
    waitpid(p, &st, 0);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
      std::printf("FAIL: argument checks\n");
      return 1;
    }
  }
  int ngpu = countGpus();
  int R = argc > 1 ? std::atoi(argv[1]) : ngpu;
  if (ngpu < 2 || R < 2 || R > ngpu) {
    std::printf("SKIPPED: one process per GPU needs >= 2 GPUs (R=%d, found %d)\n",
                R, ngpu);
    return 0;
  }
  char tmpl[] = "/tmp/purlin-mp-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::printf("FAIL: mkdtemp\n");
    return 1;
  }
  std::vector<pid_t> pids;
  for (int r = 0; r < R; ++r) {
    pid_t p = fork();
    if (p == 0)
      _exit(rankMain(r, R, tmpl));
    pids.push_back(p);
  }
  int failed = 0;
  for (pid_t p : pids) {
    int st = 0;
    waitpid(p, &st, 0);
    failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  rmdir(tmpl);
  std::printf("%d passed, %d failed (processes)\n", R - failed, failed);
  return failed ? 1 : 0;
}
