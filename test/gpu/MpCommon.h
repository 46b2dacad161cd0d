// What purlin-mp-test's driver (mp_test.cu) and its cases (mp_cases.cu)
// share: the options, the case table, the callbacks' hub.
#pragma once

#include "purlin/purlin.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace mptest {

struct Options {
  int R = 2;
  std::string cas;
  bool quick = false, large = false;
  std::vector<std::pair<std::string, const purlin_collective_info *>> colls;
};

/// A case run by every rank process: 0 when it passed.
using CaseFn = int (*)(const Options &, const purlinUniqueId &, int rank);
CaseFn caseFunction(const std::string &name);

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
