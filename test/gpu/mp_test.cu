// One process per GPU (issue #14), proved with several processes sharing
// the GPUs there are (one H200: separate address spaces, mapped peer
// memory, system-scope signals; only the timing means nothing). The parent
// never initializes CUDA: it makes the unique id (purlinGetUniqueId), forks
// the ranks, waits for them with a deadline (a hang is a failure) and
// prints one line per case.
//
//   purlin-mp-test                 argument checks (no GPU needed), then
//                                  `--ranks 2 --case coll --quick` on a GPU
//   purlin-mp-test --ranks N --case CASE [--quick] [--large] [--all-types]
// CASE: coll     every linked collective without tables, f32/bf16/i32
//                (--all-types: every element type with sum, and prod, min,
//                max and avg on f16, i64 and u8; the pairs not built ahead
//                of time compiled first with purlinCollPrepare, NVRTC),
//                counts 0 .. 1M (--large: + 16M f32 all_reduce), out of
//                place and in place, buffers from purlinMemAlloc and
//                registered cudaMalloc buffers, each rank's outputs checked
//                bit for bit against the reference evaluator; and
//                cudaMalloc buffers never registered, through the staging
//                area (PURLIN_STAGING_BYTES set to R buffers of the largest
//                count: launches that need more are refused, saying so)
//       graph    all_reduce captured in a CUDA graph, replayed 1000 times,
//                checked on the device after every replay
//       graphbuf graphs captured on cudaMalloc buffers never registered,
//                registered after the capture
//                (purlinCommRegisterGraphBuffers): a replay before does
//                nothing and is reported; 1000 replays after, checked; in
//                place; f16 compiled at first use (not with --quick); a
//                rank that captured more: PURLIN_ERR_MISMATCH everywhere
//                (mp_graph.cu)
//       kill     the last rank SIGKILLs itself in a loop of launches: the
//                others see an error within the device timeout, abort, exit
//       absent   the last rank never starts: the others' init fails within
//                the bootstrap timeout, naming it
//       callbacks  the communicator over the application's all-gather
//                (here: pipes to the parent), then an all_reduce
//       split    purlinCommSplit into two groups (colors r % 2) running
//                all_reduce and all_gather at once, checked
//       mismatch one rank creates the all_reduce with another maximum:
//                every rank's purlinCollCreate fails, naming it; then
//                launches with another count: PURLIN_ERR_MISMATCH on
//                every rank within seconds
//       stagemix rank 1 stages its buffers (never registered) where its
//                peers pass purlinMemAlloc memory: PURLIN_ERR_MISMATCH on
//                every rank within seconds (mp_faults.cu)
//       bench    setup costs, per-launch host time, 8 KiB all_reduce
//       sizes    calls of other sizes (counts 0 among them) back to back on
//                one instance, no synchronization between them: a rank's
//                launch e + 1 runs while a peer is in launch e; f32, bf16
//                and u8, every launch checked (mp_sizes.cu)
// PURLIN_MP_MEMORY=vmm|ipc picks how memory is shared (default: VMM when
// the GPU has it).
#include "GeneratedRegistry.h"
#include "MpCommon.h"

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

using namespace mptest;

namespace {
/// purlinCommInitRank's argument checks, in a child (CUDA stays out of the
/// parent); no GPU needed: they fail before any peer is awaited.
int argChecks() {
  int passed = 0, failed = 0;
  auto check = [&](bool ok, const char *what) {
    ok ? ++passed : ++failed;
    if (!ok)
      std::printf("args: FAIL %s (%s)\n", what, purlinGetLastError());
  };
  purlinUniqueId id, zero;
  std::memset(&zero, 0, sizeof zero);
  check(purlinGetUniqueId(nullptr) == PURLIN_ERR_INVALID_ARGUMENT, "null id");
  check(purlinGetUniqueId(&id) == PURLIN_SUCCESS, "an id");
  purlinComm_t c = nullptr;
  check(purlinCommInitRank(nullptr, 2, id, 0, 0) == PURLIN_ERR_INVALID_ARGUMENT,
        "null comm");
  check(purlinCommInitRank(&c, 0, id, 0, 0) == PURLIN_ERR_BAD_RANK_COUNT,
        "0 ranks");
  check(purlinCommInitRank(&c, 33, id, 0, 0) == PURLIN_ERR_BAD_RANK_COUNT,
        "33 ranks");
  check(purlinCommInitRank(&c, 2, id, 2, 0) == PURLIN_ERR_INVALID_ARGUMENT,
        "rank 2 of 2");
  check(purlinCommInitRank(&c, 2, zero, 1, 0) == PURLIN_ERR_INVALID_ARGUMENT &&
            std::strstr(purlinGetLastError(), "not a unique id"),
        "not an id");
  check(c == nullptr, "no communicator after errors");
  purlinBootstrapCallbacks none = {nullptr, nullptr, nullptr};
  check(purlinCommInitRankCallbacks(&c, 2, 0, 0, nullptr) ==
            PURLIN_ERR_INVALID_ARGUMENT,
        "null callbacks");
  check(purlinCommInitRankCallbacks(&c, 2, 0, 0, &none) ==
                PURLIN_ERR_INVALID_ARGUMENT &&
            std::strstr(purlinGetLastError(), "allgather"),
        "null allgather");
  check(purlinCommSplit(nullptr, 0, 0, &c) == PURLIN_ERR_INVALID_ARGUMENT,
        "split null");
  check(purlinCommAbort(nullptr) == PURLIN_ERR_INVALID_ARGUMENT, "abort null");
  check(purlinCommRegister(nullptr, &id, 16) == PURLIN_ERR_INVALID_ARGUMENT,
        "register null");
  check(purlinCommRegisterGraphBuffers(nullptr) ==
                PURLIN_ERR_INVALID_ARGUMENT &&
            std::strstr(purlinGetLastError(), "null communicator"),
        "register graph buffers null");
  check(purlinCommRank(nullptr) == -1 && !purlinCommIsMultiProcess(nullptr),
        "null queries");
  void *p = nullptr;
  check(purlinMemAlloc(nullptr, 16, &p) == PURLIN_ERR_INVALID_ARGUMENT,
        "MemAlloc null");
  check(std::strcmp(purlinStatusString(PURLIN_ERR_BOOTSTRAP),
                    "bootstrap failed") == 0 &&
            std::strcmp(purlinStatusString(PURLIN_ERR_NOT_REGISTERED),
                        "buffer not registered") == 0 &&
            std::strcmp(purlinStatusString(PURLIN_ERR_MISMATCH),
                        "ranks called with other arguments") == 0,
        "status strings");
  // One rank alone: a communicator where a GPU answers, NO_DEVICE where
  // none does; never a wait for peers.
  purlinStatus st = purlinCommInitRank(&c, 1, id, 0, -1);
  check(st == PURLIN_SUCCESS || st == PURLIN_ERR_NO_DEVICE, "R=1");
  if (st == PURLIN_SUCCESS) {
    check(purlinCommRank(c) == 0 && purlinCommIsMultiProcess(c), "queries");
    check(purlinMemAlloc(c, 1 << 20, &p) == PURLIN_SUCCESS && p,
          "MemAlloc R=1");
    check(purlinCommRegister(c, p, 16) == PURLIN_ERR_INVALID_ARGUMENT,
          "register purlinMemAlloc memory");
    void *q = nullptr;
    cudaMalloc(&q, 1 << 20);
    check(purlinCommRegister(c, (char *)q + 256, 4096) == PURLIN_SUCCESS,
          "register R=1");
    check(purlinCommRegister(c, (char *)q + 512, 16) ==
              PURLIN_ERR_INVALID_ARGUMENT,
          "register an overlap");
    check(purlinCommDeregister(c, (char *)q + 256) == PURLIN_SUCCESS,
          "deregister R=1");
    check(purlinCommDeregister(c, q) == PURLIN_ERR_INVALID_ARGUMENT,
          "deregister unknown");
    cudaFree(q);
    check(purlinCommRegisterGraphBuffers(c) == PURLIN_SUCCESS,
          "register graph buffers, none recorded");
    // One process's ranks: a documented no-op.
    purlinComm_t v = nullptr;
    int devs[2] = {0, 0};
    check(purlinCommCreate(&v, 2, devs) == PURLIN_SUCCESS &&
              purlinCommRegisterGraphBuffers(v) == PURLIN_SUCCESS &&
              purlinCommDestroy(v) == PURLIN_SUCCESS,
          "register graph buffers, one process");
    check(purlinMemFree(c, p) == PURLIN_SUCCESS, "MemFree R=1");
    check(purlinCommDestroy(c) == PURLIN_SUCCESS, "destroy R=1");
  }
  std::printf("args: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

int countGpus() {
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

/// Forks R ranks running `fn` (skipping `absent`); waits at most
/// `deadlineS`, then kills what is left (a hang). The number that failed.
int runRanks(int R, double deadlineS, const std::function<int(int)> &fn,
             int absent = -1, int allowedDead = -1) {
  std::vector<pid_t> pids(R, -1);
  for (int r = 0; r < R; ++r) {
    if (r == absent)
      continue;
    pid_t p = fork();
    if (p == 0) {
      std::setvbuf(stdout, nullptr, _IOLBF, 0);
      _exit(fn(r));
    }
    pids[r] = p;
  }
  auto t0 = std::chrono::steady_clock::now();
  int failed = 0, left = R - (absent >= 0);
  std::vector<bool> done(R, false);
  while (left > 0) {
    int st = 0;
    pid_t p = waitpid(-1, &st, WNOHANG);
    if (p > 0) {
      for (int r = 0; r < R; ++r)
        if (pids[r] == p) {
          done[r] = true;
          bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
          if (r == allowedDead)
            ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
          if (!ok) {
            ++failed;
            std::printf("rank %d: FAIL (%s %d)\n", r,
                        WIFEXITED(st) ? "exit" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
          }
        }
      --left;
      continue;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count() > deadlineS) {
      for (int r = 0; r < R; ++r)
        if (pids[r] > 0 && !done[r]) {
          std::printf("rank %d: FAIL hung (killed after %.0f s)\n", r,
                      deadlineS);
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          ++failed;
        }
      break;
    }
    usleep(10000);
  }
  return failed;
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      o.R = std::atoi(argv[++i]);
    else if (a == "--case" && i + 1 < argc)
      o.cas = argv[++i];
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--large")
      o.large = true;
    else if (a == "--all-types")
      o.allTypes = true;
    else {
      std::printf("usage: purlin-mp-test [--ranks N --case CASE] [--quick] "
                  "[--large] [--all-types]\n");
      return 2;
    }
  }
  if (o.cas.empty()) {
    pid_t p = fork();
    if (p == 0)
      _exit(argChecks());
    int st = 0;
    waitpid(p, &st, 0);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
      std::printf("FAIL: argument checks\n");
      return 1;
    }
    if (countGpus() < 1) {
      std::printf("SKIPPED: no GPU for the multi-process cases\n");
      return 0;
    }
    o.R = 2;
    o.cas = "coll";
    o.quick = true;
  }
  if (o.R < 1 || o.R > 32) {
    std::printf("FAIL: --ranks %d\n", o.R);
    return 2;
  }
  int n = 0;
  const purlin::rt::GeneratedCollective *gc =
      purlin::rt::generatedCollectives(&n);
  for (int i = 0; i < n; ++i)
    o.colls.push_back({gc[i].name, gc[i].info()});
  purlinUniqueId id;
  if (purlinGetUniqueId(&id) != PURLIN_SUCCESS) {
    std::printf("FAIL: purlinGetUniqueId: %s\n", purlinGetLastError());
    return 1;
  }
  const char *mem = std::getenv("PURLIN_MP_MEMORY");
  auto t0 = std::chrono::steady_clock::now();
  int failed = 0, absent = -1, dead = -1;
  // PURLIN_MP_DEADLINE (s, default 300): a rank still running then is
  // killed and reported hung, before an outer time limit ends the whole run.
  double deadline = 300;
  if (const char *e = std::getenv("PURLIN_MP_DEADLINE"))
    if (std::atof(e) > 0)
      deadline = std::atof(e);
  CaseFn fn = caseFunction(o.cas);
  if (!fn) {
    std::printf("FAIL: unknown case '%s'\n", o.cas.c_str());
    return 2;
  }
  if (o.cas == "absent")
    absent = o.R - 1;
  if (o.cas == "kill")
    dead = o.R - 1;
  if (o.cas == "callbacks" && !startHub(o.R)) {
    std::printf("FAIL: the callbacks' hub\n");
    return 1;
  }
  failed = runRanks(
      o.R, deadline, [&](int r) { return fn(o, id, r); }, absent, dead);
  if (o.cas == "callbacks")
    stopHub();
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  int ran = o.R - (absent >= 0) - (dead >= 0);
  std::printf("%s R=%d mem=%s: %d passed, %d failed (processes, %.1f s)\n",
              o.cas.c_str(), o.R, mem ? mem : "auto", ran - failed, failed,
              secs);
  return failed ? 1 : 0;
}
