// Peer memory of one-process-per-GPU communicators (PeerMemory.h,
// ProcessPeerMemory): symmetric allocations and registered buffers.
//
// Every collective step has the same shape: each process does its local
// part (allocate, export), the processes all-gather what they did (so all
// fail together, with the first rank's reason), the handles travel (VMM
// file descriptors over the FdChannel; cudaIpc handles in the all-gather),
// each process maps its peers', and a last all-gather agrees on the mapping.
#include "Bootstrap.h"
#include "Driver.h"
#include "FdPassing.h"
#include "PeerMemory.h"

#include <cuda_runtime.h>

#include <cstring>
#include <unistd.h>

namespace purlin {
namespace rt {

namespace {
/// What each process contributes to an allocation's or a registration's
/// first exchange.
struct Blob {
  uint32_t ok;    // 1: done locally
  uint32_t kind;  // 1: VMM fd, 2: cudaIpc handle
  int32_t device; // for messages
  int32_t pad;
  int64_t bytes;   // every rank must ask for the same size
  uint64_t size;   // the allocation's size (VMM: rounded to its granularity)
  uint64_t base;   // registration: the allocation's base in its process
  uint64_t offset; // registration: the buffer's offset from it
  cudaIpcMemHandle_t handle;
};

std::string rankText(int r) { return "rank " + std::to_string(r); }

/// The first failure among the blobs, or "".
std::string firstFailure(const std::vector<std::string> &all, int64_t bytes,
                         int me, const char *what) {
  for (int r = 0; r < (int)all.size(); ++r) {
    Blob p;
    if (all[r].size() != sizeof p)
      return rankText(r) + " sent a malformed handle";
    std::memcpy(&p, all[r].data(), sizeof p);
    if (!p.ok)
      return rankText(r) + " (GPU " + std::to_string(p.device) +
             ") could not " + what + " " + std::to_string(p.bytes) + " bytes";
    if (p.bytes != bytes)
      return rankText(r) + " asked for " + std::to_string(p.bytes) +
             " bytes, " + rankText(me) + " for " + std::to_string(bytes) +
             " (collective calls out of order?)";
  }
  return std::string();
}

Blob blobOf(const std::string &s) {
  Blob b;
  std::memcpy(&b, s.data(), sizeof b);
  return b;
}
} // namespace

ProcessPeerMemory::ProcessPeerMemory(Setup s) : s_(std::move(s)) {}

ProcessPeerMemory::~ProcessPeerMemory() {
  // What the application did not free: peers' mappings first.
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(s_.device);
  cudaDeviceSynchronize();
  cudaGetLastError();
  std::vector<uint64_t> peers; // unmap() erases from maps_
  for (auto &m : maps_)
    if (!m.own)
      peers.push_back(m.va);
  for (uint64_t va : peers)
    unmap(va);
  while (!maps_.empty())
    unmap(maps_.back().va);
  cudaSetDevice(prev);
}

bool ProcessPeerMemory::barrier(std::string &error) {
  return s_.boot->barrier(error);
}

bool ProcessPeerMemory::agree(const std::string &what, std::string &error) {
  std::vector<std::string> all;
  if (!s_.boot->allGather(what, all, error))
    return false;
  for (int r = 0; r < (int)all.size(); ++r)
    if (all[r] != what) {
      error = "rank " + std::to_string(r) + " says '" + all[r] + "', rank " +
              std::to_string(s_.boot->rank()) + " '" + what +
              "' (collective calls out of order or with other arguments?)";
      return false;
    }
  return true;
}

void ProcessPeerMemory::shareOutcome(std::string &why) {
  if (s_.boot->broken())
    return;
  std::vector<std::string> verdict;
  std::string mine = why.empty() ? std::string("1") : "0" + why, e2;
  if (!s_.boot->allGather(mine, verdict, e2))
    why = why.empty() ? e2 : why;
  for (int r = 0; r < (int)verdict.size() && why.empty(); ++r)
    if (verdict[r].empty() || verdict[r][0] != '1')
      why = verdict[r].size() > 1 ? verdict[r].substr(1)
                                  : rankText(r) + " failed";
}

bool ProcessPeerMemory::mapHandle(uint64_t handle, size_t size, uint64_t &va,
                                  std::string &error) {
  std::string e;
  const Driver *d = driver(e);
  if (!d) {
    error = e;
    return false;
  }
  CUdeviceptr p = 0;
  CUresult r = d->memAddressReserve(&p, size, 0, 0, 0);
  if (r != CUDA_SUCCESS) {
    error = driverError(d, r, "cuMemAddressReserve");
    return false;
  }
  r = d->memMap(p, size, 0, (CUmemGenericAllocationHandle)handle, 0);
  if (r != CUDA_SUCCESS) {
    error = driverError(d, r, "cuMemMap");
    d->memAddressFree(p, size);
    return false;
  }
  CUmemAccessDesc acc{};
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = s_.device;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  r = d->memSetAccess(p, size, &acc, 1);
  if (r != CUDA_SUCCESS) {
    error = driverError(d, r, "cuMemSetAccess");
    d->memUnmap(p, size);
    d->memAddressFree(p, size);
    return false;
  }
  va = p;
  return true;
}

bool ProcessPeerMemory::mapVmmFd(int fd, size_t size, uint64_t &va,
                                 uint64_t &handle, std::string &error) {
  std::string e;
  const Driver *d = driver(e);
  if (!d) {
    error = e;
    return false;
  }
  CUmemGenericAllocationHandle h = 0;
  CUresult r = d->memImportFromShareableHandle(
      &h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (r != CUDA_SUCCESS) {
    error = driverError(d, r, "cuMemImportFromShareableHandle");
    return false;
  }
  if (!mapHandle(h, size, va, error)) {
    d->memRelease(h);
    return false;
  }
  handle = h;
  return true;
}

void ProcessPeerMemory::unmap(uint64_t va) {
  for (size_t i = 0; i < maps_.size(); ++i) {
    Mapping &m = maps_[i];
    if (m.va != va)
      continue;
    if (m.ipc) {
      if (m.own)
        cudaFree((void *)(uintptr_t)m.va);
      else
        cudaIpcCloseMemHandle((void *)(uintptr_t)m.va);
      cudaGetLastError();
    } else {
      std::string e;
      if (const Driver *d = driver(e)) {
        d->memUnmap(m.va, m.size);
        d->memAddressFree(m.va, m.size);
        d->memRelease(m.handle);
      }
    }
    maps_.erase(maps_.begin() + i);
    return;
  }
}

bool ProcessPeerMemory::allocate(int64_t bytes, std::vector<void *> &out,
                                 std::string &error) {
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(s_.device);
  bool ok = s_.vmm ? allocVmm(bytes, out, error) : allocIpc(bytes, out, error);
  cudaSetDevice(prev);
  return ok;
}

bool ProcessPeerMemory::allocVmm(int64_t bytes, std::vector<void *> &out,
                                 std::string &error) {
  const int R = s_.boot->size(), me = s_.boot->rank();
  out.assign(R, nullptr);
  Blob b{};
  b.kind = 1;
  b.device = s_.device;
  b.bytes = bytes;
  std::string localErr, e;
  const Driver *d = driver(localErr);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = s_.device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t gran = 0;
  CUmemGenericAllocationHandle h = 0;
  int fd = -1;
  Mapping own;
  own.own = true;
  if (d) {
    CUresult r = d->memGetAllocationGranularity(
        &gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    size_t want = bytes > 0 ? (size_t)bytes : 16;
    size_t size = gran ? (want + gran - 1) / gran * gran : want;
    if (r != CUDA_SUCCESS)
      localErr = driverError(d, r, "cuMemGetAllocationGranularity");
    else if ((r = d->memCreate(&h, size, &prop, 0)) != CUDA_SUCCESS)
      localErr = driverError(d, r, "cuMemCreate");
    else if ((r = d->memExportToShareableHandle(
                  &fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
             CUDA_SUCCESS)
      localErr = driverError(d, r, "cuMemExportToShareableHandle");
    if (localErr.empty()) {
      if (mapHandle(h, size, own.va, localErr)) {
        own.handle = h; // the mapping's now
        h = 0;
        own.size = size;
        cudaError_t ce = cudaMemset((void *)(uintptr_t)own.va, 0, size);
        if (ce == cudaSuccess) // zeroed before any peer can see it
          ce = cudaDeviceSynchronize();
        if (ce != cudaSuccess) {
          localErr = std::string("zeroing: ") + cudaGetErrorString(ce);
          cudaGetLastError();
        }
        maps_.push_back(own);
        out[me] = (void *)(uintptr_t)own.va;
      }
    }
    if (h)
      d->memRelease(h); // not mapped: failed
    b.size = size;
  }
  if (!localErr.empty())
    localErr = rankText(me) + ": allocating " + std::to_string(bytes) +
               " bytes on GPU " + std::to_string(s_.device) + ": " + localErr;
  b.ok = localErr.empty();
  std::vector<std::string> all;
  std::string why;
  if (!s_.boot->allGather(std::string((const char *)&b, sizeof b), all,
                          error)) {
    why = error;
  } else {
    why =
        localErr.empty() ? firstFailure(all, bytes, me, "allocate") : localErr;
  }
  const uint64_t tag = ++tag_;
  std::vector<int> fds;
  if (why.empty() &&
      !s_.fds->exchange(s_.fdNames, tag, fd, s_.timeoutMs, fds, why))
    why = rankText(me) + ": " + why;
  if (fd >= 0)
    ::close(fd);
  for (int r = 0; r < R && why.empty(); ++r) {
    if (r == me)
      continue;
    Mapping m;
    m.peer = r;
    m.size = blobOf(all[r]).size;
    if (!mapVmmFd(fds[r], m.size, m.va, m.handle, why)) {
      why = rankText(me) + " cannot map the memory of " + rankText(r) + ": " +
            why;
      break;
    }
    maps_.push_back(m);
    out[r] = (void *)(uintptr_t)m.va;
  }
  for (int f : fds)
    if (f >= 0)
      ::close(f);
  // Agree on the outcome of the mapping too.
  shareOutcome(why);
  if (!why.empty()) {
    error = why;
    for (void *p : out)
      if (p)
        unmap((uint64_t)(uintptr_t)p);
    out.clear();
    return false;
  }
  return true;
}

bool ProcessPeerMemory::allocIpc(int64_t bytes, std::vector<void *> &out,
                                 std::string &error) {
  const int R = s_.boot->size(), me = s_.boot->rank();
  out.assign(R, nullptr);
  Blob b{};
  b.kind = 2;
  b.device = s_.device;
  b.bytes = bytes;
  std::string localErr;
  size_t n = bytes > 0 ? (size_t)bytes : 16;
  cudaError_t e = cudaMalloc(&out[me], n);
  if (e == cudaSuccess)
    e = cudaMemset(out[me], 0, n);
  if (e == cudaSuccess) // zeroed before any peer can see it
    e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaIpcGetMemHandle(&b.handle, out[me]);
  if (out[me]) {
    Mapping m;
    m.va = (uint64_t)(uintptr_t)out[me];
    m.size = n;
    m.ipc = m.own = true;
    maps_.push_back(m);
  }
  if (e != cudaSuccess) {
    localErr = rankText(me) + ": allocating " + std::to_string(bytes) +
               " bytes on GPU " + std::to_string(s_.device) + ": " +
               cudaGetErrorString(e);
    cudaGetLastError();
  }
  b.ok = localErr.empty();
  std::vector<std::string> all;
  std::string why;
  if (!s_.boot->allGather(std::string((const char *)&b, sizeof b), all, error))
    why = error;
  else
    why =
        localErr.empty() ? firstFailure(all, bytes, me, "allocate") : localErr;
  for (int r = 0; r < R && why.empty(); ++r) {
    if (r == me)
      continue;
    Blob p = blobOf(all[r]);
    e = cudaIpcOpenMemHandle(&out[r], p.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      why = rankText(me) + " (GPU " + std::to_string(s_.device) +
            ") cannot map the memory of " + rankText(r) + " (GPU " +
            std::to_string(p.device) + "): " + cudaGetErrorString(e);
      cudaGetLastError();
      out[r] = nullptr;
      break;
    }
    Mapping m;
    m.va = (uint64_t)(uintptr_t)out[r];
    m.size = n;
    m.ipc = true;
    m.peer = r;
    maps_.push_back(m);
  }
  shareOutcome(why);
  if (!why.empty()) {
    error = why;
    for (int r = 0; r < R; ++r)
      if (out[r] && r != me)
        unmap((uint64_t)(uintptr_t)out[r]);
    if (out[me])
      unmap((uint64_t)(uintptr_t)out[me]);
    out.clear();
    return false;
  }
  return true;
}

void ProcessPeerMemory::release(const std::vector<void *> &ptrs) {
  const int me = s_.boot->rank();
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(s_.device);
  // No kernel of this process still reads them.
  cudaDeviceSynchronize();
  cudaGetLastError();
  for (int r = 0; r < (int)ptrs.size(); ++r)
    if (ptrs[r] && r != me)
      unmap((uint64_t)(uintptr_t)ptrs[r]);
  // cudaIpc: nobody frees its memory while a peer may still have it mapped
  // (VMM memory lives until its last mapping goes).
  std::string err;
  if (!s_.vmm && !aborted_ && !s_.boot->broken())
    s_.boot->barrier(err);
  if (me < (int)ptrs.size() && ptrs[me])
    unmap((uint64_t)(uintptr_t)ptrs[me]);
  cudaSetDevice(prev);
}

} // namespace rt
} // namespace purlin
