// What purlin-mp-test's driver (mp_test.cu) and its cases (mp_cases.cu)
// share: the options, the case table, the callbacks' hub.
#pragma once

#include "purlin/purlin.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Reference.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace mptest {

struct Options {
  int R = 2;
  std::string cas;
  bool quick = false, large = false, allTypes = false;
  std::vector<std::pair<std::string, const purlin_collective_info *>> colls;
};

/// A case run by every rank process: 0 when it passed.
using CaseFn = int (*)(const Options &, const purlinUniqueId &, int rank);
CaseFn caseFunction(const std::string &name);
int caseColl(const Options &, const purlinUniqueId &, int rank);
int caseGraph(const Options &, const purlinUniqueId &, int rank);
int caseGraphBuffers(const Options &, const purlinUniqueId &, int rank);
int caseSplit(const Options &, const purlinUniqueId &, int rank);
int caseKill(const Options &, const purlinUniqueId &, int rank);
int caseAbsent(const Options &, const purlinUniqueId &, int rank);
int caseMismatch(const Options &, const purlinUniqueId &, int rank);
int caseStageMix(const Options &, const purlinUniqueId &, int rank);
int caseCallbacks(const Options &, const purlinUniqueId &, int rank);
int caseBench(const Options &, const purlinUniqueId &, int rank);
int caseSizes(const Options &, const purlinUniqueId &, int rank);

// ---- What the cases share (mp_cases.cu) -----------------------------------
using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
/// A linked collective and what its description says.
struct Coll {
  std::string name;
  const purlin_collective_info *info;
  purlin::Collective desc;
  bool reduces = false, hasOpParam = false, tables = false;
};
std::vector<Coll> loadColls(const Options &o);
const Coll *findColl(const std::vector<Coll> &cs, const char *name);
/// The binding of a launch: the first count `count`, others 1 + count % 3,
/// a root R - 1 (odd counts) or 0, a group 2 (even R) or 1.
void bindingFor(const Coll &c, int R, int64_t count, purlin::DType t,
                purlin::RedOp op, purlin::Binding &b,
                std::vector<int64_t> &scalars);
/// purlinCollCreate's maxParams for counts up to maxCount.
std::string maxParams(const Coll &c, int R, int64_t maxCount);
purlinStatus initComm(purlinComm_t *comm, const purlinUniqueId &id, int R,
                      int rank);
/// One launch on buffers carved from pools[] (in place: both in pools[0]),
/// this rank's outputs checked against the reference evaluator. 0: passed
/// (or refused in place with NO_PLAN, as every rank is); 1: wrong data
/// (`what` says where); -1: an API failure.
int checkedLaunch(purlinComm_t comm, purlinColl_t h, const Coll &c, int R,
                  int rank, int64_t count, purlin::DType t, purlin::RedOp op,
                  bool inplace, const std::vector<char *> &pools,
                  cudaStream_t s, std::string &what);
/// An f32 sum all_reduce of C elements on purlinMemAlloc buffers, checked
/// against the host's sum. 0 when right.
int checkedAllReduce(purlinComm_t comm, const Coll &c, int rank, int R,
                     int64_t C);

/// The callbacks case's application collectives: a hub process joined to
/// every rank by a socket pair (made before the ranks fork).
bool startHub(int R);
void stopHub();

} // namespace mptest

#define MP_OK(x)                                                               \
  do {                                                                         \
    purlinStatus s_ = (x);                                                     \
    if (s_ != PURLIN_SUCCESS) {                                                \
      std::printf("rank %d: FAIL %s: %s\n", rank, #x, purlinGetLastError());   \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define MP_CU(x)                                                               \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("rank %d: FAIL %s: %s\n", rank, #x, cudaGetErrorString(e_)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)
