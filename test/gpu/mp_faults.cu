// The fault cases of purlin-mp-test (mp_test.cu): a process killed in a
// loop of launches, a rank that never starts, a collective created with
// other maxima; and the callbacks bootstrap through a hub process.
#include "MpCommon.h"

#include <csignal>
#include <cstring>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace purlin;

namespace mptest {
namespace {
// ---- The callbacks' hub ----------------------------------------------------
std::vector<int> gChild, gHubEnd;
pid_t gHub = -1;
int gMine = -1; // this rank's end

bool rw(int fd, const void *p, size_t n, bool wr) {
  char *c = const_cast<char *>(static_cast<const char *>(p));
  while (n > 0) {
    ssize_t k = wr ? write(fd, c, n) : read(fd, c, n);
    if (k <= 0)
      return false;
    c += k;
    n -= (size_t)k;
  }
  return true;
}
int hubAllgather(const void *send, void *recv, size_t bytes, void *ctx) {
  int R = *(int *)ctx;
  uint64_t n = bytes;
  if (!rw(gMine, &n, 8, true) || !rw(gMine, send, bytes, true))
    return 1;
  return rw(gMine, recv, bytes * R, false) ? 0 : 1;
}
} // namespace

// ---- Faults ----------------------------------------------------------------
/// The last rank kills itself after 20 launches; the others must see an
/// error within the device timeout (3 s) plus slack, then abort.
int caseKill(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  auto cs = loadColls(o);
  const Coll *c = findColl(cs, "all_reduce");
  purlinComm_t comm;
  MP_OK(initComm(&comm, id, R, rank));
  MP_OK(purlinCommSetTimeout(comm, 3.0));
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c->info, "C=4096"));
  void *x, *y;
  MP_OK(purlinMemAlloc(comm, 8192, &x));
  MP_OK(purlinMemAlloc(comm, 8192, &y));
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int64_t C = 4096;
  void *bufs[2] = {x, y};
  void *streams[1] = {s};
  purlinArgs a = {PURLIN_BF16, PURLIN_SUM, &C, 1, nullptr, 0, bufs, streams};
  auto lastGood = Clock::now();
  for (int k = 0; k < 100000; ++k) {
    if (rank == R - 1 && k == 20)
      raise(SIGKILL);
    purlinStatus st = purlinLaunch(h, &a);
    cudaError_t e =
        st == PURLIN_SUCCESS ? cudaStreamSynchronize(s) : cudaSuccess;
    if (st == PURLIN_SUCCESS && e == cudaSuccess)
      st = purlinCommCheck(comm);
    if (st == PURLIN_SUCCESS && e == cudaSuccess) {
      lastGood = Clock::now();
      continue;
    }
    double waited = since(lastGood);
    std::printf("rank %d: after launch %d: %s (%s), %.2f s after the last "
                "good launch\n",
                rank, k,
                e != cudaSuccess ? "CUDA error" : purlinStatusString(st),
                e != cudaSuccess ? cudaGetErrorString(e) : purlinGetLastError(),
                waited);
    auto t0 = Clock::now();
    purlinCommAbort(comm);
    std::printf("rank %d: purlinCommAbort in %.2f s\n", rank, since(t0));
    return waited < 15 && k >= 20 ? 0 : 1;
  }
  std::printf("rank %d: FAIL no error after the peer died\n", rank);
  return 1;
}

/// The last rank never starts: the others' init ends with
/// PURLIN_ERR_BOOTSTRAP naming it, within the bootstrap timeout (2 s).
int caseAbsent(const Options &o, const purlinUniqueId &id, int rank) {
  setenv("PURLIN_BOOTSTRAP_TIMEOUT_MS", "2000", 1);
  auto t0 = Clock::now();
  purlinComm_t comm = nullptr;
  purlinStatus st = initComm(&comm, id, o.R, rank);
  double secs = since(t0);
  std::string msg = purlinGetLastError();
  std::string want = "rank " + std::to_string(o.R - 1);
  std::printf("rank %d: %s in %.2f s: %s\n", rank, purlinStatusString(st), secs,
              msg.c_str());
  return st == PURLIN_ERR_BOOTSTRAP && msg.find(want) != std::string::npos &&
                 secs < 10
             ? 0
             : 1;
}

/// The linked all_reduce and a communicator of o.R ranks over `id`.
struct AllReduceComm {
  std::vector<Coll> cs;
  const Coll *c = nullptr;
  purlinComm_t comm = nullptr;
  /// 0, or 1 after saying why.
  int open(const Options &o, const purlinUniqueId &id, int rank) {
    cs = loadColls(o);
    c = findColl(cs, "all_reduce");
    if (!c) {
      std::printf("rank %d: FAIL no all_reduce linked\n", rank);
      return 1;
    }
    MP_OK(initComm(&comm, id, o.R, rank));
    return 0;
  }
};

/// Rank 1 creates the all_reduce with another maximum count: every rank's
/// purlinCollCreate fails, naming what rank 1 said; the communicator stays
/// usable (an all_reduce created alike afterwards is checked). Then rank 1
/// launches an all_reduce with count 4095 where its peers pass 4096 (the
/// same plan): every rank stops at its first wait on a peer of the other
/// fingerprint, and purlinCommCheck reports PURLIN_ERR_MISMATCH within
/// seconds (not the 10 s timeout); purlinCommAbort then frees the
/// communicator.
int caseMismatch(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  AllReduceComm g;
  if (g.open(o, id, rank))
    return 1;
  purlinColl_t h = nullptr;
  purlinStatus st =
      purlinCollCreate(&h, g.comm, g.c->info, rank == 1 ? "C=4097" : "C=4096");
  std::string msg = purlinGetLastError();
  std::printf("rank %d: purlinCollCreate: %s: %s\n", rank,
              purlinStatusString(st), msg.c_str());
  int bad = st != PURLIN_ERR_INVALID_ARGUMENT ||
            msg.find(rank == 1 ? "4096" : "4097") == std::string::npos;
  bad += checkedAllReduce(g.comm, *g.c, rank, R, 4096);

  MP_OK(purlinCollCreate(&h, g.comm, g.c->info, "C=4096"));
  float *x, *y;
  MP_OK(purlinMemAlloc(g.comm, 4096 * 4, (void **)&x));
  MP_OK(purlinMemAlloc(g.comm, 4096 * 4, (void **)&y));
  int64_t C = rank == 1 ? 4095 : 4096;
  void *bufs[2] = {x, y};
  purlinArgs a = {PURLIN_F32, PURLIN_SUM, &C, 1, nullptr, 0, bufs, nullptr};
  auto t0 = Clock::now();
  MP_OK(purlinLaunch(h, &a));
  MP_CU(cudaDeviceSynchronize());
  st = purlinCommCheck(g.comm);
  const double secs = since(t0);
  msg = purlinGetLastError();
  std::printf("rank %d: a launch with C=%lld: %s in %.2f s: %s\n", rank,
              (long long)C, purlinStatusString(st), secs, msg.c_str());
  bad += st != PURLIN_ERR_MISMATCH || secs > 5 ||
         msg.find("other arguments") == std::string::npos;
  // Sticky: the next launch returns it too, without launching.
  bad += purlinLaunch(h, &a) != PURLIN_ERR_MISMATCH;
  MP_OK(purlinCommAbort(g.comm));
  return bad ? 1 : 0;
}

/// Rank 1 passes cudaMalloc buffers never registered (staged) where its
/// peers pass purlinMemAlloc memory: which buffers a launch stages is in
/// the fingerprint, so every rank reports PURLIN_ERR_MISMATCH within
/// seconds instead of reading the wrong memory (docs/multiprocess.md).
int caseStageMix(const Options &o, const purlinUniqueId &id, int rank) {
  AllReduceComm g;
  if (g.open(o, id, rank))
    return 1;
  purlinColl_t h = nullptr;
  MP_OK(purlinCollCreate(&h, g.comm, g.c->info, "C=4096"));
  // purlinMemAlloc is collective: every rank allocates the symmetric pair,
  // and rank 1 then launches on buffers of its own instead.
  float *x, *y, *rx = nullptr, *ry = nullptr;
  MP_OK(purlinMemAlloc(g.comm, 4096 * 4, (void **)&x));
  MP_OK(purlinMemAlloc(g.comm, 4096 * 4, (void **)&y));
  if (rank == 1) {
    MP_CU(cudaMalloc((void **)&rx, 4096 * 4));
    MP_CU(cudaMalloc((void **)&ry, 4096 * 4));
    x = rx;
    y = ry;
  }
  int64_t C = 4096;
  void *bufs[2] = {x, y};
  purlinArgs a = {PURLIN_F32, PURLIN_SUM, &C, 1, nullptr, 0, bufs, nullptr};
  auto t0 = Clock::now();
  MP_OK(purlinLaunch(h, &a));
  MP_CU(cudaDeviceSynchronize());
  purlinStatus st = purlinCommCheck(g.comm);
  const double secs = since(t0);
  std::string msg = purlinGetLastError();
  std::printf("rank %d: %s buffers beside the others' %s: %s in %.2f s: %s\n",
              rank, rank == 1 ? "staged" : "symmetric",
              rank == 1 ? "symmetric" : "staged/symmetric",
              purlinStatusString(st), secs, msg.c_str());
  const int bad = st != PURLIN_ERR_MISMATCH || secs > 5;
  MP_OK(purlinCommAbort(g.comm));
  cudaFree(rx);
  cudaFree(ry);
  return bad;
}

int caseCallbacks(const Options &o, const purlinUniqueId &, int rank) {
  for (int q = 0; q < o.R; ++q)
    if (q != rank)
      close(gChild[q]);
  gMine = gChild[rank];
  int R = o.R;
  purlinBootstrapCallbacks cb = {hubAllgather, nullptr, &R};
  purlinComm_t comm;
  MP_OK(purlinCommInitRankCallbacks(&comm, R, rank, -1, &cb));
  auto cs = loadColls(o);
  int st = checkedAllReduce(comm, *findColl(cs, "all_reduce"), rank, R, 4099);
  MP_OK(purlinCommDestroy(comm));
  if (!st)
    std::printf("rank %d: callbacks: all_reduce checked\n", rank);
  return st;
}

/// Colors r % 2, keys -r: group 0 (even ranks, reversed) all_reduces while
/// group 1 all_gathers, both checked against the reference.

bool startHub(int R) {
  gChild.assign(R, -1);
  gHubEnd.assign(R, -1);
  for (int r = 0; r < R; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
      return false;
    gChild[r] = sv[0];
    gHubEnd[r] = sv[1];
  }
  gHub = fork();
  if (gHub == 0) {
    for (int fd : gChild)
      close(fd);
    for (;;) { // one block from each rank, then all of them to each
      std::string all;
      for (int r = 0; r < R; ++r) {
        uint64_t n = 0;
        if (!rw(gHubEnd[r], &n, 8, false))
          _exit(0);
        std::string b(n, '\0');
        if (!rw(gHubEnd[r], &b[0], n, false))
          _exit(1);
        all += b;
      }
      for (int r = 0; r < R; ++r)
        rw(gHubEnd[r], all.data(), all.size(), true);
    }
  }
  for (int fd : gHubEnd)
    close(fd);
  return gHub > 0;
}

void stopHub() {
  for (int fd : gChild)
    close(fd);
  if (gHub > 0)
    waitpid(gHub, nullptr, 0);
}
} // namespace mptest
