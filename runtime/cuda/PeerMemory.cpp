#include "PeerMemory.h"

#include <cuda_runtime.h>

namespace purlin {
namespace rt {

bool LocalPeerMemory::allocate(int64_t bytes, std::vector<void *> &out,
                               std::string &error) {
  out.assign(dev_.size(), nullptr);
  int prev = 0;
  cudaGetDevice(&prev);
  for (size_t r = 0; r < dev_.size(); ++r) {
    cudaError_t e = cudaSetDevice(dev_[r]);
    if (e == cudaSuccess)
      e = cudaMalloc(&out[r], bytes > 0 ? (size_t)bytes : 16);
    if (e == cudaSuccess)
      e = cudaMemset(out[r], 0, bytes > 0 ? (size_t)bytes : 16);
    if (e != cudaSuccess) {
      error = std::string("allocating ") + std::to_string(bytes) +
              " bytes for rank " + std::to_string(r) + ": " +
              cudaGetErrorString(e);
      cudaGetLastError();
      release(out);
      out.clear();
      cudaSetDevice(prev);
      return false;
    }
  }
  cudaSetDevice(prev);
  return true;
}

void LocalPeerMemory::release(const std::vector<void *> &ptrs) {
  for (void *p : ptrs)
    if (p)
      cudaFree(p);
}

} // namespace rt
} // namespace purlin

// ---- One process per GPU: cudaIpc handles through the bootstrap ----------
#include "Bootstrap.h"

#include <cstring>

namespace purlin {
namespace rt {

namespace {
/// What each process contributes to an allocation's exchange.
struct IpcBlob {
  uint32_t ok;    // 1: allocated and exported
  int32_t device; // for messages
  int64_t bytes;  // every rank must ask for the same size
  cudaIpcMemHandle_t handle;
};
} // namespace

bool IpcPeerMemory::allocate(int64_t bytes, std::vector<void *> &out,
                             std::string &error) {
  const int R = boot_->size(), me = boot_->rank();
  out.assign(R, nullptr);
  int prev = 0;
  cudaGetDevice(&prev);
  IpcBlob b;
  std::memset(&b, 0, sizeof b);
  b.device = device_;
  b.bytes = bytes;
  std::string localErr;
  size_t n = bytes > 0 ? (size_t)bytes : 16;
  cudaError_t e = cudaSetDevice(device_);
  if (e == cudaSuccess)
    e = cudaMalloc(&out[me], n);
  if (e == cudaSuccess)
    e = cudaMemset(out[me], 0, n);
  if (e == cudaSuccess) // zeroed before any peer can see it
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaIpcGetMemHandle(&b.handle, out[me]);
  if (e == cudaSuccess) {
    b.ok = 1;
  } else {
    localErr = std::string("rank ") + std::to_string(me) + ": allocating " +
               std::to_string(bytes) + " bytes on GPU " +
               std::to_string(device_) + ": " + cudaGetErrorString(e);
    cudaGetLastError();
  }
  // Every process learns whether all succeeded, so all fail together.
  std::vector<std::string> all;
  if (!boot_->allGather(std::string((const char *)&b, sizeof b), all, error)) {
    if (out[me])
      cudaFree(out[me]);
    out.clear();
    cudaSetDevice(prev);
    return false;
  }
  std::string why = localErr;
  for (int r = 0; r < R && why.empty(); ++r) {
    IpcBlob p;
    if (all[r].size() != sizeof p) {
      why = "rank " + std::to_string(r) + " sent a malformed handle";
      break;
    }
    std::memcpy(&p, all[r].data(), sizeof p);
    if (!p.ok)
      why = "rank " + std::to_string(r) + " (GPU " + std::to_string(p.device) +
            ") could not allocate " + std::to_string(p.bytes) + " bytes";
    else if (p.bytes != bytes)
      why = "rank " + std::to_string(r) + " asked for " +
            std::to_string(p.bytes) + " bytes, rank " + std::to_string(me) +
            " for " + std::to_string(bytes) +
            " (collective calls out of order?)";
  }
  for (int r = 0; r < R && why.empty(); ++r) {
    if (r == me)
      continue;
    IpcBlob p;
    std::memcpy(&p, all[r].data(), sizeof p);
    e = cudaIpcOpenMemHandle(&out[r], p.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      why = "rank " + std::to_string(me) + " (GPU " + std::to_string(device_) +
            ") cannot map the memory of rank " + std::to_string(r) + " (GPU " +
            std::to_string(p.device) + "): " + cudaGetErrorString(e);
      cudaGetLastError();
      out[r] = nullptr;
    }
  }
  // Agree on the outcome of the mapping too.
  std::vector<std::string> verdict;
  std::string mine = why.empty() ? std::string("1") : std::string("0") + why;
  if (!boot_->allGather(mine, verdict, error))
    why = why.empty() ? error : why;
  for (int r = 0; r < R && why.empty(); ++r)
    if (verdict[r].empty() || verdict[r][0] != '1')
      why = verdict[r].size() > 1 ? verdict[r].substr(1)
                                  : "rank " + std::to_string(r) + " failed";
  if (!why.empty()) {
    error = why;
    for (int r = 0; r < R; ++r)
      if (out[r] && r != me)
        cudaIpcCloseMemHandle(out[r]);
    if (out[me])
      cudaFree(out[me]);
    out.clear();
    cudaSetDevice(prev);
    return false;
  }
  cudaSetDevice(prev);
  return true;
}

void IpcPeerMemory::release(const std::vector<void *> &ptrs) {
  const int me = boot_->rank();
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(device_);
  for (int r = 0; r < (int)ptrs.size(); ++r)
    if (ptrs[r] && r != me)
      cudaIpcCloseMemHandle(ptrs[r]);
  // Nobody frees its memory while a peer may still have it mapped.
  std::string err;
  boot_->barrier(err);
  if (me < (int)ptrs.size() && ptrs[me])
    cudaFree(ptrs[me]);
  cudaSetDevice(prev);
}

bool IpcPeerMemory::barrier(std::string &error) {
  return boot_->barrier(error);
}

} // namespace rt
} // namespace purlin
