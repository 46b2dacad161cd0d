// Buffers the application allocated itself (a framework's tensors):
// purlinCommRegister maps every rank's buffer into every process, so a
// launch may name it like purlinMemAlloc memory. The allocation around the
// buffer is found with cuMemGetAddressRange; cudaMalloc memory is shared by
// a cudaIpc handle of its base, VMM memory (cuMemCreate with POSIX fd
// handles) by its fd; a peer's allocation is mapped once and the mapping
// shared by every buffer registered in it (cached by the peer's base).
#include "Bootstrap.h"
#include "Driver.h"
#include "FdPassing.h"
#include "Internal.h"

#include <cstring>
#include <unistd.h>

using namespace purlin;
using namespace purlin::rt;

namespace {
struct RegBlob {
  uint32_t ok;
  uint32_t kind; // 1: VMM fd, 2: cudaIpc
  uint64_t bytes, base, size, offset;
  cudaIpcMemHandle_t handle;
  char why[160]; // when not ok
};
} // namespace

bool ProcessPeerMemory::registerBuffer(void *ptr, size_t bytes,
                                       std::vector<void *> &out,
                                       std::string &error) {
  const int R = s_.boot->size(), me = s_.boot->rank();
  out.assign(R, nullptr);
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(s_.device);
  RegBlob b{};
  b.bytes = bytes;
  std::string localErr, e;
  const Driver *d = driver(localErr);
  int fd = -1;
  if (d) {
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult r = d->memGetAddressRange(&base, &size, (CUdeviceptr)ptr);
    if (r != CUDA_SUCCESS) {
      localErr = driverError(d, r, "cuMemGetAddressRange") +
                 " (not device memory of this process?)";
    } else if ((uint64_t)(uintptr_t)ptr + bytes > base + size) {
      localErr = "the buffer runs past the end of its allocation (" +
                 std::to_string(size) + " bytes)";
    } else {
      b.base = base;
      b.size = size;
      b.offset = (uint64_t)(uintptr_t)ptr - base;
      // VMM memory made with POSIX fd handles travels as an fd; anything
      // else (cudaMalloc) as a cudaIpc handle of its base.
      CUmemGenericAllocationHandle h = 0;
      std::string vmmErr;
      if (d->memRetainAllocationHandle(&h, (void *)(uintptr_t)base) ==
          CUDA_SUCCESS) {
        r = d->memExportToShareableHandle(
            &fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        if (r == CUDA_SUCCESS)
          b.kind = 1;
        else
          vmmErr = driverError(d, r, "cuMemExportToShareableHandle") + "; ";
        d->memRelease(h);
      }
      if (b.kind != 1) {
        b.kind = 2;
        cudaError_t ce = cudaIpcGetMemHandle(&b.handle, (void *)base);
        if (ce != cudaSuccess) {
          localErr = vmmErr + "cudaIpcGetMemHandle: " + cudaGetErrorString(ce);
          cudaGetLastError();
        }
      }
    }
  }
  b.ok = localErr.empty();
  std::snprintf(b.why, sizeof b.why, "%s", localErr.c_str());
  std::vector<std::string> all;
  std::string why;
  if (!s_.boot->allGather(std::string((const char *)&b, sizeof b), all, why))
    all.clear();
  std::vector<RegBlob> blobs(all.size());
  for (size_t r = 0; r < all.size() && why.empty(); ++r) {
    if (all[r].size() != sizeof(RegBlob)) {
      why = "rank " + std::to_string(r) + " sent a malformed handle";
      break;
    }
    std::memcpy(&blobs[r], all[r].data(), sizeof(RegBlob));
    const RegBlob &p = blobs[r];
    if (!p.ok)
      why = "rank " + std::to_string(r) + ": " + p.why;
    else if (p.bytes != bytes)
      why = "rank " + std::to_string(r) + " registers " +
            std::to_string(p.bytes) + " bytes, rank " + std::to_string(me) +
            " " + std::to_string(bytes) + " (collective calls out of order?)";
    else if (p.kind != b.kind)
      why = "rank " + std::to_string(r) + "'s buffer is " +
            (p.kind == 1 ? "VMM" : "cudaMalloc") + " memory, rank " +
            std::to_string(me) + "'s " + (b.kind == 1 ? "VMM" : "cudaMalloc") +
            " (every rank's must be of one kind)";
  }
  // The fds travel when every rank has one (VMM), even to peers that have
  // this allocation mapped already: every rank sends to every rank.
  std::vector<int> fds;
  const uint64_t tag = ++tag_;
  if (why.empty() && b.kind == 1 &&
      !s_.fds->exchange(s_.fdNames, tag, fd, s_.timeoutMs, fds, why))
    why = "rank " + std::to_string(me) + ": " + why;
  if (fd >= 0)
    ::close(fd);
  std::vector<uint64_t> mapped; // this call's new or shared mappings
  for (int r = 0; r < R && why.empty(); ++r) {
    if (r == me) {
      out[r] = ptr;
      continue;
    }
    const RegBlob &p = blobs[r];
    Mapping *hit = nullptr;
    for (auto &m : maps_)
      if (m.peer == r && m.peerBase == p.base && !m.own)
        hit = &m;
    if (hit) {
      ++hit->refs;
    } else {
      Mapping m;
      m.peer = r;
      m.peerBase = p.base;
      m.size = p.size;
      if (p.kind == 1) {
        if (!mapVmmFd(fds[r], p.size, m.va, m.handle, why))
          why = "rank " + std::to_string(me) + " cannot map rank " +
                std::to_string(r) + "'s buffer: " + why;
      } else {
        m.ipc = true;
        void *va = nullptr;
        cudaError_t ce =
            cudaIpcOpenMemHandle(&va, p.handle, cudaIpcMemLazyEnablePeerAccess);
        if (ce != cudaSuccess) {
          why = "rank " + std::to_string(me) + " cannot map rank " +
                std::to_string(r) + "'s buffer: " + cudaGetErrorString(ce);
          cudaGetLastError();
        }
        m.va = (uint64_t)(uintptr_t)va;
      }
      if (!why.empty())
        break;
      maps_.push_back(m);
      hit = &maps_.back();
    }
    mapped.push_back(hit->va);
    out[r] = (void *)(uintptr_t)(hit->va + p.offset);
  }
  for (int f : fds)
    if (f >= 0)
      ::close(f);
  shareOutcome(why);
  if (!why.empty()) {
    error = why;
    std::vector<void *> undo(R, nullptr);
    for (size_t i = 0; i < mapped.size(); ++i)
      undo[i] = (void *)(uintptr_t)mapped[i];
    deregister(undo);
    out.clear();
  }
  cudaSetDevice(prev);
  return why.empty();
}

void ProcessPeerMemory::deregister(const std::vector<void *> &peers) {
  for (void *p : peers) {
    uint64_t a = (uint64_t)(uintptr_t)p;
    for (auto &m : maps_)
      if (p && !m.own && a >= m.va && a < m.va + m.size) {
        if (--m.refs == 0)
          unmap(m.va);
        break;
      }
  }
}

extern "C" {

purlinStatus purlinCommRegister(purlinComm_t c, void *ptr, size_t bytes) {
  if (!c || !ptr || !bytes)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommRegister: null communicator or buffer, or 0 bytes");
  if (!c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommRegister: only for multi-process communicators "
                "(one process's ranks take any device memory)");
  for (auto &a : c->sym)
    if ((char *)ptr < a.base + a.bytes && (char *)ptr + bytes > a.base)
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  a.registered ? "purlinCommRegister: the buffer overlaps one "
                                 "registered already"
                               : "purlinCommRegister: the buffer lies in "
                                 "purlinMemAlloc memory (symmetric already)");
  auto *pm = static_cast<ProcessPeerMemory *>(c->mem.get());
  std::vector<void *> peers;
  std::string err;
  if (!pm->registerBuffer(ptr, bytes, peers, err))
    return fail(c->boot->broken() ? PURLIN_ERR_BOOTSTRAP
                                  : PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommRegister: " + err);
  c->sym.push_back({(char *)ptr, bytes, peers, true});
  return ok();
}

purlinStatus purlinCommDeregister(purlinComm_t c, void *ptr) {
  if (!c || !c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommDeregister: not a multi-process communicator");
  for (size_t i = 0; i < c->sym.size(); ++i)
    if (c->sym[i].registered && c->sym[i].base == ptr) {
      DeviceGuard guard;
      cudaSetDevice(c->devices[0]);
      cudaDeviceSynchronize(); // no launch of ours still reads it
      cudaGetLastError();
      static_cast<ProcessPeerMemory *>(c->mem.get())
          ->deregister(c->sym[i].peers);
      c->sym.erase(c->sym.begin() + i);
      return ok();
    }
  return fail(PURLIN_ERR_INVALID_ARGUMENT,
              "purlinCommDeregister: not a registered buffer");
}

} // extern "C"
