// Communicators of one process: ranks bound to GPUs (several ranks of one
// GPU are "virtual ranks", run in one launch), peer access between the
// GPUs, peer-visible memory, and the error word the device writes a
// timeout into.
#include "Internal.h"

#include <cstdlib>

using namespace purlin;
using namespace purlin::rt;

/// What both communicator kinds share: the error word (mapped host memory
/// that the device writes a timeout into, read by purlinCommCheck) and the
/// wait timeout (PURLIN_TIMEOUT_MS, else the datapath's default).
purlinStatus rt::initErrorWord(purlinComm &c) {
  cudaError_t e = cudaHostAlloc((void **)&c.errHost, sizeof(uint32_t),
                                cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    c.errHost = nullptr;
    return cudaFail(e, "allocating the error word");
  }
  *c.errHost = 0;
  e = cudaHostGetDevicePointer((void **)&c.errDev, c.errHost, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(c.errHost);
    c.errHost = nullptr;
    return cudaFail(e, "mapping the error word");
  }
  if (const char *t = std::getenv("PURLIN_TIMEOUT_MS"))
    c.timeoutNs = (uint64_t)std::atoll(t) * 1000000ull;
  return PURLIN_SUCCESS;
}

purlinStatus rt::stickyDeviceError(const purlinComm &c) {
  const uint32_t v = *(volatile uint32_t *)c.errHost;
  if (v == 0 || !c.datapath)
    return PURLIN_SUCCESS;
  std::string msg;
  purlinStatus st = c.datapath->deviceError(v, msg);
  if (st == PURLIN_SUCCESS || st == PURLIN_ERR_NOT_REGISTERED)
    return PURLIN_SUCCESS;
  return fail(st, msg);
}

extern "C" {

purlinStatus purlinCommCreate(purlinComm_t *out, int nranks,
                              const int *rankDevices) {
  if (!out || !rankDevices)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreate: null argument");
  *out = nullptr;
  if (nranks < 1 || nranks > exec::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                "purlinCommCreate: " + std::to_string(nranks) +
                    " ranks; 1 to " + std::to_string(exec::kMaxRanks) +
                    " supported");
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fail(PURLIN_ERR_NO_DEVICE,
                std::string("no CUDA GPU: ") + cudaGetErrorString(e));
  }
  auto c = std::make_unique<purlinComm>();
  c->R = nranks;
  for (int r = 0; r < nranks; ++r) {
    int d = rankDevices[r];
    if (d < 0 || d >= ndev)
      return fail(PURLIN_ERR_NO_DEVICE,
                  "rank " + std::to_string(r) + " on GPU " + std::to_string(d) +
                      ", but there are " + std::to_string(ndev));
    c->rankDevice.push_back(d);
    if (r == 0 || d != rankDevices[r - 1]) {
      for (int x : c->devices)
        if (x == d)
          return fail(PURLIN_ERR_INVALID_ARGUMENT,
                      "ranks of GPU " + std::to_string(d) +
                          " must be consecutive (they run in one launch)");
      c->devices.push_back(d);
      c->first.push_back(r);
      c->count.push_back(0);
    }
    ++c->count.back();
  }
  DeviceGuard guard;
  for (int a : c->devices)
    for (int b : c->devices) {
      if (a == b)
        continue;
      int can = 0;
      cudaDeviceCanAccessPeer(&can, a, b);
      if (!can)
        return fail(PURLIN_ERR_NO_PEER_ACCESS, "GPU " + std::to_string(a) +
                                                   " cannot access GPU " +
                                                   std::to_string(b));
      cudaSetDevice(a);
      e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        return cudaFail(e, "enabling peer access");
      cudaGetLastError();
    }
  if (purlinStatus st = initErrorWord(*c))
    return st;
  c->mem = std::make_unique<LocalPeerMemory>(c->rankDevice);
  *out = c.release();
  return ok();
}

purlinStatus purlinCommDestroy(purlinComm_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null communicator");
  if (c->errHost)
    cudaFreeHost(c->errHost);
  if (c->multiProcess)
    closeProcessComm(*c, false);
  delete c;
  return ok();
}

purlinStatus purlinCommSetTimeout(purlinComm_t c, double seconds) {
  if (!c || !(seconds > 0))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommSetTimeout: bad value");
  c->timeoutNs = (uint64_t)(seconds * 1e9);
  return ok();
}

purlinStatus purlinCommCheck(purlinComm_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null communicator");
  uint32_t v = *(volatile uint32_t *)c->errHost;
  if (v == 0 || !c->datapath)
    return ok();
  std::string msg;
  purlinStatus st = c->datapath->deviceError(v, msg);
  // A graph replayed before its buffers were registered did nothing: that
  // is reported once (the word is cleared unless the device has replaced
  // it with another error meanwhile), not sticky.
  if (st == PURLIN_ERR_NOT_REGISTERED)
    __atomic_compare_exchange_n(c->errHost, &v, 0u, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
  return st == PURLIN_SUCCESS ? ok() : fail(st, msg);
}

} // extern "C"
