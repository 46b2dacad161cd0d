// Test hooks of the CUDA runtime (Testing.h; not part of the public API).
#include "Testing.h"

#include "Internal.h"

using namespace purlin;
using namespace purlin::rt;

purlinStatus rt::testAdvanceEpoch(purlinColl_t c, int plan, int rank,
                                  uint64_t by) {
  if (!c || plan < 0 || plan >= c->info->nplans || rank < 0 ||
      rank >= c->comm->R)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "testAdvanceEpoch: bad argument");
  const purlin_plan_info &pl = c->info->plans[plan];
  DeviceGuard guard;
  cudaSetDevice(c->comm->rankDevice[rank]);
  uint64_t *ep = (uint64_t *)c->sigs[plan][rank] +
                 (int64_t)pl.nsignals * c->comm->R * pl.lanes * pl.chunks;
  std::vector<uint64_t> w(pl.lanes);
  cudaDeviceSynchronize();
  cudaMemcpy(w.data(), ep, w.size() * 8, cudaMemcpyDeviceToHost);
  for (auto &x : w)
    x += by;
  cudaError_t e =
      cudaMemcpy(ep, w.data(), w.size() * 8, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? ok() : cudaFail(e, "testAdvanceEpoch");
}
