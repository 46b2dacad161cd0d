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
